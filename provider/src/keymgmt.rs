//! Key management for ML-DSA-44/65/87 under OpenSSL 3.5's names and parameters (`seed`, `priv`,
//! `pub`), so keys move between this provider and OpenSSL's default one by export/import:
//! OpenSSL's own decoders and encoders (PEM, DER, every RFC 9881 private-key layout) serve them.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::engine::{self, Handle, LazyHandle, SecretKey};
use crate::guard::guard;
use crate::params::{octet_param, status, Params};
use crate::sig_key::{nist_sig_algorithm_id, Request, Rnd, SigKey};
use crate::{entry, set_of};
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::serve::KeyKind;
use pqgpu::{Alg, Error, Status};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::Arc;
use zeroize::Zeroizing;

/// An ML-DSA key as OpenSSL sees it: any of seed, encoded secret key and public key, plus
/// pqgpu key handles (decoded, checked and expanded once, on first use; zeroized by pqgpu when
/// the last holder lets go). Secrets are zeroed when the last holder drops them.
#[derive(Clone)]
pub struct Key {
    pub set: ParamSet,
    pub seed: Option<Arc<Zeroizing<[u8; 32]>>>,
    pub sk: Option<SecretKey>,
    pub pk: Option<Arc<Vec<u8>>>,
    sk_handle: Option<LazyHandle>,
    pk_handle: Option<LazyHandle>,
}

impl Key {
    fn new(
        set: ParamSet,
        seed: Option<Arc<Zeroizing<[u8; 32]>>>,
        sk: Option<SecretKey>,
        pk: Option<Arc<Vec<u8>>>,
    ) -> Key {
        let alg = Alg::MlDsa(set);
        Key {
            set,
            seed,
            sk_handle: sk
                .as_ref()
                .map(|b| LazyHandle::new(alg, KeyKind::Secret, b)),
            pk_handle: pk
                .as_ref()
                .map(|b| LazyHandle::new(alg, KeyKind::Public, b)),
            sk,
            pk,
        }
    }

    fn empty(set: ParamSet) -> Key {
        Key::new(set, None, None, None)
    }

    /// The secret key's pqgpu handle (made on first use, off any async job's small stack).
    pub fn secret_handle(&self) -> Option<&LazyHandle> {
        self.sk_handle.as_ref()
    }

    /// The public key's pqgpu handle.
    pub fn public_handle(&self) -> Option<&LazyHandle> {
        self.pk_handle.as_ref()
    }

    /// Expands a seed (ML-DSA.KeyGen_internal).
    fn from_seed(set: ParamSet, seed: &[u8; 32]) -> Option<Key> {
        let seed = Zeroizing::new(*seed);
        let (pk, sk) = engine::keygen(set, seed.clone()).ok()?;
        Some(Key::new(
            set,
            Some(Arc::new(seed)),
            Some(sk),
            Some(Arc::new(pk)),
        ))
    }
}

/// tr = H(pk, 64), which FIPS 204 stores in the secret key at bytes 64..128: ties sk to pk.
fn tr_matches(sk: &[u8], pk: &[u8]) -> bool {
    let mut tr = [0u8; 64];
    let mut h = sha3::Shake256::default();
    h.update(pk);
    h.finalize_xof().read(&mut tr);
    sk.len() >= 128 && ct_eq(&sk[64..128], &tr)
}

/// Constant-time equality (secret keys are compared here).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Builds a key from OpenSSL's import parameters, with OpenSSL's rules: a seed wins (and must
/// reproduce any given priv/pub), else priv (which needs pub here: this provider does not
/// recompute t1), else pub alone.
pub fn key_from_params(set: ParamSet, p: &Params, include_private: bool) -> Option<Key> {
    let pk = p.octets(c"pub").ok()?;
    let (seed, sk) = if include_private {
        (p.octets(c"seed").ok()?, p.octets(c"priv").ok()?)
    } else {
        (None, None)
    };
    if pk.is_some_and(|k| k.len() != set.public_key_len())
        || seed.is_some_and(|s| s.len() != 32)
        || sk.is_some_and(|k| k.len() != set.secret_key_len())
    {
        return None;
    }
    let key = match (seed, sk, pk) {
        (Some(seed), _, _) => {
            let k = Key::from_seed(set, seed.try_into().ok()?)?;
            if sk.is_some_and(|s| !ct_eq(s, k.sk.as_ref().expect("expanded"))) {
                return None;
            }
            k
        }
        (None, Some(sk), Some(pk)) => {
            if !tr_matches(sk, pk) {
                return None;
            }
            Key::new(
                set,
                None,
                Some(Arc::new(Zeroizing::new(sk.to_vec()))),
                Some(Arc::new(pk.to_vec())),
            )
        }
        (None, Some(_), None) => return None,
        (None, None, Some(pk)) => Key::new(set, None, None, Some(Arc::new(pk.to_vec()))),
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
        if selection & abi::SELECT_PRIVATE_KEY != 0 {
            if let (Some(x), Some(y)) = (&a.sk, &b.sk) {
                return status(ct_eq(x, y));
            }
        }
        0
    })
}

unsafe extern "C" fn import(k: *mut c_void, selection: c_int, params: *const Param) -> c_int {
    guard(0, || {
        if k.is_null() || selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        // SAFETY: OpenSSL passes a key of ours and a terminated parameter array.
        let (k, p) = unsafe { (&mut *(k as *mut Key), Params::new(params)) };
        let include_private = selection & abi::SELECT_PRIVATE_KEY != 0;
        match key_from_params(k.set, &p, include_private) {
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
    })
}

/// Collision strength in bits, as OpenSSL reports `security-bits` for ML-DSA.
fn security_bits(set: ParamSet) -> i32 {
    match set {
        ParamSet::MlDsa44 | ParamSet::Dilithium2 => 128,
        ParamSet::MlDsa65 | ParamSet::Dilithium3 => 192,
        ParamSet::MlDsa87 | ParamSet::Dilithium5 => 256,
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
            && p.set_int(c"max-size", s.signature_len() as i32).is_ok()
            && p.set_utf8(c"mandatory-digest", c"").is_ok()
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

static GETTABLE: Table<Param, 8> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"mandatory-digest", abi::PARAM_UTF8_STRING),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const Param {
    GETTABLE.as_ptr()
}

unsafe extern "C" fn validate(k: *const c_void, selection: c_int, _check: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        if unsafe { has(k, selection) } == 0 {
            return 0;
        }
        // SAFETY: as above; `has` returned 1, so it is not NULL.
        let k = unsafe { key(k) }.expect("checked by has");
        if selection & abi::SELECT_KEYPAIR != abi::SELECT_KEYPAIR {
            return 1;
        }
        let (Some(sk), Some(pk)) = (&k.sk, &k.pk) else {
            return 0;
        };
        let seed_ok = k.seed.as_ref().is_none_or(|s| {
            Key::from_seed(k.set, s).is_some_and(|e| e.pk.as_deref() == Some(&**pk))
        });
        status(seed_ok && tr_matches(sk, pk))
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
            d.sk_handle = None;
        }
        if selection & abi::SELECT_PUBLIC_KEY == 0 {
            d.pk = None;
            d.pk_handle = None;
        }
        Box::into_raw(Box::new(d)).cast()
    })
}

// ---- key generation -------------------------------------------------------------------------

struct GenCtx {
    seed: Option<Zeroizing<[u8; 32]>>,
}

fn gen_set(g: &mut GenCtx, p: &Params) -> bool {
    match p.octets(c"seed") {
        Ok(Some(s)) => match <[u8; 32]>::try_from(s) {
            Ok(s) => g.seed = Some(Zeroizing::new(s)),
            Err(_) => return false,
        },
        Ok(None) => {}
        Err(_) => return false,
    }
    // `properties` is accepted and has nothing to select here.
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
        let seed = match &g.seed {
            Some(s) => s.clone(),
            None => match pqgpu::rng::array32() {
                Ok(s) => Zeroizing::new(s),
                Err(_) => return ptr::null_mut(),
            },
        };
        match Key::from_seed(set_of(S), &seed) {
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

const fn functions<const S: usize>() -> [Dispatch; 18] {
    [
        entry!(abi::KEYMGMT_NEW, new::<S>),
        entry!(abi::KEYMGMT_FREE, free),
        entry!(abi::KEYMGMT_HAS, has),
        entry!(abi::KEYMGMT_MATCH, matches),
        entry!(abi::KEYMGMT_IMPORT, import),
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

pub static MLDSA44: Table<Dispatch, 18> = Table(functions::<0>());
pub static MLDSA65: Table<Dispatch, 18> = Table(functions::<1>());
pub static MLDSA87: Table<Dispatch, 18> = Table(functions::<2>());

static SIG_SETTABLE: Table<Param, 6> = Table([
    abi::describe(c"context-string", abi::PARAM_OCTET_STRING),
    abi::describe(c"test-entropy", abi::PARAM_OCTET_STRING),
    abi::describe(c"deterministic", abi::PARAM_INTEGER),
    abi::describe(c"mu", abi::PARAM_INTEGER),
    abi::describe(c"message-encoding", abi::PARAM_INTEGER),
    abi::PARAM_END,
]);

/// The message as OpenSSL passes it, read as the `mu` and `message-encoding` parameters say.
fn message<'a>(req: &Request<'a>) -> Message<'a> {
    if req.mu {
        Message::Mu(req.data)
    } else if req.raw {
        Message::Internal(req.data)
    } else {
        Message::Pure {
            ctx: req.context,
            msg: req.data,
        }
    }
}

/// ML-DSA as OpenSSL 3.5 signs: `test-entropy` is rnd (32 bytes), `deterministic` an all-zero
/// rnd, else fresh randomness.
impl SigKey for Key {
    /// The key's pqgpu handle.
    type Prepared = Handle;
    const TAKES_MU: bool = true;

    fn is_set(&self, s: usize) -> bool {
        self.set == set_of(s)
    }

    fn signature_len(s: usize) -> usize {
        set_of(s).signature_len()
    }

    fn entropy_len(_s: usize) -> usize {
        32
    }

    /// ML-DSA-44/65/87 are 2.16.840.1.101.3.4.3.17/18/19 (RFC 9881).
    fn algorithm_id(s: usize) -> Vec<u8> {
        nist_sig_algorithm_id(17 + s as u8)
    }

    fn settable() -> *const Param {
        SIG_SETTABLE.as_ptr()
    }

    fn prepare(&self, secret: bool) -> Option<Handle> {
        let lazy = if secret {
            self.secret_handle()
        } else {
            self.public_handle()
        };
        lazy?.handle().ok()
    }

    fn sign(sk: &Handle, req: &Request<'_>, rnd: Rnd<'_>, sig: &mut [u8]) -> Status {
        let rnd = match rnd {
            Rnd::Given(e) => Zeroizing::new(<[u8; 32]>::try_from(e).map_err(|_| Error::BadLength)?),
            Rnd::Deterministic => Zeroizing::new([0u8; 32]),
            Rnd::Fresh => Zeroizing::new(pqgpu::rng::array32()?),
        };
        engine::sign(sk, &message(req), &rnd, sig)
    }

    fn verify(pk: &Handle, req: &Request<'_>, sig: &[u8]) -> Status {
        engine::verify(pk, &message(req), sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(entries: &[(&'static std::ffi::CStr, &[u8])]) -> Vec<Param> {
        let mut v: Vec<Param> = entries.iter().map(|(k, d)| octet_param(k, d)).collect();
        v.push(abi::PARAM_END);
        v
    }

    fn import(set: ParamSet, entries: &[(&'static std::ffi::CStr, &[u8])]) -> Option<Key> {
        let arr = params(entries);
        // SAFETY: a terminated array over live slices.
        key_from_params(set, &unsafe { Params::new(arr.as_ptr()) }, true)
    }

    #[test]
    fn algorithm_id_is_rfc9881_der() {
        // 2.16.840.1.101.3.4.3.17 = 60 86 48 01 65 03 04 03 11, in a SEQUENCE with no parameters.
        let der = <Key as SigKey>::algorithm_id(0);
        assert_eq!(der[..4], [0x30, 0x0b, 0x06, 0x09]);
        assert_eq!(
            der[4..],
            [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11]
        );
    }

    #[test]
    fn import_follows_openssl_rules() {
        let set = ParamSet::MlDsa44;
        let seed = [5u8; 32];
        let full = import(set, &[(c"seed", &seed)]).expect("seed alone");
        let (sk, pk) = (full.sk.clone().unwrap(), full.pk.clone().unwrap());
        // Consistent combinations import.
        assert!(import(set, &[(c"seed", &seed), (c"priv", &sk), (c"pub", &pk)]).is_some());
        let k = import(set, &[(c"priv", &sk), (c"pub", &pk)]).expect("priv + pub");
        assert!(k.seed.is_none() && k.sk.as_deref() == Some(&sk));
        assert!(import(set, &[(c"pub", &pk)]).is_some_and(|k| k.sk.is_none()));
        // Inconsistent or incomplete ones do not.
        let mut other_pk = pk.to_vec();
        other_pk[40] ^= 1;
        let mut other_sk = sk.to_vec();
        other_sk[200] ^= 1;
        assert!(import(set, &[(c"seed", &seed), (c"pub", &other_pk)]).is_none());
        assert!(import(set, &[(c"seed", &seed), (c"priv", &other_sk)]).is_none());
        assert!(import(set, &[(c"priv", &sk), (c"pub", &other_pk)]).is_none());
        assert!(import(set, &[(c"priv", &sk)]).is_none());
        assert!(import(set, &[]).is_none());
        assert!(import(set, &[(c"seed", &seed[..31])]).is_none());
        assert!(import(set, &[(c"pub", &pk[..100])]).is_none());
        assert!(import(ParamSet::MlDsa65, &[(c"priv", &sk), (c"pub", &pk)]).is_none());
    }
}
