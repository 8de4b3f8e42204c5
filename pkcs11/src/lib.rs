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
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
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
/// Advanced by every C_Initialize and C_Finalize: a thread's kept module of another epoch is
/// not used.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The module as this thread last saw it: (epoch, module). Every call needs the module;
    /// keeping it here spares the shared lock (256 signing threads would all take it).
    static KEPT: RefCell<Option<(u64, Arc<Module>)>> = const { RefCell::new(None) };
}

/// The initialised module, or CKR_CRYPTOKI_NOT_INITIALIZED.
pub fn module() -> Rv<Arc<Module>> {
    let epoch = EPOCH.load(Ordering::Acquire);
    let kept = KEPT.try_with(|k| match &*k.borrow() {
        Some((e, m)) if *e == epoch => Some(m.clone()),
        _ => None,
    });
    if let Ok(Some(m)) = kept {
        return Ok(m);
    }
    let g = MODULE.read().unwrap_or_else(|e| e.into_inner());
    let m = g.clone().ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)?;
    // Read under the lock: C_Initialize and C_Finalize change both under its write side.
    let epoch = EPOCH.load(Ordering::Acquire);
    drop(g);
    let _ = KEPT.try_with(|k| *k.borrow_mut() = Some((epoch, m.clone())));
    Ok(m)
}

/// Called with MODULE's write lock held, whenever it changes.
pub(crate) fn new_epoch() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
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
