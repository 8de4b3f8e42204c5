//! CTRU-Prime parameter sets (spec section 3; official NTRU-Prime-style pk encoding).

/// CTRU-Prime-653, -761 or -1277.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSet {
    Ctru653,
    Ctru761,
    Ctru1277,
}

impl ParamSet {
    pub const ALL: [ParamSet; 3] = [ParamSet::Ctru653, ParamSet::Ctru761, ParamSet::Ctru1277];

    pub const fn name(self) -> &'static str {
        match self {
            ParamSet::Ctru653 => "CTRU-Prime-653",
            ParamSet::Ctru761 => "CTRU-Prime-761",
            ParamSet::Ctru1277 => "CTRU-Prime-1277",
        }
    }

    /// Degree n (prime) of x^n - x - 1.
    pub const fn n(self) -> usize {
        match self {
            ParamSet::Ctru653 => 653,
            ParamSet::Ctru761 => 761,
            ParamSet::Ctru1277 => 1277,
        }
    }

    /// Modulus q (prime).
    pub const fn q(self) -> i32 {
        match self {
            ParamSet::Ctru653 => 4621,
            ParamSet::Ctru761 => 4591,
            ParamSet::Ctru1277 => 7879,
        }
    }

    /// Ciphertext modulus q2 = 2^d2.
    pub const fn q2_bits(self) -> u32 {
        match self {
            ParamSet::Ctru653 => 11,
            _ => 10,
        }
    }

    /// CBD parameter eta.
    pub const fn eta(self) -> usize {
        match self {
            ParamSet::Ctru653 => 3,
            _ => 2,
        }
    }

    /// floor(n / 16).
    pub const fn msg_bytes(self) -> usize {
        self.n() / 16
    }

    /// ceil(2 * eta * n / 8): bytes of one CBD sample.
    pub const fn coin_half_bytes(self) -> usize {
        (2 * self.eta() * self.n()).div_ceil(8)
    }

    pub const fn public_key_len(self) -> usize {
        match self {
            ParamSet::Ctru653 => 994,
            ParamSet::Ctru761 => 1158,
            ParamSet::Ctru1277 => 2067,
        }
    }

    pub const fn secret_key_len(self) -> usize {
        match self {
            ParamSet::Ctru653 => 1353,
            ParamSet::Ctru761 => 1571,
            ParamSet::Ctru1277 => 2738,
        }
    }

    pub const fn ciphertext_len(self) -> usize {
        match self {
            ParamSet::Ctru653 => 898,
            ParamSet::Ctru761 => 952,
            ParamSet::Ctru1277 => 1597,
        }
    }

    pub const fn shared_secret_len(self) -> usize {
        32
    }
}
