//! Keys decoded and checked once, for callers that encapsulate or decapsulate many times with
//! one key (the serving layer's key handles). Results are bit-identical to `encaps_derand` /
//! `decaps` on the encoded key.

use super::params::{PK_PREFIX_LEN, Z_LEN};
use super::{kem, pack, ParamSet};
use crate::Error;
use zeroize::Zeroizing;

/// A CTRU-Prime public key with h decoded (the form the ring product takes).
pub struct ExpandedPublicKey {
    p: ParamSet,
    pk: Vec<u8>,
    h: Vec<i32>,
}

/// A CTRU-Prime secret key with f unpacked and the embedded public key decoded; zeroized on drop.
pub struct ExpandedSecretKey {
    p: ParamSet,
    f: Zeroizing<Vec<i32>>,
    h: Vec<i32>,
    /// The embedded pk (public) and z (secret), as in the encoded key.
    pk: Vec<u8>,
    z: Zeroizing<[u8; Z_LEN]>,
}

impl ExpandedPublicKey {
    /// Errors: `BadLength`, `BadKey` (not a canonical encoding), as `encaps` reports them.
    pub fn new(p: ParamSet, pk: &[u8]) -> Result<Self, Error> {
        if pk.len() != p.public_key_len() {
            return Err(Error::BadLength);
        }
        let h = kem::decode_pk(p, pk)?;
        debug_assert!(pk.len() >= PK_PREFIX_LEN);
        Ok(ExpandedPublicKey {
            p,
            pk: pk.to_vec(),
            h,
        })
    }

    pub fn param_set(&self) -> ParamSet {
        self.p
    }

    /// As `encaps_derand` (coins `Some`) or `encaps` (`None`: fresh randomness).
    pub fn encaps(
        &self,
        coins: Option<&[u8; 32]>,
        ct: &mut [u8],
        ss: &mut [u8],
    ) -> Result<(), Error> {
        let p = self.p;
        if ct.len() != p.ciphertext_len() || ss.len() != p.shared_secret_len() {
            return Err(Error::BadLength);
        }
        let e = Zeroizing::new(match coins {
            Some(c) => *c,
            None => crate::rng::array32()?,
        });
        kem::encaps_decoded(p, &self.pk, &self.h, &e, ct, ss);
        Ok(())
    }
}

impl ExpandedSecretKey {
    /// Errors: `BadLength`, `BadKey` (PackF(f) or the embedded pk malformed), as `decaps`.
    pub fn new(p: ParamSet, sk: &[u8]) -> Result<Self, Error> {
        if sk.len() != p.secret_key_len() {
            return Err(Error::BadLength);
        }
        let (sk_pke, rest) = sk.split_at(p.sk_pke_len());
        let (pk, z) = rest.split_at(p.public_key_len());
        let f = pack::unpack_f(p, sk_pke).ok_or(Error::BadKey)?;
        let h = kem::decode_pk(p, pk)?;
        let mut zz = Zeroizing::new([0u8; Z_LEN]);
        zz.copy_from_slice(z);
        Ok(ExpandedSecretKey {
            p,
            f,
            h,
            pk: pk.to_vec(),
            z: zz,
        })
    }

    pub fn param_set(&self) -> ParamSet {
        self.p
    }

    /// As `decaps` (implicit rejection included).
    pub fn decaps(&self, ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
        let p = self.p;
        if ct.len() != p.ciphertext_len() || ss.len() != p.shared_secret_len() {
            return Err(Error::BadLength);
        }
        kem::decaps_decoded(p, &self.f, &self.h, &self.pk, &self.z[..], ct, ss);
        Ok(())
    }
}
