//! ML-DSA.KeyGen_internal (FIPS 204 Alg. 6); round 3 differs in the seed expansion and tr.

use super::packing::{pk_encode_t1, sk_encode_s, sk_encode_t0};
use super::params::ParamSet;
use super::poly::Poly;
use super::polyvec::{row_product, PolyVec};
use super::rounding::power2round_poly;
use super::sampling::{expand_a_rows, expand_s};
use crate::simd::keccak::Shake256;
use zeroize::Zeroizing;

/// Alg. 6. `pk` and `sk` have the exact lengths of `p` (checked by the caller).
pub fn keygen_internal<const K: usize, const L: usize>(
    p: ParamSet,
    xi: &[u8; 32],
    pk: &mut [u8],
    sk: &mut [u8],
) {
    // (rho, rho', K) = H(xi || IntegerToBytes(k, 1) || IntegerToBytes(l, 1), 128);
    // round 3: H(xi, 128).
    let seeds = p.variant().expand_seed(xi, K, L);
    let rho: [u8; 32] = seeds[..32].try_into().expect("32 bytes");
    let rho_prime = Zeroizing::new(<[u8; 64]>::try_from(&seeds[32..96]).expect("64 bytes"));
    sk[..32].copy_from_slice(&rho);
    sk[32..64].copy_from_slice(&seeds[96..128]);

    // s1 and s2 are packed into sk as soon as they are sampled; s1 then becomes NTT(s1) in place.
    let mut s1 = Zeroizing::new(PolyVec::<L>::default());
    let mut s2 = Zeroizing::new(PolyVec::<K>::default());
    expand_s(p, &rho_prime, &mut s1, &mut s2);
    sk_encode_s(p, &s1, &s2, sk);
    s1.ntt();

    // t = NTT^-1(A-hat * NTT(s1)) + s2 and (t1, t0) = Power2Round(t), one row at a time as
    // A-hat's rows come (the matrix is never stored, as in pq-crystals' AVX2 KeyGen): t_r is
    // made in one polynomial, where Power2Round leaves t0[r], and t1[r] and t0[r] are packed
    // into pk and sk at once (no t, t0 or t1 vector to fill and wipe).
    pk[..32].copy_from_slice(&rho);
    let mut t = Zeroizing::new(Poly::default());
    let mut t1 = Poly::default();
    expand_a_rows::<K, L>(&rho, |r, a_row| {
        row_product(&mut t.0, &a_row.0, &s1.0);
        t.reduce();
        t.invntt_tomont();
        t.add_assign(&s2.0[r]);
        t.caddq();
        power2round_poly(&mut t.0, &mut t1.0);
        pk_encode_t1(r, &t1, pk);
        sk_encode_t0::<K, L>(p, r, &t, sk);
    });

    // tr = H(pk, 64) (round 3: 32 bytes), into sk after rho and K.
    let mut h = Shake256::default();
    h.update(pk);
    h.finalize_xof().read(&mut sk[64..64 + p.tr_len()]);
}
