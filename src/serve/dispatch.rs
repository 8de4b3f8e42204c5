//! The coalescing dispatcher: concurrent single items and small submissions of one context
//! are queued and merged into backend batches.
//!
//! Callers append to one of several shards (chosen per thread), each under its own short
//! lock, so many threads enqueue at once without meeting on one lock. A dispatcher thread
//! takes a batch (up to the maximum batch) when the queue is full, when the oldest item has
//! waited the maximum wait, or when arrivals have paused: taking is swapping each shard's
//! list for an empty one, and the batch is the list of those segments (items are never moved
//! or copied on the way). Several threads (`MaxInFlight`) run batches at once, so while the
//! GPU is busy the queue grows and the next batch is larger; each batch takes an even share
//! of what is outstanding (queued and running) over the batches in flight, so that one batch
//! never takes the whole queue while the other threads idle (on the H200 a batch taking all
//! 16,384 outstanding signatures made the next ones wait for it: 1.7-1.9 M/s against 2.9 M/s
//! with batches of a quarter). Batches below the CPU crossover
//! run on the CPU, and items a GPU fails are retried there. On a context whose backend is the
//! CPU, blocking calls run in the caller's thread (no queue at all) and queued items are
//! taken at once. Any other backend (a test's or an embedder's own, reporting itself as a
//! CPU) gets every item, unretried.

use super::config::{Config, Opt};
use super::exec;
use super::item::{Class, Completion, Item, Op};
use super::key::Key;
use crate::backend::Backend;
use crate::{Error, Status};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Queue shards: enough that callers on different cores rarely share one.
const SHARDS: usize = 16;

/// A batch's share of the outstanding items is at least this (below it, splitting a light
/// load over the batches in flight would only multiply the GPU's fixed costs per batch).
const MIN_SHARE: usize = 256;

/// A shard's list of items, and a counted reference to each key handle they are lent
/// ([`Op::lent_key`]): items go from the submitter's call into the queue and through their
/// batch without a reference count of their own (written by every submitting and every
/// completing thread); the list holds one per key until all its items have reported.
#[derive(Default)]
struct Segment {
    /// Declared first, so dropped first: an item dropped unfinished reports before its key
    /// goes.
    items: Vec<Item>,
    keys: Vec<Key>,
}

/// Emptied item lists kept for reuse: at most this many, of at most this many items each.
/// A fresh list of a few thousand items (144 bytes each) is fresh pages, faulted in as the
/// shard fills, on every batch.
const SPARES: usize = 2 * SHARDS;
const SPARE_ITEMS: usize = 8192;

impl Segment {
    fn with_items(items: Vec<Item>) -> Segment {
        Segment {
            items,
            keys: Vec::new(),
        }
    }

    /// Holds the key `op` is lent, if it does not already (most items share the last few).
    fn hold(&mut self, op: &Op) {
        if let Some(k) = op.lent_key() {
            if !self.keys.iter().rev().take(4).any(|h| h.same(k)) {
                self.keys.push(k.clone());
            }
        }
    }

    fn push(&mut self, item: Item) {
        self.hold(&item.op);
        self.items.push(item);
    }
}

/// One shard of the queue, on its own cache lines. Its counters are written only under its
/// lock (plain stores, no read-modify-write) and read by the dispatcher threads without it:
/// an item's way into the queue is the shard's lock and nothing shared with other shards.
#[repr(align(128))]
struct Shard {
    items: Mutex<Segment>,
    /// Items in the shard.
    len: AtomicUsize,
    /// Items that have arrived, ever: a pause in arrivals is this count standing still.
    arrivals: AtomicU64,
    /// When the shard's oldest item arrived (ns since [`Shared::epoch`]), set by the arrival
    /// that finds it empty: one clock read per forming batch, not per item. Stored before
    /// `len` turns non-zero, so a dispatcher that sees items sees their time (or an older one:
    /// the maximum wait is never exceeded because of it).
    first: AtomicU64,
}

impl Shard {
    /// Sets the item count (under the lock).
    fn set_len(&self, n: usize) {
        self.len.store(n, Ordering::Release);
    }
}

/// What the dispatcher threads share under one lock: only they and the rare slow paths
/// (starting threads, shutdown) take it.
struct Gate {
    workers: usize,
    /// The process that started the workers: a child after fork() has none of them.
    pid: u32,
    shutdown: bool,
}

/// Where a context's work goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The process CPU backend: items run in place (expanded keys), never through it.
    Cpu,
    /// A GPU: batches, the crossover to the CPU, CPU retries.
    Gpu,
    /// Another backend: every item through it, as it reports.
    Other,
}

struct Shared {
    backend: Arc<dyn Backend>,
    route: Route,
    cfg: Arc<Config>,
    /// The context's notify state, kept while items may still report: their jobs hold it
    /// without a count of their own (`ffi::job::dispatched`).
    _notify: Arc<super::notify::Notify>,
    shards: Box<[Shard]>,
    /// Shards holding items (changed under that shard's lock when it turns non-empty or
    /// empty): once per forming batch and shard, not per item. Zero means the dispatcher
    /// threads may all sleep without a deadline.
    busy: AtomicUsize,
    /// Items in batches being run, and blocking calls running inline on the CPU.
    running: AtomicUsize,
    /// Where the next take starts, so that no shard is always last.
    rotate: AtomicUsize,
    /// Emptied item lists for the shards to reuse (see `SPARES`).
    spares: Mutex<Vec<Vec<Item>>>,
    /// The process whose workers are running (0: none yet).
    started: AtomicU32,
    epoch: Instant,
    observer: OnceLock<Observer>,
    gate: Mutex<Gate>,
    wake: Condvar,
}

/// Told of every run of items, before they run: their class, how many, and whether they run
/// in the calling thread (a blocking call run in place) rather than a dispatcher thread. For
/// tracing and statistics; it runs on the path of every item, so it must be quick.
pub type Observer = Arc<dyn Fn(Class, usize, bool) + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Items in the queue (a sum over the shards, each read without its lock).
    fn queued(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.len.load(Ordering::Acquire))
            .sum()
    }

    /// Tells the observer, if any, of one op run in the calling thread.
    fn observe_one(&self, op: &Op) {
        if let Some(f) = self.observer.get() {
            f(op.class(), 1, true);
        }
    }

    /// Tells the observer, if any, of a batch: one call per class, in order of first appearance.
    fn observe(&self, items: &[&mut Item], inline: bool) {
        let Some(f) = self.observer.get() else { return };
        let mut counts: Vec<(Class, usize)> = Vec::new();
        for it in items {
            let c = it.op.class();
            match counts.iter_mut().find(|(k, _)| *k == c) {
                Some((_, n)) => *n += 1,
                None => counts.push((c, 1)),
            }
        }
        for (c, n) in counts {
            f(c, n, inline);
        }
    }

    /// Starts the dispatcher threads if this process has none; false if none could start.
    fn ensure_workers(self: &Arc<Self>) -> bool {
        let me = crate::process::id();
        if self.started.load(Ordering::Acquire) == me {
            return true;
        }
        let mut g = lock(&self.gate);
        if g.pid != me {
            // Forked: the parent's dispatcher threads, batches and queued callers are not
            // here. Its queued items belong to callers of the parent; they are left alone.
            g.pid = me;
            g.workers = 0;
            for s in self.shards.iter() {
                std::mem::forget(std::mem::take(&mut *lock(&s.items)));
                s.set_len(0);
            }
            self.busy.store(0, Ordering::Release);
            self.running.store(0, Ordering::Release);
        }
        if g.workers == 0 {
            let want = self.cfg.get(Opt::MaxInFlight) as usize;
            for _ in 0..want {
                let shared = self.clone();
                let spawned = std::thread::Builder::new()
                    .name("pqgpu-serve".into())
                    .spawn(move || worker(shared));
                if spawned.is_ok() {
                    g.workers += 1;
                }
            }
        }
        if g.workers == 0 {
            return false;
        }
        self.started.store(me, Ordering::Release);
        true
    }

    /// Takes up to `max` queued items, shard by shard, as the shards' own lists.
    fn take(&self, max: usize) -> Vec<Segment> {
        let mut out = Vec::new();
        let mut count = 0;
        let start = self.rotate.fetch_add(1, Ordering::Relaxed);
        for k in 0..SHARDS {
            if count >= max {
                break;
            }
            let shard = &self.shards[(start + k) % SHARDS];
            let mut v = lock(&shard.items);
            if v.items.is_empty() {
                continue;
            }
            let room = max - count;
            let seg = if v.items.len() <= room {
                let fresh = self.spare(v.items.len().min(4096));
                self.busy.fetch_sub(1, Ordering::AcqRel);
                std::mem::replace(&mut *v, Segment::with_items(fresh))
            } else {
                // Over the maximum batch: the front goes, the rest waits (already due),
                // both holding the keys.
                let rest = Segment {
                    items: v.items.split_off(room),
                    keys: v.keys.clone(),
                };
                std::mem::replace(&mut *v, rest)
            };
            shard.set_len(v.items.len());
            self.running.fetch_add(seg.items.len(), Ordering::AcqRel);
            count += seg.items.len();
            out.push(seg);
        }
        out
    }

    /// An empty item list: a spare if there is one, else one of capacity `cap`.
    fn spare(&self, cap: usize) -> Vec<Item> {
        lock(&self.spares)
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(cap))
    }

    /// Keeps a batch's emptied lists for reuse (within `SPARES` and `SPARE_ITEMS`).
    fn recycle(&self, segs: Vec<Segment>) {
        let mut keep = Vec::with_capacity(segs.len());
        for Segment { mut items, keys } in segs {
            // Items first (all have reported; one dropped unfinished reports, which may call
            // back into a submit: so before the spares' lock), then keys.
            items.clear();
            drop(keys);
            if (1..=SPARE_ITEMS).contains(&items.capacity()) {
                keep.push(items);
            }
        }
        let mut spares = lock(&self.spares);
        let room = SPARES.saturating_sub(spares.len());
        spares.extend(keep.into_iter().take(room));
    }

    /// How many items the next batch takes: an even share of the outstanding items (queued
    /// and running) over the batches in flight, between `MIN_SHARE` and the maximum batch.
    fn share(&self) -> usize {
        let max = self.cfg.get(Opt::MaxBatch) as usize;
        let slots = (self.cfg.get(Opt::MaxInFlight) as usize).max(1);
        let outstanding = self.queued() + self.running.load(Ordering::Acquire);
        outstanding.div_ceil(slots).clamp(MIN_SHARE.min(max), max)
    }

    /// Whether the queue should be taken now; otherwise how long until it should. `w` is the
    /// calling dispatcher thread's view of the arrivals.
    fn due_in(&self, w: &mut Watch) -> Option<Duration> {
        let (mut queued, mut arrivals, mut oldest) = (0, 0, u64::MAX);
        for s in self.shards.iter() {
            arrivals += s.arrivals.load(Ordering::Acquire);
            let n = s.len.load(Ordering::Acquire);
            if n > 0 {
                queued += n;
                oldest = oldest.min(s.first.load(Ordering::Acquire));
            }
        }
        if queued >= self.cfg.get(Opt::MaxBatch) as usize {
            return None;
        }
        // A light load on an idle context (nothing running) runs on the CPU (a batch under
        // the crossover), so waiting for company would only delay it: it is taken at once.
        // Only when nothing runs: under load, taking every lull's few items at once sent a
        // stream of small batches to the CPU's cores, which the GPU batches' host work needs
        // (on the H200, asynchronous ML-DSA-44 verification at 65,536 outstanding fell from
        // 4.8 M/s to 0.9 M/s with "running + queued < crossover" here).
        let crossover = self.cfg.get(Opt::CpuCrossover) as usize;
        if queued > 0 && queued < crossover && self.running.load(Ordering::Acquire) == 0 {
            return None;
        }
        let max_wait = self.cfg.get(Opt::MaxWaitUs) * 1000;
        // Arrivals paused this long (or a quarter of the maximum wait) flush the queue.
        let quiet = (self.cfg.get(Opt::QuietUs) * 1000).min(max_wait / 4);
        let now = self.now();
        if arrivals != w.arrivals {
            // Something arrived since the last look (when, exactly, is not kept per item):
            // the pause is counted from now, so a flush for quiet comes after a pause of at
            // least `quiet` (and at most a look's delay more).
            *w = Watch { arrivals, at: now };
        }
        let due = oldest.saturating_add(max_wait);
        let calm = w.at.saturating_add(quiet);
        let at = due.min(calm);
        (now < at).then(|| Duration::from_nanos(at - now))
    }
}

/// What one dispatcher thread last saw of the arrivals: their count, and when it first saw it.
#[derive(Default)]
struct Watch {
    arrivals: u64,
    at: u64,
}

/// The dispatcher of one context. Dropping it lets its threads finish the queue and exit.
pub struct Dispatcher {
    sh: Arc<Shared>,
}

/// What one call queues: a single item (no list allocated for it) or a submit's list.
enum Items {
    One(Item),
    Many(Vec<Item>),
}

impl Items {
    fn len(&self) -> usize {
        match self {
            Items::One(_) => 1,
            Items::Many(v) => v.len(),
        }
    }

    fn into_vec(self) -> Vec<Item> {
        match self {
            Items::One(item) => vec![item],
            Items::Many(v) => v,
        }
    }
}

/// A blocking caller's completion: the status, and the thread to wake.
struct Waiter {
    status: OnceLock<Status>,
    thread: Thread,
}

impl Completion for Waiter {
    fn complete(&self, _: usize, status: Status) {
        let _ = self.status.set(status);
        self.thread.unpark();
    }
}

impl Waiter {
    fn new() -> Arc<Waiter> {
        Arc::new(Waiter {
            status: OnceLock::new(),
            thread: std::thread::current(),
        })
    }

    fn wait(&self) -> Status {
        loop {
            if let Some(s) = self.status.get() {
                return *s;
            }
            // Spurious returns (an earlier unpark's token) just go round again.
            std::thread::park();
        }
    }
}

/// The queue shard of the calling thread: threads are spread over the shards in turn.
fn my_shard() -> usize {
    crate::process::thread_ordinal() % SHARDS
}

impl Dispatcher {
    pub fn new(
        backend: Arc<dyn Backend>,
        cfg: Arc<Config>,
        notify: Arc<super::notify::Notify>,
    ) -> Dispatcher {
        let cpu = crate::backend::cpu_backend();
        let route = if std::ptr::addr_eq(Arc::as_ptr(&backend), Arc::as_ptr(&cpu)) {
            Route::Cpu
        } else if backend.kind() == crate::backend::BackendKind::Gpu {
            Route::Gpu
        } else {
            Route::Other
        };
        let shards = (0..SHARDS)
            .map(|_| Shard {
                items: Mutex::new(Segment::default()),
                len: AtomicUsize::new(0),
                arrivals: AtomicU64::new(0),
                first: AtomicU64::new(0),
            })
            .collect();
        Dispatcher {
            sh: Arc::new(Shared {
                backend,
                route,
                cfg,
                _notify: notify,
                shards,
                busy: AtomicUsize::new(0),
                running: AtomicUsize::new(0),
                rotate: AtomicUsize::new(0),
                spares: Mutex::new(Vec::new()),
                started: AtomicU32::new(0),
                epoch: Instant::now(),
                observer: OnceLock::new(),
                gate: Mutex::new(Gate {
                    workers: 0,
                    pid: crate::process::id(),
                    shutdown: false,
                }),
                wake: Condvar::new(),
            }),
        }
    }

    /// Runs one op and returns its status once it has ended (outputs written on success).
    /// The op's buffers are the caller's again when this returns.
    pub fn run(&self, op: Op) -> Status {
        op.check()?;
        let sh = &self.sh;
        match sh.route {
            Route::Cpu => {
                sh.observe_one(&op);
                return run_inline(op);
            }
            Route::Other => {
                sh.observe_one(&op);
                let waiter = Waiter::new();
                let mut item = Item::new(op, waiter.clone(), 0);
                exec::run_backend(&*sh.backend, vec![&mut item], false);
                drop(item);
                return waiter.wait();
            }
            // Inherited across fork() from a process that initialised CUDA: see run_batch.
            Route::Gpu if crate::gpu::cuda_inherited_reason().is_some() => {
                return Err(Error::NoDevice)
            }
            Route::Gpu => {}
        }
        let crossover = sh.cfg.get(Opt::CpuCrossover) as usize;
        // The shards are summed only under light load (what is running is below the crossover).
        let running = sh.running.load(Ordering::Acquire);
        if running < crossover && running + sh.queued() < crossover {
            sh.observe_one(&op);
            sh.running.fetch_add(1, Ordering::AcqRel);
            let st = run_inline(op);
            sh.running.fetch_sub(1, Ordering::AcqRel);
            return st;
        }
        let waiter = Waiter::new();
        self.enqueue(Items::One(Item::new(op, waiter.clone(), 0)));
        // The item reports exactly once (finish, or its Drop), so this wait ends, and only
        // after the dispatcher has stopped touching the op's buffers.
        waiter.wait()
    }

    /// Starts this process's dispatcher threads now rather than at the first queued item;
    /// false if none could start.
    pub fn start(&self) -> bool {
        self.sh.ensure_workers()
    }

    /// Sets the observer of this dispatcher's runs (once; later calls are ignored).
    pub fn set_observer(&self, f: Observer) {
        let _ = self.sh.observer.set(f);
    }

    /// Queues one op that has passed its checks (the asynchronous single item: the caller
    /// checked it to return the error from its own call), reporting to `done` under index 0.
    #[inline]
    pub fn submit_one(&self, op: Op, done: Arc<dyn Completion>) {
        debug_assert!(op.check().is_ok());
        self.enqueue(Items::One(Item::new(op, done, 0)))
    }

    /// Queues ops, each reporting to `done` under its index. Ops that fail their checks
    /// report at once.
    pub fn submit(&self, ops: Vec<(usize, Op)>, done: Arc<dyn Completion>) {
        if ops.len() == 1 {
            // The asynchronous single item: no list of its own on the way to the shard.
            let (i, op) = ops.into_iter().next().expect("one op");
            let mut item = Item::new(op, done, i);
            match item.op.check() {
                Ok(()) => self.enqueue(Items::One(item)),
                Err(e) => item.finish(Err(e)),
            }
            return;
        }
        let mut items = Vec::with_capacity(ops.len());
        for (i, op) in ops {
            let mut item = Item::new(op, done.clone(), i);
            match item.op.check() {
                Ok(()) => items.push(item),
                Err(e) => item.finish(Err(e)),
            }
        }
        self.enqueue(Items::Many(items))
    }

    // Inlined: an item (144 bytes) is moved by copy at every call it crosses.
    #[inline]
    fn enqueue(&self, items: Items) {
        let sh = &self.sh;
        let added = items.len();
        if added == 0 {
            return;
        }
        if !sh.ensure_workers() {
            // No thread to be had: run the items here rather than lose them.
            // Their lent keys are the submitter's, held until this call returns.
            let seg = Segment {
                items: items.into_vec(),
                keys: Vec::new(),
            };
            sh.running.fetch_add(added, Ordering::AcqRel);
            run_batch(sh, vec![seg], true);
            sh.running.fetch_sub(added, Ordering::AcqRel);
            return;
        }
        let shard = &sh.shards[my_shard()];
        let (prev, idle) = {
            let mut v = lock(&shard.items);
            let prev = v.items.len();
            if prev == 0 {
                shard.first.store(sh.now(), Ordering::Release);
            }
            match items {
                Items::One(item) => v.push(item),
                Items::Many(items) => {
                    items.iter().for_each(|it| v.hold(&it.op));
                    // Into an empty shard the list itself goes in (a large submit is not
                    // copied).
                    if prev == 0 && v.items.capacity() < added {
                        v.items = items;
                    } else {
                        v.items.extend(items);
                    }
                }
            }
            // Only this shard's lock holder writes its counters: plain stores.
            let arrived = shard.arrivals.load(Ordering::Relaxed) + added as u64;
            shard.arrivals.store(arrived, Ordering::Release);
            shard.set_len(v.items.len());
            let idle = prev == 0 && sh.busy.fetch_add(1, Ordering::AcqRel) == 0;
            (prev, idle)
        };
        let max = sh.cfg.get(Opt::MaxBatch) as usize;
        // Wake a dispatcher thread when the queue was empty (they may all sleep without a
        // deadline) or this shard has just filled a batch; otherwise one is already timing
        // the forming batch (and sees a full queue of several shards at its next look).
        // Taking the gate first means no thread is between its check and its wait.
        if idle || (prev < max && prev + added >= max) {
            drop(lock(&sh.gate));
            sh.wake.notify_one();
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        lock(&self.sh.gate).shutdown = true;
        self.sh.wake.notify_all();
    }
}

/// A blocking call on the CPU in the caller's thread.
fn run_inline(op: Op) -> Status {
    // A completion that keeps nothing: the status is returned directly.
    struct Nothing;
    impl Completion for Nothing {
        fn complete(&self, _: usize, _: Status) {}
    }
    let mut item = Item::new(op, Arc::new(Nothing), 0);
    let st = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| item.op.run_cpu()))
        .unwrap_or(Err(Error::Panic));
    item.finish(st);
    st
}

/// Runs a batch (the segments taken from the shards) where it is fastest: the CPU for a CPU
/// context or a batch under the crossover, the backend otherwise (with CPU retries of what
/// it fails).
fn run_batch(sh: &Shared, mut segs: Vec<Segment>, inline: bool) {
    // The segments (and so the keys they hold) go after the items have reported.
    let mut items: Vec<&mut Item> = segs.iter_mut().flat_map(|s| s.items.iter_mut()).collect();
    sh.observe(&items, inline);
    let crossover = sh.cfg.get(Opt::CpuCrossover) as usize;
    match sh.route {
        Route::Cpu => exec::run_cpu(&mut items),
        // A GPU context inherited from a parent that initialised CUDA: refused, not run on the
        // CPU behind the caller's back (below the crossover or as a retry).
        Route::Gpu if crate::gpu::cuda_inherited_reason().is_some() => {
            exec::refuse(&mut items, Error::NoDevice)
        }
        Route::Gpu if items.len() < crossover => exec::run_cpu(&mut items),
        Route::Gpu => exec::run_backend(&*sh.backend, items, true),
        Route::Other => exec::run_backend(&*sh.backend, items, false),
    }
    sh.recycle(segs);
}

/// One dispatcher thread: waits for a batch to be due, takes it, runs it.
fn worker(sh: Arc<Shared>) {
    let mut watch = Watch::default();
    let mut g = lock(&sh.gate);
    loop {
        if sh.busy.load(Ordering::Acquire) == 0 {
            if g.shutdown {
                g.workers -= 1;
                return;
            }
            g = sh.wake.wait(g).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        if sh.route != Route::Cpu && !g.shutdown {
            if let Some(until) = sh.due_in(&mut watch) {
                g = sh
                    .wake
                    .wait_timeout(g, until)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
        }
        // One taker at a time (under the gate): a batch is whole, not split between threads.
        let batch = sh.take(sh.share());
        let n: usize = batch.iter().map(|s| s.items.len()).sum();
        let more = sh.busy.load(Ordering::Acquire) > 0;
        drop(g);
        if more {
            sh.wake.notify_one();
        }
        // Items report from here; a panic escaping the batch still reports through their Drop.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::notify::coalesced(|| run_batch(&sh, batch, false))
        }));
        sh.running.fetch_sub(n, Ordering::AcqRel);
        g = lock(&sh.gate);
    }
}
