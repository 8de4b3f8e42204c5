//! The algorithm identifiers of the C ABI (`pqg_alg`) and their byte lengths.

use crate::{ctru, mldsa, mlkem, slhdsa, Error};

/// An algorithm and parameter set. `code()` is its `pqg_alg` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alg {
    /// ML-DSA or round-3 Dilithium: the same functions serve both.
    MlDsa(mldsa::ParamSet),
    Ctru(ctru::ParamSet),
    /// SLH-DSA (FIPS 205); `pqg_alg` value 48 + the set's position in PKCS#11's CKP order.
    SlhDsa(slhdsa::ParamSet),
    /// ML-KEM (FIPS 203).
    MlKem(mlkem::ParamSet),
}

impl Alg {
    pub const ALL: [Alg; 24] = [
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
        Alg::MlKem(mlkem::ParamSet::MlKem512),
        Alg::MlKem(mlkem::ParamSet::MlKem768),
        Alg::MlKem(mlkem::ParamSet::MlKem1024),
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
            32 => Alg::MlKem(mlkem::ParamSet::MlKem512),
            33 => Alg::MlKem(mlkem::ParamSet::MlKem768),
            34 => Alg::MlKem(mlkem::ParamSet::MlKem1024),
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
            Alg::MlKem(mlkem::ParamSet::MlKem512) => 32,
            Alg::MlKem(mlkem::ParamSet::MlKem768) => 33,
            Alg::MlKem(mlkem::ParamSet::MlKem1024) => 34,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Alg::MlDsa(p) => p.name(),
            Alg::Ctru(p) => p.name(),
            Alg::SlhDsa(p) => p.name(),
            Alg::MlKem(p) => p.name(),
        }
    }

    pub const fn public_key_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.public_key_len(),
            Alg::Ctru(p) => p.public_key_len(),
            Alg::SlhDsa(p) => p.public_key_len(),
            Alg::MlKem(p) => p.encaps_key_len(),
        }
    }

    pub const fn secret_key_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.secret_key_len(),
            Alg::Ctru(p) => p.secret_key_len(),
            Alg::SlhDsa(p) => p.secret_key_len(),
            Alg::MlKem(p) => p.decaps_key_len(),
        }
    }

    /// 0 for a KEM.
    pub const fn signature_len(self) -> usize {
        match self {
            Alg::MlDsa(p) => p.signature_len(),
            Alg::SlhDsa(p) => p.signature_len(),
            Alg::Ctru(_) | Alg::MlKem(_) => 0,
        }
    }

    /// 0 for a signature scheme.
    pub const fn ciphertext_len(self) -> usize {
        match self {
            Alg::MlDsa(_) | Alg::SlhDsa(_) => 0,
            Alg::Ctru(p) => p.ciphertext_len(),
            Alg::MlKem(p) => p.ciphertext_len(),
        }
    }

    /// 0 for a signature scheme.
    pub const fn shared_secret_len(self) -> usize {
        match self {
            Alg::MlDsa(_) | Alg::SlhDsa(_) => 0,
            Alg::Ctru(p) => p.shared_secret_len(),
            Alg::MlKem(p) => p.shared_secret_len(),
        }
    }

    /// Bytes of a key-generation seed: ML-DSA's xi (32), a KEM's d || z (64).
    pub const fn seed_len(self) -> usize {
        match self {
            Alg::MlDsa(_) => 32,
            Alg::SlhDsa(p) => p.seed_len(),
            Alg::Ctru(_) | Alg::MlKem(_) => 64,
        }
    }

    /// The KEM parameter set of a KEM algorithm; a signature scheme is `InvalidArgument`.
    pub const fn kem(self) -> Result<Kem, Error> {
        match self {
            Alg::Ctru(p) => Ok(Kem::Ctru(p)),
            Alg::MlKem(p) => Ok(Kem::MlKem(p)),
            Alg::MlDsa(_) | Alg::SlhDsa(_) => Err(Error::InvalidArgument),
        }
    }
}

/// A KEM parameter set: the KEM half of [`Alg`], taken by the KEM layers (`api`, `serve`,
/// the C ABI's `pqg_kem_*`), which hand it to the family's backend calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kem {
    Ctru(ctru::ParamSet),
    MlKem(mlkem::ParamSet),
}

impl From<ctru::ParamSet> for Kem {
    fn from(p: ctru::ParamSet) -> Kem {
        Kem::Ctru(p)
    }
}

impl From<mlkem::ParamSet> for Kem {
    fn from(p: mlkem::ParamSet) -> Kem {
        Kem::MlKem(p)
    }
}

impl From<Kem> for Alg {
    fn from(k: Kem) -> Alg {
        match k {
            Kem::Ctru(p) => Alg::Ctru(p),
            Kem::MlKem(p) => Alg::MlKem(p),
        }
    }
}

impl Kem {
    pub const fn alg(self) -> Alg {
        match self {
            Kem::Ctru(p) => Alg::Ctru(p),
            Kem::MlKem(p) => Alg::MlKem(p),
        }
    }

    pub const fn name(self) -> &'static str {
        self.alg().name()
    }

    pub const fn public_key_len(self) -> usize {
        self.alg().public_key_len()
    }

    pub const fn secret_key_len(self) -> usize {
        self.alg().secret_key_len()
    }

    pub const fn ciphertext_len(self) -> usize {
        self.alg().ciphertext_len()
    }

    pub const fn shared_secret_len(self) -> usize {
        self.alg().shared_secret_len()
    }
}
