//! CTRU-Prime-653/761/1277 keys (a KEM that OpenSSL does not know) under a private OID arc:
//! key management with the parameter names OpenSSL uses for ML-KEM (`seed` = d || z, `priv`,
//! `pub`), so `genpkey`, `pkey` and `pkeyutl -encap/-decap` work; `codec` writes and reads the
//! keys as SubjectPublicKeyInfo and PKCS#8.
//!
//! The OIDs are private: 2.25.<UUID>.{1,2,3} (ITU-T X.667 lets anyone form an OID under 2.25
//! from a UUID they generated; this one was generated for pqgpu). No standard assigns OIDs to
//! CTRU-Prime; keys written with these OIDs are readable only where pqgpu.so is loaded.

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, SecretKey};
use crate::key_family::{ct_eq, three, KeyFamily, ENTRIES};
use crate::params::Params;
use pqgpu::ctru::ParamSet;
use pqgpu::{Alg, Error};
use std::ffi::{c_int, CStr};
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

static KEY_TYPES: Table<Param, 4> = Table([
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

static GETTABLE: Table<Param, 7> = Table([
    abi::describe(c"bits", abi::PARAM_INTEGER),
    abi::describe(c"security-bits", abi::PARAM_INTEGER),
    abi::describe(c"max-size", abi::PARAM_INTEGER),
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

/// Security strength reported to OpenSSL. The spec (shared/spec/ctru-prime.md section 3) gives
/// no established claim; by analogy with sntrup at the same (n, q): 653 about NIST level 1,
/// 761 level 1-3 (reported as 128, the lower end), 1277 level 5.
fn security_bits(set: ParamSet) -> i32 {
    match set {
        ParamSet::Ctru653 | ParamSet::Ctru761 => 128,
        ParamSet::Ctru1277 => 256,
    }
}

/// Keys come from this provider's own decoders too (`codec`), handed over by reference.
impl KeyFamily for Key {
    type Set = ParamSet;
    const LOADS: bool = true;

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
        self.pk.as_deref().map(|v| &v[..])
    }

    fn secret(&self) -> Option<&[u8]> {
        self.sk.as_deref().map(|v| &v[..])
    }

    fn material(&self) -> Vec<(&'static CStr, &[u8], bool)> {
        let seed = self.seed.as_deref().map(|s| (c"seed", &s[..], true));
        let sk = self.secret().map(|v| (c"priv", v, true));
        let pk = self.public().map(|v| (c"pub", v, false));
        seed.into_iter().chain(sk).chain(pk).collect()
    }

    fn other_params(&self, p: &Params) -> bool {
        let s = self.set;
        p.set_int(c"bits", 8 * s.public_key_len() as i32).is_ok()
            && p.set_int(c"security-bits", security_bits(s)).is_ok()
            && p.set_int(c"max-size", s.ciphertext_len() as i32).is_ok()
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

    /// A public key must take an encapsulation (canonical encoding). A key pair is valid when
    /// its public key is the one inside the secret key, a seed (if any) regenerates it, and an
    /// encapsulation to it decapsulates to the same secret (pairwise test).
    fn valid(&self, selection: c_int) -> bool {
        let alg = Alg::Ctru(self.set);
        let Some(pk) = &self.pk else { return false };
        if pk.len() != self.set.public_key_len() {
            return false;
        }
        let encaps = || engine::kem_encaps(alg, pk.clone(), None);
        let sk = match &self.sk {
            Some(sk) if selection & abi::SELECT_PRIVATE_KEY != 0 => sk,
            _ => return encaps().is_ok(),
        };
        let seed_ok = self.seed.as_ref().is_none_or(|s| {
            Key::generate(self.set, Some(s)).is_some_and(|g| g.sk.as_deref() == Some(&**sk))
        });
        let pairwise = encaps().is_ok_and(|(ct, ss)| {
            engine::kem_decaps(alg, sk.clone(), ct).is_ok_and(|ss2| ct_eq(&ss, &ss2))
        });
        seed_ok && ct_eq(embedded_pk(self.set, sk), pk) && pairwise
    }

    fn keep(&mut self, private: bool, public: bool) {
        if !private {
            self.seed = None;
            self.sk = None;
        }
        if !public {
            self.pk = None;
        }
    }

    fn seed_len(_set: ParamSet) -> Option<usize> {
        Some(64)
    }

    fn generate(set: ParamSet, seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Key> {
        let seed: Option<&[u8; 64]> = match seed {
            Some(s) => Some(s[..].try_into().ok()?),
            None => None,
        };
        Key::generate(set, seed)
    }
}

/// CTRU-Prime-653/761/1277.
pub static KEYMGMT: [Table<Dispatch, ENTRIES>; 3] = three::<Key>();

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::octet_param;

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
