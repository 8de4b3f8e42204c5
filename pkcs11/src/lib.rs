//! `libpqgpu_pkcs11.so`: a PKCS#11 3.2 module whose token keeps its objects in a directory
//! and runs ML-DSA on pqgpu (the GPU when there is one, all CPU cores otherwise).
//!
//! Layout, from the C boundary down:
//! * [`fns`]: the exported functions, one file per chapter of the specification (general,
//!   slot and token, session, object, key management, signing, KEM), and [`fns::list`] with
//!   the function lists and interfaces (`C_GetInterface`, `C_GetFunctionList`);
//! * [`mech`]: one file per mechanism family;
//! * [`token`]: PINs, login, objects; [`session`]: sessions and their operations;
//! * [`store`]: where token objects live (a trait; a directory-backed store), [`seal`]: how
//!   private key material is encrypted there, [`object`]: what an object is;
//! * [`engine`]: the door into pqgpu (backend and serving dispatcher, made on first use);
//!   [`config`]: the configuration file.

pub mod attr;
pub mod ck;
pub mod config;
pub mod engine;
pub mod fns;
pub mod keys;
pub mod mech;
pub mod object;
pub mod seal;
pub mod session;
pub mod store;
pub mod token;

use ck::*;
use std::sync::{Arc, RwLock};

/// The one slot's id.
pub const SLOT_ID: CK_SLOT_ID = 0;

/// The state between C_Initialize and C_Finalize.
pub struct Module {
    pub config: config::Config,
    pub token: RwLock<token::Token>,
    pub sessions: session::Sessions,
}

static MODULE: RwLock<Option<Arc<Module>>> = RwLock::new(None);

/// The initialised module, or CKR_CRYPTOKI_NOT_INITIALIZED.
pub fn module() -> Rv<Arc<Module>> {
    MODULE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)
}

/// One line on stderr, prefixed with the module's name.
pub fn log(msg: &str) {
    eprintln!("pqgpu-pkcs11: {msg}");
}

impl Module {
    pub fn token_read(&self) -> std::sync::RwLockReadGuard<'_, token::Token> {
        self.token.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn token_write(&self) -> std::sync::RwLockWriteGuard<'_, token::Token> {
        self.token.write().unwrap_or_else(|e| e.into_inner())
    }
}
