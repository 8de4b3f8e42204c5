//! CTRU-Prime-653/761/1277 keys (a KEM that OpenSSL does not know) under a private OID arc:
//! key management with the parameter names OpenSSL uses for ML-KEM (`seed` = d || z, `priv`,
//! `pub`), so `genpkey`, `pkey` and `pkeyutl -encap/-decap` work; `codec` writes and reads the
//! keys as SubjectPublicKeyInfo and PKCS#8.
//!
//! The OIDs are private: 2.25.<UUID>.{1,2,3} (ITU-T X.667 lets anyone form an OID under 2.25
//! from a UUID they generated; this one was generated for pqgpu). No standard assigns OIDs to
//! CTRU-Prime; keys written with these OIDs are readable only where pqgpu.so is loaded.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::engine::{self, SecretKey};
use crate::entry;
use crate::guard::guard;
use crate::params::{octet_param, status, Params};
use pqgpu::ctru::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The UUID under 2.25 that roots pqgpu's private arc (e4eda5d4-9c7f-4ef5-97b9-0a7c57119794).
pub const ARC_UUID: u128 = 0xe4eda5d4_9c7f_4ef5_97b9_0a7c57119794;

/// The parameter set of table index `s` (0, 1, 2 = CTRU-Prime-653, -761, -1277).
pub const fn set_of(s: usize) -> ParamSet {
    match s {
        0 => ParamSet::Ctru653,
        1 => ParamSet::Ctru761,
        _ => ParamSet::Ctru1277,
    }
}

pub fn index(p: ParamSet) -> usize {
    match p {
        ParamSet::Ctru653 => 0,
        ParamSet::Ctru761 => 1,
        ParamSet::Ctru1277 => 2,
    }
}

/// Algorithm names: the set's name and its dotted OID (OpenSSL's PKCS#8/SPKI decoders name an
/// unregistered OID by its dotted form).
pub const NAMES: [&CStr; 3] = [
    c"CTRU-Prime-653:2.25.304297920836822196705880890118715316116.1",
    c"CTRU-Prime-761:2.25.304297920836822196705880890118715316116.2",
    c"CTRU-Prime-1277:2.25.304297920836822196705880890118715316116.3",
];

/// Just the set's name (what decoders report as the key's data type).
pub const SHORT: [&CStr; 3] = [c"CTRU-Prime-653", c"CTRU-Prime-761", c"CTRU-Prime-1277"];

/// The dotted OIDs (as in `NAMES`).
pub const OIDS: [&CStr; 3] = [
    c"2.25.304297920836822196705880890118715316116.1",
    c"2.25.304297920836822196705880890118715316116.2",
    c"2.25.304297920836822196705880890118715316116.3",
];

/// The DER content octets of set `p`'s OID.
pub fn oid_der(p: ParamSet) -> Vec<u8> {
    crate::der::oid_content(&[2, 25, ARC_UUID, index(p) as u128 + 1])
}

/// A CTRU-Prime key: public key, secret key (sk_pke || pk || z, which holds the public key),
/// and the 64-byte seed when the key was generated or imported from one.
#[derive(Clone)]
pub struct Key {
    pub set: ParamSet,
    pub seed: Option<Arc<Zeroizing<[u8; 64]>>>,
    pub sk: Option<SecretKey>,
    pub pk: Option<Arc<Vec<u8>>>,
}

/// The public key inside a secret key (sk = sk_pke || pk || z).
fn embedded_pk(p: ParamSet, sk: &[u8]) -> &[u8] {
    &sk[p.sk_pke_len()..p.sk_pke_len() + p.public_key_len()]
}

impl Key {
    pub fn empty(set: ParamSet) -> Key {
        Key {
            set,
            seed: None,
            sk: None,
            pk: None,
        }
    }

    /// KeyGen from d || z, or fresh.
    pub fn generate(set: ParamSet, seed: Option<&[u8; 64]>) -> Option<Key> {
        let seed = seed.map(|s| Zeroizing::new(*s));
        let (pk, sk) = engine::kem_keygen(set, seed.clone()).ok()?;
        Some(Key {
            set,
            seed: seed.map(Arc::new),
            sk: Some(sk),
            pk: Some(Arc::new(pk)),
        })
    }

    /// A key from its secret key alone (the public key is inside it).
    pub fn from_sk(set: ParamSet, sk: &[u8]) -> Option<Key> {
        if sk.len() != set.secret_key_len() {
            return None;
        }
        Some(Key {
            set,
            seed: None,
            pk: Some(Arc::new(embedded_pk(set, sk).to_vec())),
            sk: Some(Arc::new(Zeroizing::new(sk.to_vec()))),
        })
    }

    /// A public key alone.
    pub fn from_pk(set: ParamSet, pk: &[u8]) -> Option<Key> {
        (pk.len() == set.public_key_len()).then(|| Key {
            set,
            seed: None,
            sk: None,
            pk: Some(Arc::new(pk.to_vec())),
        })
    }
}

impl crate::kem_key::KemKey for Key {
    const TAKES_IKME: bool = true;

    fn index(&self) -> usize {
        index(self.set)
    }

    fn can_encaps(&self) -> bool {
        self.pk.is_some()
    }

    fn can_decaps(&self) -> bool {
        self.sk.is_some()
    }

    fn ciphertext_len(&self) -> usize {
        self.set.ciphertext_len()
    }

    fn shared_secret_len(&self) -> usize {
        self.set.shared_secret_len()
    }

    fn encaps(&self, coins: Option<Zeroizing<[u8; 32]>>) -> Result<engine::Encapsulated, Error> {
        let pk = self.pk.clone().ok_or(Error::InvalidArgument)?;
        engine::kem_encaps(Alg::Ctru(self.set), pk, coins)
    }

    fn decaps(&self, ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let sk = self.sk.clone().ok_or(Error::InvalidArgument)?;
        engine::kem_decaps(Alg::Ctru(self.set), sk, ct.to_vec())
    }
}

/// Constant-time equality (secret keys are compared here).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A key from import parameters: a seed wins (and must reproduce any priv/pub given with it),
/// else priv (whose embedded public key must equal any pub given), else pub alone.
pub fn key_from_params(set: ParamSet, p: &Params, include_private: bool) -> Option<Key> {
    let pk = p.octets(c"pub").ok()?;
    let (seed, sk) = if include_private {
        (p.octets(c"seed").ok()?, p.octets(c"priv").ok()?)
    } else {
        (None, None)
    };
    let key = match (seed, sk, pk) {
        (Some(seed), _, _) => {
            let k = Key::generate(set, Some(seed.try_into().ok()?))?;
            if sk.is_some_and(|s| !ct_eq(s, k.sk.as_ref().expect("generated"))) {
                return None;
            }
            k
        }
        (None, Some(sk), _) => Key::from_sk(set, sk)?,
        (None, None, Some(pk)) => Key::from_pk(set, pk)?,
        (None, None, None) => return None,
    };
    if pk.is_some_and(|pk| key.pk.as_deref().map(|v| &v[..]) != Some(pk)) {
        return None;
    }
    Some(key)
}

// ---- entry points ---------------------------------------------------------------------------

/// # Safety
/// `k` must be NULL or a key made by this module.
pub unsafe fn key<'a>(k: *const c_void) -> Option<&'a Key> {
    // SAFETY: the caller's promise.
    unsafe { (k as *const Key).as_ref() }
}

unsafe extern "C" fn new<const S: usize>(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::empty(set_of(S)))).cast()
    })
}

/// `OSSL_FUNC_keymgmt_free` (also the encoders' `free_object`).
///
/// # Safety
/// `k` must be NULL or a key made by this crate, not used again.
pub unsafe extern "C" fn free(k: *mut c_void) {
    guard((), || {
        if !k.is_null() {
            // SAFETY: made by Box::into_raw in this crate; OpenSSL frees each key once.
            drop(unsafe { Box::from_raw(k as *mut Key) });
        }
    })
}

/// `OSSL_FUNC_keymgmt_load`: takes the key a decoder of this provider passed by reference
/// (a pointer to a boxed `Key`; the reference is cleared so the decoder does not free it).
unsafe extern "C" fn load<const S: usize>(reference: *const c_void, size: usize) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if reference.is_null() || size != size_of::<*mut Key>() {
            return ptr::null_mut();
        }
        // SAFETY: the reference is the decoder's pointer slot (`codec::decode`), live and
        // writable for the duration of this call.
        let slot = reference as *mut *mut Key;
        let k = unsafe { std::mem::replace(&mut *slot, ptr::null_mut()) };
        // SAFETY: a boxed key made by our decoder, not yet owned by anyone else.
        match unsafe { k.as_ref() } {
            Some(key) if key.set == set_of(S) => k.cast(),
            Some(_) => {
                // Not this set: give it back to the decoder, which frees it.
                unsafe { *slot = k };
                ptr::null_mut()
            }
            None => ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn has(k: *const c_void, selection: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of this key management.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        let priv_ok = selection & abi::SELECT_PRIVATE_KEY == 0 || k.sk.is_some();
        let pub_ok = selection & abi::SELECT_PUBLIC_KEY == 0 || k.pk.is_some();
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
        if let (Some(x), Some(y)) = (&a.pk, &b.pk) {
            return status(x == y);
        }
        0
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
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn key_types(selection: c_int) -> *const Param {
    if selection & abi::SELECT_KEYPAIR == 0 {
        return ptr::null();
    }
    KEY_TYPES.as_ptr()
}

/// Calls `cb` with the key's parameters for `selection` (also the decoders' export).
///
/// # Safety
/// `cb` and `cbarg` must be a callback and its argument from OpenSSL.
pub unsafe fn export_key(k: &Key, selection: c_int, cb: Callback, cbarg: *mut c_void) -> c_int {
    let mut arr: Vec<Param> = Vec::with_capacity(4);
    if selection & abi::SELECT_PRIVATE_KEY != 0 {
        if let Some(s) = &k.seed {
            arr.push(octet_param(c"seed", &s[..]));
        }
        if let Some(s) = &k.sk {
            arr.push(octet_param(c"priv", s));
        }
    }
    if selection & abi::SELECT_PUBLIC_KEY != 0 {
        if let Some(p) = &k.pk {
            arr.push(octet_param(c"pub", p));
        }
    }
    if arr.is_empty() {
        return 0;
    }
    arr.push(abi::PARAM_END);
    // SAFETY: a terminated array over the key's own buffers, alive during the call.
    unsafe { cb(arr.as_ptr(), cbarg) }
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
        // SAFETY: OpenSSL's callback and argument.
        unsafe { export_key(k, selection, cb, cbarg) }
    })
}

/// Security strength reported to OpenSSL. The spec (shared/spec/ctru-prime.md section 3) gives
/// no established claim; by analogy with sntrup at the same (n, q): 653 about NIST level 1,
/// 761 level 1-3 (reported as 128, the lower end), 1277 level 5.
fn security_bits(set: ParamSet) -> i32 {
    match set {
        ParamSet::Ctru653 | ParamSet::Ctru761 => 128,
        ParamSet::Ctru1277 => 256,
    }
}

unsafe extern "C" fn get_params(k: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated, writable array.
        let (Some(k), p) = (unsafe { key(k) }, unsafe { Params::new(params) }) else {
            return 0;
        };
        let s = k.set;
        let ok = p.set_int(c"bits", 8 * s.public_key_len() as i32).is_ok()
            && p.set_int(c"security-bits", security_bits(s)).is_ok()
            && p.set_int(c"max-size", s.ciphertext_len() as i32).is_ok()
            && k.seed
                .as_ref()
                .is_none_or(|v| p.set_octets(c"seed", &v[..]).is_ok())
            && k.sk
                .as_ref()
                .is_none_or(|v| p.set_octets(c"priv", v).is_ok())
            && k.pk
                .as_ref()
                .is_none_or(|v| p.set_octets(c"pub", v).is_ok());
        status(ok)
    })
}

static GETTABLE: Table<Param, 7> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const Param {
    GETTABLE.as_ptr()
}

/// A key pair is valid when its public key is the one inside the secret key, a seed (if any)
/// regenerates it, and an encapsulation to it decapsulates to the same secret (pairwise test).
unsafe extern "C" fn validate(k: *const c_void, selection: c_int, _check: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        if unsafe { has(k, selection) } == 0 {
            return 0;
        }
        // SAFETY: as above; `has` returned 1, so it is not NULL.
        let k = unsafe { key(k) }.expect("checked by has");
        let Some(pk) = &k.pk else { return 0 };
        if pk.len() != k.set.public_key_len() {
            return 0;
        }
        let Some(sk) = &k.sk else {
            // A public key alone: it must take an encapsulation (canonical encoding).
            return status(engine::kem_encaps(Alg::Ctru(k.set), pk.clone(), None).is_ok());
        };
        if selection & abi::SELECT_PRIVATE_KEY == 0 {
            return status(engine::kem_encaps(Alg::Ctru(k.set), pk.clone(), None).is_ok());
        }
        let seed_ok = k.seed.as_ref().is_none_or(|s| {
            Key::generate(k.set, Some(s)).is_some_and(|g| g.sk.as_deref() == Some(&**sk))
        });
        let pairwise =
            engine::kem_encaps(Alg::Ctru(k.set), pk.clone(), None).is_ok_and(|(ct, ss)| {
                engine::kem_decaps(Alg::Ctru(k.set), sk.clone(), ct)
                    .is_ok_and(|ss2| ct_eq(&ss, &ss2))
            });
        status(seed_ok && ct_eq(embedded_pk(k.set, sk), pk) && pairwise)
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
            d.sk = None;
        }
        if selection & abi::SELECT_PUBLIC_KEY == 0 {
            d.pk = None;
        }
        Box::into_raw(Box::new(d)).cast()
    })
}

// ---- key generation -------------------------------------------------------------------------

struct GenCtx {
    seed: Option<Zeroizing<[u8; 64]>>,
}

fn gen_set(g: &mut GenCtx, p: &Params) -> bool {
    match p.octets(c"seed") {
        Ok(Some(s)) => match <[u8; 64]>::try_from(s) {
            Ok(s) => g.seed = Some(Zeroizing::new(s)),
            Err(_) => return false,
        },
        Ok(None) => {}
        Err(_) => return false,
    }
    p.utf8(c"properties").is_ok()
}

unsafe extern "C" fn gen_init(
    _provctx: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if selection & abi::SELECT_KEYPAIR == 0 {
            return ptr::null_mut();
        }
        let mut g = GenCtx { seed: None };
        // SAFETY: a terminated parameter array or NULL.
        if !gen_set(&mut g, &unsafe { Params::new(params) }) {
            return ptr::null_mut();
        }
        Box::into_raw(Box::new(g)).cast()
    })
}

unsafe extern "C" fn gen_set_params(g: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: our generation context and a terminated array.
        match unsafe { (g as *mut GenCtx).as_mut() } {
            Some(g) => status(gen_set(g, &unsafe { Params::new(params) })),
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
        let Some(g) = (unsafe { (g as *mut GenCtx).as_ref() }) else {
            return ptr::null_mut();
        };
        match Key::generate(set_of(S), g.seed.as_deref()) {
            Some(k) => Box::into_raw(Box::new(k)).cast(),
            None => ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn gen_cleanup(g: *mut c_void) {
    guard((), || {
        if !g.is_null() {
            // SAFETY: made by Box::into_raw in gen_init; freed once.
            drop(unsafe { Box::from_raw(g as *mut GenCtx) });
        }
    })
}

const fn functions<const S: usize>() -> [Dispatch; 19] {
    [
        entry!(abi::KEYMGMT_NEW, new::<S>),
        entry!(abi::KEYMGMT_FREE, free),
        entry!(abi::KEYMGMT_LOAD, load::<S>),
        entry!(abi::KEYMGMT_HAS, has),
        entry!(abi::KEYMGMT_MATCH, matches),
        entry!(abi::KEYMGMT_IMPORT, import::<S>),
        entry!(abi::KEYMGMT_IMPORT_TYPES, key_types),
        entry!(abi::KEYMGMT_EXPORT, export),
        entry!(abi::KEYMGMT_EXPORT_TYPES, key_types),
        entry!(abi::KEYMGMT_GET_PARAMS, get_params),
        entry!(abi::KEYMGMT_GETTABLE_PARAMS, gettable_params),
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

pub static KEYMGMT: [Table<Dispatch, 19>; 3] = [
    Table(functions::<0>()),
    Table(functions::<1>()),
    Table(functions::<2>()),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_agree_with_their_dotted_names() {
        // The dotted arc under 2.25 is the UUID as a decimal integer.
        assert_eq!(
            ARC_UUID.to_string(),
            "304297920836822196705880890118715316116"
        );
        for p in ParamSet::ALL {
            let i = index(p);
            let dotted = format!("2.25.{ARC_UUID}.{}", i + 1);
            assert_eq!(OIDS[i].to_str().unwrap(), dotted);
            let name = NAMES[i].to_str().unwrap();
            assert_eq!(name, format!("{}:{dotted}", p.name()));
            assert_eq!(SHORT[i].to_str().unwrap(), p.name());
            // Within OpenSSL's OSSL_MAX_NAME_SIZE (50) with its NUL: its decoders name an
            // unregistered OID by this text.
            assert!(dotted.len() < 50);
        }
    }

    #[test]
    fn import_rules() {
        let set = ParamSet::Ctru653;
        let seed = [9u8; 64];
        let full = Key::generate(set, Some(&seed)).unwrap();
        let (sk, pk) = (full.sk.clone().unwrap(), full.pk.clone().unwrap());
        let params = |entries: &[(&'static CStr, &[u8])]| {
            let mut v: Vec<Param> = entries.iter().map(|(k, d)| octet_param(k, d)).collect();
            v.push(abi::PARAM_END);
            v
        };
        let import = |entries: &[(&'static CStr, &[u8])]| {
            let arr = params(entries);
            // SAFETY: a terminated array over live slices.
            key_from_params(set, &unsafe { Params::new(arr.as_ptr()) }, true)
        };
        assert!(import(&[(c"seed", &seed), (c"priv", &sk), (c"pub", &pk)]).is_some());
        let k = import(&[(c"priv", &sk)]).expect("priv alone holds the public key");
        assert_eq!(k.pk.as_deref(), Some(&*pk));
        assert!(import(&[(c"pub", &pk)]).is_some_and(|k| k.sk.is_none()));
        let mut other = pk.to_vec();
        other[5] ^= 1;
        assert!(import(&[(c"priv", &sk), (c"pub", &other)]).is_none());
        assert!(import(&[(c"seed", &seed), (c"pub", &other)]).is_none());
        assert!(import(&[(c"seed", &seed[..63])]).is_none());
        assert!(import(&[(c"priv", &sk[..100])]).is_none());
        assert!(import(&[]).is_none());
    }
}
