//! Coalescing for operations submitted from OpenSSL async jobs: requests wait in a queue, and
//! a few drainers on helper threads take everything queued (up to `MAX_BATCH`) as one backend
//! batch. While a batch runs the next one fills, so batches grow with the load; at light load
//! a request runs alone at once. A stand-in until pqgpu's serving dispatcher takes this over.

use std::sync::Mutex;

/// Largest batch handed to the backend at once.
const MAX_BATCH: usize = 4096;
/// Batches in flight per queue (the GPU overlaps transfers of one with compute of another).
const IN_FLIGHT: usize = 3;

struct State<T> {
    pid: u32,
    items: Vec<T>,
    draining: usize,
}

/// One queue of requests of one kind (operation and parameter set).
pub struct Queue<T> {
    state: Mutex<Option<State<T>>>,
}

impl<T: Send + 'static> Queue<T> {
    pub const fn new() -> Queue<T> {
        Queue {
            state: Mutex::new(None),
        }
    }

    /// Queues `item`; `run` later receives it in a batch, on a helper thread.
    pub fn push(&'static self, item: T, run: fn(Vec<T>)) {
        let pid = std::process::id();
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let st = g.get_or_insert_with(|| State {
            pid,
            items: Vec::new(),
            draining: 0,
        });
        if st.pid != pid {
            // A forked child: the parent's queue and drainers are not ours. Its requests
            // belong to the parent's jobs; forget them (completing them would touch its fds).
            std::mem::forget(std::mem::take(&mut st.items));
            *st = State {
                pid,
                items: Vec::new(),
                draining: 0,
            };
        }
        st.items.push(item);
        if st.draining < IN_FLIGHT {
            st.draining += 1;
            drop(g);
            crate::pool::spawn(Box::new(move || self.drain(run)));
        }
    }

    /// Runs batches until the queue is empty. `draining` changes only under the lock, with
    /// the emptiness check, so a pushed item always has a drainer.
    fn drain(&'static self, run: fn(Vec<T>)) {
        loop {
            let batch = {
                let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let Some(st) = g.as_mut() else { return };
                if st.items.is_empty() {
                    st.draining -= 1;
                    return;
                }
                let n = st.items.len().min(MAX_BATCH);
                st.items.drain(..n).collect::<Vec<T>>()
            };
            // A panic drops the batch's completions, which then report Error::Panic.
            crate::guard::guard((), || run(batch));
        }
    }
}
