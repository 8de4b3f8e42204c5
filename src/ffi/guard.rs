//! The boundary: panics become `PQG_ERR_PANIC`, C pointers and lengths become slices.
//!
//! All checks happen here so that the entry points read as "check, compute, copy out".

use super::{pqg_status, PQG_ERR_PANIC, PQG_OK};
use crate::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::slice;
use zeroize::Zeroize;

/// Runs an entry point's body: `Ok` is `PQG_OK`, an error its code, a panic `PQG_ERR_PANIC`.
/// Nothing unwinds past this, so no panic ever crosses into C.
pub(crate) fn boundary(body: impl FnOnce() -> Result<(), Error>) -> pqg_status {
    // AssertUnwindSafe: after a panic the body's state is dropped, never observed again.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => PQG_OK,
        Ok(Err(e)) => e.code(),
        Err(payload) => {
            // Dropping the payload runs foreign code (its Drop); keep that inside a guard too.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            PQG_ERR_PANIC
        }
    }
}

/// Like [`boundary`] for functions returning a value: a panic gives `fallback`.
pub(crate) fn boundary_or<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// An input buffer that may be empty: NULL is accepted with length 0 (an empty message or
/// context) and is `NullPointer` otherwise.
///
/// # Safety
/// If `ptr` is non-NULL it must point to `len` readable bytes that stay valid and unmodified
/// for `'a`.
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    if len > isize::MAX as usize {
        return Err(Error::BadLength);
    }
    // SAFETY: non-NULL, len within isize::MAX; readability and lifetime are the caller's promise.
    Ok(unsafe { slice::from_raw_parts(ptr, len) })
}

/// A required input buffer (a key, a signature, a ciphertext): NULL is always `NullPointer`.
///
/// # Safety
/// As for [`input`].
pub(crate) unsafe fn required<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], Error> {
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: forwarded from the caller.
    unsafe { input(ptr, len) }
}

/// An optional fixed-size input (seed, rnd, coins): NULL means "use fresh randomness".
///
/// # Safety
/// If `ptr` is non-NULL it must point to `N` readable bytes that stay valid for `'a`.
pub(crate) unsafe fn optional<'a, const N: usize>(ptr: *const u8) -> Option<&'a [u8; N]> {
    // SAFETY: [u8; N] has alignment 1; the N readable bytes are the caller's promise.
    (!ptr.is_null()).then(|| unsafe { &*ptr.cast::<[u8; N]>() })
}

/// A FIPS 204 context string: at most 255 bytes (`InvalidArgument`).
pub(crate) fn context_string(ctx: &[u8]) -> Result<&[u8], Error> {
    if ctx.len() > 255 {
        return Err(Error::InvalidArgument);
    }
    Ok(ctx)
}

/// A caller-owned output buffer. It is only written through [`Out::write`] (on success) or
/// [`Out::zero`] (secret outputs on failure), never read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Out {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: an `Out` is a plain address the caller promised stays valid until the work that
// writes it has completed; a job moves it to its worker thread and writes it from there only.
unsafe impl Send for Out {}

impl Out {
    /// A required output buffer: NULL is `NullPointer`.
    pub(crate) fn new(ptr: *mut u8, len: usize) -> Result<Out, Error> {
        if ptr.is_null() {
            return Err(Error::NullPointer);
        }
        Ok(Out { ptr, len })
    }

    /// A contiguous output array of `n` items of `len` bytes (a keygen batch's pks or sks).
    /// NULL is accepted for `n == 0` (nothing will be written); a size that cannot exist in
    /// memory is `InvalidArgument`.
    pub(crate) fn array(ptr: *mut u8, n: usize, len: usize) -> Result<Out, Error> {
        let total = array_len(n, len)?;
        if n == 0 {
            return Ok(Out {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            });
        }
        Out::new(ptr, total)
    }

    /// `BadLength` unless the caller's buffer has exactly `want` bytes.
    pub(crate) fn expect_len(self, want: usize) -> Result<Out, Error> {
        if self.len != want {
            return Err(Error::BadLength);
        }
        Ok(self)
    }

    /// Item `i` of an array of `len`-byte items starting at this buffer (bounds checked
    /// against this buffer's length).
    pub(crate) fn chunk(self, i: usize, len: usize) -> Out {
        assert!((i + 1) * len <= self.len, "chunk within the checked array");
        Out {
            ptr: self.ptr.wrapping_add(i * len),
            len,
        }
    }

    /// Copies `data` into the buffer (which must be exactly as long).
    ///
    /// # Safety
    /// The buffer must be `len` writable bytes, not overlapping `data`.
    pub(crate) unsafe fn write(self, data: &[u8]) {
        assert_eq!(data.len(), self.len, "output length checked up front");
        // SAFETY: lengths equal; writability and non-overlap are the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr, self.len) }
    }

    /// Zeroes the buffer (a secret output of a failed call).
    ///
    /// # Safety
    /// The buffer must be `len` writable bytes.
    pub(crate) unsafe fn zero(self) {
        // SAFETY: writability is the caller's promise; no other reference to it exists here.
        unsafe { zero_secret(self.ptr, self.len) }
    }
}

/// Zeroes a secret output after a failure; NULL is a no-op.
///
/// # Safety
/// If `ptr` is non-NULL it must point to `len` writable bytes.
pub(crate) unsafe fn zero_secret(ptr: *mut u8, len: usize) {
    if ptr.is_null() || len == 0 || len > isize::MAX as usize {
        return;
    }
    // SAFETY: non-NULL, len in range; writability is the caller's promise. zeroize uses
    // volatile writes, so the zeroing is not optimised away.
    unsafe { slice::from_raw_parts_mut(ptr, len) }.zeroize();
}

/// The `n` requests of a batch call: `NullPointer` for NULL with `n > 0`, and
/// `InvalidArgument` when `n` is too large to be an array in memory.
///
/// # Safety
/// If `ptr` is non-NULL it must point to `n` readable, initialised values for `'a`.
pub(crate) unsafe fn requests<'a, T>(ptr: *const T, n: usize) -> Result<&'a [T], Error> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    array_len(n, size_of::<T>())?;
    // SAFETY: non-NULL, size checked; validity for `'a` is the caller's promise.
    Ok(unsafe { slice::from_raw_parts(ptr, n) })
}

/// `n * len`, or `InvalidArgument` if that cannot be the size of a buffer.
pub(crate) fn array_len(n: usize, len: usize) -> Result<usize, Error> {
    n.checked_mul(len)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(Error::InvalidArgument)
}
