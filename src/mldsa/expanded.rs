//! Keys decoded and expanded once, for callers that sign or verify many times with one key
//! (the serving layer's key handles): A-hat, the NTT-domain secrets, tr and K are computed
//! here once instead of in every call. Results are bit-identical to `sign` / `verify`.

use super::keys::{SignKey, VerifyKey};
use super::message::Message;
use super::params::ParamSet;
use super::{sign, verify};
use crate::Error;
use zeroize::Zeroizing;

enum Sk {
    P44(Box<SignKey<4, 4>>),
    P65(Box<SignKey<6, 5>>),
    P87(Box<SignKey<8, 7>>),
}

enum Pk {
    P44(Box<VerifyKey<4, 4>>),
    P65(Box<VerifyKey<6, 5>>),
    P87(Box<VerifyKey<8, 7>>),
}

/// An ML-DSA (or Dilithium round 3) secret key decoded, checked and expanded once; zeroized
/// on drop.
pub struct ExpandedSecretKey(ParamSet, Sk);

/// An ML-DSA (or Dilithium round 3) public key decoded and expanded once.
pub struct ExpandedPublicKey(ParamSet, Pk);

impl ExpandedSecretKey {
    /// Errors: `BadLength` (sk length), `BadKey` (s1/s2 out of range), as `sign` reports them.
    pub fn new(p: ParamSet, sk: &[u8]) -> Result<Self, Error> {
        if sk.len() != p.secret_key_len() {
            return Err(Error::BadLength);
        }
        fn expand<const K: usize, const L: usize>(
            p: ParamSet,
            sk: &[u8],
        ) -> Result<Box<SignKey<K, L>>, Error> {
            let mut k = Box::new(SignKey::for_sk(sk));
            if k.decode_into(p, sk) {
                Ok(k)
            } else {
                Err(Error::BadKey)
            }
        }
        Ok(ExpandedSecretKey(
            p,
            match p {
                ParamSet::MlDsa44 | ParamSet::Dilithium2 => Sk::P44(expand(p, sk)?),
                ParamSet::MlDsa65 | ParamSet::Dilithium3 => Sk::P65(expand(p, sk)?),
                ParamSet::MlDsa87 | ParamSet::Dilithium5 => Sk::P87(expand(p, sk)?),
            },
        ))
    }

    pub fn param_set(&self) -> ParamSet {
        self.0
    }

    /// As [`super::sign`] with the encoded key this was made from: the same signature for the
    /// same `rnd`. Errors: `BadLength` (sig), `InvalidArgument` / `BadLength` (message shape), `Rng`.
    pub fn sign(
        &self,
        msg: &Message<'_>,
        rnd: Option<&[u8; 32]>,
        sig: &mut [u8],
    ) -> Result<(), Error> {
        let p = self.param_set();
        if sig.len() != p.signature_len() {
            return Err(Error::BadLength);
        }
        let msg = p.variant().message(msg)?;
        let rnd = Zeroizing::new(match rnd {
            Some(r) => *r,
            None => crate::rng::array32()?,
        });
        let tr = p.tr_len();
        match &self.1 {
            Sk::P44(k) => sign::sign_mu(p, k, &msg.mu(&k.tr[..tr]), &rnd, sig),
            Sk::P65(k) => sign::sign_mu(p, k, &msg.mu(&k.tr[..tr]), &rnd, sig),
            Sk::P87(k) => sign::sign_mu(p, k, &msg.mu(&k.tr[..tr]), &rnd, sig),
        }
    }
}

impl ExpandedPublicKey {
    /// Errors: `BadLength` (pk length).
    pub fn new(p: ParamSet, pk: &[u8]) -> Result<Self, Error> {
        if pk.len() != p.public_key_len() {
            return Err(Error::BadLength);
        }
        Ok(ExpandedPublicKey(
            p,
            match p {
                ParamSet::MlDsa44 | ParamSet::Dilithium2 => {
                    Pk::P44(Box::new(VerifyKey::from_bytes(pk)))
                }
                ParamSet::MlDsa65 | ParamSet::Dilithium3 => {
                    Pk::P65(Box::new(VerifyKey::from_bytes(pk)))
                }
                ParamSet::MlDsa87 | ParamSet::Dilithium5 => {
                    Pk::P87(Box::new(VerifyKey::from_bytes(pk)))
                }
            },
        ))
    }

    pub fn param_set(&self) -> ParamSet {
        self.0
    }

    /// As [`super::verify`] with the encoded key this was made from.
    pub fn verify(&self, msg: &Message<'_>, sig: &[u8]) -> Result<(), Error> {
        let p = self.param_set();
        let msg = p.variant().message(msg)?;
        if sig.len() != p.signature_len() {
            return Err(Error::VerifyFailed);
        }
        let ok = match &self.1 {
            Pk::P44(k) => verify::verify_expanded(p, k, &msg, sig),
            Pk::P65(k) => verify::verify_expanded(p, k, &msg, sig),
            Pk::P87(k) => verify::verify_expanded(p, k, &msg, sig),
        };
        if ok {
            Ok(())
        } else {
            Err(Error::VerifyFailed)
        }
    }
}
