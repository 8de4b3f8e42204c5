//! SLH-DSA (FIPS 205) as PKCS#11 3.2 defines it: CKK_SLH_DSA keys with CKA_PARAMETER_SET
//! (CKP_SLH_DSA_SHA2_128S … CKP_SLH_DSA_SHAKE_256F), CKM_SLH_DSA_KEY_PAIR_GEN, CKM_SLH_DSA,
//! CKM_HASH_SLH_DSA and CKM_HASH_SLH_DSA_<hash>; the operations are `sign`'s. Keys are FIPS
//! 205's encodings: the public key PK.seed || PK.root, the private key SK.seed || SK.prf ||
//! PK.seed || PK.root (its CKA_VALUE; it holds the seeds, so there is no CKA_SEED).

use crate::ck::*;
use pqgpu::serve::{Key, KeyKind};
use pqgpu::slhdsa::{ParamSet, PreHash};
use pqgpu::Alg;
use zeroize::Zeroizing;

pub const SIGN_MECHANISMS: [CK_MECHANISM_TYPE; 12] = [
    CKM_SLH_DSA,
    CKM_HASH_SLH_DSA,
    CKM_HASH_SLH_DSA_SHA224,
    CKM_HASH_SLH_DSA_SHA256,
    CKM_HASH_SLH_DSA_SHA384,
    CKM_HASH_SLH_DSA_SHA512,
    CKM_HASH_SLH_DSA_SHA3_224,
    CKM_HASH_SLH_DSA_SHA3_256,
    CKM_HASH_SLH_DSA_SHA3_384,
    CKM_HASH_SLH_DSA_SHA3_512,
    CKM_HASH_SLH_DSA_SHAKE128,
    CKM_HASH_SLH_DSA_SHAKE256,
];

/// The set of a CKP_SLH_DSA_* value: PKCS#11 numbers them 1..12 in FIPS 205's table order,
/// the order of `ParamSet::ALL`.
pub fn set_of(ckp: CK_ULONG) -> Rv<ParamSet> {
    match ckp {
        1..=12 => Ok(ParamSet::ALL[ckp as usize - 1]),
        _ => Err(CKR_PARAMETER_SET_NOT_SUPPORTED),
    }
}

/// The range of public key sizes in bytes (as the 3.2 mechanism info gives it).
pub fn key_size_range() -> (CK_ULONG, CK_ULONG) {
    (
        ParamSet::Sha2_128s.public_key_len() as CK_ULONG,
        ParamSet::Shake256f.public_key_len() as CK_ULONG,
    )
}

/// slh_keygen with fresh seeds, on the CPU backend (one key: see [`crate::engine`]):
/// (public key, secret key).
pub fn generate(p: ParamSet) -> Rv<(Vec<u8>, Zeroizing<Vec<u8>>)> {
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
    let cpu = pqgpu::backend::cpu_backend();
    pqgpu::api::slhdsa_keygen_one(&*cpu, p, None, &mut pk, &mut sk).map_err(from_pqgpu)?;
    Ok((pk, sk))
}

/// The pre-hash function of a CKM_HASH_SLH_DSA_<hash> mechanism.
pub fn hash_of_mechanism(m: CK_MECHANISM_TYPE) -> Option<PreHash> {
    Some(match m {
        CKM_HASH_SLH_DSA_SHA224 => PreHash::Sha2_224,
        CKM_HASH_SLH_DSA_SHA256 => PreHash::Sha2_256,
        CKM_HASH_SLH_DSA_SHA384 => PreHash::Sha2_384,
        CKM_HASH_SLH_DSA_SHA512 => PreHash::Sha2_512,
        CKM_HASH_SLH_DSA_SHA3_224 => PreHash::Sha3_224,
        CKM_HASH_SLH_DSA_SHA3_256 => PreHash::Sha3_256,
        CKM_HASH_SLH_DSA_SHA3_384 => PreHash::Sha3_384,
        CKM_HASH_SLH_DSA_SHA3_512 => PreHash::Sha3_512,
        CKM_HASH_SLH_DSA_SHAKE128 => PreHash::Shake128,
        CKM_HASH_SLH_DSA_SHAKE256 => PreHash::Shake256,
        _ => return None,
    })
}

/// Checks an imported key's CKA_VALUE: its length, and for a private key that its PK.root
/// is the root its seeds give (else CKR_ATTRIBUTE_VALUE_INVALID).
pub fn check(p: ParamSet, kind: KeyKind, value: &[u8]) -> Rv {
    Key::new(Alg::SlhDsa(p), kind, value)
        .map(|_| ())
        .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ckp_values_name_the_fips_205_sets() {
        let expect = [
            (CKP_SLH_DSA_SHA2_128S, "SLH-DSA-SHA2-128s"),
            (CKP_SLH_DSA_SHAKE_128S, "SLH-DSA-SHAKE-128s"),
            (CKP_SLH_DSA_SHA2_128F, "SLH-DSA-SHA2-128f"),
            (CKP_SLH_DSA_SHAKE_192F, "SLH-DSA-SHAKE-192f"),
            (CKP_SLH_DSA_SHA2_256S, "SLH-DSA-SHA2-256s"),
            (CKP_SLH_DSA_SHAKE_256F, "SLH-DSA-SHAKE-256f"),
        ];
        for (ckp, name) in expect {
            assert_eq!(set_of(ckp).map(|p| p.name()), Ok(name));
        }
        assert_eq!(set_of(0), Err(CKR_PARAMETER_SET_NOT_SUPPORTED));
        assert_eq!(set_of(13), Err(CKR_PARAMETER_SET_NOT_SUPPORTED));
    }
}
