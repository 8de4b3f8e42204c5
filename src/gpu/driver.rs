//! Which process initialised the CUDA driver. CUDA cannot be used in a child process once its
//! parent has initialised the driver: the child inherits the driver's state but not the
//! threads and handles behind it. So the process that initialises it records its id here
//! (just before `cuInit`, so a fork while the call runs counts too), and a child forked from
//! it, which inherits this memory, finds another process's id: the GPU is unusable there, and
//! [`inherited_reason`] says why. Only `device::ordinals` initialises the driver; reading this
//! state never does.

use std::sync::atomic::{AtomicU32, Ordering};

/// The process that initialised (or began to initialise) the CUDA driver; 0: none.
static INITIALISED_BY: AtomicU32 = AtomicU32::new(0);

/// Records that this process initialises the driver now.
pub(super) fn initialising() {
    INITIALISED_BY.store(crate::process::id(), Ordering::SeqCst);
}

/// The process that initialised the CUDA driver: this one, or the one this process was
/// forked from (directly or not). `None` while no process in this line has.
pub fn initialised_by() -> Option<u32> {
    match INITIALISED_BY.load(Ordering::SeqCst) {
        0 => None,
        pid => Some(pid),
    }
}

/// Why CUDA is unusable in this process because of a fork, if it is: the driver was
/// initialised by another process before this one was forked from it.
pub fn inherited_reason() -> Option<String> {
    let by = initialised_by().filter(|&pid| pid != crate::process::id())?;
    Some(format!(
        "CUDA initialised by parent process {by} before fork(); a forked child cannot use it \
         (keep GPU work out of the process that forks)"
    ))
}

/// Marks this process as having initialised the CUDA driver, exactly as the first GPU work
/// does, without touching the driver: for tests of what a forked child does on a machine
/// without a GPU. Never needed otherwise.
#[doc(hidden)]
pub fn simulate_initialised() {
    initialising();
}
