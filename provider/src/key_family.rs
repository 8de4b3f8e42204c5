//! One key-management skeleton for every key family this provider serves (ML-DSA, SLH-DSA,
//! ML-KEM, X25519MLKEM768, CTRU-Prime): OpenSSL's calling conventions (selections, NULL
//! checks, the panic boundary, boxing and freeing keys, generation contexts, parameter arrays)
//! live here once; what is particular to a family its key says (`KeyFamily`). The hybrid
//! X25519MLKEM768 is a family of one set.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::entry;
use crate::guard::guard;
use crate::params::{octet_param, status, Params};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use zeroize::Zeroizing;

/// What the key-management skeleton asks of a key family. `S`, the index of a dispatch table
/// in the family's row, names the parameter set (`set_of`).
pub trait KeyFamily: Clone + Sized + 'static {
    type Set: Copy + PartialEq;
    /// Generation may make an empty key for parameters alone (ML-KEM: the TLS server's side
    /// receives the peer's share later through `set_params`).
    const PARAM_GEN: bool = false;
    /// The family's own decoders hand keys over by reference (`OSSL_FUNC_keymgmt_load`).
    const LOADS: bool = false;
    /// Keys take parameters after creation (`set_params`, `settable`).
    const SETTABLE: bool = false;

    fn set_of(s: usize) -> Self::Set;
    fn set(&self) -> Self::Set;
    /// A key without material.
    fn empty(set: Self::Set) -> Self;
    fn public(&self) -> Option<&[u8]>;
    fn secret(&self) -> Option<&[u8]>;
    /// The key's material under OpenSSL's names, in export order: (name, bytes, private).
    fn material(&self) -> Vec<(&'static CStr, &[u8], bool)>;
    /// Writes what get_params answers besides the material (`bits`, `security-bits`,
    /// `max-size`, ...) where asked.
    fn other_params(&self, p: &Params) -> bool;
    /// Everything get_params answers (the figures and the material).
    fn gettable() -> *const Param;
    /// The material import and export take.
    fn key_types() -> *const Param;
    /// A key from import parameters with the family's (OpenSSL's) rules and checks.
    fn from_params(set: Self::Set, p: &Params, include_private: bool) -> Option<Self>;
    /// `pkey -check`: the family's checks for `selection` (the parts it names are present).
    fn valid(&self, selection: c_int) -> bool;
    /// Drops the private or public part (a dup for a narrower selection).
    fn keep(&mut self, private: bool, public: bool);
    /// The generation seed's length (parameter `seed`); `None`: generation takes no seed.
    fn seed_len(set: Self::Set) -> Option<usize>;
    /// A fresh key pair, from the seed when one was given (the family decides whether a seed
    /// is used once, as OpenSSL's ML-KEM does, by taking it).
    fn generate(set: Self::Set, seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Self>;
    /// Parameters set on an existing key (with `SETTABLE`).
    fn set_params(&mut self, _p: &Params) -> bool {
        false
    }
    fn settable() -> *const Param {
        ptr::null()
    }
}

/// Constant-time equality (secret keys are compared here).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// # Safety
/// `k` must be NULL or a key of type `K` made by this module.
pub unsafe fn key<'a, K: KeyFamily>(k: *const c_void) -> Option<&'a K> {
    // SAFETY: the caller's promise.
    unsafe { (k as *const K).as_ref() }
}

fn boxed<K: KeyFamily>(k: K) -> *mut c_void {
    Box::into_raw(Box::new(k)).cast()
}

unsafe extern "C" fn new<K: KeyFamily, const S: usize>(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || boxed(K::empty(K::set_of(S))))
}

/// `OSSL_FUNC_keymgmt_free` (also an encoder's `free_object`).
///
/// # Safety
/// `k` must be NULL or a key of type `K` made by this module, not used again.
pub unsafe extern "C" fn free<K: KeyFamily>(k: *mut c_void) {
    guard((), || {
        if !k.is_null() {
            // SAFETY: made by Box::into_raw in this module; OpenSSL frees each key once.
            drop(unsafe { Box::from_raw(k as *mut K) });
        }
    })
}

/// Takes the key a decoder of this provider passed by reference (a pointer to a boxed key;
/// the reference is cleared so the decoder does not free it).
unsafe extern "C" fn load<K: KeyFamily, const S: usize>(
    reference: *const c_void,
    size: usize,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if reference.is_null() || size != size_of::<*mut K>() {
            return ptr::null_mut();
        }
        // SAFETY: the reference is the decoder's pointer slot, live and writable for the
        // duration of this call.
        let slot = reference as *mut *mut K;
        let k = unsafe { std::mem::replace(&mut *slot, ptr::null_mut()) };
        // SAFETY: a boxed key made by our decoder, not yet owned by anyone else.
        match unsafe { k.as_ref() } {
            Some(key) if key.set() == K::set_of(S) => k.cast(),
            Some(_) => {
                // Not this set: give it back to the decoder, which frees it.
                unsafe { *slot = k };
                ptr::null_mut()
            }
            None => ptr::null_mut(),
        }
    })
}

/// Whether `k` has the parts `selection` names.
fn has_parts<K: KeyFamily>(k: &K, selection: c_int) -> bool {
    let priv_ok = selection & abi::SELECT_PRIVATE_KEY == 0 || k.secret().is_some();
    let pub_ok = selection & abi::SELECT_PUBLIC_KEY == 0 || k.public().is_some();
    priv_ok && pub_ok
}

unsafe extern "C" fn has<K: KeyFamily>(k: *const c_void, selection: c_int) -> c_int {
    // SAFETY: OpenSSL passes a key of this key management.
    guard(0, || {
        status(unsafe { key::<K>(k) }.is_some_and(|k| has_parts(k, selection)))
    })
}

/// Same set; for a key-pair selection the same public key, or else the same secret key.
unsafe extern "C" fn matches<K: KeyFamily>(
    a: *const c_void,
    b: *const c_void,
    selection: c_int,
) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes keys of this key management.
        let (Some(a), Some(b)) = (unsafe { key::<K>(a) }, unsafe { key::<K>(b) }) else {
            return 0;
        };
        if a.set() != b.set() {
            return 0;
        }
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 1;
        }
        if let (Some(x), Some(y)) = (a.public(), b.public()) {
            return status(x == y);
        }
        if selection & abi::SELECT_PRIVATE_KEY != 0 {
            if let (Some(x), Some(y)) = (a.secret(), b.secret()) {
                return status(ct_eq(x, y));
            }
        }
        0
    })
}

unsafe extern "C" fn import<K: KeyFamily, const S: usize>(
    k: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> c_int {
    guard(0, || {
        if k.is_null() || selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        // SAFETY: OpenSSL passes a key of ours and a terminated parameter array.
        let (k, p) = unsafe { (&mut *(k as *mut K), Params::new(params)) };
        let include_private = selection & abi::SELECT_PRIVATE_KEY != 0;
        match K::from_params(K::set_of(S), &p, include_private) {
            Some(new) => {
                *k = new;
                1
            }
            None => 0,
        }
    })
}

unsafe extern "C" fn key_types<K: KeyFamily>(selection: c_int) -> *const Param {
    if selection & abi::SELECT_KEYPAIR == 0 {
        return ptr::null();
    }
    K::key_types()
}

/// Calls `cb` with the key's material for `selection` (also a decoder's export).
///
/// # Safety
/// `cb` and `cbarg` must be a callback and its argument from OpenSSL.
pub unsafe fn export_key<K: KeyFamily>(
    k: &K,
    selection: c_int,
    cb: Callback,
    cbarg: *mut c_void,
) -> c_int {
    let mut arr: Vec<Param> = k
        .material()
        .into_iter()
        .filter(|(_, _, private)| {
            let wanted = if *private {
                abi::SELECT_PRIVATE_KEY
            } else {
                abi::SELECT_PUBLIC_KEY
            };
            selection & wanted != 0
        })
        .map(|(name, bytes, _)| octet_param(name, bytes))
        .collect();
    if arr.is_empty() {
        return 0;
    }
    arr.push(abi::PARAM_END);
    // SAFETY: a terminated array over the key's own buffers, alive during the call.
    unsafe { cb(arr.as_ptr(), cbarg) }
}

unsafe extern "C" fn export<K: KeyFamily>(
    k: *mut c_void,
    selection: c_int,
    cb: Option<Callback>,
    cbarg: *mut c_void,
) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        let (Some(k), Some(cb)) = (unsafe { key::<K>(k) }, cb) else {
            return 0;
        };
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        // SAFETY: OpenSSL's callback and argument.
        unsafe { export_key(k, selection, cb, cbarg) }
    })
}

unsafe extern "C" fn get_params<K: KeyFamily>(k: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated, writable array.
        let (Some(k), p) = (unsafe { key::<K>(k) }, unsafe { Params::new(params) }) else {
            return 0;
        };
        let material = k.material();
        status(k.other_params(&p) && material.iter().all(|(n, v, _)| p.set_octets(n, v).is_ok()))
    })
}

unsafe extern "C" fn gettable_params<K: KeyFamily>(_provctx: *mut c_void) -> *const Param {
    K::gettable()
}

unsafe extern "C" fn set_params<K: KeyFamily>(k: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated array.
        match unsafe { (k as *mut K).as_mut() } {
            Some(k) => status(k.set_params(&unsafe { Params::new(params) })),
            None => 0,
        }
    })
}

unsafe extern "C" fn settable_params<K: KeyFamily>(_provctx: *mut c_void) -> *const Param {
    K::settable()
}

unsafe extern "C" fn validate<K: KeyFamily>(
    k: *const c_void,
    selection: c_int,
    _check: c_int,
) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        let Some(k) = (unsafe { key::<K>(k) }) else {
            return 0;
        };
        status(has_parts(k, selection) && k.valid(selection))
    })
}

unsafe extern "C" fn dup<K: KeyFamily>(k: *const c_void, selection: c_int) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: OpenSSL passes a key of ours.
        let Some(k) = (unsafe { key::<K>(k) }) else {
            return ptr::null_mut();
        };
        let mut d = k.clone();
        d.keep(
            selection & abi::SELECT_PRIVATE_KEY != 0,
            selection & abi::SELECT_PUBLIC_KEY != 0,
        );
        boxed(d)
    })
}

// ---- key generation -------------------------------------------------------------------------

/// A generation context: a key pair (from an optional seed) or, where the family allows it,
/// an empty key for parameters alone.
pub struct GenCtx {
    pub keypair: bool,
    pub seed: Option<Zeroizing<Vec<u8>>>,
}

impl GenCtx {
    /// A context for `selection`, or `None` where the family does not generate it.
    pub fn new(selection: c_int, param_gen: bool) -> Option<GenCtx> {
        let keypair = selection & abi::SELECT_KEYPAIR != 0;
        let params = param_gen && selection & abi::SELECT_ALL_PARAMETERS != 0;
        (keypair || params).then_some(GenCtx {
            keypair,
            seed: None,
        })
    }

    /// Reads `seed` (exactly `seed_len` bytes) when `seed_len` is given; `properties` must be
    /// text and selects nothing here; the rest (`group`, which TLS passes) is ignored, as
    /// OpenSSL's own key managements do.
    pub fn set(&mut self, p: &Params, seed_len: Option<usize>) -> bool {
        if let Some(len) = seed_len {
            match p.octets(c"seed") {
                Ok(Some(s)) if s.len() == len => self.seed = Some(Zeroizing::new(s.to_vec())),
                Ok(None) => {}
                Ok(Some(_)) | Err(_) => return false,
            }
        }
        p.utf8(c"properties").is_ok()
    }

    /// Boxed for OpenSSL (`gen_cleanup` frees it).
    pub fn into_raw(self) -> *mut c_void {
        Box::into_raw(Box::new(self)).cast()
    }
}

unsafe extern "C" fn gen_init<K: KeyFamily, const S: usize>(
    _provctx: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let Some(mut g) = GenCtx::new(selection, K::PARAM_GEN) else {
            return ptr::null_mut();
        };
        // SAFETY: a terminated parameter array or NULL.
        if !g.set(&unsafe { Params::new(params) }, K::seed_len(K::set_of(S))) {
            return ptr::null_mut();
        }
        g.into_raw()
    })
}

unsafe extern "C" fn gen_set_params<K: KeyFamily, const S: usize>(
    g: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || {
        // SAFETY: our generation context and a terminated array.
        match unsafe { (g as *mut GenCtx).as_mut() } {
            Some(g) => status(g.set(&unsafe { Params::new(params) }, K::seed_len(K::set_of(S)))),
            None => 0,
        }
    })
}

static GEN_SETTABLE: Table<Param, 3> = Table([
    abi::describe(c"properties", abi::PARAM_UTF8_STRING),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

static GEN_SETTABLE_NO_SEED: Table<Param, 2> = Table([
    abi::describe(c"properties", abi::PARAM_UTF8_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gen_settable_params<K: KeyFamily, const S: usize>(
    _g: *mut c_void,
    _provctx: *mut c_void,
) -> *const Param {
    match K::seed_len(K::set_of(S)) {
        Some(_) => GEN_SETTABLE.as_ptr(),
        None => GEN_SETTABLE_NO_SEED.as_ptr(),
    }
}

unsafe extern "C" fn generate<K: KeyFamily, const S: usize>(
    g: *mut c_void,
    _cb: *const c_void,
    _cbarg: *mut c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: our generation context.
        let Some(g) = (unsafe { (g as *mut GenCtx).as_mut() }) else {
            return ptr::null_mut();
        };
        let set = K::set_of(S);
        if !g.keypair {
            return boxed(K::empty(set));
        }
        K::generate(set, &mut g.seed).map_or(ptr::null_mut(), boxed)
    })
}

/// `OSSL_FUNC_keymgmt_gen_cleanup` for `GenCtx`.
///
/// # Safety
/// `g` must be NULL or a context from `GenCtx::into_raw`, not used again.
pub unsafe extern "C" fn gen_cleanup(g: *mut c_void) {
    guard((), || {
        if !g.is_null() {
            // SAFETY: made by GenCtx::into_raw; freed once.
            drop(unsafe { Box::from_raw(g as *mut GenCtx) });
        }
    })
}

/// Entries in the largest key-management table (optional ones included) and its end.
pub const ENTRIES: usize = 21;

/// The key-management dispatch table of family `K`, parameter set `S`: the common entries,
/// then the family's optional ones, then the end (repeated to the table's fixed size).
pub const fn functions<K: KeyFamily, const S: usize>() -> [Dispatch; ENTRIES] {
    let common = [
        entry!(abi::KEYMGMT_NEW, new::<K, S>),
        entry!(abi::KEYMGMT_FREE, free::<K>),
        entry!(abi::KEYMGMT_HAS, has::<K>),
        entry!(abi::KEYMGMT_MATCH, matches::<K>),
        entry!(abi::KEYMGMT_IMPORT, import::<K, S>),
        entry!(abi::KEYMGMT_IMPORT_TYPES, key_types::<K>),
        entry!(abi::KEYMGMT_EXPORT, export::<K>),
        entry!(abi::KEYMGMT_EXPORT_TYPES, key_types::<K>),
        entry!(abi::KEYMGMT_GET_PARAMS, get_params::<K>),
        entry!(abi::KEYMGMT_GETTABLE_PARAMS, gettable_params::<K>),
        entry!(abi::KEYMGMT_VALIDATE, validate::<K>),
        entry!(abi::KEYMGMT_DUP, dup::<K>),
        entry!(abi::KEYMGMT_GEN_INIT, gen_init::<K, S>),
        entry!(abi::KEYMGMT_GEN_SET_PARAMS, gen_set_params::<K, S>),
        entry!(
            abi::KEYMGMT_GEN_SETTABLE_PARAMS,
            gen_settable_params::<K, S>
        ),
        entry!(abi::KEYMGMT_GEN, generate::<K, S>),
        entry!(abi::KEYMGMT_GEN_CLEANUP, gen_cleanup),
    ];
    let mut t = [abi::DISPATCH_END; ENTRIES];
    let mut i = 0;
    while i < common.len() {
        t[i] = common[i];
        i += 1;
    }
    if K::LOADS {
        t[i] = entry!(abi::KEYMGMT_LOAD, load::<K, S>);
        i += 1;
    }
    if K::SETTABLE {
        t[i] = entry!(abi::KEYMGMT_SET_PARAMS, set_params::<K>);
        t[i + 1] = entry!(abi::KEYMGMT_SETTABLE_PARAMS, settable_params::<K>);
    }
    t
}

/// The tables of a family of three parameter sets.
pub const fn three<K: KeyFamily>() -> [Table<Dispatch, ENTRIES>; 3] {
    [
        Table(functions::<K, 0>()),
        Table(functions::<K, 1>()),
        Table(functions::<K, 2>()),
    ]
}
