//! FIPS 204 (ML-DSA) and round-3 Dilithium (version 3.1, the submission the GPU paper
//! measures): every place where the two schemes differ, and nothing else. Both use the same
//! lattice parameters per level, the same sampling, NTT, rounding and encodings; keygen, sign
//! and verify ask a `Variant` at each of these points.
//!
//! Round 3 (pq-crystals/dilithium tag v3.1, ref/sign.c):
//! * seed expansion (rho, rho', K) = H(xi, 128), without FIPS 204's (k, l) bytes;
//! * tr = H(pk, 32), so the secret key is 32 bytes shorter;
//! * mu = H(tr || M, 64): the message itself, no domain separator or context string (so a
//!   context, HashML-DSA and an external mu are `InvalidArgument`);
//! * rho' = H(K || mu, 64) when signing deterministically (`rnd` = 32 zero bytes, the
//!   reference's default). The reference's randomized mode draws rho' from fresh randomness,
//!   which cannot be reproduced from `rnd`; for any other `rnd` we use
//!   rho' = H(K || rnd || mu, 64), the FIPS 204 hedged construction: rho' stays secret and
//!   unpredictable when `rnd` is fresh, and still differs per message (and stays safe) when
//!   `rnd` repeats or is weak;
//! * c~ is 32 bytes for every level (FIPS 204: lambda/4), and SampleInBall reads it all.

use super::message::Message;
use crate::simd::keccak::Shake256;
use crate::Error;
use zeroize::Zeroizing;

/// Which scheme a parameter set belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// ML-DSA, FIPS 204.
    Fips204,
    /// Dilithium, round-3 submission version 3.1.
    Round3,
}

impl Variant {
    /// Bytes of tr = H(pk).
    pub const fn tr_len(self) -> usize {
        match self {
            Variant::Fips204 => 64,
            Variant::Round3 => 32,
        }
    }

    /// Bytes of c~ for a level of collision strength `lambda` bits.
    pub const fn c_tilde_len(self, lambda: usize) -> usize {
        match self {
            Variant::Fips204 => lambda / 4,
            Variant::Round3 => 32,
        }
    }

    /// (rho, rho', K) = H(xi || k || l, 128) (FIPS 204 Alg. 6 line 1) or H(xi, 128) (round 3).
    pub fn expand_seed(self, xi: &[u8; 32], k: usize, l: usize) -> Zeroizing<[u8; 128]> {
        let mut seeds = Zeroizing::new([0u8; 128]);
        let mut h = Shake256::default();
        h.update(xi);
        if self == Variant::Fips204 {
            h.update(&[k as u8, l as u8]);
        }
        h.finalize_xof().read(&mut seeds[..]);
        seeds
    }

    /// Checks a message's shape for this scheme and returns it in the form mu hashes after tr:
    /// FIPS 204 keeps every interface; round 3 signs the message alone, so `Pure` with an
    /// empty context becomes `Internal(msg)` and a context, a pre-hash or an external mu is
    /// `InvalidArgument`.
    pub fn message<'a>(self, msg: &Message<'a>) -> Result<Message<'a>, Error> {
        msg.validate()?;
        match (self, *msg) {
            (Variant::Fips204, m) => Ok(m),
            (Variant::Round3, Message::Pure { ctx: [], msg }) => Ok(Message::Internal(msg)),
            (Variant::Round3, Message::Internal(m)) => Ok(Message::Internal(m)),
            (Variant::Round3, _) => Err(Error::InvalidArgument),
        }
    }

    /// The seed of ExpandMask: rho'' = H(K || rnd || mu, 64) (FIPS 204 Alg. 7 line 7); in
    /// round 3 rho' = H(K || mu, 64) when `rnd` is all zero, else as FIPS 204 (module doc).
    pub fn rho_prime(self, key: &[u8; 32], rnd: &[u8; 32], mu: &[u8; 64]) -> Zeroizing<[u8; 64]> {
        let mut out = Zeroizing::new([0u8; 64]);
        let mut h = Shake256::default();
        h.update(key);
        // Only "rnd is all zero" is revealed by this branch, never rnd itself.
        let deterministic_r3 = self == Variant::Round3 && rnd.iter().fold(0u8, |a, &b| a | b) == 0;
        if !deterministic_r3 {
            h.update(rnd);
        }
        h.update(mu);
        h.finalize_xof().read(&mut out[..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round3_accepts_only_the_plain_message() {
        let m = b"abc";
        let v = Variant::Round3;
        assert!(matches!(
            v.message(&Message::Pure { ctx: &[], msg: m }),
            Ok(Message::Internal(x)) if x == m
        ));
        for bad in [
            Message::Pure { ctx: b"c", msg: m },
            Message::Mu(&[0; 64]),
            Message::PreHashed {
                ctx: &[],
                ph: super::super::PreHash::Sha2_256,
                digest: &[0; 32],
            },
        ] {
            assert_eq!(v.message(&bad).unwrap_err(), Error::InvalidArgument);
        }
        let pure = Message::Pure { ctx: b"c", msg: m };
        assert!(matches!(
            Variant::Fips204.message(&pure),
            Ok(Message::Pure { .. })
        ));
    }

    #[test]
    fn round3_rho_prime_is_deterministic_only_for_zero_rnd() {
        let (k, mu) = ([7u8; 32], [9u8; 64]);
        // The expected value from the `sha3` crate, not from the code under test.
        use sha3::digest::{ExtendableOutput, Update, XofReader};
        let mut h = sha3::Shake256::default();
        h.update(&k);
        h.update(&mu);
        let mut want = [0u8; 64];
        h.finalize_xof().read(&mut want);
        assert_eq!(*Variant::Round3.rho_prime(&k, &[0; 32], &mu), want);
        assert_ne!(*Variant::Round3.rho_prime(&k, &[1; 32], &mu), want);
        assert_eq!(
            *Variant::Round3.rho_prime(&k, &[1; 32], &mu),
            *Variant::Fips204.rho_prime(&k, &[1; 32], &mu)
        );
        assert_ne!(*Variant::Fips204.rho_prime(&k, &[0; 32], &mu), want);
    }
}
