//! Key encapsulation (PKCS#11 3.2: C_EncapsulateKey, C_DecapsulateKey). The token has no KEM
//! mechanism yet, so every mechanism is CKR_MECHANISM_INVALID (after the usual checks).

use super::guard;
use crate::ck::*;
use crate::module;

/// # Safety
/// Pointers as the specification defines them.
#[no_mangle]
pub unsafe extern "C" fn C_EncapsulateKey(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    _key: CK_OBJECT_HANDLE,
    _tpl: *mut CK_ATTRIBUTE,
    _n: CK_ULONG,
    _ct: *mut CK_BYTE,
    _ctlen: *mut CK_ULONG,
    _h: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        module()?.sessions.get(s)?;
        if mech.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        Err(CKR_MECHANISM_INVALID)
    })
}

/// # Safety
/// Pointers as the specification defines them.
#[no_mangle]
pub unsafe extern "C" fn C_DecapsulateKey(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    _key: CK_OBJECT_HANDLE,
    _tpl: *mut CK_ATTRIBUTE,
    _n: CK_ULONG,
    _ct: *mut CK_BYTE,
    _ctlen: CK_ULONG,
    _h: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        module()?.sessions.get(s)?;
        if mech.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        Err(CKR_MECHANISM_INVALID)
    })
}
