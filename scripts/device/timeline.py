#!/usr/bin/env python3
"""Sums up a GPU timeline (PQGPU_TIMELINE=FILE, `tuning` builds; src/gpu/timeline.rs).

Usage: timeline.py FILE [REGEX]   (REGEX picks batches by their `# batch` line)

Per batch, in milliseconds from the first operation's start: the span; how long each copy
direction was busy (each copy counted from when its engine was free and the copy was ready,
to its end: copies of one direction run one after another) and the rate it moved; how long
at least one kernel ran; how long nothing ran; when the first kernel started and how long
after the last kernel the batch's last copy ended. Then the median of each over the batches.
"""
import re
import statistics
import sys


def union(iv):
    total, end = 0.0, None
    for s, e in sorted(iv):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def engine_busy(copies):
    """Busy time of one copy direction: copies serialised in the order they ended."""
    busy, free = 0.0, float("-inf")
    for s, e, _ in sorted(copies, key=lambda c: c[1]):
        start = max(s, free)
        busy += max(0.0, e - start)
        free = e
    return busy


def summary(ops):
    t0 = min(s for _, _, _, s, _ in ops)
    kern = [(s - t0, e - t0) for _, l, b, s, e in ops if b == 0 and not l.endswith("htod") and not l.endswith("dtoh")]
    up = [(s - t0, e - t0, b) for _, l, b, s, e in ops if l.endswith("htod")]
    down = [(s - t0, e - t0, b) for _, l, b, s, e in ops if l.endswith("dtoh")]
    span = max(e for _, _, _, _, e in ops) - t0
    allv = [(s, e) for s, e in kern] + [(s, e) for s, e, _ in up + down]
    r = {
        "span": span,
        "htod": engine_busy(up),
        "htod_GBps": sum(b for *_, b in up) / max(engine_busy(up), 1e-9) / 1e6,
        "dtoh": engine_busy(down),
        "dtoh_GBps": sum(b for *_, b in down) / max(engine_busy(down), 1e-9) / 1e6,
        "kernels": union(kern),
        "idle": span - union(allv),
        "first_kernel": min((s for s, _ in kern), default=0.0),
        "tail": span - max((e for _, e in kern), default=0.0),
    }
    return r


def main():
    path, pat = sys.argv[1], re.compile(sys.argv[2] if len(sys.argv) > 2 else ".")
    batches, cur = [], None
    for line in open(path, errors="replace"):
        if line.startswith("# batch "):
            what = line[8:].strip()
            cur = [] if pat.search(what) else None
            if cur is not None:
                batches.append((what, cur))
            continue
        if cur is None:
            continue
        w, label, b, s, e = line.split()
        cur.append((int(w), label, int(b), float(s), float(e)))
    rows = [(what, summary(ops)) for what, ops in batches if ops]
    keys = ["span", "htod", "htod_GBps", "dtoh", "dtoh_GBps", "kernels", "idle", "first_kernel", "tail"]
    print("batch: " + " ".join(keys))
    for what, r in rows:
        print(f"{what}: " + " ".join(f"{r[k]:.3f}" for k in keys))
    if rows:
        print(f"median of {len(rows)}: " + " ".join(f"{k} {statistics.median(r[k] for _, r in rows):.3f}" for k in keys))


if __name__ == "__main__":
    main()
