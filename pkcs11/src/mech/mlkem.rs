//! ML-KEM (FIPS 203) as PKCS#11 3.2 defines it: CKK_ML_KEM keys with CKA_PARAMETER_SET,
//! CKM_ML_KEM_KEY_PAIR_GEN, and CKM_ML_KEM (no parameter) through C_EncapsulateKey and
//! C_DecapsulateKey, whose shared secret becomes a CKK_GENERIC_SECRET key object.

use crate::ck::*;
use crate::engine::Engine;
use pqgpu::mlkem::{self, ParamSet};
use pqgpu::serve::{Key, KeyArg};
use zeroize::Zeroizing;

/// The shared secret's length (every parameter set): CKA_VALUE_LEN of the derived key.
pub const SHARED_SECRET_LEN: usize = mlkem::SHARED_SECRET_LEN;

pub fn set_of(ckp: CK_ULONG) -> Rv<ParamSet> {
    match ckp {
        CKP_ML_KEM_512 => Ok(ParamSet::MlKem512),
        CKP_ML_KEM_768 => Ok(ParamSet::MlKem768),
        CKP_ML_KEM_1024 => Ok(ParamSet::MlKem1024),
        _ => Err(CKR_PARAMETER_SET_NOT_SUPPORTED),
    }
}

/// The range of encapsulation key sizes in bytes (as the 3.2 mechanism info gives it).
pub fn key_size_range() -> (CK_ULONG, CK_ULONG) {
    (
        ParamSet::MlKem512.encaps_key_len() as CK_ULONG,
        ParamSet::MlKem1024.encaps_key_len() as CK_ULONG,
    )
}

/// ML-KEM.KeyGen on the CPU (one key: see [`crate::engine`]): (ek, dk).
pub fn generate(p: ParamSet) -> Rv<(Vec<u8>, Zeroizing<Vec<u8>>)> {
    let mut ek = vec![0u8; p.encaps_key_len()];
    let mut dk = Zeroizing::new(vec![0u8; p.decaps_key_len()]);
    mlkem::keygen(p, &mut ek, &mut dk).map_err(from_pqgpu)?;
    Ok((ek, dk))
}

/// Checks an imported encapsulation key (FIPS 203 §7.2: length and modulus check).
pub fn check_public(p: ParamSet, ek: &[u8]) -> Rv {
    mlkem::check_encaps_key(p, ek).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
}

/// Checks an imported decapsulation key (FIPS 203 §7.3: length and hash check).
pub fn check_private(p: ParamSet, dk: &[u8]) -> Rv {
    mlkem::check_decaps_key(p, dk).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
}

/// CKM_ML_KEM takes no parameter.
pub fn check_mechanism(mech: &CK_MECHANISM) -> Rv {
    if mech.mechanism != CKM_ML_KEM {
        return Err(CKR_MECHANISM_INVALID);
    }
    if !mech.pParameter.is_null() || mech.ulParameterLen != 0 {
        return Err(CKR_MECHANISM_PARAM_INVALID);
    }
    Ok(())
}

/// ML-KEM.Encaps with the public key `key` (of set `p`): (ciphertext, shared secret).
pub fn encapsulate(
    e: &Engine,
    key: &Key,
    p: ParamSet,
) -> Rv<(Vec<u8>, Zeroizing<[u8; SHARED_SECRET_LEN]>)> {
    let mut ct = vec![0u8; p.ciphertext_len()];
    let mut ss = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
    e.serve
        .encaps(KeyArg::Handle(key), None, &mut ct, &mut ss[..])
        .map_err(from_pqgpu)?;
    Ok((ct, ss))
}

/// ML-KEM.Decaps with the private key `key` (of set `p`): a ciphertext of the wrong length is
/// CKR_WRAPPED_KEY_LEN_RANGE; a wrong one of the right length gives the implicit-rejection
/// secret, as FIPS 203 has it.
pub fn decapsulate(
    e: &Engine,
    key: &Key,
    p: ParamSet,
    ct: &[u8],
) -> Rv<Zeroizing<[u8; SHARED_SECRET_LEN]>> {
    if ct.len() != p.ciphertext_len() {
        return Err(CKR_WRAPPED_KEY_LEN_RANGE);
    }
    let mut ss = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
    e.serve
        .decaps(KeyArg::Handle(key), ct, &mut ss[..])
        .map_err(from_pqgpu)?;
    Ok(ss)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys made here pass the FIPS 203 import checks; a flipped hash byte in dk and a
    /// coefficient >= q in ek do not.
    #[test]
    fn generated_keys_pass_the_import_checks_and_damaged_ones_fail() {
        for (ckp, p) in [
            (CKP_ML_KEM_512, ParamSet::MlKem512),
            (CKP_ML_KEM_768, ParamSet::MlKem768),
            (CKP_ML_KEM_1024, ParamSet::MlKem1024),
        ] {
            assert_eq!(set_of(ckp).unwrap(), p);
            let (mut ek, mut dk) = generate(p).unwrap();
            check_public(p, &ek).unwrap();
            check_private(p, &dk).unwrap();
            // H(ek) sits 64 bytes before dk's end (dk = dk_pke || ek || H(ek) || z).
            let h = dk.len() - 64;
            dk[h] ^= 1;
            assert_eq!(check_private(p, &dk), Err(CKR_ATTRIBUTE_VALUE_INVALID));
            // 0xFFF in the first 12-bit coefficient is >= q = 3329.
            ek[0] = 0xff;
            ek[1] |= 0x0f;
            assert_eq!(check_public(p, &ek), Err(CKR_ATTRIBUTE_VALUE_INVALID));
            assert_eq!(check_public(p, &ek[1..]), Err(CKR_ATTRIBUTE_VALUE_INVALID));
        }
        assert_eq!(set_of(4), Err(CKR_PARAMETER_SET_NOT_SUPPORTED));
    }
}
