//! ML-DSA.KeyGen_internal (FIPS 204 Alg. 6); round 3 differs in the seed expansion and tr.

use super::packing::{pk_encode_t1, sk_encode, SecretKey};
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

    let mut key = SecretKey::<K, L> {
        rho,
        key: seeds[96..128].try_into().expect("32 bytes"),
        tr: [0; 64],
        s1: PolyVec::default(),
        s2: PolyVec::default(),
        t0: PolyVec::default(),
    };
    expand_s(p, &rho_prime, &mut key.s1, &mut key.s2);

    // t = NTT^-1(A-hat * NTT(s1)) + s2 and (t1, t0) = Power2Round(t), one row at a time as
    // A-hat's rows come (the matrix is never stored, as in pq-crystals' AVX2 KeyGen): t_r is
    // made in t0[r]'s storage, where Power2Round leaves t0[r] (no separate t to zero-fill and
    // wipe), and t1[r] is packed into pk at once.
    let mut s1_hat = Zeroizing::new(key.s1);
    s1_hat.ntt();
    pk[..32].copy_from_slice(&rho);
    let mut t1 = Poly::default();
    let (t0, s2) = (&mut key.t0, &key.s2);
    expand_a_rows::<K, L>(&rho, |r, a_row| {
        let t = &mut t0.0[r];
        row_product(&mut t.0, &a_row.0, &s1_hat.0);
        t.reduce();
        t.invntt_tomont();
        t.add_assign(&s2.0[r]);
        t.caddq();
        power2round_poly(&mut t.0, &mut t1.0);
        pk_encode_t1(r, &t1, pk);
    });

    // tr = H(pk, 64) (round 3: 32 bytes)
    let mut h = Shake256::default();
    h.update(pk);
    h.finalize_xof().read(&mut key.tr[..p.tr_len()]);
    sk_encode(p, &key, sk);
}
