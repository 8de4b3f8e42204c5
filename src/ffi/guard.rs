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

/// A FIPS 204 context string: over 255 bytes is `InvalidArgument`, whatever the length (the
/// length is judged before the pointer, so an absurd one is not `BadLength`).
///
/// # Safety
/// As for [`input`].
pub(crate) unsafe fn context_string<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], Error> {
    if len > 255 {
        return Err(Error::InvalidArgument);
    }
    // SAFETY: forwarded from the caller.
    unsafe { input(ptr, len) }
}

/// A signature to verify: NULL is `NullPointer`; any length but `want` is `VerifyFailed`,
/// whatever the length (the contract: a wrong-length signature does not verify).
///
/// # Safety
/// As for [`input`].
pub(crate) unsafe fn signature<'a>(
    ptr: *const u8,
    len: usize,
    want: usize,
) -> Result<&'a [u8], Error> {
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    if len != want {
        return Err(Error::VerifyFailed);
    }
    // SAFETY: forwarded from the caller.
    unsafe { input(ptr, len) }
}

/// The address range of an input, for the no-overlap check (empty for NULL).
pub(crate) fn span_of(ptr: *const u8, len: usize) -> (usize, usize) {
    match ptr.is_null() {
        true => (0, 0),
        false => (ptr as usize, len),
    }
}

/// A caller-owned output buffer, handed to the backend as a slice ([`Out::slice`]) once its
/// length and disjointness are checked.
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

    /// The buffer's address range, for the no-overlap check.
    pub(crate) fn span(self) -> (usize, usize) {
        (self.ptr as usize, self.len)
    }

    /// The buffer as a raw slice pointer (no promise made yet: see [`Out::slice`]).
    pub(crate) fn raw(self) -> *mut [u8] {
        std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)
    }

    /// The buffer as a slice the backend writes into directly.
    ///
    /// # Safety
    /// The buffer must be `len` writable bytes (`len` at most `isize::MAX`: an array checked by
    /// [`Out::array`] or a length checked against the algorithm), valid for `'a`, and not
    /// overlapping any other buffer referenced during `'a` (see `batch::disjoint`).
    pub(crate) unsafe fn slice<'a>(self) -> &'a mut [u8] {
        // SAFETY: the caller's promises above; the pointer is non-NULL (checked at creation).
        unsafe { slice::from_raw_parts_mut(self.ptr, self.len) }
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
