//! FIPS 204 Table 1 (parameter sets) and Table 2 (sizes), and the round-3 Dilithium sets that
//! share their numbers (the differences between the two schemes are in `variant`).

use super::variant::Variant;

/// The modulus q = 2^23 - 2^13 + 1.
pub const Q: i32 = 8_380_417;
/// Polynomial degree.
pub const N: usize = 256;
/// Dropped bits from t (FIPS 204 d).
pub const D: u32 = 13;

/// A row of FIPS 204 Table 1 (NIST security category 2, 3 or 5).
#[derive(Clone, Copy)]
enum Level {
    Two,
    Three,
    Five,
}

/// ML-DSA-44, -65 or -87 (FIPS 204), or Dilithium2, 3 or 5 (round 3, version 3.1), which use
/// the same k, l, eta, tau, gamma1, gamma2 and omega as ML-DSA-44, -65 and -87.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSet {
    MlDsa44,
    MlDsa65,
    MlDsa87,
    Dilithium2,
    Dilithium3,
    Dilithium5,
}

impl ParamSet {
    /// The three FIPS 204 sets (ML-DSA).
    pub const ALL: [ParamSet; 3] = [ParamSet::MlDsa44, ParamSet::MlDsa65, ParamSet::MlDsa87];
    /// The three round-3 Dilithium sets.
    pub const ROUND3: [ParamSet; 3] = [
        ParamSet::Dilithium2,
        ParamSet::Dilithium3,
        ParamSet::Dilithium5,
    ];
    /// Every set of both schemes.
    pub const EVERY: [ParamSet; 6] = [
        ParamSet::MlDsa44,
        ParamSet::MlDsa65,
        ParamSet::MlDsa87,
        ParamSet::Dilithium2,
        ParamSet::Dilithium3,
        ParamSet::Dilithium5,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ParamSet::MlDsa44 => "ML-DSA-44",
            ParamSet::MlDsa65 => "ML-DSA-65",
            ParamSet::MlDsa87 => "ML-DSA-87",
            ParamSet::Dilithium2 => "Dilithium2",
            ParamSet::Dilithium3 => "Dilithium3",
            ParamSet::Dilithium5 => "Dilithium5",
        }
    }

    /// Which scheme: FIPS 204 or round 3.
    pub const fn variant(self) -> Variant {
        match self {
            ParamSet::MlDsa44 | ParamSet::MlDsa65 | ParamSet::MlDsa87 => Variant::Fips204,
            _ => Variant::Round3,
        }
    }

    /// The row of FIPS 204 Table 1 this set uses (Dilithium2 shares ML-DSA-44's, ...).
    const fn level(self) -> Level {
        match self {
            ParamSet::MlDsa44 | ParamSet::Dilithium2 => Level::Two,
            ParamSet::MlDsa65 | ParamSet::Dilithium3 => Level::Three,
            ParamSet::MlDsa87 | ParamSet::Dilithium5 => Level::Five,
        }
    }

    /// Rows of A (dimension of t, s2).
    pub const fn k(self) -> usize {
        match self.level() {
            Level::Two => 4,
            Level::Three => 6,
            Level::Five => 8,
        }
    }

    /// Columns of A (dimension of s1, y, z).
    pub const fn l(self) -> usize {
        match self.level() {
            Level::Two => 4,
            Level::Three => 5,
            Level::Five => 7,
        }
    }

    pub const fn eta(self) -> i32 {
        match self.level() {
            Level::Two => 2,
            Level::Three => 4,
            Level::Five => 2,
        }
    }

    /// Number of +-1 coefficients in c.
    pub const fn tau(self) -> usize {
        match self.level() {
            Level::Two => 39,
            Level::Three => 49,
            Level::Five => 60,
        }
    }

    /// beta = tau * eta.
    pub const fn beta(self) -> i32 {
        self.tau() as i32 * self.eta()
    }

    /// gamma1 as log2: 2^17 or 2^19.
    pub const fn gamma1_bits(self) -> u32 {
        match self.level() {
            Level::Two => 17,
            _ => 19,
        }
    }

    pub const fn gamma1(self) -> i32 {
        1 << self.gamma1_bits()
    }

    /// gamma2 = (q-1)/88 or (q-1)/32.
    pub const fn gamma2(self) -> i32 {
        match self.level() {
            Level::Two => (Q - 1) / 88,
            _ => (Q - 1) / 32,
        }
    }

    /// Maximum number of 1s in the hint.
    pub const fn omega(self) -> usize {
        match self.level() {
            Level::Two => 80,
            Level::Three => 55,
            Level::Five => 75,
        }
    }

    /// Collision strength lambda in bits (FIPS 204 Table 1).
    pub const fn lambda(self) -> usize {
        match self.level() {
            Level::Two => 128,
            Level::Three => 192,
            Level::Five => 256,
        }
    }

    /// Bytes of c~: lambda/4 in FIPS 204, 32 for every round-3 level.
    pub const fn c_tilde_len(self) -> usize {
        self.variant().c_tilde_len(self.lambda())
    }

    /// Bytes of tr = H(pk): 64 in FIPS 204, 32 in round 3.
    pub const fn tr_len(self) -> usize {
        self.variant().tr_len()
    }

    /// Bits per coefficient of eta-bounded polynomials in sk (3 or 4).
    pub const fn eta_bits(self) -> usize {
        match self.eta() {
            2 => 3,
            _ => 4,
        }
    }

    /// Bits per coefficient of w1 (6 for ML-DSA-44, 4 otherwise).
    pub const fn w1_bits(self) -> usize {
        match self.level() {
            Level::Two => 6,
            _ => 4,
        }
    }

    pub const fn public_key_len(self) -> usize {
        32 + 32 * self.k() * 10
    }

    pub const fn secret_key_len(self) -> usize {
        32 + 32
            + self.tr_len()
            + 32 * ((self.k() + self.l()) * self.eta_bits() + D as usize * self.k())
    }

    pub const fn signature_len(self) -> usize {
        self.c_tilde_len()
            + self.l() * 32 * (1 + self.gamma1_bits() as usize)
            + self.omega()
            + self.k()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_fips204_table2() {
        let got: Vec<_> = ParamSet::ALL
            .iter()
            .map(|p| (p.public_key_len(), p.secret_key_len(), p.signature_len()))
            .collect();
        assert_eq!(
            got,
            vec![(1312, 2560, 2420), (1952, 4032, 3309), (2592, 4896, 4627)]
        );
    }

    /// The round-3 reference's CRYPTO_PUBLICKEYBYTES / SECRETKEYBYTES / BYTES (v3.1).
    #[test]
    fn round3_sizes_match_the_reference() {
        let got: Vec<_> = ParamSet::ROUND3
            .iter()
            .map(|p| (p.public_key_len(), p.secret_key_len(), p.signature_len()))
            .collect();
        assert_eq!(
            got,
            vec![(1312, 2528, 2420), (1952, 4000, 3293), (2592, 4864, 4595)]
        );
    }
}
