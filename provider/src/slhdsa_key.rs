//! SLH-DSA (FIPS 205) key management for all twelve parameter sets under OpenSSL 3.5's own
//! names, OIDs and parameters: `priv` (SK.seed || SK.prf || PK.seed || PK.root, 4n bytes),
//! `pub` (PK.seed || PK.root, 2n bytes) and, for generation, `seed` (SK.seed || SK.prf ||
//! PK.seed, 3n bytes). Keys move between this provider and OpenSSL's default one by
//! export/import, so OpenSSL's own encoders and decoders (SubjectPublicKeyInfo, PKCS#8, PEM,
//! DER) serve the key files, as for ML-DSA.

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, Handle, LazyHandle, SecretKey};
use crate::key_family::{ct_eq, functions, KeyFamily, ENTRIES};
use crate::params::Params;
use crate::sig_key::{nist_sig_algorithm_id, Request, Rnd, SigKey};
use pqgpu::serve::KeyKind;
use pqgpu::slhdsa::{Message, ParamSet};
use pqgpu::{Alg, Status};
use std::ffi::{c_int, CStr};
use std::sync::Arc;
use zeroize::Zeroizing;

/// OpenSSL 3.5's names (providers/implementations/include/prov/names.h), in pqgpu's order of
/// the sets (`ParamSet::ALL`, PKCS#11's).
pub const NAMES: [&CStr; 12] = [
    c"SLH-DSA-SHA2-128s:id-slh-dsa-sha2-128s:2.16.840.1.101.3.4.3.20",
    c"SLH-DSA-SHAKE-128s:id-slh-dsa-shake-128s:2.16.840.1.101.3.4.3.26",
    c"SLH-DSA-SHA2-128f:id-slh-dsa-sha2-128f:2.16.840.1.101.3.4.3.21",
    c"SLH-DSA-SHAKE-128f:id-slh-dsa-shake-128f:2.16.840.1.101.3.4.3.27",
    c"SLH-DSA-SHA2-192s:id-slh-dsa-sha2-192s:2.16.840.1.101.3.4.3.22",
    c"SLH-DSA-SHAKE-192s:id-slh-dsa-shake-192s:2.16.840.1.101.3.4.3.28",
    c"SLH-DSA-SHA2-192f:id-slh-dsa-sha2-192f:2.16.840.1.101.3.4.3.23",
    c"SLH-DSA-SHAKE-192f:id-slh-dsa-shake-192f:2.16.840.1.101.3.4.3.29",
    c"SLH-DSA-SHA2-256s:id-slh-dsa-sha2-256s:2.16.840.1.101.3.4.3.24",
    c"SLH-DSA-SHAKE-256s:id-slh-dsa-shake-256s:2.16.840.1.101.3.4.3.30",
    c"SLH-DSA-SHA2-256f:id-slh-dsa-sha2-256f:2.16.840.1.101.3.4.3.25",
    c"SLH-DSA-SHAKE-256f:id-slh-dsa-shake-256f:2.16.840.1.101.3.4.3.31",
];

/// The last arc of the set's OID under 2.16.840.1.101.3.4.3 (NIST's signature algorithms).
pub const fn oid_arc(p: ParamSet) -> u8 {
    match p {
        ParamSet::Sha2_128s => 20,
        ParamSet::Sha2_128f => 21,
        ParamSet::Sha2_192s => 22,
        ParamSet::Sha2_192f => 23,
        ParamSet::Sha2_256s => 24,
        ParamSet::Sha2_256f => 25,
        ParamSet::Shake128s => 26,
        ParamSet::Shake128f => 27,
        ParamSet::Shake192s => 28,
        ParamSet::Shake192f => 29,
        ParamSet::Shake256s => 30,
        ParamSet::Shake256f => 31,
    }
}

/// An SLH-DSA key: the secret key (which holds the public key) and the public key, plus pqgpu
/// key handles (checked and prepared once, on first use: PK.seed's hash state, and for a
/// secret key PK.root recomputed from its seeds; zeroized by pqgpu when the last holder lets
/// go). Secrets are zeroed when the last holder drops them.
#[derive(Clone)]
pub struct Key {
    pub set: ParamSet,
    pub sk: Option<SecretKey>,
    pub pk: Option<Arc<Vec<u8>>>,
    sk_handle: Option<LazyHandle>,
    pk_handle: Option<LazyHandle>,
}

impl Key {
    fn new(set: ParamSet, sk: Option<SecretKey>, pk: Option<Arc<Vec<u8>>>) -> Key {
        let alg = Alg::SlhDsa(set);
        Key {
            set,
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

    /// slh_keygen_internal from SK.seed || SK.prf || PK.seed, or slh_keygen (fresh seeds).
    pub fn generate(set: ParamSet, seed: Option<&[u8]>) -> Option<Key> {
        let seed = seed.map(|s| Zeroizing::new(s.to_vec()));
        let (pk, sk) = engine::slh_keygen(set, seed).ok()?;
        Some(Key::new(set, Some(sk), Some(Arc::new(pk))))
    }

    /// A key pair from its secret key (PK.seed || PK.root are its last 2n bytes).
    fn from_sk(set: ParamSet, sk: Vec<u8>) -> Key {
        let pk = sk[2 * set.n()..].to_vec();
        Key::new(set, Some(Arc::new(Zeroizing::new(sk))), Some(Arc::new(pk)))
    }
}

/// What a signature context keeps of an SLH-DSA key: its pqgpu handle, and the public key
/// (deterministic signing uses PK.seed, its first n bytes, as opt_rand).
#[derive(Clone)]
pub struct Ready {
    handle: Handle,
    pk: Arc<Vec<u8>>,
}

/// A key from import parameters, with OpenSSL's rules: `priv` of 4n bytes (the public key
/// inside it; a `pub` given with it must equal it), or `priv` of 2n bytes (SK.seed || SK.prf)
/// with `pub`, or `pub` alone. Every other length is refused. As OpenSSL, import does not
/// recompute PK.root (`pkey -check` does).
pub fn key_from_params(set: ParamSet, p: &Params, include_private: bool) -> Option<Key> {
    let n = set.n();
    let pk = p.octets(c"pub").ok()?;
    let sk = if include_private {
        p.octets(c"priv").ok()?
    } else {
        None
    };
    if pk.is_some_and(|k| k.len() != set.public_key_len()) {
        return None;
    }
    match (sk, pk) {
        (Some(sk), pk) if sk.len() == set.secret_key_len() => {
            let k = Key::from_sk(set, sk.to_vec());
            let same = pk.is_none_or(|pk| k.pk.as_deref().is_some_and(|v| v[..] == *pk));
            same.then_some(k)
        }
        (Some(half), Some(pk)) if half.len() == 2 * n => {
            Some(Key::from_sk(set, [half, pk].concat()))
        }
        (Some(_), _) => None,
        (None, Some(pk)) => Some(Key::new(set, None, Some(Arc::new(pk.to_vec())))),
        (None, None) => None,
    }
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
    abi::describe(c"mandatory-digest", abi::PARAM_UTF8_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

impl KeyFamily for Key {
    type Set = ParamSet;

    fn set_of(s: usize) -> ParamSet {
        ParamSet::ALL[s]
    }

    fn set(&self) -> ParamSet {
        self.set
    }

    fn empty(set: ParamSet) -> Key {
        Key::new(set, None, None)
    }

    fn public(&self) -> Option<&[u8]> {
        self.pk.as_deref().map(|v| &v[..])
    }

    fn secret(&self) -> Option<&[u8]> {
        self.sk.as_deref().map(|v| &v[..])
    }

    fn material(&self) -> Vec<(&'static CStr, &[u8], bool)> {
        let sk = self.secret().map(|v| (c"priv", v, true));
        let pk = self.public().map(|v| (c"pub", v, false));
        sk.into_iter().chain(pk).collect()
    }

    /// As OpenSSL reports them: `bits` the public key's, `security-bits` 8n, `max-size` the
    /// signature's length, and no mandatory digest.
    fn other_params(&self, p: &Params) -> bool {
        let s = self.set;
        p.set_int(c"bits", 8 * s.public_key_len() as i32).is_ok()
            && p.set_int(c"security-bits", 8 * s.n() as i32).is_ok()
            && p.set_int(c"max-size", s.signature_len() as i32).is_ok()
            && p.set_utf8(c"mandatory-digest", c"").is_ok()
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

    /// For a key pair, OpenSSL's pairwise check: PK.root recomputed from SK.seed and PK.seed
    /// equals the key's.
    fn valid(&self, selection: c_int) -> bool {
        if selection & abi::SELECT_KEYPAIR != abi::SELECT_KEYPAIR {
            return true;
        }
        let (Some(sk), Some(pk)) = (&self.sk, &self.pk) else {
            return false;
        };
        let seed = &sk[..self.set.seed_len()];
        Key::generate(self.set, Some(seed))
            .is_some_and(|k| k.pk.as_deref() == Some(&**pk) && ct_eq(k.secret().unwrap(), sk))
    }

    fn keep(&mut self, private: bool, public: bool) {
        if !private {
            self.sk = None;
            self.sk_handle = None;
        }
        if !public {
            self.pk = None;
            self.pk_handle = None;
        }
    }

    fn seed_len(set: ParamSet) -> Option<usize> {
        Some(set.seed_len())
    }

    fn generate(set: ParamSet, seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Key> {
        Key::generate(set, seed.as_deref().map(|s| &s[..]))
    }
}

/// The key-management tables of the twelve sets, in `ParamSet::ALL`'s order.
pub static KEYMGMT: [Table<Dispatch, ENTRIES>; 12] = [
    Table(functions::<Key, 0>()),
    Table(functions::<Key, 1>()),
    Table(functions::<Key, 2>()),
    Table(functions::<Key, 3>()),
    Table(functions::<Key, 4>()),
    Table(functions::<Key, 5>()),
    Table(functions::<Key, 6>()),
    Table(functions::<Key, 7>()),
    Table(functions::<Key, 8>()),
    Table(functions::<Key, 9>()),
    Table(functions::<Key, 10>()),
    Table(functions::<Key, 11>()),
];

static SIG_SETTABLE: Table<Param, 5> = Table([
    abi::describe(c"context-string", abi::PARAM_OCTET_STRING),
    abi::describe(c"test-entropy", abi::PARAM_OCTET_STRING),
    abi::describe(c"deterministic", abi::PARAM_INTEGER),
    abi::describe(c"message-encoding", abi::PARAM_INTEGER),
    abi::PARAM_END,
]);

/// What is signed: M with its context (pure, OpenSSL's default) or M' as given (raw).
fn message<'a>(req: &Request<'a>) -> Message<'a> {
    if req.raw {
        Message::Internal(req.data)
    } else {
        Message::Pure {
            ctx: req.context,
            msg: req.data,
        }
    }
}

/// SLH-DSA as OpenSSL 3.5 signs: `test-entropy` is opt_rand (n bytes), `deterministic` uses
/// PK.seed as opt_rand (FIPS 205's deterministic variant), else fresh randomness.
impl SigKey for Key {
    type Prepared = Ready;
    const TAKES_MU: bool = false;

    fn is_set(&self, s: usize) -> bool {
        self.set == ParamSet::ALL[s]
    }

    fn signature_len(s: usize) -> usize {
        ParamSet::ALL[s].signature_len()
    }

    fn entropy_len(s: usize) -> usize {
        ParamSet::ALL[s].n()
    }

    fn algorithm_id(s: usize) -> Vec<u8> {
        nist_sig_algorithm_id(oid_arc(ParamSet::ALL[s]))
    }

    fn settable() -> *const Param {
        SIG_SETTABLE.as_ptr()
    }

    fn prepare(&self, secret: bool) -> Option<Ready> {
        let lazy = if secret {
            self.sk_handle.as_ref()
        } else {
            self.pk_handle.as_ref()
        };
        Some(Ready {
            handle: lazy?.handle().ok()?,
            pk: self.pk.clone()?,
        })
    }

    fn sign(k: &Ready, req: &Request<'_>, rnd: Rnd<'_>, sig: &mut [u8]) -> Status {
        let n = k.pk.len() / 2;
        let rnd = match rnd {
            Rnd::Given(e) => Some(e),
            Rnd::Deterministic => Some(&k.pk[..n]),
            Rnd::Fresh => None,
        };
        engine::slh_sign(&k.handle, &message(req), rnd, sig)
    }

    fn verify(k: &Ready, req: &Request<'_>, sig: &[u8]) -> Status {
        engine::slh_verify(&k.handle, &message(req), sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::octet_param;

    fn import(set: ParamSet, entries: &[(&'static CStr, &[u8])], private: bool) -> Option<Key> {
        let mut arr: Vec<Param> = entries.iter().map(|(k, d)| octet_param(k, d)).collect();
        arr.push(abi::PARAM_END);
        // SAFETY: a terminated array over live slices.
        key_from_params(set, &unsafe { Params::new(arr.as_ptr()) }, private)
    }

    #[test]
    fn names_and_oids_follow_openssl() {
        for p in ParamSet::ALL {
            let names = NAMES[p.index()].to_str().unwrap();
            let parts: Vec<&str> = names.split(':').collect();
            assert_eq!(parts[0], p.name());
            assert_eq!(parts[1], format!("id-{}", p.name().to_lowercase()));
            assert_eq!(parts[2], format!("2.16.840.1.101.3.4.3.{}", oid_arc(p)));
        }
    }

    #[test]
    fn import_follows_openssl_rules() {
        let set = ParamSet::Sha2_128f;
        let n = set.n();
        let seed: Vec<u8> = (0..3 * n as u8).collect();
        let full = Key::generate(set, Some(&seed)).expect("seeded");
        let (sk, pk) = (full.sk.clone().unwrap(), full.pk.clone().unwrap());
        assert_eq!(sk[..3 * n], seed[..], "sk starts with the seed");
        assert_eq!(sk[2 * n..], pk[..], "sk ends with the public key");
        let k = import(set, &[(c"priv", &sk)], true).expect("priv alone");
        assert_eq!(k.pk.as_deref(), Some(&*pk));
        assert!(import(set, &[(c"priv", &sk), (c"pub", &pk)], true).is_some());
        let k = import(set, &[(c"priv", &sk[..2 * n]), (c"pub", &pk)], true).expect("halves");
        assert_eq!(k.sk.as_deref().map(|v| &v[..]), Some(&sk[..]));
        assert!(import(set, &[(c"pub", &pk)], true).is_some_and(|k| k.sk.is_none()));
        // Without the private selection, priv is not read.
        assert!(
            import(set, &[(c"priv", &sk), (c"pub", &pk)], false).is_some_and(|k| k.sk.is_none())
        );
        let mut other = pk.to_vec();
        other[3] ^= 1;
        assert!(import(set, &[(c"priv", &sk), (c"pub", &other)], true).is_none());
        assert!(import(set, &[(c"priv", &sk[..2 * n])], true).is_none());
        assert!(import(set, &[(c"priv", &sk[..3 * n]), (c"pub", &pk)], true).is_none());
        assert!(import(set, &[(c"pub", &pk[..n])], true).is_none());
        assert!(import(set, &[], true).is_none());
        assert!(import(ParamSet::Sha2_192f, &[(c"priv", &sk)], true).is_none());
    }

    #[test]
    fn pairwise_check_recomputes_the_root() {
        let set = ParamSet::Shake128f;
        let k = Key::generate(set, None).unwrap();
        assert!(k.valid(abi::SELECT_KEYPAIR));
        let mut sk = k.sk.as_deref().unwrap().to_vec();
        let last = sk.len() - 1;
        sk[last] ^= 1; // PK.root
        let bad = Key::from_sk(set, sk);
        assert!(!bad.valid(abi::SELECT_KEYPAIR));
        assert!(
            bad.valid(abi::SELECT_PUBLIC_KEY),
            "a public selection is not recomputed"
        );
    }
}
