//! ML-KEM parameter sets (FIPS 203 §8, Table 2 and Table 3).

/// ML-KEM-512, -768 or -1024.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSet {
    MlKem512,
    MlKem768,
    MlKem1024,
}

/// Bytes of the shared secret K (every set).
pub const SHARED_SECRET_LEN: usize = 32;
/// Bytes of KeyGen_internal's seed d || z.
pub const SEED_LEN: usize = 64;
/// Bytes of Encaps_internal's message m.
pub const COINS_LEN: usize = 32;

impl ParamSet {
    pub const ALL: [ParamSet; 3] = [ParamSet::MlKem512, ParamSet::MlKem768, ParamSet::MlKem1024];

    pub const fn name(self) -> &'static str {
        match self {
            ParamSet::MlKem512 => "ML-KEM-512",
            ParamSet::MlKem768 => "ML-KEM-768",
            ParamSet::MlKem1024 => "ML-KEM-1024",
        }
    }

    /// Module rank k.
    pub const fn k(self) -> usize {
        match self {
            ParamSet::MlKem512 => 2,
            ParamSet::MlKem768 => 3,
            ParamSet::MlKem1024 => 4,
        }
    }

    /// ek = ByteEncode12(t-hat) || rho: 384k + 32.
    pub const fn encaps_key_len(self) -> usize {
        384 * self.k() + 32
    }

    /// dk = ByteEncode12(s-hat) || ek || H(ek) || z: 768k + 96.
    pub const fn decaps_key_len(self) -> usize {
        768 * self.k() + 96
    }

    /// c = ByteEncode_du(u) || ByteEncode_dv(v): 32 (du k + dv).
    pub const fn ciphertext_len(self) -> usize {
        match self {
            ParamSet::MlKem512 => 768,
            ParamSet::MlKem768 => 1088,
            ParamSet::MlKem1024 => 1568,
        }
    }

    pub const fn shared_secret_len(self) -> usize {
        SHARED_SECRET_LEN
    }
}
