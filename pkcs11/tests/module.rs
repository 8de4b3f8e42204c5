//! The module's C entry points called from Rust, in one process: the interfaces and function
//! lists, and message-based signing (C_SignMessage / C_VerifyMessage, which the Python clients
//! do not reach), checked against single-part verification.

use pqgpu_pkcs11::ck::*;
use pqgpu_pkcs11::fns::list::{C_GetFunctionList, C_GetInterface, C_GetInterfaceList};
use pqgpu_pkcs11::fns::{general::*, keymgmt::*, session::*, sign::*, slot::*};
use std::ptr::null_mut;

#[track_caller]
fn ok(rv: CK_RV) {
    assert_eq!(rv, CKR_OK, "CKR {rv:#x}");
}

fn context(ctx: &[u8], hedge: CK_ULONG) -> CK_SIGN_ADDITIONAL_CONTEXT {
    CK_SIGN_ADDITIONAL_CONTEXT {
        hedgeVariant: hedge,
        pContext: ctx.as_ptr() as *mut u8,
        ulContextLen: ctx.len() as CK_ULONG,
    }
}

fn mech(m: CK_MECHANISM_TYPE, p: Option<&mut CK_SIGN_ADDITIONAL_CONTEXT>) -> CK_MECHANISM {
    match p {
        Some(p) => CK_MECHANISM {
            mechanism: m,
            pParameter: p as *mut _ as *mut std::ffi::c_void,
            ulParameterLen: std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>() as CK_ULONG,
        },
        None => CK_MECHANISM {
            mechanism: m,
            pParameter: null_mut(),
            ulParameterLen: 0,
        },
    }
}

#[test]
fn interfaces_and_message_based_signing() {
    let dir = std::env::temp_dir().join(format!("pqgpu-p11-module-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("pkcs11.conf");
    std::fs::write(
        &conf,
        format!(
            "token_dir = {}\nbackend = cpu\nkdf_memory_kib = 64\nkdf_iterations = 1\n",
            dir.join("token").display()
        ),
    )
    .unwrap();
    std::env::set_var("PQGPU_PKCS11_CONF", &conf);

    unsafe {
        // Interfaces: 3.2 by default, 3.0 and 2.40 on request; the 2.x entry point.
        let mut iface: *mut CK_INTERFACE = null_mut();
        ok(C_GetInterface(
            c"PKCS 11".as_ptr() as *mut u8,
            null_mut(),
            &mut iface,
            0,
        ));
        let l32 = &*((*iface).pFunctionList as *const CK_FUNCTION_LIST_3_2);
        assert_eq!((l32.version.major, l32.version.minor), (3, 2));
        assert!(l32.C_EncapsulateKey.is_some() && l32.C_SignMessage.is_some());
        let mut v = CK_VERSION { major: 3, minor: 0 };
        ok(C_GetInterface(null_mut(), &mut v, &mut iface, 0));
        let l30 = &*((*iface).pFunctionList as *const CK_FUNCTION_LIST_3_0);
        assert_eq!((l30.version.major, l30.version.minor), (3, 0));
        let mut v = CK_VERSION { major: 9, minor: 9 };
        assert_eq!(
            C_GetInterface(null_mut(), &mut v, &mut iface, 0),
            CKR_ARGUMENTS_BAD
        );
        let mut n: CK_ULONG = 0;
        ok(C_GetInterfaceList(null_mut(), &mut n));
        assert_eq!(n, 3);
        let mut l2: *mut CK_FUNCTION_LIST = null_mut();
        ok(C_GetFunctionList(&mut l2));
        assert_eq!(((*l2).version.major, (*l2).version.minor), (2, 40));
        // Through the list, as a client calls it.
        let init = (*l2).C_Initialize.unwrap();
        assert_eq!(
            C_GetSlotList(0, null_mut(), &mut n),
            CKR_CRYPTOKI_NOT_INITIALIZED
        );
        ok(init(null_mut()));
        assert_eq!(init(null_mut()), CKR_CRYPTOKI_ALREADY_INITIALIZED);

        // A token, a user, a key pair.
        let (so, user) = (b"so-pin-9", b"user-pin-9");
        let mut label = [b' '; 32];
        label[..4].copy_from_slice(b"test");
        ok(C_InitToken(
            0,
            so.as_ptr() as *mut u8,
            8,
            label.as_mut_ptr(),
        ));
        let mut s: CK_SESSION_HANDLE = 0;
        ok(C_OpenSession(
            0,
            CKF_SERIAL_SESSION | CKF_RW_SESSION,
            null_mut(),
            None,
            &mut s,
        ));
        ok(C_Login(s, CKU_SO, so.as_ptr() as *mut u8, 8));
        ok(C_InitPIN(s, user.as_ptr() as *mut u8, 10));
        ok(C_Logout(s));
        ok(C_Login(s, CKU_USER, user.as_ptr() as *mut u8, 10));
        let mut set: CK_ULONG = CKP_ML_DSA_65;
        let mut pub_t = [CK_ATTRIBUTE {
            type_: CKA_PARAMETER_SET,
            pValue: &mut set as *mut _ as *mut std::ffi::c_void,
            ulValueLen: std::mem::size_of::<CK_ULONG>() as CK_ULONG,
        }];
        let (mut hp, mut hs) = (0, 0);
        let mut gen = mech(CKM_ML_DSA_KEY_PAIR_GEN, None);
        ok(C_GenerateKeyPair(
            s,
            &mut gen,
            pub_t.as_mut_ptr(),
            1,
            null_mut(),
            0,
            &mut hp,
            &mut hs,
        ));

        // Message-based signing: Init's context for the first message, the message's own for
        // the second; the length query leaves the operation in place.
        let (ca, cb) = (b"context A".as_slice(), b"context B".as_slice());
        let mut pa = context(ca, CKH_DETERMINISTIC_REQUIRED);
        let mut pb = context(cb, CKH_HEDGE_PREFERRED);
        let mut m = mech(CKM_ML_DSA, Some(&mut pa));
        ok(C_MessageSignInit(s, &mut m, hs));
        let msg = b"message".as_slice();
        let mut len: CK_ULONG = 0;
        ok(C_SignMessage(
            s,
            null_mut(),
            0,
            msg.as_ptr() as *mut u8,
            7,
            null_mut(),
            &mut len,
        ));
        assert_eq!(len, 3309);
        let (mut sig_a, mut sig_a2, mut sig_b) =
            (vec![0u8; 3309], vec![0u8; 3309], vec![0u8; 3309]);
        for sig in [&mut sig_a, &mut sig_a2] {
            ok(C_SignMessage(
                s,
                null_mut(),
                0,
                msg.as_ptr() as *mut u8,
                7,
                sig.as_mut_ptr(),
                &mut len,
            ));
        }
        assert_eq!(sig_a, sig_a2, "deterministic, as Init's parameter asked");
        let pb_ptr = &mut pb as *mut _ as *mut std::ffi::c_void;
        let plen = std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>() as CK_ULONG;
        ok(C_SignMessage(
            s,
            pb_ptr,
            plen,
            msg.as_ptr() as *mut u8,
            7,
            sig_b.as_mut_ptr(),
            &mut len,
        ));
        ok(C_MessageSignFinal(s));
        assert_eq!(
            C_SignMessage(
                s,
                null_mut(),
                0,
                msg.as_ptr() as *mut u8,
                7,
                sig_b.as_mut_ptr(),
                &mut len
            ),
            CKR_OPERATION_NOT_INITIALIZED
        );

        // Single-part verification agrees: each signature under its own context only.
        let verify = |sig: &[u8], p: &mut CK_SIGN_ADDITIONAL_CONTEXT| {
            let mut m = mech(CKM_ML_DSA, Some(p));
            ok(C_VerifyInit(s, &mut m, hp));
            C_Verify(
                s,
                msg.as_ptr() as *mut u8,
                7,
                sig.as_ptr() as *mut u8,
                sig.len() as CK_ULONG,
            )
        };
        ok(verify(&sig_a, &mut context(ca, 0)));
        ok(verify(&sig_b, &mut context(cb, 0)));
        assert_eq!(verify(&sig_a, &mut context(cb, 0)), CKR_SIGNATURE_INVALID);

        // Message-based verification.
        let mut pv = context(ca, 0);
        let mut m = mech(CKM_ML_DSA, Some(&mut pv));
        ok(C_MessageVerifyInit(s, &mut m, hp));
        let vm = |sig: &[u8], p: *mut std::ffi::c_void, pl| {
            C_VerifyMessage(
                s,
                p,
                pl,
                msg.as_ptr() as *mut u8,
                7,
                sig.as_ptr() as *mut u8,
                sig.len() as CK_ULONG,
            )
        };
        ok(vm(&sig_a, null_mut(), 0));
        ok(vm(&sig_b, pb_ptr, plen));
        assert_eq!(vm(&sig_b, null_mut(), 0), CKR_SIGNATURE_INVALID);
        assert_eq!(vm(&sig_b[..100], null_mut(), 0), CKR_SIGNATURE_LEN_RANGE);
        ok(C_MessageVerifyFinal(s));

        ok(C_CloseSession(s));
        ok(C_Finalize(null_mut()));
        assert_eq!(C_Finalize(null_mut()), CKR_CRYPTOKI_NOT_INITIALIZED);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
