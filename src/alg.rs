//! The algorithm identifiers of the C ABI (`pqg_alg`) and their byte lengths.

use crate::{ctru, mldsa, slhdsa, Error};

/// An algorithm and parameter set. `code()` is its `pqg_alg` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alg {
    /// ML-DSA or round-3 Dilithium: the same functions serve both.
    MlDsa(mldsa::ParamSet),
    Ctru(ctru::ParamSet),
    /// SLH-DSA (FIPS 205); `pqg_alg` value 48 + the set's position in PKCS#11's CKP order.
    SlhDsa(slhdsa::ParamSet),
}

impl Alg {
    pub const ALL: [Alg; 21] = [
        Alg::MlDsa(mldsa::ParamSet::MlDsa44),
        Alg::MlDsa(mldsa::ParamSet::MlDsa65),
        Alg::MlDsa(mldsa::ParamSet::MlDsa87),
        Alg::MlDsa(mldsa::ParamSet::Dilithium2),
        Alg::MlDsa(mldsa::ParamSet::Dilithium3),
        Alg::MlDsa(mldsa::ParamSet::Dilithium5),
        Alg::Ctru(ctru::ParamSet::Ctru653),
        Alg::Ctru(ctru::ParamSet::Ctru761),
        Alg::Ctru(ctru::ParamSet::Ctru1277),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_128s),
        Alg::SlhDsa(slhdsa::ParamSet::Shake128s),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_128f),
        Alg::SlhDsa(slhdsa::ParamSet::Shake128f),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_192s),
        Alg::SlhDsa(slhdsa::ParamSet::Shake192s),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_192f),
        Alg::SlhDsa(slhdsa::ParamSet::Shake192f),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_256s),
        Alg::SlhDsa(slhdsa::ParamSet::Shake256s),
        Alg::SlhDsa(slhdsa::ParamSet::Sha2_256f),
        Alg::SlhDsa(slhdsa::ParamSet::Shake256f),
    ];

    /// Maps a `pqg_alg` value; unknown values are `InvalidArgument`.
    pub fn from_code(code: i32) -> Result<Alg, Error> {
        Ok(match code {
            1 => Alg::MlDsa(mldsa::ParamSet::MlDsa44),
            2 => Alg::MlDsa(mldsa::ParamSet::MlDsa65),
            3 => Alg::MlDsa(mldsa::ParamSet::MlDsa87),
            4 => Alg::MlDsa(mldsa::ParamSet::Dilithium2),
            5 => Alg::MlDsa(mldsa::ParamSet::Dilithium3),
            6 => Alg::MlDsa(mldsa::ParamSet::Dilithium5),
            16 => Alg::Ctru(ctru::ParamSet::Ctru653),
            17 => Alg::Ctru(ctru::ParamSet::Ctru761),
            18 => Alg::Ctru(ctru::ParamSet::Ctru1277),
            48..=59 => Alg::SlhDsa(slhdsa::ParamSet::ALL[(code - 48) as usize]),
            _ => return Err(Error::InvalidArgument),
        })
    }

    /// The `pqg_alg` value.
    pub const fn code(self) -> i32 {
        match self {
            Alg::MlDsa(mldsa::ParamSet::MlDsa44) => 1,
            Alg::MlDsa(mldsa::ParamSet::MlDsa65) => 2,
            Alg::MlDsa(mldsa::ParamSet::MlDsa87) => 3,
            Alg::MlDsa(mldsa::ParamSet::Dilithium2) => 4,
            Alg::MlDsa(mldsa::ParamSet::Dilithium3) => 5,
            Alg::MlDsa(mldsa::ParamSet::Dilithium5) => 6,
            Alg::Ctru(ctru::ParamSet::Ctru653) => 16,
            Alg::Ctru(ctru::ParamSet::Ctru761) => 17,
            Alg::Ctru(ctru::ParamSet::Ctru1277) => 18,
            Alg::SlhDsa(p) => 48 + p.index() as i32,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Alg::MlDsa(p) => p.name(),
            Alg::Ctru(p) => p.name(),
            Alg::SlhDsa(p) => p.name(),
        }
    }

    pub const fn public_key_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.public_key_len(),
            Alg::Ctru(p) => p.public_key_len(),
            Alg::SlhDsa(p) => p.public_key_len(),
        }
    }

    pub const fn secret_key_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.secret_key_len(),
            Alg::Ctru(p) => p.secret_key_len(),
            Alg::SlhDsa(p) => p.secret_key_len(),
        }
    }

    /// 0 for a KEM.
    pub const fn signature_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.signature_len(),
            Alg::SlhDsa(p) => p.signature_len(),
            Alg::Ctru(_) => 0,
        }
    }

    /// 0 for a signature scheme.
    pub const fn ciphertext_len(self) -> usize {
        match self {
            Alg::MlDsa(_) | Alg::SlhDsa(_) => 0,
            Alg::Ctru(p) => p.ciphertext_len(),
        }
    }

    /// 0 for a signature scheme.
    pub const fn shared_secret_len(self) -> usize {
        match self {
            Alg::MlDsa(_) | Alg::SlhDsa(_) => 0,
            Alg::Ctru(p) => p.shared_secret_len(),
        }
    }
}
