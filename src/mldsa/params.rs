//! FIPS 204 Table 1 (parameter sets) and Table 2 (sizes).

/// The modulus q = 2^23 - 2^13 + 1.
pub const Q: i32 = 8_380_417;
/// Polynomial degree.
pub const N: usize = 256;
/// Dropped bits from t (FIPS 204 d).
pub const D: u32 = 13;

/// ML-DSA-44, -65 or -87.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSet {
    MlDsa44,
    MlDsa65,
    MlDsa87,
}

impl ParamSet {
    pub const ALL: [ParamSet; 3] = [ParamSet::MlDsa44, ParamSet::MlDsa65, ParamSet::MlDsa87];

    pub const fn name(self) -> &'static str {
        match self {
            ParamSet::MlDsa44 => "ML-DSA-44",
            ParamSet::MlDsa65 => "ML-DSA-65",
            ParamSet::MlDsa87 => "ML-DSA-87",
        }
    }

    /// Rows of A (dimension of t, s2).
    pub const fn k(self) -> usize {
        match self {
            ParamSet::MlDsa44 => 4,
            ParamSet::MlDsa65 => 6,
            ParamSet::MlDsa87 => 8,
        }
    }

    /// Columns of A (dimension of s1, y, z).
    pub const fn l(self) -> usize {
        match self {
            ParamSet::MlDsa44 => 4,
            ParamSet::MlDsa65 => 5,
            ParamSet::MlDsa87 => 7,
        }
    }

    pub const fn eta(self) -> i32 {
        match self {
            ParamSet::MlDsa44 => 2,
            ParamSet::MlDsa65 => 4,
            ParamSet::MlDsa87 => 2,
        }
    }

    /// Number of +-1 coefficients in c.
    pub const fn tau(self) -> usize {
        match self {
            ParamSet::MlDsa44 => 39,
            ParamSet::MlDsa65 => 49,
            ParamSet::MlDsa87 => 60,
        }
    }

    /// beta = tau * eta.
    pub const fn beta(self) -> i32 {
        self.tau() as i32 * self.eta()
    }

    /// gamma1 as log2: 2^17 or 2^19.
    pub const fn gamma1_bits(self) -> u32 {
        match self {
            ParamSet::MlDsa44 => 17,
            _ => 19,
        }
    }

    pub const fn gamma1(self) -> i32 {
        1 << self.gamma1_bits()
    }

    /// gamma2 = (q-1)/88 or (q-1)/32.
    pub const fn gamma2(self) -> i32 {
        match self {
            ParamSet::MlDsa44 => (Q - 1) / 88,
            _ => (Q - 1) / 32,
        }
    }

    /// Maximum number of 1s in the hint.
    pub const fn omega(self) -> usize {
        match self {
            ParamSet::MlDsa44 => 80,
            ParamSet::MlDsa65 => 55,
            ParamSet::MlDsa87 => 75,
        }
    }

    /// Collision strength lambda in bits; c~ is lambda/4 bytes.
    pub const fn lambda(self) -> usize {
        match self {
            ParamSet::MlDsa44 => 128,
            ParamSet::MlDsa65 => 192,
            ParamSet::MlDsa87 => 256,
        }
    }

    pub const fn c_tilde_len(self) -> usize {
        self.lambda() / 4
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
        match self {
            ParamSet::MlDsa44 => 6,
            _ => 4,
        }
    }

    pub const fn public_key_len(self) -> usize {
        32 + 32 * self.k() * 10
    }

    pub const fn secret_key_len(self) -> usize {
        32 + 32 + 64 + 32 * ((self.k() + self.l()) * self.eta_bits() + D as usize * self.k())
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
}
