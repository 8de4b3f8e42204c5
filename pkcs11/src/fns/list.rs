//! The function lists and interfaces, and the entry points that hand them out: the 3.2 list
//! (through C_GetInterface), the 3.0 list
//! and the 2.40 list (C_GetFunctionList). Functions the module does not offer answer
//! CKR_FUNCTION_NOT_SUPPORTED; the stubs have each function's own C signature.
//!
//! The slot order is the OASIS headers' (pkcs11f.h); the field names of `cryptoki-sys`'s
//! structs are the functions' names, so a slot cannot be filled with the wrong function.

#![allow(non_snake_case)]

use super::{guard, put, put_list};
use crate::ck::*;
use std::ffi::c_void;

/// The functions the module does not offer.
mod unsupported {
    use crate::ck::*;
    use std::ffi::c_void;

    macro_rules! unsupported {
        ($($name:ident($($t:ty),*);)*) => {$(
            pub unsafe extern "C" fn $name($(_: $t),*) -> CK_RV {
                CKR_FUNCTION_NOT_SUPPORTED
            }
        )*};
    }

    unsupported! {
        C_GetOperationState(CK_SESSION_HANDLE, *mut CK_BYTE, *mut CK_ULONG);
        C_SetOperationState(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, CK_OBJECT_HANDLE, CK_OBJECT_HANDLE);
        C_CopyObject(CK_SESSION_HANDLE, CK_OBJECT_HANDLE, *mut CK_ATTRIBUTE, CK_ULONG, *mut CK_OBJECT_HANDLE);
        C_EncryptInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_Encrypt(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_EncryptUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_EncryptFinal(CK_SESSION_HANDLE, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_Decrypt(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptFinal(CK_SESSION_HANDLE, *mut CK_BYTE, *mut CK_ULONG);
        C_DigestInit(CK_SESSION_HANDLE, *mut CK_MECHANISM);
        C_Digest(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DigestUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG);
        C_DigestKey(CK_SESSION_HANDLE, CK_OBJECT_HANDLE);
        C_DigestFinal(CK_SESSION_HANDLE, *mut CK_BYTE, *mut CK_ULONG);
        C_SignRecoverInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_SignRecover(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_VerifyRecoverInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_VerifyRecover(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DigestEncryptUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptDigestUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_SignEncryptUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptVerifyUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_GenerateKey(CK_SESSION_HANDLE, *mut CK_MECHANISM, *mut CK_ATTRIBUTE, CK_ULONG, *mut CK_OBJECT_HANDLE);
        C_WrapKey(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, CK_OBJECT_HANDLE, *mut CK_BYTE, *mut CK_ULONG);
        C_UnwrapKey(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_ATTRIBUTE, CK_ULONG, *mut CK_OBJECT_HANDLE);
        C_DeriveKey(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, *mut CK_ATTRIBUTE, CK_ULONG, *mut CK_OBJECT_HANDLE);
        C_GetFunctionStatus(CK_SESSION_HANDLE);
        C_CancelFunction(CK_SESSION_HANDLE);
        C_WaitForSlotEvent(CK_FLAGS, *mut CK_SLOT_ID, *mut c_void);
        C_LoginUser(CK_SESSION_HANDLE, CK_USER_TYPE, *mut CK_UTF8CHAR, CK_ULONG, *mut CK_UTF8CHAR, CK_ULONG);
        C_SessionCancel(CK_SESSION_HANDLE, CK_FLAGS);
        C_MessageEncryptInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_EncryptMessage(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_EncryptMessageBegin(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG);
        C_EncryptMessageNext(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG, CK_FLAGS);
        C_MessageEncryptFinal(CK_SESSION_HANDLE);
        C_MessageDecryptInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE);
        C_DecryptMessage(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_DecryptMessageBegin(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG);
        C_DecryptMessageNext(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG, CK_FLAGS);
        C_MessageDecryptFinal(CK_SESSION_HANDLE);
        C_SignMessageBegin(CK_SESSION_HANDLE, *mut c_void, CK_ULONG);
        C_SignMessageNext(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_VerifyMessageBegin(CK_SESSION_HANDLE, *mut c_void, CK_ULONG);
        C_VerifyMessageNext(CK_SESSION_HANDLE, *mut c_void, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, CK_ULONG);
        C_VerifySignatureInit(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, *mut CK_BYTE, CK_ULONG);
        C_VerifySignature(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG);
        C_VerifySignatureUpdate(CK_SESSION_HANDLE, *mut CK_BYTE, CK_ULONG);
        C_VerifySignatureFinal(CK_SESSION_HANDLE);
        C_GetSessionValidationFlags(CK_SESSION_HANDLE, CK_SESSION_VALIDATION_FLAGS_TYPE, *mut CK_FLAGS);
        C_AsyncComplete(CK_SESSION_HANDLE, *mut CK_UTF8CHAR, *mut CK_ASYNC_DATA);
        C_AsyncGetID(CK_SESSION_HANDLE, *mut CK_UTF8CHAR, *mut CK_ULONG);
        C_AsyncJoin(CK_SESSION_HANDLE, *mut CK_UTF8CHAR, CK_ULONG, *mut CK_BYTE, CK_ULONG);
        C_WrapKeyAuthenticated(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, CK_OBJECT_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG);
        C_UnwrapKeyAuthenticated(CK_SESSION_HANDLE, *mut CK_MECHANISM, CK_OBJECT_HANDLE, *mut CK_BYTE, CK_ULONG, *mut CK_ATTRIBUTE, CK_ULONG, *mut CK_BYTE, CK_ULONG, *mut CK_OBJECT_HANDLE);
    }
}

/// A function list of type `$list` and version `$major.$minor`: the 2.40 functions (in
/// pkcs11f.h's order), then `$more` (the later versions' functions, in that order too).
macro_rules! function_list {
    ($list:ident, $major:literal, $minor:literal; $($more:tt)*) => {
        $list {
            version: CK_VERSION {
                major: $major,
                minor: $minor,
            },
            C_Initialize: Some(super::general::C_Initialize),
            C_Finalize: Some(super::general::C_Finalize),
            C_GetInfo: Some(super::general::C_GetInfo),
            C_GetFunctionList: Some(C_GetFunctionList),
            C_GetSlotList: Some(super::slot::C_GetSlotList),
            C_GetSlotInfo: Some(super::slot::C_GetSlotInfo),
            C_GetTokenInfo: Some(super::slot::C_GetTokenInfo),
            C_GetMechanismList: Some(super::slot::C_GetMechanismList),
            C_GetMechanismInfo: Some(super::slot::C_GetMechanismInfo),
            C_InitToken: Some(super::slot::C_InitToken),
            C_InitPIN: Some(super::slot::C_InitPIN),
            C_SetPIN: Some(super::slot::C_SetPIN),
            C_OpenSession: Some(super::session::C_OpenSession),
            C_CloseSession: Some(super::session::C_CloseSession),
            C_CloseAllSessions: Some(super::session::C_CloseAllSessions),
            C_GetSessionInfo: Some(super::session::C_GetSessionInfo),
            C_GetOperationState: Some(unsupported::C_GetOperationState),
            C_SetOperationState: Some(unsupported::C_SetOperationState),
            C_Login: Some(super::session::C_Login),
            C_Logout: Some(super::session::C_Logout),
            C_CreateObject: Some(super::object::C_CreateObject),
            C_CopyObject: Some(unsupported::C_CopyObject),
            C_DestroyObject: Some(super::object::C_DestroyObject),
            C_GetObjectSize: Some(super::object::C_GetObjectSize),
            C_GetAttributeValue: Some(super::object::C_GetAttributeValue),
            C_SetAttributeValue: Some(super::object::C_SetAttributeValue),
            C_FindObjectsInit: Some(super::object::C_FindObjectsInit),
            C_FindObjects: Some(super::object::C_FindObjects),
            C_FindObjectsFinal: Some(super::object::C_FindObjectsFinal),
            C_EncryptInit: Some(unsupported::C_EncryptInit),
            C_Encrypt: Some(unsupported::C_Encrypt),
            C_EncryptUpdate: Some(unsupported::C_EncryptUpdate),
            C_EncryptFinal: Some(unsupported::C_EncryptFinal),
            C_DecryptInit: Some(unsupported::C_DecryptInit),
            C_Decrypt: Some(unsupported::C_Decrypt),
            C_DecryptUpdate: Some(unsupported::C_DecryptUpdate),
            C_DecryptFinal: Some(unsupported::C_DecryptFinal),
            C_DigestInit: Some(unsupported::C_DigestInit),
            C_Digest: Some(unsupported::C_Digest),
            C_DigestUpdate: Some(unsupported::C_DigestUpdate),
            C_DigestKey: Some(unsupported::C_DigestKey),
            C_DigestFinal: Some(unsupported::C_DigestFinal),
            C_SignInit: Some(super::sign::C_SignInit),
            C_Sign: Some(super::sign::C_Sign),
            C_SignUpdate: Some(super::sign::C_SignUpdate),
            C_SignFinal: Some(super::sign::C_SignFinal),
            C_SignRecoverInit: Some(unsupported::C_SignRecoverInit),
            C_SignRecover: Some(unsupported::C_SignRecover),
            C_VerifyInit: Some(super::sign::C_VerifyInit),
            C_Verify: Some(super::sign::C_Verify),
            C_VerifyUpdate: Some(super::sign::C_VerifyUpdate),
            C_VerifyFinal: Some(super::sign::C_VerifyFinal),
            C_VerifyRecoverInit: Some(unsupported::C_VerifyRecoverInit),
            C_VerifyRecover: Some(unsupported::C_VerifyRecover),
            C_DigestEncryptUpdate: Some(unsupported::C_DigestEncryptUpdate),
            C_DecryptDigestUpdate: Some(unsupported::C_DecryptDigestUpdate),
            C_SignEncryptUpdate: Some(unsupported::C_SignEncryptUpdate),
            C_DecryptVerifyUpdate: Some(unsupported::C_DecryptVerifyUpdate),
            C_GenerateKey: Some(unsupported::C_GenerateKey),
            C_GenerateKeyPair: Some(super::keymgmt::C_GenerateKeyPair),
            C_WrapKey: Some(unsupported::C_WrapKey),
            C_UnwrapKey: Some(unsupported::C_UnwrapKey),
            C_DeriveKey: Some(unsupported::C_DeriveKey),
            C_SeedRandom: Some(super::keymgmt::C_SeedRandom),
            C_GenerateRandom: Some(super::keymgmt::C_GenerateRandom),
            C_GetFunctionStatus: Some(unsupported::C_GetFunctionStatus),
            C_CancelFunction: Some(unsupported::C_CancelFunction),
            C_WaitForSlotEvent: Some(unsupported::C_WaitForSlotEvent),
            $($more)*
        }
    };
}

/// The functions 3.0 added to 2.40's, then `$more`.
macro_rules! function_list_3 {
    ($list:ident, $minor:literal; $($more:tt)*) => {
        function_list!($list, 3, $minor;
            C_GetInterfaceList: Some(C_GetInterfaceList),
            C_GetInterface: Some(C_GetInterface),
            C_LoginUser: Some(unsupported::C_LoginUser),
            C_SessionCancel: Some(unsupported::C_SessionCancel),
            C_MessageEncryptInit: Some(unsupported::C_MessageEncryptInit),
            C_EncryptMessage: Some(unsupported::C_EncryptMessage),
            C_EncryptMessageBegin: Some(unsupported::C_EncryptMessageBegin),
            C_EncryptMessageNext: Some(unsupported::C_EncryptMessageNext),
            C_MessageEncryptFinal: Some(unsupported::C_MessageEncryptFinal),
            C_MessageDecryptInit: Some(unsupported::C_MessageDecryptInit),
            C_DecryptMessage: Some(unsupported::C_DecryptMessage),
            C_DecryptMessageBegin: Some(unsupported::C_DecryptMessageBegin),
            C_DecryptMessageNext: Some(unsupported::C_DecryptMessageNext),
            C_MessageDecryptFinal: Some(unsupported::C_MessageDecryptFinal),
            C_MessageSignInit: Some(super::sign::C_MessageSignInit),
            C_SignMessage: Some(super::sign::C_SignMessage),
            C_SignMessageBegin: Some(unsupported::C_SignMessageBegin),
            C_SignMessageNext: Some(unsupported::C_SignMessageNext),
            C_MessageSignFinal: Some(super::sign::C_MessageSignFinal),
            C_MessageVerifyInit: Some(super::sign::C_MessageVerifyInit),
            C_VerifyMessage: Some(super::sign::C_VerifyMessage),
            C_VerifyMessageBegin: Some(unsupported::C_VerifyMessageBegin),
            C_VerifyMessageNext: Some(unsupported::C_VerifyMessageNext),
            C_MessageVerifyFinal: Some(super::sign::C_MessageVerifyFinal),
            $($more)*
        )
    };
}

static V3_2: CK_FUNCTION_LIST_3_2 = function_list_3!(CK_FUNCTION_LIST_3_2, 2;
    C_EncapsulateKey: Some(super::kem::C_EncapsulateKey),
    C_DecapsulateKey: Some(super::kem::C_DecapsulateKey),
    C_VerifySignatureInit: Some(unsupported::C_VerifySignatureInit),
    C_VerifySignature: Some(unsupported::C_VerifySignature),
    C_VerifySignatureUpdate: Some(unsupported::C_VerifySignatureUpdate),
    C_VerifySignatureFinal: Some(unsupported::C_VerifySignatureFinal),
    C_GetSessionValidationFlags: Some(unsupported::C_GetSessionValidationFlags),
    C_AsyncComplete: Some(unsupported::C_AsyncComplete),
    C_AsyncGetID: Some(unsupported::C_AsyncGetID),
    C_AsyncJoin: Some(unsupported::C_AsyncJoin),
    C_WrapKeyAuthenticated: Some(unsupported::C_WrapKeyAuthenticated),
    C_UnwrapKeyAuthenticated: Some(unsupported::C_UnwrapKeyAuthenticated),
);

static V3_0: CK_FUNCTION_LIST_3_0 = function_list_3!(CK_FUNCTION_LIST_3_0, 0;);

static V2: CK_FUNCTION_LIST = function_list!(CK_FUNCTION_LIST, 2, 40;);

/// The 2.40 list: `C_GetFunctionList` hands it out; the functions' addresses never change.
pub fn v2() -> *mut CK_FUNCTION_LIST {
    &V2 as *const CK_FUNCTION_LIST as *mut CK_FUNCTION_LIST
}

/// An interface entry: a static name and list, handed out by address.
struct Interface(CK_INTERFACE);
// SAFETY: the entries point to static, immutable data (the name and the function lists).
unsafe impl Sync for Interface {}

const NAME: &[u8] = b"PKCS 11\0";

/// Newest first: `C_GetInterface` with no version gives the first.
static INTERFACES: [Interface; 3] = [
    Interface(CK_INTERFACE {
        pInterfaceName: NAME.as_ptr() as *mut CK_UTF8CHAR,
        pFunctionList: &V3_2 as *const CK_FUNCTION_LIST_3_2 as *mut c_void,
        flags: 0,
    }),
    Interface(CK_INTERFACE {
        pInterfaceName: NAME.as_ptr() as *mut CK_UTF8CHAR,
        pFunctionList: &V3_0 as *const CK_FUNCTION_LIST_3_0 as *mut c_void,
        flags: 0,
    }),
    Interface(CK_INTERFACE {
        pInterfaceName: NAME.as_ptr() as *mut CK_UTF8CHAR,
        pFunctionList: &V2 as *const CK_FUNCTION_LIST as *mut c_void,
        flags: 0,
    }),
];

const VERSIONS: [CK_VERSION; 3] = [
    CK_VERSION { major: 3, minor: 2 },
    CK_VERSION { major: 3, minor: 0 },
    CK_VERSION {
        major: 2,
        minor: 40,
    },
];

/// Copies of the interface entries, for C_GetInterfaceList.
pub fn interfaces() -> Vec<CK_INTERFACE> {
    INTERFACES
        .iter()
        .map(|i| CK_INTERFACE {
            pInterfaceName: i.0.pInterfaceName,
            pFunctionList: i.0.pFunctionList,
            flags: i.0.flags,
        })
        .collect()
}

/// The interface of `version` (or the newest) whose flags include `flags`.
pub fn interface(version: Option<CK_VERSION>, flags: CK_FLAGS) -> Option<*mut CK_INTERFACE> {
    INTERFACES
        .iter()
        .zip(VERSIONS)
        .find(|(i, v)| {
            version.is_none_or(|w| w.major == v.major && w.minor == v.minor)
                && i.0.flags & flags == flags
        })
        .map(|(i, _)| &i.0 as *const CK_INTERFACE as *mut CK_INTERFACE)
}

/// The 2.x entry point: the 2.40 function list (its version says 2.40).
///
/// # Safety
/// `pp` is valid for a write of a pointer.
#[no_mangle]
pub unsafe extern "C" fn C_GetFunctionList(pp: *mut *mut CK_FUNCTION_LIST) -> CK_RV {
    guard(|| {
        // SAFETY: the caller's promise.
        unsafe { put(pp, v2()) }
    })
}

/// # Safety
/// `p` is NULL or holds `*n` CK_INTERFACEs; `n` is valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetInterfaceList(p: *mut CK_INTERFACE, n: *mut CK_ULONG) -> CK_RV {
    guard(|| {
        let all = interfaces();
        // SAFETY: the caller's promise.
        unsafe { put_list(&all, p, n) }
    })
}

/// The interface named `name` ("PKCS 11", or NULL for the default, 3.2) of version `version`
/// (NULL: the newest). `flags` asks for interface flags the module must have.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `version` NULL or valid; `pp` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetInterface(
    name: *mut CK_UTF8CHAR,
    version: *mut CK_VERSION,
    pp: *mut *mut CK_INTERFACE,
    flags: CK_FLAGS,
) -> CK_RV {
    guard(|| {
        if pp.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        if !name.is_null() {
            // SAFETY: the caller's promise: NUL-terminated.
            let n = unsafe { std::ffi::CStr::from_ptr(name as *const std::ffi::c_char) };
            if n.to_bytes() != b"PKCS 11" {
                return Err(CKR_ARGUMENTS_BAD);
            }
        }
        let want = if version.is_null() {
            None
        } else {
            // SAFETY: the caller's promise.
            Some(unsafe { std::ptr::read_unaligned(version) })
        };
        let found = interface(want, flags).ok_or(CKR_ARGUMENTS_BAD)?;
        // SAFETY: checked non-NULL above; the interface is a static.
        unsafe { *pp = found };
        Ok(())
    })
}
