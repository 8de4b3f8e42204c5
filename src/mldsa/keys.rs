//! The working forms of a key that signing and verification start from (Alg. 7 lines 1-5 and
//! Alg. 8's key-only steps done): built per call by `sign` / `verify`, or once per key by
//! `expanded`.

use super::packing::{pk_decode, sk_decode_into};
use super::params::ParamSet;
use super::polyvec::{Matrix, PolyVec};
use super::sampling::expand_a;
use crate::simd::keccak::Shake256;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// What signing needs from a secret key, in its working form (Alg. 7 lines 1-5 done).
#[derive(Zeroize, ZeroizeOnDrop)]
pub(super) struct SignKey<const K: usize, const L: usize> {
    /// Public (derived from rho), so not zeroized.
    #[zeroize(skip)]
    pub a_hat: Box<Matrix<K, L>>,
    pub s1_hat: PolyVec<L>,
    pub s2_hat: PolyVec<K>,
    pub t0_hat: PolyVec<K>,
    pub key: [u8; 32],
    pub tr: [u8; 64],
}

impl<const K: usize, const L: usize> SignKey<K, L> {
    /// A-hat from `sk`'s rho and K, the secrets still zero: [`Self::decode_into`] fills them
    /// in place. Split from decoding so that no 10-30 KiB key travels back through an
    /// `Option` (the move copied it twice per signature). `sk` has the exact length of `p`.
    pub fn for_sk(sk: &[u8]) -> Self {
        let rho: [u8; 32] = sk[..32].try_into().expect("32 bytes");
        SignKey {
            a_hat: expand_a::<K, L>(&rho),
            s1_hat: PolyVec::default(),
            s2_hat: PolyVec::default(),
            t0_hat: PolyVec::default(),
            key: sk[32..64].try_into().expect("32 bytes"),
            tr: [0; 64],
        }
    }

    /// skDecode (Alg. 25) straight into the working form, then Alg. 7 lines 1-5. False when an
    /// s1/s2 coefficient is out of range (the caller drops the key, which zeroizes it). `self`
    /// came from [`Self::for_sk`] with the same `sk`.
    pub fn decode_into(&mut self, p: ParamSet, sk: &[u8]) -> bool {
        // Only the verdict branches.
        if !sk_decode_into(
            p,
            sk,
            &mut self.tr,
            &mut self.s1_hat,
            &mut self.s2_hat,
            &mut self.t0_hat,
        ) {
            return false;
        }
        self.s1_hat.ntt();
        self.s2_hat.ntt();
        self.t0_hat.ntt();
        true
    }
}

/// What verification needs from a public key (Alg. 8 lines 1, 5-6 and 9's NTT(t1 * 2^d)).
pub(super) struct VerifyKey<const K: usize, const L: usize> {
    pub a_hat: Box<Matrix<K, L>>,
    /// NTT(t1 * 2^d).
    pub t1_hat: PolyVec<K>,
    /// tr = H(pk, 64).
    pub tr: [u8; 64],
}

impl<const K: usize, const L: usize> VerifyKey<K, L> {
    /// `pk` has the exact length (every such bit string is a valid public key).
    pub fn from_bytes(pk: &[u8]) -> Self {
        let (rho, mut t1_hat) = pk_decode::<K>(pk);
        for t in t1_hat.0.iter_mut() {
            t.shiftl();
            t.ntt();
        }
        let mut tr = [0u8; 64];
        let mut h = Shake256::default();
        h.update(pk);
        h.finalize_xof().read(&mut tr);
        VerifyKey {
            a_hat: expand_a::<K, L>(&rho),
            t1_hat,
            tr,
        }
    }
}
