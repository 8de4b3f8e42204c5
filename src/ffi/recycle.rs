//! Batch-sized lists (checked items, output rows, address ranges, statuses) reuse the memory
//! of earlier batches. A fresh list for 65,536 items is fresh pages, and faulting them in cost
//! more than checking the items: 2.2 ms of an 8.5 ms ML-DSA-44 verify batch on the H200 host,
//! whose GPU work takes 6 ms.

use crate::backend::{DecapsItem, EncapsItem, SignItem, SlhSignItem, SlhVerifyItem, VerifyItem};
use crate::Status;
use std::sync::Mutex;

/// Lists kept per type: enough for a few batches in flight at once.
const KEPT: usize = 4;
/// Longer lists are not kept (a one-off huge batch should not pin its memory).
const MAX_KEPT_LEN: usize = 1 << 18;

/// A type whose lists are recycled, with its pool.
pub(crate) trait Pooled: Sized + Send + 'static {
    fn pool() -> &'static Mutex<Vec<Vec<Self>>>;
}

macro_rules! pooled {
    ($($t:ty),* $(,)?) => {$(
        impl Pooled for $t {
            fn pool() -> &'static Mutex<Vec<Vec<Self>>> {
                static POOL: Mutex<Vec<Vec<$t>>> = Mutex::new(Vec::new());
                &POOL
            }
        }
    )*};
}

pooled!(
    SignItem<'static>,
    VerifyItem<'static>,
    SlhSignItem<'static>,
    SlhVerifyItem<'static>,
    EncapsItem<'static>,
    DecapsItem<'static>,
    (),
    Status,
    (usize, usize),
    &'static mut [u8],
);

/// An empty list, with the capacity of an earlier batch's when one is free.
pub(crate) fn take<T: Pooled>() -> Vec<T> {
    T::pool()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pop()
        .unwrap_or_default()
}

/// Hands a list back for a later batch (emptied first: it keeps no addresses or statuses).
pub(crate) fn give<T: Pooled>(mut v: Vec<T>) {
    v.clear();
    if v.capacity() == 0 || v.capacity() > MAX_KEPT_LEN {
        return;
    }
    let mut pool = T::pool().lock().unwrap_or_else(|e| e.into_inner());
    if pool.len() < KEPT {
        pool.push(v);
    }
}
