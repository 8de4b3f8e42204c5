//! The byte decoders and their encoders, exposed to the fuzz targets only: this module exists
//! only with `--cfg fuzzing` (scripts/fuzz.sh), so normal builds and the C ABI are unchanged.
//! Thin wrappers over the internal ML-DSA/Dilithium pkDecode/skDecode/sigDecode and the
//! CTRU-Prime pk/sk/ct decoders, returning plain values (one `[i32; 256]` per polynomial) so
//! that a target can re-encode them and compare bytes. Lengths are checked as the public calls
//! check them, with the same errors.

use crate::mldsa::packing;
use crate::mldsa::polyvec::PolyVec;
use crate::mldsa::ParamSet as Mldsa;
use crate::{ctru, Error};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// One ML-DSA polynomial's coefficients.
pub type Coeffs = [i32; 256];

/// A decoded ML-DSA public key: rho and t1 (k polynomials).
pub struct MldsaPublicKey {
    pub rho: [u8; 32],
    pub t1: Vec<Coeffs>,
}

/// A decoded ML-DSA secret key (Alg. 25); `tr` has the set's length (64, or 32 in round 3).
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct MldsaSecretKey {
    pub rho: [u8; 32],
    pub key: [u8; 32],
    pub tr: Vec<u8>,
    pub s1: Vec<Coeffs>,
    pub s2: Vec<Coeffs>,
    pub t0: Vec<Coeffs>,
}

/// A decoded ML-DSA signature (Alg. 27): c~, z (l polynomials), h (k polynomials of 0/1).
pub struct MldsaSignature {
    pub c_tilde: Vec<u8>,
    pub z: Vec<Coeffs>,
    pub h: Vec<Coeffs>,
}

fn plain<const M: usize>(v: &PolyVec<M>) -> Vec<Coeffs> {
    v.0.iter().map(|p| p.0).collect()
}

fn polyvec<const M: usize>(v: &[Coeffs]) -> PolyVec<M> {
    assert_eq!(v.len(), M, "wrong number of polynomials");
    let mut out = PolyVec::<M>::default();
    for (o, c) in out.0.iter_mut().zip(v) {
        o.0 = *c;
    }
    out
}

/// Calls `$f::<K, L>(args)` for the set's k and l.
macro_rules! by_kl {
    ($p:expr, $f:ident, $($arg:expr),*) => {
        match $p.k() {
            4 => $f::<4, 4>($($arg),*),
            6 => $f::<6, 5>($($arg),*),
            _ => $f::<8, 7>($($arg),*),
        }
    };
}

/// pkDecode (Alg. 23). `BadLength` unless the length is the set's (as `mldsa::verify`).
pub fn mldsa_pk_decode(p: Mldsa, pk: &[u8]) -> Result<MldsaPublicKey, Error> {
    fn go<const K: usize, const L: usize>(pk: &[u8]) -> MldsaPublicKey {
        let (rho, t1) = packing::pk_decode::<K>(pk);
        MldsaPublicKey {
            rho,
            t1: plain(&t1),
        }
    }
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    Ok(by_kl!(p, go, pk))
}

/// pkEncode (Alg. 22).
pub fn mldsa_pk_encode(p: Mldsa, pk: &MldsaPublicKey) -> Vec<u8> {
    fn go<const K: usize, const L: usize>(p: Mldsa, pk: &MldsaPublicKey) -> Vec<u8> {
        let mut out = vec![0u8; p.public_key_len()];
        packing::pk_encode::<K>(&pk.rho, &polyvec::<K>(&pk.t1), &mut out);
        out
    }
    by_kl!(p, go, p, pk)
}

/// skDecode (Alg. 25) with the library's range check: `BadLength` for a wrong length, `BadKey`
/// for an s1/s2 coefficient outside [-eta, eta] (as `mldsa::sign`).
pub fn mldsa_sk_decode(p: Mldsa, sk: &[u8]) -> Result<MldsaSecretKey, Error> {
    fn go<const K: usize, const L: usize>(p: Mldsa, sk: &[u8]) -> Option<MldsaSecretKey> {
        let d = packing::sk_decode::<K, L>(p, sk)?;
        Some(MldsaSecretKey {
            rho: d.rho,
            key: d.key,
            tr: d.tr[..p.tr_len()].to_vec(),
            s1: plain(&d.s1),
            s2: plain(&d.s2),
            t0: plain(&d.t0),
        })
    }
    if sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    by_kl!(p, go, p, sk).ok_or(Error::BadKey)
}

/// skEncode (Alg. 24).
pub fn mldsa_sk_encode(p: Mldsa, sk: &MldsaSecretKey) -> Vec<u8> {
    fn go<const K: usize, const L: usize>(p: Mldsa, sk: &MldsaSecretKey) -> Vec<u8> {
        let mut tr = [0u8; 64];
        tr[..p.tr_len()].copy_from_slice(&sk.tr);
        let inner = packing::SecretKey::<K, L> {
            rho: sk.rho,
            key: sk.key,
            tr,
            s1: polyvec::<L>(&sk.s1),
            s2: polyvec::<K>(&sk.s2),
            t0: polyvec::<K>(&sk.t0),
        };
        let mut out = vec![0u8; p.secret_key_len()];
        packing::sk_encode::<K, L>(p, &inner, &mut out);
        out
    }
    by_kl!(p, go, p, sk)
}

/// sigDecode (Alg. 27) with HintBitUnpack (Alg. 21): `VerifyFailed` for a wrong length or a
/// malformed hint (as `mldsa::verify`).
pub fn mldsa_sig_decode(p: Mldsa, sig: &[u8]) -> Result<MldsaSignature, Error> {
    fn go<const K: usize, const L: usize>(p: Mldsa, sig: &[u8]) -> Option<MldsaSignature> {
        let d = packing::sig_decode::<K, L>(p, sig)?;
        Some(MldsaSignature {
            c_tilde: d.c_tilde.to_vec(),
            z: plain(&d.z),
            h: plain(&d.h),
        })
    }
    if sig.len() != p.signature_len() {
        return Err(Error::VerifyFailed);
    }
    by_kl!(p, go, p, sig).ok_or(Error::VerifyFailed)
}

/// sigEncode (Alg. 26). The hint must have at most omega ones (as the signer guarantees).
pub fn mldsa_sig_encode(p: Mldsa, sig: &MldsaSignature) -> Vec<u8> {
    fn go<const K: usize, const L: usize>(p: Mldsa, sig: &MldsaSignature) -> Vec<u8> {
        let mut out = vec![0u8; p.signature_len()];
        let (z, h) = (polyvec::<L>(&sig.z), polyvec::<K>(&sig.h));
        packing::sig_encode::<K, L>(p, &sig.c_tilde, &z, &h, &mut out);
        out
    }
    by_kl!(p, go, p, sig)
}

/// A decoded CTRU-Prime KEM secret key: sk = PackF(f) || pk || z.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct CtruSecretKey {
    pub f: Vec<i32>,
    pub h: Vec<i32>,
    pub z: Vec<u8>,
}

/// The public-key decoder (spec 6.1, canonical encodings only): `BadLength` for a wrong length,
/// `BadKey` for a non-canonical encoding (as `ctru::encaps`). Coefficients in [0, q).
pub fn ctru_pk_decode(p: ctru::ParamSet, pk: &[u8]) -> Result<Vec<i32>, Error> {
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    ctru::encode::decode_pk(pk, p.n(), p.q()).ok_or(Error::BadKey)
}

/// The public-key encoder (spec 6.1).
pub fn ctru_pk_encode(p: ctru::ParamSet, h: &[i32]) -> Vec<u8> {
    let mut out = vec![0u8; p.public_key_len()];
    ctru::encode::encode_pk(h, p.q(), &mut out);
    out
}

/// The KEM secret-key decoding of `ctru::decaps`: UnpackF (spec 6.2) of the first part, then the
/// embedded public key; `BadLength` for a wrong length, `BadKey` for either part malformed. z is
/// not checked (any 32 bytes).
pub fn ctru_sk_decode(p: ctru::ParamSet, sk: &[u8]) -> Result<CtruSecretKey, Error> {
    if sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    let (sk_pke, rest) = sk.split_at(p.sk_pke_len());
    let (pk, z) = rest.split_at(p.public_key_len());
    let f = ctru::pack::unpack_f(p, sk_pke).ok_or(Error::BadKey)?;
    let h = ctru::encode::decode_pk(pk, p.n(), p.q()).ok_or(Error::BadKey)?;
    Ok(CtruSecretKey {
        f: f.to_vec(),
        h,
        z: z.to_vec(),
    })
}

/// PackF(f) || Encode(h) || z.
pub fn ctru_sk_encode(p: ctru::ParamSet, sk: &CtruSecretKey) -> Vec<u8> {
    let mut out = vec![0u8; p.secret_key_len()];
    let (sk_pke, rest) = out.split_at_mut(p.sk_pke_len());
    let (pk, z) = rest.split_at_mut(p.public_key_len());
    ctru::pack::pack_f(p, &sk.f, sk_pke);
    ctru::encode::encode_pk(&sk.h, p.q(), pk);
    z.copy_from_slice(&sk.z);
    out
}

/// UnpackCT (spec 6.3): n values in [0, 2^d2); every bit pattern is accepted, the padding bits
/// of the last byte are ignored. `BadLength` for a wrong length (as `ctru::decaps`).
pub fn ctru_ct_decode(p: ctru::ParamSet, ct: &[u8]) -> Result<Vec<i32>, Error> {
    if ct.len() != p.ciphertext_len() {
        return Err(Error::BadLength);
    }
    Ok(ctru::pack::unpack_ct(ct, p.n(), p.q2_bits()))
}

/// PackCT (spec 6.3), padding bits zero.
pub fn ctru_ct_encode(p: ctru::ParamSet, c: &[i32]) -> Vec<u8> {
    let mut out = vec![0u8; p.ciphertext_len()];
    ctru::pack::pack_ct(c, p.q2_bits(), &mut out);
    out
}
