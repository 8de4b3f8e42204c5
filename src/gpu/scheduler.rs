//! Spreads a batch's chunks over every worker of every device.
//!
//! Workers pull chunks from one shared queue, so each device takes work in proportion to its
//! measured speed (a faster or less loaded GPU simply comes back for more), and every chunk
//! writes straight into its own slice of the caller's buffers, so results land in order. A
//! chunk that fails on a device goes back to the queue for the healthy devices; when none is
//! left, the CPU does it. Every item therefore ends with a status.
//!
//! Several batches may run at once (the serving layer keeps a few in flight, each often a
//! single chunk): each batch's threads take idle workers first, so concurrent batches run on
//! different streams side by side instead of queueing for the first worker.

use crate::{Error, Status};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};

/// What the scheduler needs of a device: its workers and its health.
pub trait Unit: Sync {
    type Worker: Send;
    fn workers(&self) -> &[Mutex<Self::Worker>];
    fn is_healthy(&self) -> bool;
    /// Takes the device out of service.
    fn mark_failed(&self, why: &str);
    /// Tells worker `w`, before it runs a chunk of `items` items, the batch's largest chunk
    /// and the chunk's turn to queue its inputs.
    fn plan(&self, w: &mut Self::Worker, items: usize, largest: usize, turn: Turn);
}

/// The order in which a batch's chunks queue their input copies: chunk i after every chunk
/// before it has queued its own or finished. A device's copy engine takes copies in the order
/// they are queued, so chunks that queue side by side in whatever order their threads reach
/// the driver copy in that order: on the H200 a ramped SLH-DSA verification batch's large
/// chunks often went first and its first kernel started 3-10 ms into a 45 ms batch.
pub struct Turns {
    /// The first chunk not yet released, and which chunks after it are.
    state: Mutex<(usize, Vec<bool>)>,
    turned: Condvar,
}

impl Turns {
    fn new(chunks: usize) -> Turns {
        Turns {
            state: Mutex::new((0, vec![false; chunks])),
            turned: Condvar::new(),
        }
    }

    /// Waits until every chunk before `i` is released.
    fn wait(&self, i: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < i {
            s = self.turned.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Chunk `i` has queued its inputs or finished (again: nothing).
    fn release(&self, i: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if i < s.1.len() && !s.1[i] {
            s.1[i] = true;
            while s.0 < s.1.len() && s.1[s.0] {
                s.0 += 1;
            }
            self.turned.notify_all();
        }
    }
}

/// Releases a chunk's turn when dropped.
struct PassOnDrop(Turn);

impl Drop for PassOnDrop {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A chunk's place in its batch's [`Turns`] (`None`: no order, e.g. a switched-off tuning run).
#[derive(Clone)]
pub struct Turn(Option<(Arc<Turns>, usize)>);

impl Turn {
    pub fn none() -> Turn {
        Turn(None)
    }

    /// Waits for this chunk's turn to queue inputs.
    pub fn wait(&self) {
        if let Some((t, i)) = &self.0 {
            t.wait(*i);
        }
    }

    /// Lets the next chunk queue its inputs.
    pub fn release(&self) {
        if let Some((t, i)) = &self.0 {
            t.release(*i);
        }
    }
}

/// Runs `gpu(device, worker, chunk)` for every chunk on at most `per_unit` workers of each
/// device, and `cpu(chunk)` for chunks that no healthy device could finish. `sizes` are the
/// chunks' item counts (chunk `i` has `sizes[i]` items); each worker hears of the largest
/// before each chunk (`Unit::plan`).
pub fn run_chunks<U, T, G, C>(
    units: &[U],
    per_unit: usize,
    sizes: &[usize],
    chunks: Vec<T>,
    gpu: G,
    cpu: C,
) where
    U: Unit,
    T: Send,
    G: Fn(&U, &mut U::Worker, &mut T) -> Result<(), String> + Sync,
    C: Fn(T) + Sync,
{
    debug_assert!(chunks.is_empty() || chunks.len() == sizes.len());
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let turns = Arc::new(Turns::new(sizes.len()));
    let queue = Mutex::new(
        sizes
            .iter()
            .copied()
            .zip(chunks)
            .enumerate()
            .rev()
            .collect::<Vec<_>>(),
    );
    let pop = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let push = |c: (usize, (usize, T))| queue.lock().unwrap_or_else(|e| e.into_inner()).push(c);

    // Interleave the devices' workers so that a batch of few chunks still reaches every GPU.
    let most = units
        .iter()
        .map(|u| u.workers().len())
        .max()
        .unwrap_or(0)
        .min(per_unit);
    let slots: Vec<(&U, &Mutex<U::Worker>)> = (0..most)
        .flat_map(|i| {
            units
                .iter()
                .filter_map(move |u| u.workers().get(i).map(|w| (u, w)))
        })
        .filter(|(u, _)| u.is_healthy())
        .collect();
    let threads = slots
        .len()
        .min(queue.lock().unwrap_or_else(|e| e.into_inner()).len());

    let work = |first: usize| {
        let (unit, mut w) = take_worker(&slots, first);
        while unit.is_healthy() {
            let Some((index, (items, mut chunk))) = pop() else {
                break;
            };
            let turn = Turn(Some((turns.clone(), index)));
            // Released however the chunk ends (a panic too: the batch's other threads wait).
            let passed = PassOnDrop(turn.clone());
            unit.plan(&mut w, items, largest, turn);
            let ran = gpu(unit, &mut w, &mut chunk);
            drop(passed);
            if let Err(why) = ran {
                unit.mark_failed(&why);
                if units.iter().any(U::is_healthy) {
                    push((index, (items, chunk)));
                } else {
                    cpu(chunk);
                }
            }
        }
    };
    match threads {
        0 => {}
        1 => work(0),
        // The calling thread takes the first worker itself: one thread fewer to start per
        // batch (serving starts hundreds of batches a second).
        _ => std::thread::scope(|s| {
            for first in 1..threads {
                let work = &work;
                s.spawn(move || work(first));
            }
            work(0);
        }),
    }
    // Chunks handed back by a device that failed after the others had finished.
    while let Some((_, (_, chunk))) = pop() {
        cpu(chunk);
    }
}

/// The first idle worker of `slots`, looking from `first` on (so a batch's threads spread
/// over distinct workers); when every one is busy (other batches in flight), waits for the
/// one at `first`. A thread holds one worker at a time, so batches never wait on each other
/// in a cycle.
fn take_worker<'s, U: Unit>(
    slots: &'s [(&'s U, &'s Mutex<U::Worker>)],
    first: usize,
) -> (&'s U, MutexGuard<'s, U::Worker>) {
    let n = slots.len();
    for i in (first..n).chain(0..first) {
        let (unit, slot) = slots[i];
        match slot.try_lock() {
            Ok(g) => return (unit, g),
            Err(TryLockError::Poisoned(e)) => return (unit, e.into_inner()),
            Err(TryLockError::WouldBlock) => {}
        }
    }
    let (unit, slot) = slots[first];
    (unit, slot.lock().unwrap_or_else(|e| e.into_inner()))
}

/// One chunk of a key-generation batch: its seeds (`None`: drawn by the worker that runs it),
/// its key rows and its statuses.
pub struct KeygenChunk<'a> {
    pub seeds: Option<&'a [u8]>,
    pub pks: &'a mut [u8],
    pub sks: &'a mut [u8],
    pub statuses: &'a mut [Status],
}

/// Key lengths of a key-generation batch (seed, public key, secret key), per item.
pub struct KeyLens {
    pub seed: usize,
    pub pk: usize,
    pub sk: usize,
}

impl KeyLens {
    /// Whether the buffers of a batch of `n` items have the lengths `n` items need; if not,
    /// every status is `BadLength`.
    pub fn check(
        &self,
        seeds: Option<&[u8]>,
        pks: &[u8],
        sks: &[u8],
        statuses: &mut [Status],
    ) -> bool {
        let n = statuses.len();
        let fits = pks.len() == n * self.pk
            && sks.len() == n * self.sk
            && seeds.is_none_or(|s| s.len() == n * self.seed);
        if !fits {
            statuses.iter_mut().for_each(|s| *s = Err(Error::BadLength));
        }
        fits
    }
}

/// The sizes of the chunks a batch of `n` items is cut into: chunks of `chunk` items or, with
/// `ramp` and a batch of at least four chunks, chunks that grow from an eighth of `chunk` at
/// the start and shrink to an eighth at the end. Every worker starts at once; small first
/// chunks finish first, so the copy engine starts moving outputs while the GPU still
/// computes the rest (instead of idling until the first full chunks finish together), and
/// small last chunks leave less kernel time after the last input copy.
pub fn chunk_sizes(n: usize, chunk: usize, ramp: bool) -> Vec<usize> {
    let chunk = chunk.max(1);
    let steps: Vec<usize> = [chunk / 8, chunk / 4, chunk / 2]
        .into_iter()
        .filter(|&s| s > 0)
        .collect();
    let ramped: usize = steps.iter().sum();
    if !ramp || n < 4 * chunk || steps.is_empty() {
        return (0..n.div_ceil(chunk))
            .map(|i| chunk.min(n - i * chunk))
            .collect();
    }
    // The middle in equal chunks of at most `chunk` (the first ones one item larger).
    let mid = n - 2 * ramped;
    let k = mid.div_ceil(chunk);
    let middle = (0..k).map(|i| mid / k + usize::from(i < mid % k));
    steps
        .iter()
        .copied()
        .chain(middle)
        .chain(steps.iter().rev().copied())
        .collect()
}

/// `s` cut into consecutive pieces of `sizes[i] * per` elements (the sizes must cover it).
pub fn cut<'a, T>(mut s: &'a [T], sizes: &[usize], per: usize) -> Vec<&'a [T]> {
    sizes
        .iter()
        .map(|&k| {
            let (head, rest) = s.split_at(k * per);
            s = rest;
            head
        })
        .collect()
}

/// [`cut`] for a mutable slice.
pub fn cut_mut<'a, T>(mut s: &'a mut [T], sizes: &[usize], per: usize) -> Vec<&'a mut [T]> {
    sizes
        .iter()
        .map(|&k| {
            let (head, rest) = std::mem::take(&mut s).split_at_mut(k * per);
            s = rest;
            head
        })
        .collect()
}

/// Cuts a key-generation batch of `statuses.len()` items into chunks of `sizes` items (either
/// family; see [`chunk_sizes`], which must cover the batch). When a buffer's length does not
/// match the item count, every status is `BadLength` and there is nothing to run.
pub fn keygen_chunks<'a>(
    sizes: &[usize],
    len: KeyLens,
    seeds: Option<&'a [u8]>,
    pks: &'a mut [u8],
    sks: &'a mut [u8],
    statuses: &'a mut [Status],
) -> Vec<KeygenChunk<'a>> {
    if !len.check(seeds, pks, sks, statuses) {
        return Vec::new();
    }
    let seed_chunks: Vec<Option<&[u8]>> = match seeds {
        Some(s) => cut(s, sizes, len.seed).into_iter().map(Some).collect(),
        None => vec![None; sizes.len()],
    };
    seed_chunks
        .into_iter()
        .zip(cut_mut(pks, sizes, len.pk))
        .zip(cut_mut(sks, sizes, len.sk))
        .zip(cut_mut(statuses, sizes, 1))
        .map(|(((seeds, pks), sks), statuses)| KeygenChunk {
            seeds,
            pks,
            sks,
            statuses,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks started on threads in any order take their turns in index order; a chunk that
    /// finishes without queueing anything (released twice here) holds no one up.
    #[test]
    fn turns_go_in_chunk_order() {
        let n = 24;
        let turns = Arc::new(Turns::new(n));
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for i in (0..n).rev() {
                let (turns, order) = (turns.clone(), &order);
                s.spawn(move || {
                    let turn = Turn(Some((turns, i)));
                    let _passed = PassOnDrop(turn.clone());
                    if i % 5 == 0 {
                        return;
                    }
                    turn.wait();
                    order.lock().unwrap().push(i);
                    turn.release();
                });
            }
        });
        let want: Vec<usize> = (0..n).filter(|i| i % 5 != 0).collect();
        assert_eq!(*order.lock().unwrap(), want);
    }
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A fake device: fails every chunk once it has done `fail_after` chunks.
    struct Fake {
        id: usize,
        workers: Vec<Mutex<()>>,
        healthy: AtomicBool,
        done: AtomicUsize,
        fail_after: usize,
        /// Every `plan` heard: (chunk items, largest).
        plans: Mutex<Vec<(usize, usize)>>,
    }

    impl Fake {
        fn new(id: usize, workers: usize, fail_after: usize) -> Fake {
            Fake {
                id,
                workers: (0..workers).map(|_| Mutex::new(())).collect(),
                healthy: AtomicBool::new(true),
                done: AtomicUsize::new(0),
                fail_after,
                plans: Mutex::new(Vec::new()),
            }
        }
    }

    impl Unit for Fake {
        type Worker = ();
        fn workers(&self) -> &[Mutex<()>] {
            &self.workers
        }
        fn is_healthy(&self) -> bool {
            self.healthy.load(Ordering::SeqCst)
        }
        fn mark_failed(&self, _why: &str) {
            self.healthy.store(false, Ordering::SeqCst);
        }
        fn plan(&self, _w: &mut (), items: usize, largest: usize, turn: Turn) {
            self.plans.lock().unwrap().push((items, largest));
            // Chunks take their turns in order whatever thread runs them.
            turn.wait();
            turn.release();
        }
    }

    /// Runs 64 chunks of 10 items; each item records who did it (device id, or 99 for the CPU).
    fn run(units: &[Fake]) -> Vec<usize> {
        let mut out = vec![usize::MAX; 640];
        let chunks: Vec<(usize, &mut [usize])> = out.chunks_mut(10).enumerate().collect();
        run_chunks(
            units,
            usize::MAX,
            &[10; 64],
            chunks,
            |u, _w, (_, items)| {
                if u.done.fetch_add(1, Ordering::SeqCst) >= u.fail_after {
                    items.iter_mut().for_each(|x| *x = 1000); // a partial write before the failure
                    return Err("injected failure".into());
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
                items.iter_mut().for_each(|x| *x = u.id);
                Ok(())
            },
            |(_, items)| items.iter_mut().for_each(|x| *x = 99),
        );
        out
    }

    #[test]
    fn every_device_takes_part_and_every_item_is_done() {
        let units = [Fake::new(0, 4, usize::MAX), Fake::new(1, 4, usize::MAX)];
        let out = run(&units);
        assert!(out.iter().all(|&d| d == 0 || d == 1), "{out:?}");
        assert!(
            out.contains(&0) && out.contains(&1),
            "both devices get work"
        );
    }

    #[test]
    fn a_failing_device_hands_its_chunks_to_the_others() {
        let units = [Fake::new(0, 2, 3), Fake::new(1, 2, usize::MAX)];
        let out = run(&units);
        assert!(!units[0].is_healthy());
        assert!(
            out.iter().all(|&d| d == 0 || d == 1),
            "no chunk lost or left half-written: {out:?}"
        );
        assert!(
            out.iter().filter(|&&d| d == 0).count() <= 30,
            "device 0 stopped after 3 chunks"
        );
    }

    #[test]
    fn when_every_device_fails_the_cpu_finishes() {
        let units = [Fake::new(0, 2, 1), Fake::new(1, 2, 2)];
        let out = run(&units);
        assert!(units.iter().all(|u| !u.is_healthy()));
        assert!(out.iter().all(|&d| d <= 1 || d == 99), "{out:?}");
        assert!(out.contains(&99));
    }

    /// Runs a one-item chunk per element of `out`, each holding its worker `ms` milliseconds
    /// and writing 1 on a device (99 on the CPU); `peak` records the most chunks at once.
    fn run_held(
        units: &[Fake],
        per_unit: usize,
        out: &mut [usize],
        ms: u64,
        (now, peak): (&AtomicUsize, &AtomicUsize),
    ) {
        let chunks: Vec<&mut [usize]> = out.chunks_mut(1).collect();
        run_chunks(
            units,
            per_unit,
            &vec![1; chunks.len()],
            chunks,
            |_u, _w, items| {
                let at = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(at, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                now.fetch_sub(1, Ordering::SeqCst);
                items[0] = 1;
                Ok(())
            },
            |items| items[0] = 99,
        );
    }

    #[test]
    fn at_most_per_unit_workers_of_each_device_run_at_once() {
        let units = [Fake::new(0, 8, usize::MAX), Fake::new(1, 8, usize::MAX)];
        let (now, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut out = vec![0usize; 64];
        run_held(&units, 3, &mut out, 2, (&now, &peak));
        assert!(out.iter().all(|&d| d == 1), "every chunk on a device");
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak <= 6, "two devices x 3 workers, saw {peak} at once");
        assert!(peak > 1, "chunks ran side by side");
    }

    #[test]
    fn concurrent_single_chunk_batches_run_on_different_workers() {
        // The serving layer's batches in flight, each one chunk: they must not queue for
        // the device's first worker while the others idle.
        let units = [Fake::new(0, 4, usize::MAX)];
        let (now, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    let mut out = [0usize; 1];
                    run_held(&units, 4, &mut out, 50, (&now, &peak));
                    assert_eq!(out, [1], "done on the device");
                });
            }
        });
        assert!(
            peak.load(Ordering::SeqCst) >= 2,
            "single-chunk batches ran side by side"
        );
    }

    #[test]
    fn every_worker_hears_the_batchs_largest_chunk_before_each_chunk() {
        let units = [Fake::new(0, 3, usize::MAX), Fake::new(1, 3, usize::MAX)];
        let sizes = chunk_sizes(100_000, 8192, true);
        let mut out = vec![0usize; 100_000];
        let chunks = cut_mut(&mut out, &sizes, 1);
        run_chunks(
            &units,
            usize::MAX,
            &sizes,
            chunks,
            |u, _w, items| {
                items.fill(u.id + 1);
                Ok(())
            },
            |items| items.fill(99),
        );
        assert!(
            out.iter().all(|&d| d == 1 || d == 2),
            "every chunk on a device"
        );
        let mut heard: Vec<(usize, usize)> = units
            .iter()
            .flat_map(|u| u.plans.lock().unwrap().clone())
            .collect();
        heard.sort();
        let largest = *sizes.iter().max().unwrap();
        assert!(
            largest > 7000 && sizes[0] == 1024,
            "a ramped batch: {sizes:?}"
        );
        let mut want: Vec<(usize, usize)> = sizes.iter().map(|&k| (k, largest)).collect();
        want.sort();
        assert_eq!(heard, want, "one plan per chunk, each with the largest");
    }

    #[test]
    fn chunk_sizes_cover_the_batch_and_ramp_at_both_ends() {
        for n in [0, 1, 4095, 4096, 4097, 16383, 16384, 65536, 65537, 100_000] {
            for ramp in [false, true] {
                let s = chunk_sizes(n, 4096, ramp);
                assert_eq!(s.iter().sum::<usize>(), n, "n {n} ramp {ramp}");
                assert!(s.iter().all(|&k| k > 0 && k <= 4096), "{s:?}");
            }
        }
        assert_eq!(chunk_sizes(10_000, 4096, true), [4096, 4096, 1808]);
        let s = chunk_sizes(65536, 4096, true);
        assert_eq!(&s[..3], [512, 1024, 2048]);
        assert_eq!(&s[s.len() - 3..], [2048, 1024, 512]);
        assert_eq!(s.len(), 6 + 15, "{s:?}");
    }

    #[test]
    fn cuts_follow_the_sizes() {
        let v: Vec<u32> = (0..20).collect();
        let pieces = cut(&v, &[1, 3, 6], 2);
        assert_eq!(pieces, [&v[0..2], &v[2..8], &v[8..20]]);
        let mut w = v.clone();
        let lens: Vec<usize> = cut_mut(&mut w, &[5, 5], 2)
            .iter()
            .map(|p| p.len())
            .collect();
        assert_eq!(lens, [10, 10]);
    }

    #[test]
    fn keygen_chunks_cut_every_array_alike_and_refuse_wrong_lengths() {
        let len = || KeyLens {
            seed: 1,
            pk: 2,
            sk: 3,
        };
        let seeds = [0u8; 10];
        let (mut pks, mut sks) = ([0u8; 20], [0u8; 30]);
        let mut st = vec![Ok(()); 10];
        let chunks = keygen_chunks(&[3, 7], len(), Some(&seeds), &mut pks, &mut sks, &mut st);
        let shape: Vec<_> = chunks
            .iter()
            .map(|c| {
                (
                    c.seeds.map(<[u8]>::len),
                    c.pks.len(),
                    c.sks.len(),
                    c.statuses.len(),
                )
            })
            .collect();
        assert_eq!(shape, [(Some(3), 6, 9, 3), (Some(7), 14, 21, 7)]);
        let chunks = keygen_chunks(&[10], len(), Some(&seeds[..9]), &mut pks, &mut sks, &mut st);
        assert!(chunks.is_empty());
        assert!(st.iter().all(|s| *s == Err(Error::BadLength)));
    }

    #[test]
    fn no_device_means_all_on_the_cpu() {
        let out = run(&[]);
        assert!(out.iter().all(|&d| d == 99));
    }
}
