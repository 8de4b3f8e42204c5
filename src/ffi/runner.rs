//! The threads that run batch jobs (`job::start`), kept from one batch to the next: starting
//! an OS thread for every batch (and joining it at `pqg_job_free`) cost about 0.1 ms of each
//! batch's time (issue #12).
//!
//! A job that finds no idle runner gets a new one, so batches in flight at once still run at
//! once, as with a thread each; a runner left idle for [`LINGER`] ends.
//!
//! Fork: a child has none of its parent's threads, and may have forked while one of them held
//! the pool's lock. So the pool is tagged with the process that made it; a child makes a pool
//! of its own and never touches the inherited one (its lock may never be released there).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// What a runner runs: a job's whole work, reporting included.
pub(crate) type Task = Box<dyn FnOnce() + Send>;

/// How long an idle runner waits for the next task before it ends.
const LINGER: Duration = Duration::from_secs(10);

/// The runners of one process.
struct Pool {
    /// The process that made the pool (`crate::process::id`).
    pid: u32,
    state: Mutex<State>,
    /// Signalled once per task queued for an idle runner.
    queued: Condvar,
}

struct State {
    /// Tasks handed to idle runners and not yet taken; never longer than `idle`.
    tasks: VecDeque<Task>,
    /// Runners waiting in [`Pool::next`].
    idle: usize,
}

/// This process's pool: a leaked allocation, replaced (and the old one left alone) in a child
/// after fork().
static POOL: AtomicPtr<Pool> = AtomicPtr::new(null_mut());

fn pool() -> &'static Pool {
    let pid = crate::process::id();
    loop {
        let current = POOL.load(Ordering::Acquire);
        // SAFETY: a non-NULL pointer is a leaked `Box<Pool>`, never freed.
        if let Some(p) = unsafe { current.as_ref() } {
            if p.pid == pid {
                return p;
            }
        }
        let fresh = Box::into_raw(Box::new(Pool {
            pid,
            state: Mutex::new(State {
                tasks: VecDeque::new(),
                idle: 0,
            }),
            queued: Condvar::new(),
        }));
        match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // The parent's pool (if any) is leaked: its runners do not exist here.
            // SAFETY: just published, never freed.
            Ok(_) => return unsafe { &*fresh },
            // Another thread of this process set one meanwhile: use that.
            // SAFETY: `fresh` was never published.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A task never runs under the lock, so a poisoned lock's state is consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next task for a runner that finished one; `None` after [`LINGER`] without any.
    fn next(&self) -> Option<Task> {
        let mut s = self.lock();
        loop {
            if let Some(task) = s.tasks.pop_front() {
                return Some(task);
            }
            s.idle += 1;
            let (g, waited) = self
                .queued
                .wait_timeout(s, LINGER)
                .unwrap_or_else(|e| e.into_inner());
            s = g;
            s.idle -= 1;
            // A task queued as the wait timed out is still taken (it counted this runner).
            if waited.timed_out() && s.tasks.is_empty() {
                return None;
            }
        }
    }
}

/// Runs `task` on a runner: an idle one, or a new one. Gives the task back when no thread
/// could be started (the caller then runs it itself).
pub(crate) fn run(task: Task) -> Result<(), Task> {
    let pool = pool();
    let mut s = pool.lock();
    // Every idle runner takes at most one queued task, so this one is taken at once.
    if s.tasks.len() < s.idle {
        s.tasks.push_back(task);
        drop(s);
        pool.queued.notify_one();
        return Ok(());
    }
    drop(s);
    // The task sits in a slot so that it can be given back if the thread does not start.
    let slot = Arc::new(Mutex::new(Some(task)));
    let first = slot.clone();
    let spawned = thread::Builder::new()
        .name("pqgpu-job".into())
        .spawn(move || {
            let mut task = first.lock().unwrap_or_else(|e| e.into_inner()).take();
            drop(first);
            while let Some(t) = task {
                // The tasks contain their panics; this keeps the runner if one does not.
                let _ = catch_unwind(AssertUnwindSafe(t));
                task = pool.next();
            }
        });
    match spawned {
        Ok(_) => Ok(()),
        Err(_) => match slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(task) => Err(task),
            // Unreachable (a thread that never started took nothing), but never lose a task.
            None => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    fn thread_id_of_a_task() -> thread::ThreadId {
        let (tx, rx) = channel();
        run(Box::new(move || tx.send(thread::current().id()).unwrap()))
            .unwrap_or_else(|_| panic!("no runner"));
        rx.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    #[test]
    fn tasks_one_after_another_reuse_runners() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..40 {
            seen.insert(thread_id_of_a_task());
            // Time for the runner to go idle (other tests' runners may take tasks too).
            thread::sleep(Duration::from_millis(2));
        }
        assert!(seen.len() < 20, "{} threads for 40 tasks", seen.len());
    }

    #[test]
    fn a_child_after_fork_starts_runners_of_its_own() {
        // An idle runner in the parent: a child that took it for its own would queue a task
        // for a thread it does not have, and wait for ever.
        thread_id_of_a_task();
        thread::sleep(Duration::from_millis(20));
        // SAFETY: the child runs a task, waits for it with a deadline and leaves with _exit,
        // without unwinding or printing.
        unsafe {
            match libc::fork() {
                0 => {
                    let (tx, rx) = channel();
                    let ok = run(Box::new(move || {
                        let _ = tx.send(());
                    }))
                    .is_ok()
                        && rx.recv_timeout(Duration::from_secs(10)).is_ok();
                    libc::_exit(if ok { 0 } else { 1 });
                }
                child if child > 0 => {
                    let mut status = 0;
                    assert_eq!(libc::waitpid(child, &mut status, 0), child);
                    assert!(
                        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                        "the child's task did not run"
                    );
                }
                _ => panic!("fork failed"),
            }
        }
        // The parent's runners still work.
        thread_id_of_a_task();
    }

    #[test]
    fn tasks_in_flight_at_once_run_at_once() {
        // Four tasks that each wait until all four have started: with fewer runners than
        // tasks in flight this never ends.
        let started = Arc::new(std::sync::Barrier::new(5));
        let (tx, rx) = channel();
        for _ in 0..4 {
            let (started, tx) = (started.clone(), tx.clone());
            run(Box::new(move || {
                started.wait();
                tx.send(()).unwrap();
            }))
            .unwrap_or_else(|_| panic!("no runner"));
        }
        started.wait();
        for _ in 0..4 {
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
    }

    #[test]
    fn a_panicking_task_leaves_its_runner_working() {
        run(Box::new(|| panic!("contained"))).unwrap_or_else(|_| panic!("no runner"));
        for _ in 0..20 {
            thread_id_of_a_task();
        }
    }
}
