//! Slot and token management: one slot (id 0) holding the configured token.

use super::{guard, input, put, put_list};
use crate::ck::*;
use crate::token::{Login, MAX_PIN, MIN_PIN};
use crate::{mech, module, SLOT_ID};

fn slot(id: CK_SLOT_ID) -> Rv {
    if id == SLOT_ID {
        Ok(())
    } else {
        Err(CKR_SLOT_ID_INVALID)
    }
}

/// # Safety
/// `p` NULL or holding `*n` slot ids; `n` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetSlotList(
    _present: CK_BBOOL,
    p: *mut CK_SLOT_ID,
    n: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        module()?;
        // SAFETY: the caller's promise.
        unsafe { put_list(&[SLOT_ID], p, n) }
    })
}

/// # Safety
/// `info` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetSlotInfo(id: CK_SLOT_ID, info: *mut CK_SLOT_INFO) -> CK_RV {
    guard(|| {
        module()?;
        slot(id)?;
        let i = CK_SLOT_INFO {
            slotDescription: pad("pqgpu token slot"),
            manufacturerID: pad("pqgpu"),
            flags: CKF_TOKEN_PRESENT,
            hardwareVersion: CK_VERSION { major: 0, minor: 0 },
            firmwareVersion: crate::fns::general::LIBRARY_VERSION,
        };
        // SAFETY: the caller's promise.
        unsafe { put(info, i) }
    })
}

/// # Safety
/// `info` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetTokenInfo(id: CK_SLOT_ID, info: *mut CK_TOKEN_INFO) -> CK_RV {
    guard(|| {
        let m = module()?;
        slot(id)?;
        m.token_write().refresh()?;
        let (all, rw) = m.sessions.counts();
        let t = m.token_read();
        let i = CK_TOKEN_INFO {
            label: pad(t.label()),
            manufacturerID: pad("pqgpu"),
            model: pad("pqgpu"),
            serialNumber: pad(t.serial()),
            flags: t.flags(),
            ulMaxSessionCount: CK_EFFECTIVELY_INFINITE,
            ulSessionCount: all as CK_ULONG,
            ulMaxRwSessionCount: CK_EFFECTIVELY_INFINITE,
            ulRwSessionCount: rw as CK_ULONG,
            ulMaxPinLen: MAX_PIN as CK_ULONG,
            ulMinPinLen: MIN_PIN as CK_ULONG,
            ulTotalPublicMemory: CK_UNAVAILABLE_INFORMATION,
            ulFreePublicMemory: CK_UNAVAILABLE_INFORMATION,
            ulTotalPrivateMemory: CK_UNAVAILABLE_INFORMATION,
            ulFreePrivateMemory: CK_UNAVAILABLE_INFORMATION,
            hardwareVersion: CK_VERSION { major: 0, minor: 0 },
            firmwareVersion: crate::fns::general::LIBRARY_VERSION,
            utcTime: [b' '; 16],
        };
        // SAFETY: the caller's promise.
        unsafe { put(info, i) }
    })
}

/// # Safety
/// `p` NULL or holding `*n` entries; `n` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetMechanismList(
    id: CK_SLOT_ID,
    p: *mut CK_MECHANISM_TYPE,
    n: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        module()?;
        slot(id)?;
        let all: Vec<CK_MECHANISM_TYPE> = mech::table().iter().map(|e| e.0).collect();
        // SAFETY: the caller's promise.
        unsafe { put_list(&all, p, n) }
    })
}

/// # Safety
/// `info` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetMechanismInfo(
    id: CK_SLOT_ID,
    ty: CK_MECHANISM_TYPE,
    info: *mut CK_MECHANISM_INFO,
) -> CK_RV {
    guard(|| {
        module()?;
        slot(id)?;
        let i = mech::info(ty).ok_or(CKR_MECHANISM_INVALID)?;
        // SAFETY: the caller's promise.
        unsafe { put(info, i) }
    })
}

/// A label as given: 32 bytes, blank-padded; trailing blanks dropped. A NUL ends it early
/// (some callers pass a C string).
///
/// # Safety
/// `label` NULL or 32 readable bytes.
unsafe fn read_label(label: *const CK_UTF8CHAR) -> Rv<String> {
    if label.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    let b = unsafe { std::slice::from_raw_parts(label, 32) };
    let b = b.split(|&c| c == 0).next().unwrap_or_default();
    Ok(String::from_utf8_lossy(b).trim_end_matches(' ').to_string())
}

/// # Safety
/// `pin` holds `n` bytes; `label` 32 bytes.
#[no_mangle]
pub unsafe extern "C" fn C_InitToken(
    id: CK_SLOT_ID,
    pin: *mut CK_UTF8CHAR,
    n: CK_ULONG,
    label: *mut CK_UTF8CHAR,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        slot(id)?;
        // SAFETY: the caller's promise.
        let pin = unsafe { input(pin, n) }?;
        // SAFETY: the caller's promise.
        let label = unsafe { read_label(label) }?;
        if m.sessions.counts().0 > 0 {
            return Err(CKR_SESSION_EXISTS);
        }
        let r = m.token_write().init_token(pin, &label);
        r
    })
}

/// # Safety
/// `pin` holds `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_InitPIN(
    s: CK_SESSION_HANDLE,
    pin: *mut CK_UTF8CHAR,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        // SAFETY: the caller's promise.
        let pin = unsafe { input(pin, n) }?;
        let mut t = m.token_write();
        if t.login != Login::So || !rw {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        t.init_pin(pin)
    })
}

/// # Safety
/// `old` holds `on` bytes, `new` `nn` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_SetPIN(
    s: CK_SESSION_HANDLE,
    old: *mut CK_UTF8CHAR,
    on: CK_ULONG,
    new: *mut CK_UTF8CHAR,
    nn: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        if !rw {
            return Err(CKR_SESSION_READ_ONLY);
        }
        // SAFETY: the caller's promise.
        let (old, new) = unsafe { (input(old, on)?, input(new, nn)?) };
        let r = m.token_write().set_pin(old, new);
        r
    })
}
