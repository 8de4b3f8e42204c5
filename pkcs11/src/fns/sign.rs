//! Signing and verification (single- and multi-part). The operation's key handle is taken at
//! Init; the signature itself runs outside the session's lock, through the serving
//! dispatcher, so concurrent sessions' signatures merge into one backend batch.
//!
//! Every outcome but a length query (NULL buffer) and CKR_BUFFER_TOO_SMALL ends the
//! operation, as the specification has it.

use super::{guard, input, output};
use crate::ck::*;
use crate::mech::{self, sign};
use crate::session::Session;
use crate::token::Login;
use crate::{engine, module};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Sign,
    Verify,
    MessageSign,
    MessageVerify,
}

fn slot(s: &mut Session, r: Role) -> &mut Option<sign::Op> {
    match r {
        Role::Sign => &mut s.sign,
        Role::Verify => &mut s.verify,
        Role::MessageSign => &mut s.msg_sign,
        Role::MessageVerify => &mut s.msg_verify,
    }
}

/// C_SignInit / C_VerifyInit.
///
/// # Safety
/// `mech` NULL or valid, its parameter as the mechanism defines.
unsafe fn init(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    r: Role,
) -> Rv {
    let m = module()?;
    let session = m.sessions.get(s)?;
    if mech.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    let mech = unsafe { std::ptr::read_unaligned(mech) };
    let key_type = sign::key_type_of(mech.mechanism).ok_or(CKR_MECHANISM_INVALID)?;
    let mut ses = session.lock().unwrap_or_else(|e| e.into_inner());
    if slot(&mut ses, r).is_some() {
        return Err(CKR_OPERATION_ACTIVE);
    }
    let o = {
        let t = m.token_read();
        let o = t.get(key).cloned().ok_or(CKR_KEY_HANDLE_INVALID)?;
        if !t.visible(&o) {
            return Err(if t.login == Login::Public {
                CKR_USER_NOT_LOGGED_IN
            } else {
                CKR_KEY_HANDLE_INVALID
            });
        }
        o
    };
    let (class, usage) = match r {
        Role::Sign | Role::MessageSign => (CKO_PRIVATE_KEY, CKA_SIGN),
        Role::Verify | Role::MessageVerify => (CKO_PUBLIC_KEY, CKA_VERIFY),
    };
    if o.class() != class || o.key_type() != key_type {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    }
    if !o.flag(usage) {
        return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
    }
    let sig = match mech::alg_of(&o)? {
        pqgpu::Alg::MlDsa(p) => pqgpu::serve::Sig::MlDsa(p),
        pqgpu::Alg::SlhDsa(p) => pqgpu::serve::Sig::SlhDsa(p),
        _ => return Err(CKR_KEY_TYPE_INCONSISTENT),
    };
    let handle = mech::handle_of(&o)?;
    // SAFETY: the caller's promise about the mechanism parameter.
    let op = unsafe { sign::start(&mech, handle, sig) }?;
    *slot(&mut ses, r) = Some(op);
    Ok(())
}

/// Takes the operation out of the session when the output is really to be written (ending
/// it); answers a length query or a short buffer leaving it in place.
///
/// # Safety
/// As [`output`].
unsafe fn finish_sign(
    s: CK_SESSION_HANDLE,
    sig: *mut u8,
    len: *mut CK_ULONG,
    data: Option<(*const u8, CK_ULONG)>,
) -> Rv {
    let m = module()?;
    let session = m.sessions.get(s)?;
    let (op, out, buffered) = {
        let mut ses = session.lock().unwrap_or_else(|e| e.into_inner());
        let op = ses.sign.as_ref().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        if data.is_some() && op.parts.is_some() {
            ses.sign = None;
            return Err(CKR_OPERATION_ACTIVE);
        }
        // SAFETY: the caller's promise.
        let out = match unsafe { output(sig, len, op.signature_len()) } {
            Ok(Some(out)) => out,
            Ok(None) => return Ok(()),
            Err(CKR_BUFFER_TOO_SMALL) => return Err(CKR_BUFFER_TOO_SMALL),
            Err(e) => {
                ses.sign = None;
                return Err(e);
            }
        };
        let mut op = ses.sign.take().expect("checked above");
        let buffered = op.parts.take();
        (op, out, buffered)
    };
    let msg: &[u8] = match (data, &buffered) {
        // SAFETY: the caller's promise.
        (Some((p, n)), _) => unsafe { input(p, n) }?,
        (None, Some(b)) => b,
        (None, None) => &[],
    };
    engine::with(|e| op.sign(e, msg, out))?
}

/// # Safety
/// See [`init`].
#[no_mangle]
pub unsafe extern "C" fn C_SignInit(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { init(s, mech, key, Role::Sign) })
}

/// # Safety
/// `data` holds `n` bytes; `sig`, `len` by the length convention.
#[no_mangle]
pub unsafe extern "C" fn C_Sign(
    s: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    n: CK_ULONG,
    sig: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { finish_sign(s, sig, len, Some((data, n))) })
}

/// Appends to a multi-part operation (not CKM_HASH_ML_DSA, which is single-part).
///
/// # Safety
/// `data` holds `n` bytes.
unsafe fn update(s: CK_SESSION_HANDLE, data: *const u8, n: CK_ULONG, r: Role) -> Rv {
    let m = module()?;
    m.sessions.with(s, |ses| {
        let op = slot(ses, r).as_mut().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        // SAFETY: the caller's promise.
        let chunk = match unsafe { input(data, n) } {
            Ok(c) if op.multipart() => c,
            other => {
                *slot(ses, r) = None;
                return Err(other.err().unwrap_or(CKR_FUNCTION_NOT_SUPPORTED));
            }
        };
        op.parts
            .get_or_insert_with(Vec::new)
            .extend_from_slice(chunk);
        Ok(())
    })
}

/// # Safety
/// `data` holds `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_SignUpdate(
    s: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    n: CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { update(s, data, n, Role::Sign) })
}

/// # Safety
/// `sig`, `len` by the length convention.
#[no_mangle]
pub unsafe extern "C" fn C_SignFinal(
    s: CK_SESSION_HANDLE,
    sig: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { finish_sign(s, sig, len, None) })
}

/// # Safety
/// See [`init`].
#[no_mangle]
pub unsafe extern "C" fn C_VerifyInit(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { init(s, mech, key, Role::Verify) })
}

/// Ends the verification and checks `sig` on the data (given, or gathered by updates).
///
/// # Safety
/// `data` holds `n` bytes (when given); `sig` holds `sn` bytes.
unsafe fn finish_verify(
    s: CK_SESSION_HANDLE,
    data: Option<(*const u8, CK_ULONG)>,
    sig: *const u8,
    sn: CK_ULONG,
) -> Rv {
    let m = module()?;
    let mut op = m.sessions.with(s, |ses| {
        let op = ses.verify.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        if data.is_some() && op.parts.is_some() {
            return Err(CKR_OPERATION_ACTIVE);
        }
        Ok(op)
    })?;
    // SAFETY: the caller's promise.
    let sig = unsafe { input(sig, sn) }?;
    let buffered = op.parts.take();
    let msg: &[u8] = match (data, &buffered) {
        // SAFETY: the caller's promise.
        (Some((p, n)), _) => unsafe { input(p, n) }?,
        (None, Some(b)) => b,
        (None, None) => &[],
    };
    engine::with(|e| op.verify(e, msg, sig))?
}

/// # Safety
/// `data` holds `n` bytes, `sig` `sn` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_Verify(
    s: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    n: CK_ULONG,
    sig: *mut CK_BYTE,
    sn: CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { finish_verify(s, Some((data, n)), sig, sn) })
}

/// # Safety
/// `data` holds `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_VerifyUpdate(
    s: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    n: CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { update(s, data, n, Role::Verify) })
}

/// # Safety
/// `sig` holds `sn` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_VerifyFinal(
    s: CK_SESSION_HANDLE,
    sig: *mut CK_BYTE,
    sn: CK_ULONG,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { finish_verify(s, None, sig, sn) })
}

// ---- message-based signing and verification (PKCS#11 3.0) ------------------------------------

/// # Safety
/// See [`init`].
#[no_mangle]
pub unsafe extern "C" fn C_MessageSignInit(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { init(s, mech, key, Role::MessageSign) })
}

/// The operation for one message: the message-based operation stays in the session.
///
/// # Safety
/// `param` holds `plen` bytes, as [`sign::Op::for_message`] requires.
unsafe fn message_op(
    s: CK_SESSION_HANDLE,
    r: Role,
    param: *mut std::ffi::c_void,
    plen: CK_ULONG,
) -> Rv<sign::Op> {
    let m = module()?;
    m.sessions.with(s, |ses| {
        let op = slot(ses, r).as_ref().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        // SAFETY: the caller's promise.
        unsafe { op.for_message(param, plen) }
    })
}

/// Signs one message (length query and short buffer as in C_Sign); the message-based
/// operation goes on until C_MessageSignFinal.
///
/// # Safety
/// `param` holds `plen` bytes; `data` `n` bytes; `sig`, `len` by the length convention.
#[no_mangle]
pub unsafe extern "C" fn C_SignMessage(
    s: CK_SESSION_HANDLE,
    param: *mut std::ffi::c_void,
    plen: CK_ULONG,
    data: *mut CK_BYTE,
    n: CK_ULONG,
    sig: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: the caller's promise.
        let op = unsafe { message_op(s, Role::MessageSign, param, plen) }?;
        // SAFETY: the caller's promise.
        let Some(out) = (unsafe { output(sig, len, op.signature_len()) })? else {
            return Ok(());
        };
        // SAFETY: the caller's promise.
        let msg = unsafe { input(data, n) }?;
        engine::with(|e| op.sign(e, msg, out))?
    })
}

/// # Safety
/// Always safe to call; the session handle is checked.
#[no_mangle]
pub unsafe extern "C" fn C_MessageSignFinal(s: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.with(s, |ses| {
            ses.msg_sign.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
            Ok(())
        })
    })
}

/// # Safety
/// See [`init`].
#[no_mangle]
pub unsafe extern "C" fn C_MessageVerifyInit(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: the caller's promise.
    guard(|| unsafe { init(s, mech, key, Role::MessageVerify) })
}

/// # Safety
/// `param` holds `plen` bytes; `data` `n` bytes; `sig` `sn` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_VerifyMessage(
    s: CK_SESSION_HANDLE,
    param: *mut std::ffi::c_void,
    plen: CK_ULONG,
    data: *mut CK_BYTE,
    n: CK_ULONG,
    sig: *mut CK_BYTE,
    sn: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: the caller's promise.
        let op = unsafe { message_op(s, Role::MessageVerify, param, plen) }?;
        // SAFETY: the caller's promise.
        let (msg, sig) = unsafe { (input(data, n)?, input(sig, sn)?) };
        engine::with(|e| op.verify(e, msg, sig))?
    })
}

/// # Safety
/// Always safe to call; the session handle is checked.
#[no_mangle]
pub unsafe extern "C" fn C_MessageVerifyFinal(s: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.with(s, |ses| {
            ses.msg_verify.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
            Ok(())
        })
    })
}
