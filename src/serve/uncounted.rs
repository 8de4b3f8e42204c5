//! Handles held without a reference count of their own.
//!
//! A queued item or an asynchronous job names shared state (its key handle, its context's
//! notify state) that something else keeps alive for as long as the item lives. Cloning the
//! `Arc` per item would write its count, a cache line every submitting and completing thread
//! shares, twice per item; an [`Uncounted`] copies the pointer instead.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

/// `H` (an `Arc`, or a type that is one `Arc`) rebuilt from another `Arc`'s pointer without
/// taking a count, and never dropped.
pub struct Uncounted<H>(ManuallyDrop<H>);

impl<H> Uncounted<H> {
    /// `wrap(a')`, where `a'` is `a` without a count of its own.
    ///
    /// # Safety
    /// `a`'s allocation outlives every use of the result (some counted `Arc` of it is alive
    /// meanwhile), and `wrap` moves its argument into the result (never drops or clones it).
    pub unsafe fn of<T>(a: &Arc<T>, wrap: fn(Arc<T>) -> H) -> Uncounted<H> {
        // SAFETY: the pointer is an `Arc`'s, so `from_raw` rebuilds that `Arc` without
        // changing its count; `wrap` keeps it (caller's promise) and `ManuallyDrop` never
        // gives the unowned count back; the allocation outlives the result (caller's promise).
        Uncounted(ManuallyDrop::new(wrap(unsafe {
            Arc::from_raw(Arc::as_ptr(a))
        })))
    }
}

impl<T> Uncounted<Arc<T>> {
    /// `a` without a count of its own.
    ///
    /// # Safety
    /// `a`'s allocation outlives every use of the result.
    pub unsafe fn new(a: &Arc<T>) -> Uncounted<Arc<T>> {
        // SAFETY: the identity keeps its argument; the lifetime is the caller's promise.
        unsafe { Uncounted::of(a, |x| x) }
    }
}

impl<H> Deref for Uncounted<H> {
    type Target = H;
    fn deref(&self) -> &H {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_without_counting_and_never_releases() {
        let a = Arc::new(7u32);
        {
            // SAFETY: `a` outlives `u`.
            let u = unsafe { Uncounted::new(&a) };
            assert_eq!(**u, 7);
            assert_eq!(Arc::strong_count(&a), 1, "an Uncounted takes no count");
        }
        assert_eq!(Arc::strong_count(&a), 1, "nor gives one back when it goes");
        struct Wrapped(Arc<u32>);
        {
            // SAFETY: as above; the constructor moves its argument in.
            let w = unsafe { Uncounted::of(&a, Wrapped) };
            assert!(Arc::ptr_eq(&(*w).0, &a), "the same allocation");
        }
        assert_eq!(Arc::strong_count(&a), 1);
    }
}
