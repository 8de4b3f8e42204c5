//! General-purpose functions: C_Initialize, C_Finalize, C_GetInfo, and the ways to the
//! function lists (C_GetFunctionList, C_GetInterfaceList, C_GetInterface).

use super::{guard, put};
use crate::ck::*;
use crate::{config, engine, token, Module, MODULE};
use std::sync::{Arc, RwLock};

/// C_Initialize: reads the configuration and opens the token directory; starts no backend
/// (the GPU is first touched by the first cryptographic work). The module always uses the
/// operating system's locking, so CKF_OS_LOCKING_OK and no mutex callbacks, or callbacks
/// alongside CKF_OS_LOCKING_OK, are accepted; callbacks alone are CKR_CANT_LOCK.
///
/// # Safety
/// `args` is NULL or points to a CK_C_INITIALIZE_ARGS.
#[no_mangle]
pub unsafe extern "C" fn C_Initialize(args: *mut std::ffi::c_void) -> CK_RV {
    guard(|| {
        if !args.is_null() {
            // SAFETY: the caller's promise.
            let a = unsafe { std::ptr::read_unaligned(args as *const CK_C_INITIALIZE_ARGS) };
            if !a.pReserved.is_null() {
                return Err(CKR_ARGUMENTS_BAD);
            }
            let callbacks = [
                a.CreateMutex.is_some(),
                a.DestroyMutex.is_some(),
                a.LockMutex.is_some(),
                a.UnlockMutex.is_some(),
            ];
            if callbacks.iter().any(|&c| c) && !callbacks.iter().all(|&c| c) {
                return Err(CKR_ARGUMENTS_BAD);
            }
            if callbacks[0] && a.flags & CKF_OS_LOCKING_OK == 0 {
                return Err(CKR_CANT_LOCK);
            }
        }
        let mut g = MODULE.write().unwrap_or_else(|e| e.into_inner());
        if g.is_some() {
            return Err(CKR_CRYPTOKI_ALREADY_INITIALIZED);
        }
        let path = config::path();
        let cfg = config::load(&path).map_err(|why| {
            crate::log(&why);
            CKR_GENERAL_ERROR
        })?;
        let tok = token::Token::open(&cfg).map_err(|why| {
            crate::log(&why);
            CKR_GENERAL_ERROR
        })?;
        engine::configure(cfg.backend, cfg.serve.clone());
        *g = Some(Arc::new(Module {
            config: cfg,
            token: RwLock::new(tok),
            sessions: Default::default(),
        }));
        crate::new_epoch();
        Ok(())
    })
}

/// # Safety
/// `reserved` must be NULL.
#[no_mangle]
pub unsafe extern "C" fn C_Finalize(reserved: *mut std::ffi::c_void) -> CK_RV {
    guard(|| {
        if !reserved.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let m = {
            let mut g = MODULE.write().unwrap_or_else(|e| e.into_inner());
            let m = g.take().ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)?;
            crate::new_epoch();
            m
        };
        m.sessions.close_all();
        m.token_write().logout();
        engine::reset();
        Ok(())
    })
}

pub const LIBRARY_VERSION: CK_VERSION = CK_VERSION { major: 0, minor: 2 };

/// # Safety
/// `info` is valid for a write of CK_INFO.
#[no_mangle]
pub unsafe extern "C" fn C_GetInfo(info: *mut CK_INFO) -> CK_RV {
    guard(|| {
        crate::module()?;
        let i = CK_INFO {
            cryptokiVersion: CK_VERSION { major: 3, minor: 2 },
            manufacturerID: crate::ck::pad("pqgpu"),
            flags: 0,
            libraryDescription: crate::ck::pad("pqgpu PKCS#11 module"),
            libraryVersion: LIBRARY_VERSION,
        };
        // SAFETY: the caller's promise.
        unsafe { put(info, i) }
    })
}
