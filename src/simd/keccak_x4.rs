//! Four Keccak-f[1600] states in the 64-bit lanes of AVX2 registers, for four SHAKE128/256
//! streams at once (ExpandA, ExpandS, ExpandMask). Data-independent: no branch or index depends
//! on the state, so absorbing secrets (rho', rho'') is constant time.

use super::Level;
use core::arch::x86_64::*;
use zeroize::{Zeroize, ZeroizeOnDrop};

pub(crate) const SHAKE128_RATE: usize = 168;
pub(crate) const SHAKE256_RATE: usize = 136;

/// Keccak-f[1600] round constants (iota).
const RC: [u64; 24] = [
    0x0000000000000001,
    0x0000000000008082,
    0x800000000000808a,
    0x8000000080008000,
    0x000000000000808b,
    0x0000000080000001,
    0x8000000080008081,
    0x8000000000008009,
    0x000000000000008a,
    0x0000000000000088,
    0x0000000080008009,
    0x000000008000000a,
    0x000000008000808b,
    0x800000000000008b,
    0x8000000000008089,
    0x8000000000008003,
    0x8000000000008002,
    0x8000000000000080,
    0x000000000000800a,
    0x800000008000000a,
    0x8000000080008081,
    0x8000000000008080,
    0x0000000080000001,
    0x8000000080008008,
];

/// Four SHAKE states, interleaved: word i of stream j is `s[4 * i + j]` (one __m256i per word).
/// Zeroized on drop, since ExpandS and ExpandMask absorb secret seeds.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
#[repr(C, align(32))]
pub(crate) struct ShakeX4 {
    s: [u64; 100],
    rate: usize,
}

impl ShakeX4 {
    /// SHAKE128 (`rate` 168) or SHAKE256 (136) on four inputs of one common length below the rate,
    /// absorbed and padded. `None` unless `level` is AVX2, the only level this code runs on.
    pub(crate) fn new(level: Level, rate: usize, inputs: [&[u8]; 4]) -> Option<Self> {
        if level != Level::Avx2 {
            return None;
        }
        let len = inputs[0].len();
        assert!(len < rate && rate % 8 == 0 && inputs.iter().all(|i| i.len() == len));
        let mut st = ShakeX4 { s: [0; 100], rate };
        for (j, input) in inputs.iter().enumerate() {
            for (w, chunk) in input.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                st.s[4 * w + j] ^= u64::from_le_bytes(b);
                b.zeroize();
            }
            // SHAKE padding: the domain bits 1111 then pad10*1.
            st.s[4 * (len / 8) + j] ^= 0x1f << (8 * (len % 8));
            st.s[4 * ((rate - 1) / 8) + j] ^= 0x80 << (8 * ((rate - 1) % 8));
        }
        Some(st)
    }

    /// Squeezes the next `out[j].len() / rate` blocks of each stream (all four the same length, a
    /// multiple of the rate).
    pub(crate) fn squeeze_blocks(&mut self, mut out: [&mut [u8]; 4]) {
        let rate = self.rate;
        let len = out[0].len();
        assert!(len % rate == 0 && out.iter().all(|o| o.len() == len));
        for blk in 0..len / rate {
            // SAFETY: a ShakeX4 exists only when `new` was given Level::Avx2, which `simd::level`
            // returns only after std::is_x86_feature_detected!("avx2").
            unsafe { f1600_x4(&mut self.s) };
            for (j, o) in out.iter_mut().enumerate() {
                let o = &mut o[blk * rate..(blk + 1) * rate];
                // Both rates are whole words (168 = 21 * 8, 136 = 17 * 8).
                for (i, chunk) in o.chunks_exact_mut(8).enumerate() {
                    chunk.copy_from_slice(&self.s[4 * i + j].to_le_bytes());
                }
            }
        }
    }
}

macro_rules! rol {
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_slli_epi64::<$n>(x),
            _mm256_srli_epi64::<{ 64 - $n }>(x),
        )
    }};
}

#[inline(always)]
unsafe fn xor5(a: __m256i, b: __m256i, c: __m256i, d: __m256i, e: __m256i) -> __m256i {
    _mm256_xor_si256(
        _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d)),
        e,
    )
}

/// Keccak-f[1600] on four interleaved states.
#[target_feature(enable = "avx2")]
unsafe fn f1600_x4(s: &mut [u64; 100]) {
    let p = s.as_mut_ptr() as *mut __m256i;
    let mut a = [_mm256_setzero_si256(); 25];
    for (i, r) in a.iter_mut().enumerate() {
        *r = _mm256_loadu_si256(p.add(i));
    }
    for rc in RC {
        // theta
        let c0 = xor5(a[0], a[5], a[10], a[15], a[20]);
        let c1 = xor5(a[1], a[6], a[11], a[16], a[21]);
        let c2 = xor5(a[2], a[7], a[12], a[17], a[22]);
        let c3 = xor5(a[3], a[8], a[13], a[18], a[23]);
        let c4 = xor5(a[4], a[9], a[14], a[19], a[24]);
        let d0 = _mm256_xor_si256(c4, rol!(c1, 1));
        let d1 = _mm256_xor_si256(c0, rol!(c2, 1));
        let d2 = _mm256_xor_si256(c1, rol!(c3, 1));
        let d3 = _mm256_xor_si256(c2, rol!(c4, 1));
        let d4 = _mm256_xor_si256(c3, rol!(c0, 1));
        // rho and pi: b[y + 5 * ((2x + 3y) mod 5)] = rol(a[x + 5y] ^ d[x], r[x + 5y])
        let b0 = _mm256_xor_si256(a[0], d0);
        let b1 = rol!(_mm256_xor_si256(a[6], d1), 44);
        let b2 = rol!(_mm256_xor_si256(a[12], d2), 43);
        let b3 = rol!(_mm256_xor_si256(a[18], d3), 21);
        let b4 = rol!(_mm256_xor_si256(a[24], d4), 14);
        let b5 = rol!(_mm256_xor_si256(a[3], d3), 28);
        let b6 = rol!(_mm256_xor_si256(a[9], d4), 20);
        let b7 = rol!(_mm256_xor_si256(a[10], d0), 3);
        let b8 = rol!(_mm256_xor_si256(a[16], d1), 45);
        let b9 = rol!(_mm256_xor_si256(a[22], d2), 61);
        let b10 = rol!(_mm256_xor_si256(a[1], d1), 1);
        let b11 = rol!(_mm256_xor_si256(a[7], d2), 6);
        let b12 = rol!(_mm256_xor_si256(a[13], d3), 25);
        let b13 = rol!(_mm256_xor_si256(a[19], d4), 8);
        let b14 = rol!(_mm256_xor_si256(a[20], d0), 18);
        let b15 = rol!(_mm256_xor_si256(a[4], d4), 27);
        let b16 = rol!(_mm256_xor_si256(a[5], d0), 36);
        let b17 = rol!(_mm256_xor_si256(a[11], d1), 10);
        let b18 = rol!(_mm256_xor_si256(a[17], d2), 15);
        let b19 = rol!(_mm256_xor_si256(a[23], d3), 56);
        let b20 = rol!(_mm256_xor_si256(a[2], d2), 62);
        let b21 = rol!(_mm256_xor_si256(a[8], d3), 55);
        let b22 = rol!(_mm256_xor_si256(a[14], d4), 39);
        let b23 = rol!(_mm256_xor_si256(a[15], d0), 41);
        let b24 = rol!(_mm256_xor_si256(a[21], d1), 2);
        // chi
        a[0] = _mm256_xor_si256(b0, _mm256_andnot_si256(b1, b2));
        a[1] = _mm256_xor_si256(b1, _mm256_andnot_si256(b2, b3));
        a[2] = _mm256_xor_si256(b2, _mm256_andnot_si256(b3, b4));
        a[3] = _mm256_xor_si256(b3, _mm256_andnot_si256(b4, b0));
        a[4] = _mm256_xor_si256(b4, _mm256_andnot_si256(b0, b1));
        a[5] = _mm256_xor_si256(b5, _mm256_andnot_si256(b6, b7));
        a[6] = _mm256_xor_si256(b6, _mm256_andnot_si256(b7, b8));
        a[7] = _mm256_xor_si256(b7, _mm256_andnot_si256(b8, b9));
        a[8] = _mm256_xor_si256(b8, _mm256_andnot_si256(b9, b5));
        a[9] = _mm256_xor_si256(b9, _mm256_andnot_si256(b5, b6));
        a[10] = _mm256_xor_si256(b10, _mm256_andnot_si256(b11, b12));
        a[11] = _mm256_xor_si256(b11, _mm256_andnot_si256(b12, b13));
        a[12] = _mm256_xor_si256(b12, _mm256_andnot_si256(b13, b14));
        a[13] = _mm256_xor_si256(b13, _mm256_andnot_si256(b14, b10));
        a[14] = _mm256_xor_si256(b14, _mm256_andnot_si256(b10, b11));
        a[15] = _mm256_xor_si256(b15, _mm256_andnot_si256(b16, b17));
        a[16] = _mm256_xor_si256(b16, _mm256_andnot_si256(b17, b18));
        a[17] = _mm256_xor_si256(b17, _mm256_andnot_si256(b18, b19));
        a[18] = _mm256_xor_si256(b18, _mm256_andnot_si256(b19, b15));
        a[19] = _mm256_xor_si256(b19, _mm256_andnot_si256(b15, b16));
        a[20] = _mm256_xor_si256(b20, _mm256_andnot_si256(b21, b22));
        a[21] = _mm256_xor_si256(b21, _mm256_andnot_si256(b22, b23));
        a[22] = _mm256_xor_si256(b22, _mm256_andnot_si256(b23, b24));
        a[23] = _mm256_xor_si256(b23, _mm256_andnot_si256(b24, b20));
        a[24] = _mm256_xor_si256(b24, _mm256_andnot_si256(b20, b21));
        // iota
        a[0] = _mm256_xor_si256(a[0], _mm256_set1_epi64x(rc as i64));
    }
    for (i, r) in a.iter().enumerate() {
        _mm256_storeu_si256(p.add(i), *r);
    }
    // The registers held the state; clear the stack copy (it may hold secret-derived words).
    a.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{ExtendableOutput, Update, XofReader};

    fn lcg(seed: &mut u64) -> u8 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 56) as u8
    }

    #[test]
    fn matches_sha3_crate_on_random_inputs() {
        if !crate::simd::available().contains(&Level::Avx2) {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        }
        let mut seed = 1u64;
        for (rate, len) in [
            (168, 34),
            (136, 66),
            (168, 0),
            (136, 135),
            (168, 167),
            (136, 7),
        ] {
            for _ in 0..8 {
                let ins: Vec<Vec<u8>> = (0..4)
                    .map(|_| (0..len).map(|_| lcg(&mut seed)).collect())
                    .collect();
                let mut x = ShakeX4::new(Level::Avx2, rate, [&ins[0], &ins[1], &ins[2], &ins[3]])
                    .expect("avx2");
                let mut outs = vec![vec![0u8; 3 * rate]; 4];
                let [o0, o1, o2, o3] = &mut outs[..] else {
                    unreachable!()
                };
                x.squeeze_blocks([
                    &mut o0[..rate],
                    &mut o1[..rate],
                    &mut o2[..rate],
                    &mut o3[..rate],
                ]);
                x.squeeze_blocks([
                    &mut o0[rate..],
                    &mut o1[rate..],
                    &mut o2[rate..],
                    &mut o3[rate..],
                ]);
                for j in 0..4 {
                    let mut want = vec![0u8; 3 * rate];
                    if rate == 168 {
                        let mut h = sha3::Shake128::default();
                        h.update(&ins[j]);
                        h.finalize_xof().read(&mut want);
                    } else {
                        let mut h = sha3::Shake256::default();
                        h.update(&ins[j]);
                        h.finalize_xof().read(&mut want);
                    }
                    assert_eq!(outs[j], want, "rate {rate} len {len} lane {j}");
                }
            }
        }
    }
}
