//! ML-KEM-512/768/1024 (FIPS 203) key management under OpenSSL 3.5's own names and parameters:
//! `seed` (d || z, 64 bytes), `priv` (dk), `pub` (ek) and, for TLS, `encoded-pub-key` (ek).
//! Keys move between this provider and OpenSSL's default one by export/import, so OpenSSL's
//! own encoders and decoders serve the key files. Imported keys get FIPS 203's input checks.
//!
//! A key generated for the TLS server side starts empty (parameter generation) and receives
//! the peer's share through `encoded-pub-key`; the encapsulation then checks it.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::ctru_key::ct_eq;
use crate::engine::{self, SecretKey};
use crate::entry;
use crate::guard::guard;
use crate::params::{octet_param, status, Params};
use pqgpu::mlkem::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;
use zeroize::Zeroizing;

/// OpenSSL 3.5's names (providers/implementations/include/prov/names.h).
pub const NAMES: [&CStr; 3] = [
    c"ML-KEM-512:MLKEM512:id-alg-ml-kem-512:2.16.840.1.101.3.4.4.1",
    c"ML-KEM-768:MLKEM768:id-alg-ml-kem-768:2.16.840.1.101.3.4.4.2",
    c"ML-KEM-1024:MLKEM1024:id-alg-ml-kem-1024:2.16.840.1.101.3.4.4.3",
];

/// The parameter set of table index `s` (0, 1, 2 = ML-KEM-512, -768, -1024).
pub const fn set_of(s: usize) -> ParamSet {
    match s {
        0 => ParamSet::MlKem512,
        1 => ParamSet::MlKem768,
        _ => ParamSet::MlKem1024,
    }
}

pub fn index(p: ParamSet) -> usize {
    match p {
        ParamSet::MlKem512 => 0,
        ParamSet::MlKem768 => 1,
        ParamSet::MlKem1024 => 2,
    }
}

/// FIPS 203's k for the set, and the bit and security-bit figures OpenSSL reports.
fn figures(p: ParamSet) -> (i32, i32) {
    match p {
        ParamSet::MlKem512 => (512, 128),
        ParamSet::MlKem768 => (768, 192),
        ParamSet::MlKem1024 => (1024, 256),
    }
}

/// An ML-KEM key: any of the seed, the decapsulation key (which holds the encapsulation key)
/// and the encapsulation key. Secrets are zeroed when the last holder drops them.
#[derive(Clone)]
pub struct Key {
    pub set: ParamSet,
    pub seed: Option<Arc<Zeroizing<[u8; 64]>>>,
    pub dk: Option<SecretKey>,
    pub ek: Option<Arc<Vec<u8>>>,
}

/// ek inside dk = dk_pke || ek || H(ek) || z.
fn embedded_ek(p: ParamSet, dk: &[u8]) -> &[u8] {
    let end = p.decaps_key_len() - 64;
    &dk[end - p.encaps_key_len()..end]
}

impl Key {
    pub fn empty(set: ParamSet) -> Key {
        Key {
            set,
            seed: None,
            dk: None,
            ek: None,
        }
    }

    /// KeyGen_internal(d, z) from `seed`, or from a fresh seed (kept, as OpenSSL keeps it, so
    /// the key exports it).
    pub fn generate(set: ParamSet, seed: Option<&[u8; 64]>) -> Result<Key, Error> {
        let seed = match seed {
            Some(s) => Zeroizing::new(*s),
            None => {
                let mut s = Zeroizing::new([0u8; 64]);
                pqgpu::rng::fill(&mut s[..])?;
                s
            }
        };
        let (ek, dk) = engine::mlkem_keygen(set, Some(seed.clone()))?;
        Ok(Key {
            set,
            seed: Some(Arc::new(seed)),
            dk: Some(dk),
            ek: Some(Arc::new(ek)),
        })
    }

    /// A key from its decapsulation key (checked: FIPS 203 section 7.3).
    pub fn from_dk(set: ParamSet, dk: &[u8]) -> Option<Key> {
        if dk.len() != set.decaps_key_len() {
            return None;
        }
        let dk: SecretKey = Arc::new(Zeroizing::new(dk.to_vec()));
        let ek = Arc::new(embedded_ek(set, &dk).to_vec());
        engine::mlkem_check(set, Some(ek.clone()), Some(dk.clone())).ok()?;
        Some(Key {
            set,
            seed: None,
            dk: Some(dk),
            ek: Some(ek),
        })
    }

    /// An encapsulation key alone (checked: FIPS 203 section 7.2).
    pub fn from_ek(set: ParamSet, ek: &[u8]) -> Option<Key> {
        if ek.len() != set.encaps_key_len() {
            return None;
        }
        let ek = Arc::new(ek.to_vec());
        engine::mlkem_check(set, Some(ek.clone()), None).ok()?;
        Some(Key {
            set,
            seed: None,
            dk: None,
            ek: Some(ek),
        })
    }
}

impl crate::kem_key::KemKey for Key {
    const TAKES_IKME: bool = true;

    fn index(&self) -> usize {
        index(self.set)
    }

    fn can_encaps(&self) -> bool {
        self.ek.is_some()
    }

    fn can_decaps(&self) -> bool {
        self.dk.is_some()
    }

    fn ciphertext_len(&self) -> usize {
        self.set.ciphertext_len()
    }

    fn shared_secret_len(&self) -> usize {
        self.set.shared_secret_len()
    }

    fn encaps(&self, coins: Option<Zeroizing<[u8; 32]>>) -> Result<engine::Encapsulated, Error> {
        let ek = self.ek.clone().ok_or(Error::InvalidArgument)?;
        engine::kem_encaps(Alg::MlKem(self.set), ek, coins)
    }

    fn decaps(&self, ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let dk = self.dk.clone().ok_or(Error::InvalidArgument)?;
        engine::kem_decaps(Alg::MlKem(self.set), dk, ct.to_vec())
    }
}

/// A key from import parameters, with OpenSSL's rules: a seed wins (and must reproduce any
/// priv/pub given with it), else priv (whose embedded ek must equal any pub given), else pub.
/// Every length must be exact.
pub fn key_from_params(set: ParamSet, p: &Params, include_private: bool) -> Option<Key> {
    let ek = p.octets(c"pub").ok()?;
    let (seed, dk) = if include_private {
        (p.octets(c"seed").ok()?, p.octets(c"priv").ok()?)
    } else {
        (None, None)
    };
    if ek.is_some_and(|k| k.len() != set.encaps_key_len())
        || dk.is_some_and(|k| k.len() != set.decaps_key_len())
    {
        return None;
    }
    let key = match (seed, dk, ek) {
        (Some(seed), _, _) => {
            let k = Key::generate(set, Some(seed.try_into().ok()?)).ok()?;
            if dk.is_some_and(|d| !ct_eq(d, k.dk.as_ref().expect("generated"))) {
                return None;
            }
            k
        }
        (None, Some(dk), _) => Key::from_dk(set, dk)?,
        (None, None, Some(ek)) => Key::from_ek(set, ek)?,
        (None, None, None) => return None,
    };
    if ek.is_some_and(|ek| key.ek.as_deref().map(|v| &v[..]) != Some(ek)) {
        return None;
    }
    Some(key)
}

/// Sets the peer's encapsulation key on a key without material (TLS's key share). Only its
/// length is checked here; the encapsulation does FIPS 203's check (`PQG_ERR_BAD_KEY`).
pub fn set_encoded_ek(k: &mut Key, p: &Params) -> bool {
    match p.octets(c"encoded-pub-key") {
        Ok(None) => true,
        Ok(Some(ek)) => {
            if ek.len() != k.set.encaps_key_len() || k.ek.is_some() || k.dk.is_some() {
                return false;
            }
            k.ek = Some(Arc::new(ek.to_vec()));
            true
        }
        Err(_) => false,
    }
}

// ---- entry points ---------------------------------------------------------------------------

/// # Safety
/// `k` must be NULL or a key made by this module.
unsafe fn key<'a>(k: *const c_void) -> Option<&'a Key> {
    // SAFETY: the caller's promise.
    unsafe { (k as *const Key).as_ref() }
}

unsafe extern "C" fn new<const S: usize>(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::empty(set_of(S)))).cast()
    })
}

unsafe extern "C" fn free(k: *mut c_void) {
    guard((), || {
        if !k.is_null() {
            // SAFETY: made by Box::into_raw in this module; OpenSSL frees each key once.
            drop(unsafe { Box::from_raw(k as *mut Key) });
        }
    })
}

unsafe extern "C" fn has(k: *const c_void, selection: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of this key management.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        let priv_ok = selection & abi::SELECT_PRIVATE_KEY == 0 || k.dk.is_some();
        let pub_ok = selection & abi::SELECT_PUBLIC_KEY == 0 || k.ek.is_some();
        status(priv_ok && pub_ok)
    })
}

unsafe extern "C" fn matches(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes keys of this key management.
        let (Some(a), Some(b)) = (unsafe { key(a) }, unsafe { key(b) }) else {
            return 0;
        };
        if a.set != b.set {
            return 0;
        }
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 1;
        }
        match (&a.ek, &b.ek) {
            (Some(x), Some(y)) => status(x == y),
            _ => 0,
        }
    })
}

unsafe extern "C" fn import<const S: usize>(
    k: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> c_int {
    guard(0, || {
        if k.is_null() || selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        // SAFETY: OpenSSL passes a key of ours and a terminated parameter array.
        let (k, p) = unsafe { (&mut *(k as *mut Key), Params::new(params)) };
        match key_from_params(set_of(S), &p, selection & abi::SELECT_PRIVATE_KEY != 0) {
            Some(new) => {
                *k = new;
                1
            }
            None => 0,
        }
    })
}

static KEY_TYPES: Table<Param, 4> = Table([
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn key_types(selection: c_int) -> *const Param {
    if selection & abi::SELECT_KEYPAIR == 0 {
        return ptr::null();
    }
    KEY_TYPES.as_ptr()
}

unsafe extern "C" fn export(
    k: *mut c_void,
    selection: c_int,
    cb: Option<Callback>,
    cbarg: *mut c_void,
) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        let (Some(k), Some(cb)) = (unsafe { key(k) }, cb) else {
            return 0;
        };
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        let mut arr: Vec<Param> = Vec::with_capacity(4);
        if selection & abi::SELECT_PRIVATE_KEY != 0 {
            if let Some(s) = &k.seed {
                arr.push(octet_param(c"seed", &s[..]));
            }
            if let Some(d) = &k.dk {
                arr.push(octet_param(c"priv", d));
            }
        }
        if selection & abi::SELECT_PUBLIC_KEY != 0 {
            if let Some(e) = &k.ek {
                arr.push(octet_param(c"pub", e));
            }
        }
        if arr.is_empty() {
            return 0;
        }
        arr.push(abi::PARAM_END);
        // SAFETY: a terminated array over the key's own buffers, alive during the call.
        unsafe { cb(arr.as_ptr(), cbarg) }
    })
}

unsafe extern "C" fn get_params(k: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated, writable array.
        let (Some(k), p) = (unsafe { key(k) }, unsafe { Params::new(params) }) else {
            return 0;
        };
        let (bits, security_bits) = figures(k.set);
        let ct_len = k.set.ciphertext_len() as i32;
        let ok = p.set_int(c"bits", bits).is_ok()
            && p.set_int(c"security-bits", security_bits).is_ok()
            && p.set_int(c"max-size", ct_len).is_ok()
            && k.seed
                .as_ref()
                .is_none_or(|v| p.set_octets(c"seed", &v[..]).is_ok())
            && k.dk
                .as_ref()
                .is_none_or(|v| p.set_octets(c"priv", v).is_ok())
            && k.ek.as_ref().is_none_or(|v| {
                p.set_octets(c"pub", v).is_ok() && p.set_octets(c"encoded-pub-key", v).is_ok()
            });
        status(ok)
    })
}

static GETTABLE: Table<Param, 8> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const Param {
    GETTABLE.as_ptr()
}

unsafe extern "C" fn set_params(k: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated array.
        let (Some(k), p) = (unsafe { (k as *mut Key).as_mut() }, unsafe {
            Params::new(params)
        }) else {
            return 0;
        };
        status(set_encoded_ek(k, &p))
    })
}

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn settable_params(_provctx: *mut c_void) -> *const Param {
    SETTABLE.as_ptr()
}

/// Valid: FIPS 203's checks pass, a seed (if any) regenerates the key, and an encapsulation
/// to the key decapsulates to the same secret (pairwise test).
pub fn valid(k: &Key, selection: c_int) -> bool {
    use crate::kem_key::KemKey;
    let Some(ek) = &k.ek else { return false };
    let private = selection & abi::SELECT_PRIVATE_KEY != 0;
    let dk = if private { k.dk.clone() } else { None };
    if private && dk.is_none() {
        return false;
    }
    if engine::mlkem_check(k.set, Some(ek.clone()), dk.clone()).is_err() {
        return false;
    }
    let Some(dk) = dk else { return true };
    let seed_ok = k
        .seed
        .as_ref()
        .is_none_or(|s| Key::generate(k.set, Some(s)).is_ok_and(|g| g.dk.as_deref() == Some(&*dk)));
    let pairwise = k
        .encaps(None)
        .is_ok_and(|(ct, ss)| k.decaps(&ct).is_ok_and(|ss2| ct_eq(&ss, &ss2)));
    seed_ok && ct_eq(embedded_ek(k.set, &dk), ek) && pairwise
}

unsafe extern "C" fn validate(k: *const c_void, selection: c_int, _check: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        if unsafe { has(k, selection) } == 0 {
            return 0;
        }
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 1;
        }
        // SAFETY: as above; `has` returned 1, so it is not NULL.
        status(valid(unsafe { key(k) }.expect("checked by has"), selection))
    })
}

unsafe extern "C" fn dup(k: *const c_void, selection: c_int) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: OpenSSL passes a key of ours.
        let Some(k) = (unsafe { key(k) }) else {
            return ptr::null_mut();
        };
        let mut d = k.clone();
        if selection & abi::SELECT_PRIVATE_KEY == 0 {
            d.seed = None;
            d.dk = None;
        }
        if selection & abi::SELECT_PUBLIC_KEY == 0 && d.dk.is_none() {
            d.ek = None;
        }
        Box::into_raw(Box::new(d)).cast()
    })
}

// ---- key generation -------------------------------------------------------------------------

/// A generation context: a key pair (with an optional seed) or, for parameter generation
/// (what TLS asks before it sets the peer's share), an empty key.
pub struct GenCtx {
    pub keypair: bool,
    pub seed: Option<Zeroizing<[u8; 64]>>,
}

/// Reads `seed` (64 bytes) when `take_seed`; `properties` must be text; the rest (`group`,
/// which TLS passes) is ignored, as OpenSSL's ML-KEM does.
pub fn gen_set(g: &mut GenCtx, p: &Params, take_seed: bool) -> bool {
    if take_seed {
        match p.octets(c"seed") {
            Ok(Some(s)) => match <[u8; 64]>::try_from(s) {
                Ok(s) => g.seed = Some(Zeroizing::new(s)),
                Err(_) => return false,
            },
            Ok(None) => {}
            Err(_) => return false,
        }
    }
    p.utf8(c"properties").is_ok()
}

/// A generation context for `selection`: key pairs and (empty) parameters.
///
/// # Safety
/// `params` must be NULL or a terminated parameter array.
pub unsafe fn gen_new(selection: c_int, params: *const Param, take_seed: bool) -> *mut c_void {
    if selection & (abi::SELECT_KEYPAIR | abi::SELECT_ALL_PARAMETERS) == 0 {
        return ptr::null_mut();
    }
    let mut g = GenCtx {
        keypair: selection & abi::SELECT_KEYPAIR != 0,
        seed: None,
    };
    // SAFETY: the caller's promise.
    if !gen_set(&mut g, &unsafe { Params::new(params) }, take_seed) {
        return ptr::null_mut();
    }
    Box::into_raw(Box::new(g)).cast()
}

unsafe extern "C" fn gen_init(
    _provctx: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> *mut c_void {
    // SAFETY: OpenSSL's parameter array (terminated) or NULL.
    guard(ptr::null_mut(), || unsafe {
        gen_new(selection, params, true)
    })
}

unsafe extern "C" fn gen_set_params(g: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: our generation context and a terminated array.
        match unsafe { (g as *mut GenCtx).as_mut() } {
            Some(g) => status(gen_set(g, &unsafe { Params::new(params) }, true)),
            None => 0,
        }
    })
}

static GEN_SETTABLE: Table<Param, 3> = Table([
    abi::describe(c"properties", abi::PARAM_UTF8_STRING),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gen_settable_params(_g: *mut c_void, _provctx: *mut c_void) -> *const Param {
    GEN_SETTABLE.as_ptr()
}

unsafe extern "C" fn generate<const S: usize>(
    g: *mut c_void,
    _cb: *const c_void,
    _cbarg: *mut c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: our generation context.
        let Some(g) = (unsafe { (g as *mut GenCtx).as_mut() }) else {
            return ptr::null_mut();
        };
        if !g.keypair {
            return Box::into_raw(Box::new(Key::empty(set_of(S)))).cast();
        }
        // A given seed is single-use, as in OpenSSL.
        let seed = g.seed.take();
        match Key::generate(set_of(S), seed.as_deref()) {
            Ok(k) => Box::into_raw(Box::new(k)).cast(),
            Err(_) => ptr::null_mut(),
        }
    })
}

/// `OSSL_FUNC_keymgmt_gen_cleanup` for `GenCtx`.
///
/// # Safety
/// `g` must be NULL or a context from `gen_new`, not used again.
pub unsafe extern "C" fn gen_cleanup(g: *mut c_void) {
    guard((), || {
        if !g.is_null() {
            // SAFETY: made by Box::into_raw in gen_new; freed once.
            drop(unsafe { Box::from_raw(g as *mut GenCtx) });
        }
    })
}

const fn functions<const S: usize>() -> [Dispatch; 20] {
    [
        entry!(abi::KEYMGMT_NEW, new::<S>),
        entry!(abi::KEYMGMT_FREE, free),
        entry!(abi::KEYMGMT_HAS, has),
        entry!(abi::KEYMGMT_MATCH, matches),
        entry!(abi::KEYMGMT_IMPORT, import::<S>),
        entry!(abi::KEYMGMT_IMPORT_TYPES, key_types),
        entry!(abi::KEYMGMT_EXPORT, export),
        entry!(abi::KEYMGMT_EXPORT_TYPES, key_types),
        entry!(abi::KEYMGMT_GET_PARAMS, get_params),
        entry!(abi::KEYMGMT_GETTABLE_PARAMS, gettable_params),
        entry!(abi::KEYMGMT_SET_PARAMS, set_params),
        entry!(abi::KEYMGMT_SETTABLE_PARAMS, settable_params),
        entry!(abi::KEYMGMT_VALIDATE, validate),
        entry!(abi::KEYMGMT_DUP, dup),
        entry!(abi::KEYMGMT_GEN_INIT, gen_init),
        entry!(abi::KEYMGMT_GEN_SET_PARAMS, gen_set_params),
        entry!(abi::KEYMGMT_GEN_SETTABLE_PARAMS, gen_settable_params),
        entry!(abi::KEYMGMT_GEN, generate::<S>),
        entry!(abi::KEYMGMT_GEN_CLEANUP, gen_cleanup),
        abi::DISPATCH_END,
    ]
}

pub static KEYMGMT: [Table<Dispatch, 20>; 3] = [
    Table(functions::<0>()),
    Table(functions::<1>()),
    Table(functions::<2>()),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn import(set: ParamSet, entries: &[(&'static CStr, &[u8])]) -> Option<Key> {
        let mut arr: Vec<Param> = entries.iter().map(|(k, d)| octet_param(k, d)).collect();
        arr.push(abi::PARAM_END);
        // SAFETY: a terminated array over live slices.
        key_from_params(set, &unsafe { Params::new(arr.as_ptr()) }, true)
    }

    #[test]
    fn import_follows_openssl_rules_and_fips203_checks() {
        let set = ParamSet::MlKem768;
        let seed = [3u8; 64];
        let full = import(set, &[(c"seed", &seed)]).expect("seed alone");
        let (dk, ek) = (full.dk.clone().unwrap(), full.ek.clone().unwrap());
        assert_eq!(embedded_ek(set, &dk), &ek[..]);
        assert!(import(set, &[(c"seed", &seed), (c"priv", &dk), (c"pub", &ek)]).is_some());
        let k = import(set, &[(c"priv", &dk)]).expect("priv alone holds ek");
        assert_eq!(k.ek.as_deref(), Some(&*ek));
        assert!(k.seed.is_none());
        assert!(import(set, &[(c"pub", &ek)]).is_some_and(|k| k.dk.is_none()));
        // Inconsistent, short or malformed keys are refused.
        let mut other_ek = ek.to_vec();
        other_ek[7] ^= 1;
        assert!(import(set, &[(c"seed", &seed), (c"pub", &other_ek)]).is_none());
        assert!(import(set, &[(c"priv", &dk), (c"pub", &other_ek)]).is_none());
        let mut other_dk = dk.to_vec();
        other_dk[3] ^= 1;
        assert!(import(set, &[(c"seed", &seed), (c"priv", &other_dk)]).is_none());
        assert!(import(set, &[(c"seed", &seed[..63])]).is_none());
        assert!(import(set, &[(c"pub", &ek[..100])]).is_none());
        assert!(import(ParamSet::MlKem512, &[(c"priv", &dk)]).is_none());
        assert!(import(set, &[]).is_none());
        // FIPS 203 7.2: a coefficient of 4095 >= q in ek.
        let mut big = ek.to_vec();
        big[0] = 0xff;
        big[1] |= 0x0f;
        assert!(import(set, &[(c"pub", &big)]).is_none());
        // FIPS 203 7.3: dk whose H(ek) does not match its ek (an ek byte changed inside dk).
        let mut bad_dk = dk.to_vec();
        let at = dk.len() - 64 - ek.len() + 5;
        bad_dk[at] ^= 1;
        assert!(import(set, &[(c"priv", &bad_dk)]).is_none());
    }

    #[test]
    fn validate_checks_pairwise_and_seed() {
        let k = Key::generate(ParamSet::MlKem512, None).unwrap();
        assert!(k.seed.is_some(), "a fresh key keeps its seed");
        assert!(valid(&k, abi::SELECT_KEYPAIR));
        let mut wrong_seed = k.clone();
        wrong_seed.seed = Some(Arc::new(Zeroizing::new([1u8; 64])));
        assert!(!valid(&wrong_seed, abi::SELECT_KEYPAIR));
    }
}
