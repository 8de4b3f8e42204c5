//! X25519MLKEM768, the hybrid TLS 1.3 key exchange (draft-ietf-tls-ecdhe-mlkem, TLS group
//! 0x11EC) under OpenSSL 3.5's name, as key management and (through `kem`) a KEM. The ML-KEM
//! part comes first everywhere, as OpenSSL lays it out:
//! - public key (`pub`, `encoded-pub-key`): ek (1184 bytes) || X25519 public key (32);
//! - private key (`priv`): dk (2400) || X25519 private key (32);
//! - ciphertext: ML-KEM ciphertext (1088) || the encapsulator's X25519 public key (32);
//! - shared secret: ML-KEM's (32) || X25519's (32).
//!
//! ML-KEM-768 runs on pqgpu (`mlkem_key`); X25519 is x25519-dalek. An X25519 result of all
//! zeros (a low-order peer key) fails the operation, as RFC 8446 section 7.4.2 requires.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::engine::{self, Encapsulated};
use crate::entry;
use crate::guard::guard;
use crate::key_family::{self, GenCtx};
use crate::mlkem_key;
use crate::params::{octet_param, status, Params};
use pqgpu::mlkem::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

pub const NAME: &CStr = c"X25519MLKEM768";

const SET: ParamSet = ParamSet::MlKem768;
const X_LEN: usize = 32;

fn ek_len() -> usize {
    SET.encaps_key_len()
}

fn dk_len() -> usize {
    SET.decaps_key_len()
}

fn ct_len() -> usize {
    SET.ciphertext_len() + X_LEN
}

/// A hybrid key: its ML-KEM-768 part and its X25519 part (the secret zeroed on drop).
#[derive(Clone)]
pub struct Key {
    pub mlkem: mlkem_key::Key,
    pub x_sk: Option<StaticSecret>,
    pub x_pk: Option<PublicKey>,
}

/// A fresh X25519 secret from the OS (clamped where it is used, as RFC 7748 says).
fn x25519_secret() -> Result<StaticSecret, Error> {
    Ok(StaticSecret::from(pqgpu::rng::array32()?))
}

/// X25519(sk, pk), refused when all zeros (a low-order point; RFC 8446 section 7.4.2).
fn x25519(sk: &StaticSecret, pk: &PublicKey) -> Result<Zeroizing<[u8; 32]>, Error> {
    let ss = sk.diffie_hellman(pk);
    if !ss.was_contributory() {
        return Err(Error::BadKey);
    }
    Ok(Zeroizing::new(ss.to_bytes()))
}

/// ML-KEM's secret || X25519's, in one buffer allocated once (nothing left unzeroed behind).
fn concat_secrets(a: &[u8], b: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut v = Zeroizing::new(Vec::with_capacity(a.len() + b.len()));
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    v
}

impl Key {
    fn empty() -> Key {
        Key {
            mlkem: mlkem_key::Key::empty(SET),
            x_sk: None,
            x_pk: None,
        }
    }

    fn generate() -> Result<Key, Error> {
        let mlkem = mlkem_key::Key::generate(SET, None)?;
        let sk = x25519_secret()?;
        Ok(Key {
            mlkem,
            x_pk: Some(PublicKey::from(&sk)),
            x_sk: Some(sk),
        })
    }

    /// ek || X25519 public key.
    pub fn public_bytes(&self) -> Option<Vec<u8>> {
        let (ek, x) = (self.mlkem.ek.as_ref()?, self.x_pk.as_ref()?);
        let mut v = Vec::with_capacity(ek.len() + X_LEN);
        v.extend_from_slice(ek);
        v.extend_from_slice(x.as_bytes());
        Some(v)
    }

    /// dk || X25519 private key.
    pub fn private_bytes(&self) -> Option<Zeroizing<Vec<u8>>> {
        let (dk, x) = (self.mlkem.dk.as_ref()?, self.x_sk.as_ref()?);
        let mut v = Zeroizing::new(Vec::with_capacity(dk.len() + X_LEN));
        v.extend_from_slice(dk);
        v.extend_from_slice(x.as_bytes());
        Some(v)
    }

    /// A public key alone: only the lengths are checked here (the encapsulation checks ek).
    fn with_public(pub_: &[u8]) -> Option<Key> {
        if pub_.len() != ek_len() + X_LEN {
            return None;
        }
        let (ek, x) = pub_.split_at(ek_len());
        let mut mlkem = mlkem_key::Key::empty(SET);
        mlkem.ek = Some(std::sync::Arc::new(ek.to_vec()));
        Some(Key {
            mlkem,
            x_sk: None,
            x_pk: Some(PublicKey::from(<[u8; 32]>::try_from(x).ok()?)),
        })
    }
}

impl crate::kem_key::KemKey for Key {
    /// OpenSSL's hybrids take no coins: half a reproducible encapsulation would mislead.
    const TAKES_IKME: bool = false;

    fn index(&self) -> usize {
        0
    }

    fn can_encaps(&self) -> bool {
        self.mlkem.ek.is_some() && self.x_pk.is_some()
    }

    fn can_decaps(&self) -> bool {
        self.mlkem.dk.is_some() && self.x_sk.is_some()
    }

    fn ciphertext_len(&self) -> usize {
        ct_len()
    }

    fn shared_secret_len(&self) -> usize {
        SET.shared_secret_len() + X_LEN
    }

    fn encaps(&self, _coins: Option<Zeroizing<[u8; 32]>>) -> Result<Encapsulated, Error> {
        let (Some(ek), Some(peer)) = (self.mlkem.ek.clone(), self.x_pk) else {
            return Err(Error::InvalidArgument);
        };
        let eph = x25519_secret()?;
        let xss = x25519(&eph, &peer)?;
        let (mut ct, mss) = engine::kem_encaps(Alg::MlKem(SET), ek, None)?;
        ct.extend_from_slice(PublicKey::from(&eph).as_bytes());
        Ok((ct, concat_secrets(&mss, &xss[..])))
    }

    fn decaps(&self, ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let (Some(dk), Some(sk)) = (self.mlkem.dk.clone(), self.x_sk.as_ref()) else {
            return Err(Error::InvalidArgument);
        };
        if ct.len() != ct_len() {
            return Err(Error::BadLength);
        }
        let (mct, xct) = ct.split_at(ct_len() - X_LEN);
        let peer = PublicKey::from(<[u8; 32]>::try_from(xct).map_err(|_| Error::BadLength)?);
        let xss = x25519(sk, &peer)?;
        let mss = engine::kem_decaps(Alg::MlKem(SET), dk, mct.to_vec())?;
        Ok(concat_secrets(&mss, &xss[..]))
    }
}

/// A key from import parameters (OpenSSL's: `pub` and/or `priv`, each both parts; a private
/// key holds the public one, which must equal any `pub` given).
pub fn key_from_params(p: &Params, include_private: bool) -> Option<Key> {
    let pub_ = p.octets(c"pub").ok()?;
    let priv_ = if include_private {
        p.octets(c"priv").ok()?
    } else {
        None
    };
    let key = match (priv_, pub_) {
        (Some(d), _) => {
            if d.len() != dk_len() + X_LEN {
                return None;
            }
            let (dk, x) = d.split_at(dk_len());
            let mlkem = mlkem_key::Key::from_dk(SET, dk)?;
            let sk = StaticSecret::from(<[u8; 32]>::try_from(x).ok()?);
            Key {
                mlkem,
                x_pk: Some(PublicKey::from(&sk)),
                x_sk: Some(sk),
            }
        }
        (None, Some(pub_)) => {
            let k = Key::with_public(pub_)?;
            let ek = k.mlkem.ek.clone().expect("set");
            engine::mlkem_check(SET, Some(ek), None).ok()?;
            k
        }
        (None, None) => return None,
    };
    if pub_.is_some_and(|p| key.public_bytes().as_deref() != Some(p)) {
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

unsafe extern "C" fn new(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::empty())).cast()
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

fn has_parts(k: &Key, selection: c_int) -> bool {
    use crate::kem_key::KemKey;
    (selection & abi::SELECT_PRIVATE_KEY == 0 || k.can_decaps())
        && (selection & abi::SELECT_PUBLIC_KEY == 0 || k.can_encaps())
}

unsafe extern "C" fn has(k: *const c_void, selection: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of this key management.
        status(unsafe { key(k) }.is_some_and(|k| has_parts(k, selection)))
    })
}

unsafe extern "C" fn matches(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes keys of this key management.
        let (Some(a), Some(b)) = (unsafe { key(a) }, unsafe { key(b) }) else {
            return 0;
        };
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 1;
        }
        match (a.public_bytes(), b.public_bytes()) {
            (Some(x), Some(y)) => status(x == y),
            _ => 0,
        }
    })
}

unsafe extern "C" fn import(k: *mut c_void, selection: c_int, params: *const Param) -> c_int {
    guard(0, || {
        if k.is_null() || selection & abi::SELECT_KEYPAIR == 0 {
            return 0;
        }
        // SAFETY: OpenSSL passes a key of ours and a terminated parameter array.
        let (k, p) = unsafe { (&mut *(k as *mut Key), Params::new(params)) };
        match key_from_params(&p, selection & abi::SELECT_PRIVATE_KEY != 0) {
            Some(new) => {
                *k = new;
                1
            }
            None => 0,
        }
    })
}

static KEY_TYPES: Table<Param, 3> = Table([
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
        let pub_ = (selection & abi::SELECT_PUBLIC_KEY != 0)
            .then(|| k.public_bytes())
            .flatten();
        let priv_ = (selection & abi::SELECT_PRIVATE_KEY != 0)
            .then(|| k.private_bytes())
            .flatten();
        let mut arr: Vec<Param> = Vec::with_capacity(3);
        if let Some(v) = &pub_ {
            arr.push(octet_param(c"pub", v));
        }
        if let Some(v) = &priv_ {
            arr.push(octet_param(c"priv", v));
        }
        if arr.is_empty() {
            return 0;
        }
        arr.push(abi::PARAM_END);
        // SAFETY: a terminated array over buffers alive during the call.
        unsafe { cb(arr.as_ptr(), cbarg) }
    })
}

unsafe extern "C" fn get_params(k: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours and a terminated, writable array.
        let (Some(k), p) = (unsafe { key(k) }, unsafe { Params::new(params) }) else {
            return 0;
        };
        // Bits and security bits are ML-KEM-768's, as OpenSSL reports them.
        let pub_ = k.public_bytes();
        let priv_ = k.private_bytes();
        let ok = p.set_int(c"bits", 768).is_ok()
            && p.set_int(c"security-bits", 192).is_ok()
            && p.set_int(c"max-size", ct_len() as i32).is_ok()
            && pub_.as_ref().is_none_or(|v| {
                p.set_octets(c"encoded-pub-key", v).is_ok() && p.set_octets(c"pub", v).is_ok()
            })
            && priv_
                .as_ref()
                .is_none_or(|v| p.set_octets(c"priv", v).is_ok());
        status(ok)
    })
}

static GETTABLE: Table<Param, 7> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
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
        match p.octets(c"encoded-pub-key") {
            Ok(None) => 1,
            // Keys are not mutated: only an empty key takes a peer's share.
            Ok(Some(v)) if k.mlkem.ek.is_none() && k.x_pk.is_none() => match Key::with_public(v) {
                Some(new) => {
                    *k = new;
                    1
                }
                None => 0,
            },
            _ => 0,
        }
    })
}

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn settable_params(_provctx: *mut c_void) -> *const Param {
    SETTABLE.as_ptr()
}

unsafe extern "C" fn validate(k: *const c_void, selection: c_int, _check: c_int) -> c_int {
    guard(0, || {
        // SAFETY: OpenSSL passes a key of ours.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        if !has_parts(k, selection) {
            return 0;
        }
        if selection & abi::SELECT_KEYPAIR == 0 {
            return 1;
        }
        let x_ok = selection & abi::SELECT_PRIVATE_KEY == 0
            || k.x_sk.as_ref().map(PublicKey::from) == k.x_pk;
        status(x_ok && mlkem_key::valid(&k.mlkem, selection))
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
            d.mlkem.seed = None;
            d.mlkem.dk = None;
            d.x_sk = None;
        }
        if selection & abi::SELECT_KEYPAIR == 0 {
            d = Key::empty();
        }
        Box::into_raw(Box::new(d)).cast()
    })
}

unsafe extern "C" fn gen_init(
    _provctx: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let Some(mut g) = GenCtx::new(selection, true) else {
            return ptr::null_mut();
        };
        // SAFETY: OpenSSL's parameter array (terminated) or NULL.
        if !g.set(&unsafe { Params::new(params) }, None) {
            return ptr::null_mut();
        }
        g.into_raw()
    })
}

unsafe extern "C" fn gen_set_params(g: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: our generation context and a terminated array.
        match unsafe { (g as *mut GenCtx).as_mut() } {
            Some(g) => status(g.set(&unsafe { Params::new(params) }, None)),
            None => 0,
        }
    })
}

static GEN_SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"properties", abi::PARAM_UTF8_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gen_settable_params(_g: *mut c_void, _provctx: *mut c_void) -> *const Param {
    GEN_SETTABLE.as_ptr()
}

unsafe extern "C" fn generate(
    g: *mut c_void,
    _cb: *const c_void,
    _cbarg: *mut c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: our generation context.
        let Some(g) = (unsafe { (g as *const GenCtx).as_ref() }) else {
            return ptr::null_mut();
        };
        if !g.keypair {
            return Box::into_raw(Box::new(Key::empty())).cast();
        }
        match Key::generate() {
            Ok(k) => Box::into_raw(Box::new(k)).cast(),
            Err(_) => ptr::null_mut(),
        }
    })
}

pub static KEYMGMT: Table<Dispatch, 20> = Table([
    entry!(abi::KEYMGMT_NEW, new),
    entry!(abi::KEYMGMT_FREE, free),
    entry!(abi::KEYMGMT_HAS, has),
    entry!(abi::KEYMGMT_MATCH, matches),
    entry!(abi::KEYMGMT_IMPORT, import),
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
    entry!(abi::KEYMGMT_GEN, generate),
    entry!(abi::KEYMGMT_GEN_CLEANUP, key_family::gen_cleanup),
    abi::DISPATCH_END,
]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kem_key::KemKey;

    #[test]
    fn layout_is_mlkem_first_and_each_part_checks_out() {
        let k = Key::generate().unwrap();
        let pub_ = k.public_bytes().unwrap();
        assert_eq!(pub_.len(), 1216);
        let peer = Key::with_public(&pub_).unwrap();
        let (ct, ss) = peer.encaps(None).unwrap();
        assert_eq!((ct.len(), ss.len()), (1120, 64));
        // Each half of the secret, computed from its own part of the ciphertext.
        let dk = k.mlkem.dk.as_ref().unwrap();
        let mut ml = [0u8; 32];
        pqgpu::mlkem::decaps(SET, dk, &ct[..1088], &mut ml).unwrap();
        assert_eq!(&ss[..32], &ml);
        let eph = PublicKey::from(<[u8; 32]>::try_from(&ct[1088..]).unwrap());
        let x = k.x_sk.as_ref().unwrap().diffie_hellman(&eph);
        assert_eq!(&ss[32..], x.as_bytes());
        assert_eq!(k.decaps(&ct).unwrap().as_slice(), ss.as_slice());
        assert!(k.decaps(&ct[1..]).is_err());
    }

    #[test]
    fn low_order_x25519_shares_are_refused() {
        let k = Key::generate().unwrap();
        // The ciphertext's X25519 part is the point u = 0: an all-zero result.
        let (mut ct, _) = Key::with_public(&k.public_bytes().unwrap())
            .unwrap()
            .encaps(None)
            .unwrap();
        ct[1088..].fill(0);
        assert!(k.decaps(&ct).is_err());
        let mut pub_ = k.public_bytes().unwrap();
        pub_[1184..].fill(0);
        assert!(Key::with_public(&pub_).unwrap().encaps(None).is_err());
    }
}
