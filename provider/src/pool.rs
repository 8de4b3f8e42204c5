//! Helper threads that run work off OpenSSL's small async-job stacks. Created on first use in
//! each process (threads do not survive fork(), so a forked child makes its own).

use pqgpu::process::PerProcess;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

type Work = Box<dyn FnOnce() + Send + 'static>;

/// Where this process's helper threads take their work from.
static POOL: Mutex<PerProcess<Option<Sender<Work>>>> = Mutex::new(PerProcess::new(None));

/// Helper threads: enough to keep every core busy with single-item work.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(2, 64)
}

const NAME: &str = "pqgpu-prov";

/// Whether the current thread is one of these helpers.
pub fn is_helper_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with(NAME))
}

/// Queues `work` on a helper thread.
pub fn spawn(work: Work) {
    let mut g = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if g.get().and_then(Option::as_ref).is_none() {
        let (tx, rx) = channel::<Work>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads() {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{NAME}-{i}"))
                .spawn(move || loop {
                    let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    match job {
                        // A panic in one item must not kill the helper; the item's own
                        // guard reports it (see `engine`).
                        Ok(w) => crate::guard::guard((), w),
                        Err(_) => return,
                    }
                });
            if spawned.is_err() && i == 0 {
                // No thread at all: run the work here rather than losing it.
                drop(g);
                work();
                return;
            }
        }
        g.set(Some(tx));
    }
    let tx = g.get().and_then(Option::clone).expect("set above");
    drop(g);
    if let Err(e) = tx.send(work) {
        (e.0)();
    }
}
