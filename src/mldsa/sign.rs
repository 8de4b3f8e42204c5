//! ML-DSA.Sign_internal (FIPS 204 Alg. 7), reached from every signing interface through mu.

use super::keys::SignKey;
use super::message::Message;
use super::packing::{sig_encode, w1_encode};
use super::params::ParamSet;
use super::polyvec::{matrix_mul, PolyVec};
use super::rounding::{decompose_poly, make_hint_poly};
use super::sampling::{expand_mask, sample_in_ball, MaskScratch};
use crate::simd::keccak::Shake256;
use crate::simd::wipe::Wiped;
use crate::Error;
use zeroize::Zeroizing;

/// Decodes `sk` (BadKey if s1/s2 are out of range), forms mu and signs. Lengths and the message
/// shape have been checked by the caller.
pub fn sign<const K: usize, const L: usize>(
    p: ParamSet,
    sk: &[u8],
    msg: &Message<'_>,
    rnd: &[u8; 32],
    sig: &mut [u8],
) -> Result<(), Error> {
    let mut key = SignKey::<K, L>::for_sk(sk);
    if !key.decode_into(p, sk) {
        return Err(Error::BadKey);
    }
    // mu = H(BytesToBits(tr) || M', 64) (Alg. 7 line 6), or the caller's external mu.
    let mu = msg.mu(&key.tr[..p.tr_len()]);
    sign_mu(p, &key, &mu, rnd, sig)
}

/// Most signing attempts for a set with `l` columns: FIPS 204 Appendix C (Table 3)'s minimum
/// loop limits, 814 / 585 / 421 for l = 4 / 5 / 7. An honest key reaches them with probability
/// about 2^-256; an adversarial key (a t0 that makes nearly every attempt fail) would otherwise
/// loop for ever once kappa's 16 bits wrap (after 65536 / l attempts the masks repeat). The
/// GPU's `MAX_ATTEMPTS` (kernels/mldsa.cu) is the same table, so both backends agree.
pub const fn max_attempts(l: usize) -> u32 {
    match l {
        4 => 814,
        5 => 585,
        _ => 421,
    }
}

/// Alg. 7 from line 7 on, given mu and the expanded key (lines 2-5, see `expanded`). `BadKey`,
/// with `sig` untouched, when no attempt within [`max_attempts`] is accepted.
pub(super) fn sign_mu<const K: usize, const L: usize>(
    p: ParamSet,
    key: &SignKey<K, L>,
    mu: &[u8; 64],
    rnd: &[u8; 32],
    sig: &mut [u8],
) -> Result<(), Error> {
    let gamma1 = p.gamma1();
    let gamma2 = p.gamma2();
    let beta = p.beta();

    // Lines 2-5: the NTTs of the secrets and A-hat, done once per key.
    let (s1_hat, s2_hat, t0_hat, a_hat) = (&key.s1_hat, &key.s2_hat, &key.t0_hat, &key.a_hat);

    // Line 7: rho'' = H(K || rnd || mu, 64) (round 3: see `Variant::rho_prime`).
    let rho_pp = p.variant().rho_prime(&key.key, rnd, mu);

    let mut y = Zeroizing::new(PolyVec::<L>::default());
    let mut mask_scratch = MaskScratch::default();
    let mut z = Zeroizing::new(PolyVec::<L>::default());
    let mut w0 = Zeroizing::new(PolyVec::<K>::default());
    let mut tmp = Zeroizing::new(PolyVec::<K>::default());
    // w1, c~ and h of rejected attempts are secret intermediate values too (FIPS 204 3.6.3);
    // h is made in tmp's storage (free by then), one vector less to zero-fill and wipe.
    let mut w1 = Zeroizing::new(PolyVec::<K>::default());
    let mut w1_buf = Wiped::<{ 8 * 32 * 6 }>::default();
    let w1_bytes = &mut w1_buf[..K * 32 * p.w1_bits()];
    let mut c_tilde_buf = Wiped::<64>::default();
    let c_tilde = &mut c_tilde_buf[..p.c_tilde_len()];

    // Line 10: the rejection loop; kappa advances by l per attempt (line 32) and stays far
    // below 2^16 within the bound.
    const { assert!((max_attempts(L) as usize) * L < 1 << 16) };
    let mut kappa: u16 = 0;
    for _ in 0..max_attempts(L) {
        // Lines 11-13: y = ExpandMask(rho'', kappa); w = NTT^-1(A-hat * NTT(y)).
        expand_mask(p, &rho_pp, kappa, &mut y, &mut mask_scratch);
        kappa += L as u16;
        *z = *y;
        z.ntt();
        matrix_mul(a_hat, &z, &mut tmp);
        tmp.reduce();
        tmp.invntt_tomont();
        tmp.caddq();

        // Line 14: w1 = HighBits(w); the low bits are kept for line 21.
        for ((w, hi), lo) in tmp.0.iter().zip(w1.0.iter_mut()).zip(w0.0.iter_mut()) {
            decompose_poly(&w.0, gamma2, &mut hi.0, &mut lo.0);
        }

        // Lines 15-16: c~ = H(mu || w1Encode(w1), lambda/4); c = SampleInBall(c~).
        w1_encode(p, &w1, w1_bytes);
        let mut hc = Shake256::default();
        hc.update(mu);
        hc.update(w1_bytes);
        hc.finalize_xof().read(c_tilde);
        let mut c_hat = Zeroizing::new(sample_in_ball(p, c_tilde));
        c_hat.ntt();

        // Lines 18-20 and line 23's first bound: z = y + <<c s1>>, one polynomial at a time,
        // rejecting at the first one with ||z_r||inf >= gamma1 - beta, before <<c s2>> is
        // computed (as the pq-crystals reference does). The time saved tells which z_r failed,
        // which says nothing about the key: each coefficient of y is uniform on
        // (-gamma1, gamma1] and |<<c s1>>_i| <= beta, so exactly 2 beta + 1 of the 2 gamma1
        // values of y_i give |y_i + <<c s1>>_i| >= gamma1 - beta, whatever <<c s1>>_i is.
        let mut z_bad = false;
        for ((zr, yr), sr) in z.0.iter_mut().zip(y.0.iter()).zip(s1_hat.0.iter()) {
            zr.pointwise_montgomery(&c_hat, sr);
            zr.invntt_tomont();
            zr.add_assign(yr);
            zr.reduce();
            if zr.exceeds(gamma1 - beta) {
                z_bad = true;
                break;
            }
        }
        if z_bad {
            continue;
        }

        // Line 21: r0 = LowBits(w - <<c s2>>), computed as w0 - <<c s2>>; once ||r0||inf <
        // gamma2 - beta holds, HighBits(w - <<c s2>>) = w1, so w1 serves in MakeHint below.
        tmp.pointwise_poly_montgomery(&c_hat, s2_hat);
        tmp.invntt_tomont();
        w0.sub_assign(&tmp);
        w0.reduce();

        // Line 23, its second bound: reject when ||r0||inf >= gamma2 - beta.
        if w0.exceeds(gamma2 - beta) {
            continue;
        }

        // Lines 25-28: <<c t0>>, its bound, and the hint h = MakeHint(-ct0, w - cs2 + ct0).
        tmp.pointwise_poly_montgomery(&c_hat, t0_hat);
        tmp.invntt_tomont();
        tmp.reduce();
        if tmp.exceeds(gamma2) {
            continue;
        }
        w0.add_assign(&tmp);
        let hint = &mut tmp;
        let mut ones = 0;
        for ((h, a0), a1) in hint.0.iter_mut().zip(w0.0.iter()).zip(w1.0.iter()) {
            ones += make_hint_poly(&a0.0, &a1.0, gamma2, &mut h.0);
        }
        if ones > p.omega() {
            continue;
        }

        // Line 33: sigma = sigEncode(c~, z mod+- q, h).
        sig_encode(p, c_tilde, &z, hint, sig);
        return Ok(());
    }
    Err(Error::BadKey)
}
