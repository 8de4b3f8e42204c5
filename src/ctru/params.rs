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

    /// Ciphertext modulus q2 = 2^d2.
    pub const fn q2(self) -> u32 {
        1 << self.q2_bits()
    }

    /// CBD parameter eta.
    pub const fn eta(self) -> usize {
        match self {
            ParamSet::Ctru653 => 3,
            _ => 2,
        }
    }

    /// BOUND = 2*eta + 1: the offset of the 4-bit f packing (PackF stores BOUND - f_i).
    pub const fn bound(self) -> i32 {
        2 * self.eta() as i32 + 1
    }

    /// Number of E8 blocks L = 2 * MSGBYTES (one 4-bit nibble per 8 coefficients).
    pub const fn e8_blocks(self) -> usize {
        2 * self.msg_bytes()
    }

    /// floor(n / 16).
    pub const fn msg_bytes(self) -> usize {
        self.n() / 16
    }

    /// ceil(2 * eta * n / 8): bytes of one CBD sample.
    pub const fn coin_half_bytes(self) -> usize {
        (2 * self.eta() * self.n()).div_ceil(8)
    }

    /// Bytes of the PKE secret key PackF(f): ceil(4n/8).
    pub const fn sk_pke_len(self) -> usize {
        self.n().div_ceil(2)
    }

    /// Official NTRU-Prime-style Encode of h (every modulus q).
    pub const fn public_key_len(self) -> usize {
        match self {
            ParamSet::Ctru653 => 994,
            ParamSet::Ctru761 => 1158,
            ParamSet::Ctru1277 => 2067,
        }
    }

    /// sk = sk_pke || pk || z.
    pub const fn secret_key_len(self) -> usize {
        match self {
            ParamSet::Ctru653 => 1353,
            ParamSet::Ctru761 => 1571,
            ParamSet::Ctru1277 => 2738,
        }
    }

    /// PackCT: ceil(d2 * n / 8).
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

/// The hashes bind only the first 33 bytes of the packed public key ("pk33").
pub const PK_PREFIX_LEN: usize = 33;

/// The rejection secret z at the end of the KEM secret key.
pub const Z_LEN: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_sizes_agree_with_the_spec() {
        for p in ParamSet::ALL {
            assert_eq!(
                p.secret_key_len(),
                p.sk_pke_len() + p.public_key_len() + Z_LEN
            );
            assert_eq!(
                p.ciphertext_len(),
                (p.q2_bits() as usize * p.n()).div_ceil(8)
            );
            assert!(8 * p.e8_blocks() <= p.n());
            assert!(p.q() < (1 << 13));
        }
        assert_eq!(ParamSet::Ctru653.coin_half_bytes(), 490);
        assert_eq!(ParamSet::Ctru761.coin_half_bytes(), 381);
        assert_eq!(ParamSet::Ctru1277.coin_half_bytes(), 639);
    }
}
