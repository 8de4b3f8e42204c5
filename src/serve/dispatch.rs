//! The coalescing dispatcher: concurrent single items and small submissions of one context
//! are queued and merged into backend batches.
//!
//! A dispatcher thread takes the queue as one batch (up to the maximum batch) when it is full,
//! when the oldest item has waited the maximum wait, or when arrivals have paused; several
//! threads (`MaxInFlight`) run batches at once, so while the GPU is busy the queue grows and
//! the next batch is larger. Batches below the CPU crossover run on the CPU, and items a GPU
//! fails are retried there. On a context whose backend is the CPU, blocking calls run in the
//! caller's thread (no queue at all) and queued items are taken at once. Any other backend (a
//! test's or an embedder's own, reporting itself as a CPU) gets every item, unretried.

use super::config::{Config, Opt};
use super::exec;
use super::item::{Completion, Item, Op};
use crate::backend::Backend;
use crate::{Error, Status};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Queue {
    items: VecDeque<Item>,
    last_arrival: Instant,
    /// Items in batches being run, and blocking calls running inline on the CPU.
    running: usize,
    inline: usize,
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
    q: Mutex<Queue>,
    arrived: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The dispatcher of one context. Dropping it lets its threads finish the queue and exit.
pub struct Dispatcher {
    sh: Arc<Shared>,
}

/// A blocking caller's completion.
#[derive(Default)]
struct Waiter {
    status: Mutex<Option<Status>>,
    done: Condvar,
}

impl Completion for Waiter {
    fn complete(&self, _: usize, status: Status) {
        *self.status.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
        self.done.notify_one();
    }
}

impl Waiter {
    fn wait(&self) -> Status {
        let mut st = self.status.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(s) = *st {
                return s;
            }
            st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Dispatcher {
    pub fn new(backend: Arc<dyn Backend>, cfg: Arc<Config>) -> Dispatcher {
        let cpu = crate::backend::cpu_backend();
        let route = if std::ptr::addr_eq(Arc::as_ptr(&backend), Arc::as_ptr(&cpu)) {
            Route::Cpu
        } else if backend.kind() == crate::backend::BackendKind::Gpu {
            Route::Gpu
        } else {
            Route::Other
        };
        Dispatcher {
            sh: Arc::new(Shared {
                backend,
                route,
                cfg,
                q: Mutex::new(Queue {
                    items: VecDeque::new(),
                    last_arrival: Instant::now(),
                    running: 0,
                    inline: 0,
                    workers: 0,
                    pid: std::process::id(),
                    shutdown: false,
                }),
                arrived: Condvar::new(),
            }),
        }
    }

    /// Runs one op and returns its status once it has ended (outputs written on success).
    /// The op's buffers are the caller's again when this returns.
    pub fn run(&self, op: Op) -> Status {
        op.check()?;
        let sh = &self.sh;
        match sh.route {
            Route::Cpu => return run_inline(op),
            Route::Other => {
                let waiter = Arc::new(Waiter::default());
                let item = Item::new(op, waiter.clone(), 0);
                exec::run_backend(&*sh.backend, vec![item], false);
                return waiter.wait();
            }
            Route::Gpu => {}
        }
        let crossover = sh.cfg.get(Opt::CpuCrossover) as usize;
        {
            let mut q = sh.lock();
            if q.items.len() + q.running + q.inline < crossover {
                q.inline += 1;
                drop(q);
                let st = run_inline(op);
                sh.lock().inline -= 1;
                return st;
            }
        }
        let waiter = Arc::new(Waiter::default());
        self.enqueue(vec![Item::new(op, waiter.clone(), 0)]);
        // The item reports exactly once (finish, or its Drop), so this wait ends, and only
        // after the dispatcher has stopped touching the op's buffers.
        waiter.wait()
    }

    /// Queues ops, each reporting to `done` under its index. Ops that fail their checks
    /// report at once.
    pub fn submit(&self, ops: Vec<(usize, Op)>, done: Arc<dyn Completion>) {
        let mut items = Vec::with_capacity(ops.len());
        for (i, op) in ops {
            let item = Item::new(op, done.clone(), i);
            match item.op.check() {
                Ok(()) => items.push(item),
                Err(e) => item.finish(Err(e)),
            }
        }
        if !items.is_empty() {
            self.enqueue(items);
        }
    }

    fn enqueue(&self, items: Vec<Item>) {
        let sh = &self.sh;
        let mut q = sh.lock();
        if q.pid != std::process::id() {
            // Forked: the parent's dispatcher threads (and the batches they ran) are not here.
            q.pid = std::process::id();
            q.workers = 0;
            q.running = 0;
            q.inline = 0;
        }
        if q.workers == 0 {
            let want = sh.cfg.get(Opt::MaxInFlight) as usize;
            for _ in 0..want {
                let shared = sh.clone();
                let spawned = std::thread::Builder::new()
                    .name("pqgpu-serve".into())
                    .spawn(move || worker(shared));
                if spawned.is_ok() {
                    q.workers += 1;
                }
            }
            if q.workers == 0 {
                // No thread to be had: run the items here rather than lose them.
                drop(q);
                return self.run_batch(items);
            }
        }
        q.items.extend(items);
        q.last_arrival = Instant::now();
        drop(q);
        sh.arrived.notify_one();
    }

    fn run_batch(&self, items: Vec<Item>) {
        run_batch(&self.sh, items)
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.sh.lock().shutdown = true;
        self.sh.arrived.notify_all();
    }
}

/// A blocking call on the CPU in the caller's thread.
fn run_inline(op: Op) -> Status {
    // A completion that keeps nothing: the status is returned directly.
    struct Nothing;
    impl Completion for Nothing {
        fn complete(&self, _: usize, _: Status) {}
    }
    let item = Item::new(op, Arc::new(Nothing), 0);
    let st = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| item.op.run_cpu()))
        .unwrap_or(Err(Error::Panic));
    item.finish(st);
    st
}

/// Runs a batch where it is fastest: the CPU for a CPU context or a batch under the
/// crossover, the backend otherwise (with CPU retries of what it fails).
fn run_batch(sh: &Shared, items: Vec<Item>) {
    let crossover = sh.cfg.get(Opt::CpuCrossover) as usize;
    match sh.route {
        Route::Cpu => exec::run_cpu(items),
        Route::Gpu if items.len() < crossover => exec::run_cpu(items),
        Route::Gpu => exec::run_backend(&*sh.backend, items, true),
        Route::Other => exec::run_backend(&*sh.backend, items, false),
    }
}

/// One dispatcher thread: waits for a batch to be due, takes it, runs it.
fn worker(sh: Arc<Shared>) {
    let mut q = sh.lock();
    loop {
        if q.items.is_empty() {
            if q.shutdown {
                q.workers -= 1;
                return;
            }
            q = sh.arrived.wait(q).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let max_batch = sh.cfg.get(Opt::MaxBatch) as usize;
        if sh.route != Route::Cpu && q.items.len() < max_batch {
            let max_wait = Duration::from_micros(sh.cfg.get(Opt::MaxWaitUs));
            // Arrivals paused this long (or a quarter of the maximum wait) flush the queue.
            let quiet = Duration::from_micros(sh.cfg.get(Opt::QuietUs)).min(max_wait / 4);
            let now = Instant::now();
            let due = q.items[0].enqueued + max_wait;
            let calm = q.last_arrival + quiet;
            if now < due && now < calm && !q.shutdown {
                let until = due.min(calm) - now;
                q = sh
                    .arrived
                    .wait_timeout(q, until)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
        }
        let take = q.items.len().min(max_batch);
        let batch: Vec<Item> = q.items.drain(..take).collect();
        q.running += take;
        let more = !q.items.is_empty();
        drop(q);
        if more {
            sh.arrived.notify_one();
        }
        // Items report from here; a panic escaping the batch still reports through their Drop.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_batch(&sh, batch)));
        q = sh.lock();
        q.running -= take;
    }
}
