//! ML-KEM-512/768/1024 (FIPS 203) key management under OpenSSL 3.5's own names and parameters:
//! `seed` (d || z, 64 bytes), `priv` (dk), `pub` (ek) and, for TLS, `encoded-pub-key` (ek).
//! Keys move between this provider and OpenSSL's default one by export/import, so OpenSSL's
//! own encoders and decoders serve the key files. Imported keys get FIPS 203's input checks.
//!
//! A key generated for the TLS server side starts empty (parameter generation) and receives
//! the peer's share through `encoded-pub-key`; the encapsulation then checks it.

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, SecretKey};
use crate::key_family::{ct_eq, three, KeyFamily, ENTRIES};
use crate::params::Params;
use pqgpu::mlkem::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, CStr};
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

static KEY_TYPES: Table<Param, 4> = Table([
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

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

static SETTABLE: Table<Param, 2> = Table([
    abi::describe(c"encoded-pub-key", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

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

impl KeyFamily for Key {
    type Set = ParamSet;
    const PARAM_GEN: bool = true;
    const SETTABLE: bool = true;

    fn set_of(s: usize) -> ParamSet {
        set_of(s)
    }

    fn set(&self) -> ParamSet {
        self.set
    }

    fn empty(set: ParamSet) -> Key {
        Key::empty(set)
    }

    fn public(&self) -> Option<&[u8]> {
        self.ek.as_deref().map(|v| &v[..])
    }

    fn secret(&self) -> Option<&[u8]> {
        self.dk.as_deref().map(|v| &v[..])
    }

    fn material(&self) -> Vec<(&'static CStr, &[u8], bool)> {
        let seed = self.seed.as_deref().map(|s| (c"seed", &s[..], true));
        let dk = self.secret().map(|v| (c"priv", v, true));
        let ek = self.public().map(|v| (c"pub", v, false));
        seed.into_iter().chain(dk).chain(ek).collect()
    }

    /// `bits`, `security-bits`, `max-size` (the ciphertext's length) and, for TLS,
    /// `encoded-pub-key` (ek).
    fn other_params(&self, p: &Params) -> bool {
        let (bits, security_bits) = figures(self.set);
        p.set_int(c"bits", bits).is_ok()
            && p.set_int(c"security-bits", security_bits).is_ok()
            && p.set_int(c"max-size", self.set.ciphertext_len() as i32)
                .is_ok()
            && self
                .public()
                .is_none_or(|ek| p.set_octets(c"encoded-pub-key", ek).is_ok())
    }

    fn gettable() -> *const Param {
        GETTABLE.as_ptr()
    }

    fn key_types() -> *const Param {
        KEY_TYPES.as_ptr()
    }

    fn from_params(set: ParamSet, p: &Params, include_private: bool) -> Option<Key> {
        key_from_params(set, p, include_private)
    }

    fn valid(&self, selection: c_int) -> bool {
        selection & abi::SELECT_KEYPAIR == 0 || valid(self, selection)
    }

    /// A secret key keeps its encapsulation key (ek is inside dk).
    fn keep(&mut self, private: bool, public: bool) {
        if !private {
            self.seed = None;
            self.dk = None;
        }
        if !public && self.dk.is_none() {
            self.ek = None;
        }
    }

    fn seed_len(_set: ParamSet) -> Option<usize> {
        Some(64)
    }

    /// A given seed is single-use, as in OpenSSL.
    fn generate(set: ParamSet, seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Key> {
        let seed = match seed.take() {
            Some(s) => Some(Zeroizing::new(<[u8; 64]>::try_from(&s[..]).ok()?)),
            None => None,
        };
        Key::generate(set, seed.as_deref()).ok()
    }

    fn set_params(&mut self, p: &Params) -> bool {
        set_encoded_ek(self, p)
    }

    fn settable() -> *const Param {
        SETTABLE.as_ptr()
    }
}

/// ML-KEM-512/768/1024.
pub static KEYMGMT: [Table<Dispatch, ENTRIES>; 3] = three::<Key>();

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::octet_param;

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
