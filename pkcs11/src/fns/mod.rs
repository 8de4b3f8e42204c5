//! The exported functions, one file per chapter of the PKCS#11 specification, and the
//! function lists that name them ([`list`]). Each function turns pointers into values,
//! runs inside [`guard`] (a panic is CKR_GENERAL_ERROR, never an unwind into C) and returns
//! a CKR_* code.

pub mod general;
pub mod kem;
pub mod keymgmt;
pub mod list;
pub mod object;
pub mod session;
pub mod sign;
pub mod slot;

use crate::ck::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs a function's body; a panic is CKR_GENERAL_ERROR.
pub fn guard(f: impl FnOnce() -> Rv) -> CK_RV {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => rv(r),
        Err(_) => {
            crate::log("internal error (panic caught at the boundary)");
            CKR_GENERAL_ERROR
        }
    }
}

/// The caller's input bytes (`n` bytes at `p`; NULL only with `n` 0).
///
/// # Safety
/// `p` holds `n` readable bytes, or is NULL.
pub unsafe fn input<'a>(p: *const u8, n: CK_ULONG) -> Rv<&'a [u8]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

/// An output of `need` bytes by PKCS#11's length convention: with `p` NULL only the length is
/// given (`Ok(None)`); with a buffer too small, CKR_BUFFER_TOO_SMALL and the length; else the
/// buffer (`*len` is set to `need`).
///
/// # Safety
/// `len` is a valid pointer; `p`, if not NULL, holds `*len` writable bytes.
pub unsafe fn output<'a>(p: *mut u8, len: *mut CK_ULONG, need: usize) -> Rv<Option<&'a mut [u8]>> {
    if len.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    let have = unsafe { *len } as usize;
    // SAFETY: as above.
    unsafe { *len = need as CK_ULONG };
    if p.is_null() {
        return Ok(None);
    }
    if have < need {
        return Err(CKR_BUFFER_TOO_SMALL);
    }
    // SAFETY: the caller's promise: `have` >= `need` writable bytes.
    Ok(Some(unsafe { std::slice::from_raw_parts_mut(p, need) }))
}

/// Writes `v` into a caller's struct pointer.
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub unsafe fn put<T>(p: *mut T, v: T) -> Rv {
    if p.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise; non-NULL.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// Copies a list into the caller's array by the length convention (`p` NULL: the count only).
///
/// # Safety
/// `n` is valid; `p`, if not NULL, holds `*n` elements.
pub unsafe fn put_list<T: Copy>(items: &[T], p: *mut T, n: *mut CK_ULONG) -> Rv {
    if n.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    let have = unsafe { *n } as usize;
    // SAFETY: as above.
    unsafe { *n = items.len() as CK_ULONG };
    if p.is_null() {
        return Ok(());
    }
    if have < items.len() {
        return Err(CKR_BUFFER_TOO_SMALL);
    }
    for (i, it) in items.iter().enumerate() {
        // SAFETY: i < have elements.
        unsafe { p.add(i).write_unaligned(*it) };
    }
    Ok(())
}
