//! Key management for ML-DSA-44/65/87 under OpenSSL 3.5's names and parameters (`seed`, `priv`,
//! `pub`), so keys move between this provider and OpenSSL's default one by export/import:
//! OpenSSL's own decoders and encoders (PEM, DER, every RFC 9881 private-key layout) serve them.

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, Handle, LazyHandle, SecretKey};
use crate::key_family::{ct_eq, three, KeyFamily, ENTRIES};
use crate::params::Params;
use crate::set_of;
use crate::sig_key::{nist_sig_algorithm_id, Request, Rnd, SigKey};
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::serve::KeyKind;
use pqgpu::{Alg, Error, Status};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use std::ffi::{c_int, CStr};
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

static KEY_TYPES: Table<Param, 4> = Table([
    abi::describe(c"seed", abi::PARAM_OCTET_STRING),
    abi::describe(c"pub", abi::PARAM_OCTET_STRING),
    abi::describe(c"priv", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

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

/// Collision strength in bits, as OpenSSL reports `security-bits` for ML-DSA.
fn security_bits(set: ParamSet) -> i32 {
    match set {
        ParamSet::MlDsa44 | ParamSet::Dilithium2 => 128,
        ParamSet::MlDsa65 | ParamSet::Dilithium3 => 192,
        ParamSet::MlDsa87 | ParamSet::Dilithium5 => 256,
    }
}

impl KeyFamily for Key {
    type Set = ParamSet;

    fn set_of(s: usize) -> ParamSet {
        set_of(s)
    }

    fn set(&self) -> ParamSet {
        self.set
    }

    fn empty(set: ParamSet) -> Key {
        Key::new(set, None, None, None)
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

    /// A key pair: a seed (if any) re-expands to the same public key, and sk holds H(pk).
    fn valid(&self, selection: c_int) -> bool {
        if selection & abi::SELECT_KEYPAIR != abi::SELECT_KEYPAIR {
            return true;
        }
        let (Some(sk), Some(pk)) = (&self.sk, &self.pk) else {
            return false;
        };
        let seed_ok = self.seed.as_ref().is_none_or(|s| {
            Key::from_seed(self.set, s).is_some_and(|e| e.pk.as_deref() == Some(&**pk))
        });
        seed_ok && tr_matches(sk, pk)
    }

    fn keep(&mut self, private: bool, public: bool) {
        if !private {
            self.seed = None;
            self.sk = None;
            self.sk_handle = None;
        }
        if !public {
            self.pk = None;
            self.pk_handle = None;
        }
    }

    fn seed_len(_set: ParamSet) -> Option<usize> {
        Some(32)
    }

    fn generate(set: ParamSet, seed: &mut Option<Zeroizing<Vec<u8>>>) -> Option<Key> {
        let seed: [u8; 32] = match seed {
            Some(s) => s[..].try_into().ok()?,
            None => pqgpu::rng::array32().ok()?,
        };
        Key::from_seed(set, &Zeroizing::new(seed))
    }
}

/// ML-DSA-44/65/87.
pub static KEYMGMT: [Table<Dispatch, ENTRIES>; 3] = three::<Key>();

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
    use crate::params::octet_param;

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
