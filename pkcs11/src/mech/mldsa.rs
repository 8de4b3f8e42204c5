//! ML-DSA (FIPS 204) as PKCS#11 3.2 defines it: CKK_ML_DSA keys with CKA_PARAMETER_SET,
//! CKM_ML_DSA_KEY_PAIR_GEN, CKM_ML_DSA (pure, optional CK_SIGN_ADDITIONAL_CONTEXT),
//! CKM_HASH_ML_DSA (the caller's digest, CK_HASH_SIGN_ADDITIONAL_CONTEXT) and
//! CKM_HASH_ML_DSA_<hash> (the token hashes the message); the operations are `sign`'s.

use crate::ck::*;
use pqgpu::mldsa::{ParamSet, PreHash};
use pqgpu::serve::Key;
use pqgpu::Alg;
use zeroize::Zeroizing;

pub const SIGN_MECHANISMS: [CK_MECHANISM_TYPE; 12] = [
    CKM_ML_DSA,
    CKM_HASH_ML_DSA,
    CKM_HASH_ML_DSA_SHA224,
    CKM_HASH_ML_DSA_SHA256,
    CKM_HASH_ML_DSA_SHA384,
    CKM_HASH_ML_DSA_SHA512,
    CKM_HASH_ML_DSA_SHA3_224,
    CKM_HASH_ML_DSA_SHA3_256,
    CKM_HASH_ML_DSA_SHA3_384,
    CKM_HASH_ML_DSA_SHA3_512,
    CKM_HASH_ML_DSA_SHAKE128,
    CKM_HASH_ML_DSA_SHAKE256,
];

pub fn set_of(ckp: CK_ULONG) -> Rv<ParamSet> {
    match ckp {
        CKP_ML_DSA_44 => Ok(ParamSet::MlDsa44),
        CKP_ML_DSA_65 => Ok(ParamSet::MlDsa65),
        CKP_ML_DSA_87 => Ok(ParamSet::MlDsa87),
        _ => Err(CKR_PARAMETER_SET_NOT_SUPPORTED),
    }
}

/// The range of public key sizes in bytes (as the 3.2 mechanism info gives it).
pub fn key_size_range() -> (CK_ULONG, CK_ULONG) {
    (
        ParamSet::MlDsa44.public_key_len() as CK_ULONG,
        ParamSet::MlDsa87.public_key_len() as CK_ULONG,
    )
}

/// A fresh key pair: (public key, secret key, seed xi).
pub type Pair = (Vec<u8>, Zeroizing<Vec<u8>>, Zeroizing<Vec<u8>>);

/// ML-DSA.KeyGen_internal(seed) on the CPU backend (one key: see [`crate::engine`]).
fn keygen(p: ParamSet, seed: &[u8; 32]) -> Rv<(Vec<u8>, Zeroizing<Vec<u8>>)> {
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
    let cpu = pqgpu::backend::cpu_backend();
    pqgpu::api::mldsa_keygen_one(&*cpu, p, Some(seed), &mut pk, &mut sk).map_err(from_pqgpu)?;
    Ok((pk, sk))
}

/// ML-DSA.KeyGen from a fresh seed (kept as CKA_SEED).
pub fn generate(p: ParamSet) -> Rv<Pair> {
    let mut seed = Zeroizing::new([0u8; 32]);
    getrandom::getrandom(&mut seed[..]).map_err(|_| CKR_GENERAL_ERROR)?;
    let (pk, sk) = keygen(p, &seed)?;
    Ok((pk, sk, Zeroizing::new(seed.to_vec())))
}

/// The pre-hash function of a CKM_HASH_ML_DSA_<hash> mechanism.
pub fn hash_of_mechanism(m: CK_MECHANISM_TYPE) -> Option<PreHash> {
    Some(match m {
        CKM_HASH_ML_DSA_SHA224 => PreHash::Sha2_224,
        CKM_HASH_ML_DSA_SHA256 => PreHash::Sha2_256,
        CKM_HASH_ML_DSA_SHA384 => PreHash::Sha2_384,
        CKM_HASH_ML_DSA_SHA512 => PreHash::Sha2_512,
        CKM_HASH_ML_DSA_SHA3_224 => PreHash::Sha3_224,
        CKM_HASH_ML_DSA_SHA3_256 => PreHash::Sha3_256,
        CKM_HASH_ML_DSA_SHA3_384 => PreHash::Sha3_384,
        CKM_HASH_ML_DSA_SHA3_512 => PreHash::Sha3_512,
        CKM_HASH_ML_DSA_SHAKE128 => PreHash::Shake128,
        CKM_HASH_ML_DSA_SHAKE256 => PreHash::Shake256,
        _ => return None,
    })
}

/// Checks an imported public key (its length and encoding).
pub fn check_public(p: ParamSet, value: &[u8]) -> Rv {
    if value.len() != p.public_key_len() {
        return Err(CKR_ATTRIBUTE_VALUE_INVALID);
    }
    Key::new(Alg::MlDsa(p), pqgpu::serve::KeyKind::Public, value)
        .map(|_| ())
        .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
}

/// An imported private key's (sk, seed if given).
pub type Imported = (Zeroizing<Vec<u8>>, Option<Zeroizing<Vec<u8>>>);

/// An imported private key: CKA_VALUE (sk) and/or CKA_SEED (xi). With the seed the key is
/// regenerated from it (and must equal a CKA_VALUE also given); without, sk is checked.
/// Returns (sk, seed if given).
pub fn import_private(p: ParamSet, value: Option<&[u8]>, seed: Option<&[u8]>) -> Rv<Imported> {
    match (value, seed) {
        (None, None) => Err(CKR_TEMPLATE_INCOMPLETE),
        (value, Some(seed)) => {
            let seed: Zeroizing<[u8; 32]> =
                Zeroizing::new(seed.try_into().map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?);
            let (_, sk) = keygen(p, &seed)?;
            if value.is_some_and(|v| v != &sk[..]) {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
            Ok((sk, Some(Zeroizing::new(seed.to_vec()))))
        }
        (Some(v), None) => {
            if v.len() != p.secret_key_len() {
                return Err(CKR_ATTRIBUTE_VALUE_INVALID);
            }
            Key::new(Alg::MlDsa(p), pqgpu::serve::KeyKind::Secret, v)
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            Ok((Zeroizing::new(v.to_vec()), None))
        }
    }
}
