//! The CTRU-Prime public-key encryption scheme (spec sections 5.2-5.4).

use super::reduce::Zq;
use super::{cbd, e8, encode, inverse, pack, poly, ParamSet};
use zeroize::Zeroizing;

/// PKE.KeyGen from 2 * COIN_HALF bytes of coins: f = 2f' + 1 and g from CBD_eta, h = g / f.
/// Writes EncodePK(h) and PackF(f).
pub(crate) fn keygen(p: ParamSet, coins: &[u8], pk: &mut [u8], sk_pke: &mut [u8]) {
    let (n, half) = (p.n(), p.coin_half_bytes());
    let zq = Zq::new(p.q());
    let mut f = cbd::sample(&coins[..half], n, p.eta());
    let g = cbd::sample(&coins[half..2 * half], n, p.eta());
    for fi in f.iter_mut() {
        *fi *= 2;
    }
    f[0] += 1;
    let f_inv = inverse::invert(&f, &zq);
    let h = poly::mul_mod_q(&g, &f_inv, &zq);
    encode::encode_pk(&h, p.q(), pk);
    pack::pack_f(p, &f, sk_pke);
}

/// PKE.Enc of the MSGBYTES-byte message m with COIN_HALF bytes of coins under h (decoded pk).
pub(crate) fn encrypt(p: ParamSet, h: &[i32], m: &[u8], coins: &[u8], ct: &mut [u8]) {
    let (n, d2) = (p.n(), p.q2_bits());
    let q = p.q();
    let zq = Zq::new(q);
    let r = cbd::sample(coins, n, p.eta());
    let sigma = poly::mul_mod_q(h, &r, &zq);

    // Message bits: block k carries the nibble k of m (low nibble first) as an E8 codeword.
    let mut bits = Zeroizing::new(vec![0i32; n]);
    for k in 0..p.e8_blocks() {
        let word = e8::encode((m[k / 2] >> (4 * (k % 2))) & 0xF);
        for j in 0..8 {
            bits[8 * k + j] = ((word >> j) & 1) as i32;
        }
    }

    // c_i = round(q2 * sigma_i / q) + bit_i * q2/2 mod q2 (the tail carries no message bits).
    let half_q2 = (p.q2() / 2) as i32;
    let mask = p.q2() as i32 - 1;
    let mut c = Zeroizing::new(vec![0i32; n]);
    for i in 0..n {
        let rounded = zq.div_floor(((sigma[i] as u32) << d2) + (q as u32 / 2)) as i32;
        c[i] = (rounded + bits[i] * half_q2) & mask;
    }
    pack::pack_ct(&c, d2, ct);
}

/// PKE.Dec: v = c * f mod q2, then E8-decode each block.
pub(crate) fn decrypt(p: ParamSet, f: &[i32], ct: &[u8], m: &mut [u8]) {
    let (n, d2) = (p.n(), p.q2_bits());
    let c = pack::unpack_ct(ct, n, d2);
    let v = poly::mul_mod_pow2(&c, f, d2);
    m.fill(0);
    for k in 0..p.e8_blocks() {
        let nibble = e8::decode(&v[8 * k..8 * k + 8], p.q2() as i32);
        m[k / 2] |= nibble << (4 * (k % 2));
    }
}
