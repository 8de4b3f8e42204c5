#!/usr/bin/env python3
"""Symbolizes wallprof's samples: report.py PREFIX BINARY [--binname NAME] [--frm S --to S]
[--threads REGEX] [--depth N] [--top N]. PREFIX is PROF_OUT (PREFIX.bin, .maps, .threads); shared
libraries named in the maps are looked up first beside PREFIX (copy the device's libc there),
then at their paths. BINARY is the unstripped build of the program that ran (--binname: the
name it ran under). Samples whose leaf is a blocking call (futex, sleep, poll, ioctl...) count
as idle and are left out of the function tables."""
import struct, sys, subprocess, collections, re, os, argparse
ap = argparse.ArgumentParser()
ap.add_argument('prefix'); ap.add_argument('binary')
ap.add_argument('--threads', default=None); ap.add_argument('--top', type=int, default=40)
ap.add_argument('--callers', default=None)
ap.add_argument('--binname', default=None); ap.add_argument('--depth', type=int, default=3); ap.add_argument('--frm', default=None); ap.add_argument('--to', default=None)
a = ap.parse_args()
DEPTH = 12
SCAN = 24
rec = struct.Struct('<%dQ' % (DEPTH + 3 + SCAN))
data = open(a.prefix + '.bin', 'rb').read()
raw = [rec.unpack_from(data, o) for o in range(0, len(data) - rec.size + 1, rec.size)]
t0 = min(x[2] for x in raw) if raw else 0
hist = collections.Counter(int((x[2] - t0) / 1e8) for x in raw)
print('samples per 100 ms:', ' '.join('%d:%d' % (k, hist[k]) for k in sorted(hist)))
lo = float(a.frm or 0) * 1e9; hi = float(a.to or 1e9) * 1e9
samples = [(x[0], x[1]) + tuple(x[3:]) for x in raw if lo <= x[2] - t0 <= hi]
comm = {}
if os.path.exists(a.prefix + '.threads'):
    for l in open(a.prefix + '.threads'):
        p = l.split(None, 1)
        if p: comm[int(p[0])] = (p[1].strip() if len(p) > 1 else '')
maps = []
base_of = {}
for l in open(a.prefix + '.maps'):
    f = l.split()
    if len(f) < 6: continue
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    off = int(f[2], 16); path = f[5]
    if path not in base_of and off == 0: base_of[path] = lo
    maps.append((lo, hi, path))
binname = a.binname or os.path.basename(a.binary)
def locate(pc):
    for lo, hi, path in maps:
        if lo <= pc < hi: return path
    return None
textmaps = [(lo, hi) for lo, hi, path in maps if os.path.basename(path) == binname]
# mark executable ranges only
textmaps = []
for l in open(a.prefix + '.maps'):
    f = l.split()
    if len(f) >= 6 and 'x' in f[1] and os.path.basename(f[5]) == binname:
        lo, hi = (int(x, 16) for x in f[0].split('-')); textmaps.append((lo, hi))
def intext(x): return any(lo <= x < hi for lo, hi in textmaps)
fixed = []
for s in samples:
    s = list(s)
    if not intext(s[2]):
        scan = [w for w in s[2 + DEPTH:2 + DEPTH + SCAN] if intext(w)][:DEPTH - 1]
        if len(scan) >= 1 and (s[1] < 2 or not intext(s[3])):
            s[3:3 + len(scan)] = scan; s[1] = 1 + len(scan)
    fixed.append(tuple(s[:2 + DEPTH]))
samples = fixed
pcs = set()
for s in samples:
    n = s[1]
    for k in range(n): pcs.add((s[2 + k], k > 0))
# resolve binary pcs
bin_addrs = {}
other = {}
for pc, ret in pcs:
    path = locate(pc)
    q = pc - 1 if ret else pc
    if path and os.path.basename(path) == binname:
        bin_addrs[(pc, ret)] = q - base_of[path]
    else:
        other[(pc, ret)] = os.path.basename(path) if path else '?'
names = {}
uniq = sorted(set(bin_addrs.values()))
if uniq:
    out = subprocess.run(['addr2line', '-f', '-i', '-C', '-a', '-e', a.binary],
                         input='\n'.join(hex(x) for x in uniq), capture_output=True, text=True).stdout.splitlines()
    cur = None; chain = {}
    i = 0
    while i < len(out):
        l = out[i]
        if l.startswith('0x'):
            cur = int(l, 16); chain[cur] = []; i += 1; continue
        fn = l; loc = out[i + 1] if i + 1 < len(out) else ''
        chain[cur].append((fn, loc)); i += 2
    def short(fn):
        fn = re.sub(r'<[^<>]*>', '', fn); fn = re.sub(r'<[^<>]*>', '', fn)
        return fn[:110]
    for k, v in bin_addrs.items():
        c = chain.get(v, [('??', '')])
        names[k] = [short(fn) for fn, _ in c]  # innermost first
import bisect
symtabs = {}
def symtab(path):
    if path not in symtabs:
        t = []
        cands = [path]
        try:
            ro = subprocess.run(['readelf', '-n', path], capture_output=True, text=True).stdout
            m = re.search(r'Build ID: ([0-9a-f]+)', ro)
            if m:
                dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (m.group(1)[:2], m.group(1)[2:])
                if os.path.exists(dbg): cands.append(dbg)
        except Exception: pass
        for opt, p2 in [(['-D'], path)] + [([], c) for c in cands]:
            try:
                o = subprocess.run(['nm', '-C', '--defined-only'] + opt + [p2], capture_output=True, text=True).stdout
            except Exception:
                o = ''
            for l in o.splitlines():
                p = l.split(None, 2)
                if len(p) == 3 and p[1] in 'tTwWiI':
                    t.append((int(p[0], 16), p[2]))
        t.sort(); symtabs[path] = ([x for x, _ in t], [n for _, n in t])
    return symtabs[path]
for (pc, ret), v in other.items():
    path = locate(pc)
    nm = '[' + v + ']'
    lp = os.path.join(os.path.dirname(a.prefix), os.path.basename(path)) if path else None
    if lp and os.path.exists(lp): pass
    if path and path in base_of and lp and os.path.exists(lp):
        path_real = lp
    elif path and path in base_of and os.path.exists(path):
        path_real = path
    else:
        path_real = None
    if path_real:
        addrs, ns = symtab(path_real)
        q = (pc - 1 if ret else pc) - base_of[path]
        i = bisect.bisect_right(addrs, q) - 1
        if i >= 0: nm = '[' + v + '] ' + ns[i][:80]
    names[(pc, ret)] = [nm]
def tname(t):
    c = comm.get(t, '?')
    return re.sub(r'\d+$', '#', c)
rx = re.compile(a.threads) if a.threads else None
IDLE = re.compile(r'(syscall|futex|nanosleep|epoll_wait|__poll|\] poll|ppoll|\] read$|__read|ioctl|sched_yield|pthread_cond|clock_nanosleep|sem_wait|accept|recv|select)')
def idle(s):
    return bool(IDLE.search(names[(s[2], False)][0])) if s[1] else False
sel = [s for s in samples if (not rx or rx.search(tname(s[0])))]
idl = collections.Counter(names[(s[2], False)][0] for s in sel if idle(s))
print('== idle leaves (excluded from below)'); [print('%7d %s' % (c, n)) for n, c in idl.most_common(12)]
busyc = collections.Counter(tname(s[0]) for s in sel if not idle(s))
print('== busy samples per thread kind'); [print('%7d %s' % (c, n)) for n, c in busyc.most_common(30)]
sel = [s for s in sel if not idle(s)]
print('samples', len(samples), 'selected', len(sel))
tc = collections.Counter(tname(s[0]) for s in samples)
print('== samples per thread kind'); [print('%7d %s' % (c, n)) for n, c in tc.most_common(30)]
leaf = collections.Counter(); incl = collections.Counter(); leaf2 = collections.Counter()
for s in sel:
    n = s[1]; fr = [names[(s[2 + k], k > 0)] for k in range(n)]
    leaf[fr[0][0]] += 1
    # leaf + outermost inline of leaf + first binary caller
    ctx = ' <- '.join(f[-1][:60] for f in fr[:a.depth])
    leaf2[ctx] += 1
    seen = set()
    for f in fr:
        for fn in f:
            if fn not in seen: seen.add(fn); incl[fn] += 1
tot = max(1, len(sel))
print('== leaf (innermost)'); [print('%6.2f%% %s' % (100*c/tot, n)) for n, c in leaf.most_common(a.top)]
print('== leaf chains (function level, 3 frames)'); [print('%6.2f%% %s' % (100*c/tot, n)) for n, c in leaf2.most_common(a.top)]
print('== inclusive'); [print('%6.2f%% %s' % (100*c/tot, n)) for n, c in incl.most_common(a.top * 2)]
