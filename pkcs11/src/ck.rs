//! PKCS#11 3.2 types and constants: the bindings of `cryptoki-sys` (generated from the OASIS
//! 3.2 headers), plus the few macro values bindgen leaves out, and the module's own helpers
//! for the C side (return codes, blank-padded strings).

pub use cryptoki_sys::*;

/// `CK_UNAVAILABLE_INFORMATION` (`~0UL`): a length that cannot be given.
pub const CK_UNAVAILABLE_INFORMATION: CK_ULONG = !0;

/// A PKCS#11 result: `Err` carries the `CKR_*` code (never `CKR_OK`).
pub type Rv<T = ()> = Result<T, CK_RV>;

/// Folds a result into the code a C function returns.
pub fn rv(r: Rv) -> CK_RV {
    match r {
        Ok(()) => CKR_OK,
        Err(e) => e,
    }
}

/// Copies `s` into a fixed-size, blank-padded PKCS#11 text field (truncating).
pub fn pad<const N: usize>(s: &str) -> [CK_UTF8CHAR; N] {
    let mut out = [b' '; N];
    let n = s.len().min(N);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out
}

/// The code for a pqgpu error met while running a mechanism.
pub fn from_pqgpu(e: pqgpu::Error) -> CK_RV {
    use pqgpu::Error as E;
    match e {
        E::NullPointer | E::InvalidArgument => CKR_ARGUMENTS_BAD,
        E::BadLength => CKR_DATA_LEN_RANGE,
        E::BadKey => CKR_KEY_TYPE_INCONSISTENT,
        E::VerifyFailed => CKR_SIGNATURE_INVALID,
        E::NoDevice | E::Device => CKR_DEVICE_ERROR,
        E::Timeout | E::Rng | E::Panic => CKR_GENERAL_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values this module relies on, as the OASIS PKCS#11 3.2 headers (pkcs11t.h) define
    /// them: a check that the bindings match the standard.
    #[test]
    fn constants_match_the_oasis_3_2_headers() {
        let expect: &[(CK_ULONG, CK_ULONG)] = &[
            (CKK_ML_KEM, 0x49),
            (CKK_ML_DSA, 0x4a),
            (CKK_SLH_DSA, 0x4b),
            (CKA_PARAMETER_SET, 0x61d),
            (CKA_ENCAPSULATE, 0x633),
            (CKA_DECAPSULATE, 0x634),
            (CKA_SEED, 0x637),
            (CKM_ML_KEM_KEY_PAIR_GEN, 0x0f),
            (CKM_ML_KEM, 0x17),
            (CKM_ML_DSA_KEY_PAIR_GEN, 0x1c),
            (CKM_ML_DSA, 0x1d),
            (CKM_HASH_ML_DSA, 0x1f),
            (CKM_HASH_ML_DSA_SHA224, 0x23),
            (CKM_HASH_ML_DSA_SHA256, 0x24),
            (CKM_HASH_ML_DSA_SHA384, 0x25),
            (CKM_HASH_ML_DSA_SHA512, 0x26),
            (CKM_HASH_ML_DSA_SHA3_224, 0x27),
            (CKM_HASH_ML_DSA_SHA3_256, 0x28),
            (CKM_HASH_ML_DSA_SHA3_384, 0x29),
            (CKM_HASH_ML_DSA_SHA3_512, 0x2a),
            (CKM_HASH_ML_DSA_SHAKE128, 0x2b),
            (CKM_HASH_ML_DSA_SHAKE256, 0x2c),
            (CKM_SLH_DSA_KEY_PAIR_GEN, 0x2d),
            (CKM_SLH_DSA, 0x2e),
            (CKM_HASH_SLH_DSA, 0x34),
            (CKM_HASH_SLH_DSA_SHA224, 0x36),
            (CKM_HASH_SLH_DSA_SHA256, 0x37),
            (CKM_HASH_SLH_DSA_SHA384, 0x38),
            (CKM_HASH_SLH_DSA_SHA512, 0x39),
            (CKM_HASH_SLH_DSA_SHA3_224, 0x3a),
            (CKM_HASH_SLH_DSA_SHA3_256, 0x3b),
            (CKM_HASH_SLH_DSA_SHA3_384, 0x3c),
            (CKM_HASH_SLH_DSA_SHA3_512, 0x3d),
            (CKM_HASH_SLH_DSA_SHAKE128, 0x3e),
            (CKM_HASH_SLH_DSA_SHAKE256, 0x3f),
            (CKP_SLH_DSA_SHA2_128S, 1),
            (CKP_SLH_DSA_SHAKE_128S, 2),
            (CKP_SLH_DSA_SHA2_128F, 3),
            (CKP_SLH_DSA_SHAKE_128F, 4),
            (CKP_SLH_DSA_SHA2_192S, 5),
            (CKP_SLH_DSA_SHAKE_192S, 6),
            (CKP_SLH_DSA_SHA2_192F, 7),
            (CKP_SLH_DSA_SHAKE_192F, 8),
            (CKP_SLH_DSA_SHA2_256S, 9),
            (CKP_SLH_DSA_SHAKE_256S, 10),
            (CKP_SLH_DSA_SHA2_256F, 11),
            (CKP_SLH_DSA_SHAKE_256F, 12),
            (CKP_ML_DSA_44, 1),
            (CKP_ML_DSA_65, 2),
            (CKP_ML_DSA_87, 3),
            (CKP_ML_KEM_512, 1),
            (CKP_ML_KEM_768, 2),
            (CKP_ML_KEM_1024, 3),
            (CKH_HEDGE_PREFERRED, 0),
            (CKH_HEDGE_REQUIRED, 1),
            (CKH_DETERMINISTIC_REQUIRED, 2),
            (CKF_ENCAPSULATE, 0x1000_0000),
            (CKF_DECAPSULATE, 0x2000_0000),
            (CKR_PARAMETER_SET_NOT_SUPPORTED, 0x209),
            (CKF_OS_LOCKING_OK, 2),
            (CKM_SHA224, 0x255),
            (CKM_SHA256, 0x250),
            (CKM_SHA384, 0x260),
            (CKM_SHA512, 0x270),
            (CKM_SHA3_224, 0x2b5),
            (CKM_SHA3_256, 0x2b0),
            (CKM_SHA3_384, 0x2c0),
            (CKM_SHA3_512, 0x2d0),
        ];
        for (i, (got, want)) in expect.iter().enumerate() {
            assert_eq!(got, want, "entry {i}");
        }
        assert_eq!(std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>(), 24);
        assert_eq!(std::mem::size_of::<CK_HASH_SIGN_ADDITIONAL_CONTEXT>(), 32);
    }
}
