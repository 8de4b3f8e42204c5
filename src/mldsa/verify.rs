//! ML-DSA.Verify_internal (FIPS 204 Alg. 8), reached from every verification interface through mu.
//! Everything here is public, so it may branch freely.

use super::keys::VerifyKey;
use super::message::Message;
use super::packing::{sig_decode, w1_encode};
use super::params::ParamSet;
use super::polyvec::{matrix_mul, PolyVec};
use super::rounding::use_hint_poly;
use super::sampling::sample_in_ball;
use crate::simd::keccak::Shake256;

/// True iff `sig` is a valid signature of `msg` under `pk`. Lengths of pk and sig and the message
/// shape have been checked by the caller.
pub fn verify<const K: usize, const L: usize>(
    p: ParamSet,
    pk: &[u8],
    msg: &Message<'_>,
    sig: &[u8],
) -> bool {
    // Lines 1, 5-6 and NTT(t1 * 2^d) of line 9 depend on the key only (see `expanded`).
    verify_expanded(p, &VerifyKey::<K, L>::from_bytes(pk), msg, sig)
}

/// Alg. 8 given the expanded public key.
pub(super) fn verify_expanded<const K: usize, const L: usize>(
    p: ParamSet,
    key: &VerifyKey<K, L>,
    msg: &Message<'_>,
    sig: &[u8],
) -> bool {
    // Line 2: sigDecode (a malformed hint fails here, line 4).
    let Some(mut s) = sig_decode::<K, L>(p, sig) else {
        return false;
    };
    // Line 13: ||z||inf < gamma1 - beta (checked first: it is cheap).
    if s.z.exceeds(p.gamma1() - p.beta()) {
        return false;
    }

    // Line 7: mu = H(tr || M', 64) (external mu needs no tr; round 3's tr is H(pk, 32), the
    // first 32 bytes of H(pk, 64)).
    let mu = msg.mu(&key.tr[..p.tr_len()]);

    // Lines 8-9: c = SampleInBall(c~), w'_Approx = NTT^-1(A-hat * NTT(z) - NTT(c) * NTT(t1 * 2^d)).
    let mut c_hat = sample_in_ball(p, s.c_tilde);
    c_hat.ntt();
    s.z.ntt();
    let mut w = PolyVec::<K>::default();
    matrix_mul(&key.a_hat, &s.z, &mut w);
    let mut ct1 = key.t1_hat;
    ct1.pointwise_poly_montgomery(&c_hat, &key.t1_hat);
    w.sub_assign(&ct1);
    w.reduce();
    w.invntt_tomont();
    w.caddq();

    // Line 10: w1' = UseHint(h, w'_Approx).
    let gamma2 = p.gamma2();
    for (wi, hi) in w.0.iter_mut().zip(s.h.0.iter()) {
        use_hint_poly(&mut wi.0, &hi.0, gamma2);
    }

    // Lines 11-12: c~' = H(mu || w1Encode(w1'), lambda/4); accept iff c~ = c~'.
    let mut w1_bytes = [0u8; 8 * 32 * 6];
    let w1_bytes = &mut w1_bytes[..K * 32 * p.w1_bits()];
    w1_encode(p, &w, w1_bytes);
    let mut c2 = [0u8; 64];
    let c2 = &mut c2[..p.c_tilde_len()];
    let mut h = Shake256::default();
    h.update(&mu);
    h.update(w1_bytes);
    h.finalize_xof().read(c2);
    c2 == s.c_tilde
}
