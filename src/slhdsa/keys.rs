//! SLH-DSA keys as key handles hold them: the encoded key with the hash functions of its
//! PK.seed made once (the SHA2 sets' SHA-256 / SHA-512 midstates), and a secret key checked
//! against its own PK.root.

use super::hash::Hasher;
use super::params::{ParamSet, MAX_N};
use super::{sign, Message};
use crate::Error;
use zeroize::Zeroizing;

/// A public key (PK.seed || PK.root) ready to verify.
#[derive(Clone)]
pub struct ExpandedPublicKey {
    p: ParamSet,
    pk: [u8; 2 * MAX_N],
    hs: Hasher,
}

/// A secret key (SK.seed || SK.prf || PK.seed || PK.root) ready to sign; zeroed when dropped.
pub struct ExpandedSecretKey {
    p: ParamSet,
    sk: Zeroizing<[u8; 4 * MAX_N]>,
    hs: Hasher,
}

impl ExpandedPublicKey {
    /// `BadLength` unless `pk` is 2n bytes. Every 2n-byte string is a public key.
    pub fn new(p: ParamSet, pk: &[u8]) -> Result<Self, Error> {
        if pk.len() != p.public_key_len() {
            return Err(Error::BadLength);
        }
        let mut buf = [0u8; 2 * MAX_N];
        buf[..pk.len()].copy_from_slice(pk);
        Ok(ExpandedPublicKey {
            p,
            pk: buf,
            hs: Hasher::new(p.params(), &pk[..p.n()]),
        })
    }

    pub fn param_set(&self) -> ParamSet {
        self.p
    }

    /// As [`super::verify`] with this key.
    pub fn verify(&self, msg: &Message<'_>, sig: &[u8]) -> Result<(), Error> {
        msg.validate()?;
        if sig.len() != self.p.signature_len() {
            return Err(Error::VerifyFailed);
        }
        let pk = &self.pk[..self.p.public_key_len()];
        if msg.with_pieces(|m| sign::verify_with(&self.hs, pk, m, sig)) {
            Ok(())
        } else {
            Err(Error::VerifyFailed)
        }
    }
}

impl ExpandedSecretKey {
    /// `BadLength` unless `sk` is 4n bytes; `BadKey` when its PK.root is not the root of the
    /// top XMSS tree its SK.seed and PK.seed give (its signatures would never verify). The
    /// check costs one key generation, a fraction of one signature.
    pub fn new(p: ParamSet, sk: &[u8]) -> Result<Self, Error> {
        if sk.len() != p.secret_key_len() {
            return Err(Error::BadLength);
        }
        let n = p.n();
        let mut pk = [0u8; 2 * MAX_N];
        let mut again = Zeroizing::new([0u8; 4 * MAX_N]);
        sign::keygen(
            p.params(),
            &sk[..n],
            &sk[n..2 * n],
            &sk[2 * n..3 * n],
            &mut pk[..2 * n],
            &mut again[..4 * n],
        );
        // PK.root is public: a plain comparison leaks nothing.
        if pk[n..2 * n] != sk[3 * n..4 * n] {
            return Err(Error::BadKey);
        }
        let mut buf = Zeroizing::new([0u8; 4 * MAX_N]);
        buf[..4 * n].copy_from_slice(sk);
        Ok(ExpandedSecretKey {
            p,
            sk: buf,
            hs: Hasher::new(p.params(), &sk[2 * n..3 * n]),
        })
    }

    pub fn param_set(&self) -> ParamSet {
        self.p
    }

    /// As [`super::sign`] with this key: `rnd` is opt_rand (n bytes) or `None` for hedged.
    pub fn sign(&self, msg: &Message<'_>, rnd: Option<&[u8]>, sig: &mut [u8]) -> Result<(), Error> {
        let n = self.p.n();
        if sig.len() != self.p.signature_len() || rnd.is_some_and(|r| r.len() != n) {
            return Err(Error::BadLength);
        }
        msg.validate()?;
        let mut addrnd = Zeroizing::new([0u8; MAX_N]);
        match rnd {
            Some(r) => addrnd[..n].copy_from_slice(r),
            None => crate::rng::fill(&mut addrnd[..n])?,
        }
        let sk = &self.sk[..4 * n];
        msg.with_pieces(|m| sign::sign_with(&self.hs, sk, m, &addrnd[..n], sig));
        Ok(())
    }
}
