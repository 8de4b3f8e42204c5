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

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, Encapsulated, SecretKey};
use crate::key_family::{functions, KeyFamily, ENTRIES};
use crate::mlkem_key;
use crate::params::Params;
use pqgpu::mlkem::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, CStr};
use std::sync::Arc;
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

/// A hybrid key: its ML-KEM-768 part and its X25519 part (the secret zeroed on drop), and
/// the encodings OpenSSL exchanges, made once: `pub` (ek || X25519 public key) where both
/// public parts are present, `priv` (dk || X25519 private key) where both private ones are.
#[derive(Clone)]
pub struct Key {
    pub mlkem: mlkem_key::Key,
    pub x_sk: Option<StaticSecret>,
    pub x_pk: Option<PublicKey>,
    pub_bytes: Option<Arc<Vec<u8>>>,
    priv_bytes: Option<SecretKey>,
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
    /// A key of these parts, with its encodings.
    fn assemble(mlkem: mlkem_key::Key, x_sk: Option<StaticSecret>, x_pk: Option<PublicKey>) -> Key {
        let pub_bytes = match (&mlkem.ek, &x_pk) {
            (Some(ek), Some(x)) => Some(Arc::new([&ek[..], x.as_bytes()].concat())),
            _ => None,
        };
        let priv_bytes = match (&mlkem.dk, &x_sk) {
            (Some(dk), Some(x)) => {
                let mut v = Zeroizing::new(Vec::with_capacity(dk.len() + X_LEN));
                v.extend_from_slice(dk);
                v.extend_from_slice(x.as_bytes());
                Some(Arc::new(v))
            }
            _ => None,
        };
        Key {
            mlkem,
            x_sk,
            x_pk,
            pub_bytes,
            priv_bytes,
        }
    }

    fn empty() -> Key {
        Key::assemble(mlkem_key::Key::empty(SET), None, None)
    }

    fn generate() -> Result<Key, Error> {
        let mlkem = mlkem_key::Key::generate(SET, None)?;
        let sk = x25519_secret()?;
        Ok(Key::assemble(
            mlkem,
            Some(sk.clone()),
            Some(PublicKey::from(&sk)),
        ))
    }

    /// A public key alone: only the lengths are checked here (the encapsulation checks ek).
    fn with_public(pub_: &[u8]) -> Option<Key> {
        if pub_.len() != ek_len() + X_LEN {
            return None;
        }
        let (ek, x) = pub_.split_at(ek_len());
        let mut mlkem = mlkem_key::Key::empty(SET);
        mlkem.ek = Some(Arc::new(ek.to_vec()));
        let x = PublicKey::from(<[u8; 32]>::try_from(x).ok()?);
        Some(Key::assemble(mlkem, None, Some(x)))
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
            Key::assemble(mlkem, Some(sk.clone()), Some(PublicKey::from(&sk)))
        }
        (None, Some(pub_)) => {
            let k = Key::with_public(pub_)?;
            let ek = k.mlkem.ek.clone().expect("set");
            engine::mlkem_check(SET, Some(ek), None).ok()?;
            k
        }
        (None, None) => return None,
    };
    if pub_.is_some_and(|p| key.public() != Some(p)) {
        return None;
    }
    Some(key)
}

static KEY_TYPES: Table<Param, 3> = Table([
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

static GETTABLE: Table<Param, 7> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

/// One set (`()`); generation takes no seed, and may make an empty key that then receives the
/// peer's share (`encoded-pub-key`), as ML-KEM's.
impl KeyFamily for Key {
    type Set = ();
    const PARAM_GEN: bool = true;
    const SETTABLE: bool = true;

    fn set_of(_s: usize) {}

    fn set(&self) {}

    fn empty(_set: ()) -> Key {
        Key::empty()
    }

    fn public(&self) -> Option<&[u8]> {
        self.pub_bytes.as_deref().map(|v| &v[..])
    }

    fn secret(&self) -> Option<&[u8]> {
        self.priv_bytes.as_deref().map(|v| &v[..])
    }

    fn material(&self) -> Vec<(&'static CStr, &[u8], bool)> {
        let pk = self.public().map(|v| (c"pub", v, false));
        let sk = self.secret().map(|v| (c"priv", v, true));
        pk.into_iter().chain(sk).collect()
    }

    /// Bits and security bits are ML-KEM-768's, as OpenSSL reports them.
    fn other_params(&self, p: &Params) -> bool {
        p.set_int(c"bits", 768).is_ok()
            && p.set_int(c"security-bits", 192).is_ok()
            && p.set_int(c"max-size", ct_len() as i32).is_ok()
            && self
                .public()
                .is_none_or(|v| p.set_octets(c"encoded-pub-key", v).is_ok())
    }

    fn gettable() -> *const Param {
        GETTABLE.as_ptr()
    }

    fn key_types() -> *const Param {
        KEY_TYPES.as_ptr()
    }

    fn from_params(_set: (), p: &Params, include_private: bool) -> Option<Key> {
        key_from_params(p, include_private)
    }

    fn valid(&self, selection: c_int) -> bool {
        if selection & abi::SELECT_KEYPAIR == 0 {
            return true;
        }
        let x_ok = selection & abi::SELECT_PRIVATE_KEY == 0
            || self.x_sk.as_ref().map(PublicKey::from) == self.x_pk;
        x_ok && mlkem_key::valid(&self.mlkem, selection)
    }

    /// A private key keeps its public part (it holds it).
    fn keep(&mut self, private: bool, public: bool) {
        if !private && !public {
            *self = Key::empty();
        } else if !private {
            let mut mlkem = self.mlkem.clone();
            (mlkem.seed, mlkem.dk) = (None, None);
            *self = Key::assemble(mlkem, None, self.x_pk);
        }
    }

    fn seed_len(_set: ()) -> Option<usize> {
        None
    }

    fn generate(_set: (), _seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Key> {
        Key::generate().ok()
    }

    /// Keys are not mutated: only an empty key takes a peer's share.
    fn set_params(&mut self, p: &Params) -> bool {
        match p.octets(c"encoded-pub-key") {
            Ok(None) => true,
            Ok(Some(v)) if self.mlkem.ek.is_none() && self.x_pk.is_none() => {
                match Key::with_public(v) {
                    Some(new) => {
                        *self = new;
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        }
    }

    fn settable() -> *const Param {
        SETTABLE.as_ptr()
    }
}

/// X25519MLKEM768.
pub static KEYMGMT: Table<Dispatch, ENTRIES> = Table(functions::<Key, 0>());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kem_key::KemKey;

    #[test]
    fn layout_is_mlkem_first_and_each_part_checks_out() {
        let k = Key::generate().unwrap();
        let pub_ = k.public().unwrap().to_vec();
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
        let (mut ct, _) = Key::with_public(k.public().unwrap())
            .unwrap()
            .encaps(None)
            .unwrap();
        ct[1088..].fill(0);
        assert!(k.decaps(&ct).is_err());
        let mut pub_ = k.public().unwrap().to_vec();
        pub_[1184..].fill(0);
        assert!(Key::with_public(&pub_).unwrap().encaps(None).is_err());
    }
}
