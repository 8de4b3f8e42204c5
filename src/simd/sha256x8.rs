//! Eight SHA-256 compressions at once, one per 32-bit lane of AVX2 registers: SLH-DSA's F, H and
//! PRF on eight independent inputs (chains of eight WOTS+ keys, eight FORS leaves). Data-
//! independent: no branch or index depends on a state or message word, so compressing blocks
//! that hold SK.seed is constant time.

use super::sha2_consts::K256;
use super::Avx2;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Eight lanes.
pub(crate) const LANES: usize = 8;

/// Compresses `blocks[j]` into `states[j]` for the eight lanes (SHA-256's compression function,
/// FIPS 180-4 section 6.2.2, big-endian message words).
pub(crate) fn compress_x8(_: Avx2, states: &mut [[u32; 8]; LANES], blocks: &[[u8; 64]; LANES]) {
    // SAFETY: an `Avx2` token exists only after AVX2 was detected (`simd::Level::avx2`).
    unsafe { compress_x8_avx2(states, blocks) }
}

/// Transposes an 8x8 matrix of 32-bit words held as eight rows: row i becomes column i.
#[target_feature(enable = "avx2")]
unsafe fn transpose(r: [__m256i; 8]) -> [__m256i; 8] {
    // Pairs of rows interleaved by word, then by pairs of words: u[i] holds columns c and c + 4
    // of four rows in its two halves; the 128-bit permutes join the halves of the two row groups.
    let t = [
        _mm256_unpacklo_epi32(r[0], r[1]),
        _mm256_unpackhi_epi32(r[0], r[1]),
        _mm256_unpacklo_epi32(r[2], r[3]),
        _mm256_unpackhi_epi32(r[2], r[3]),
        _mm256_unpacklo_epi32(r[4], r[5]),
        _mm256_unpackhi_epi32(r[4], r[5]),
        _mm256_unpacklo_epi32(r[6], r[7]),
        _mm256_unpackhi_epi32(r[6], r[7]),
    ];
    let u = [
        _mm256_unpacklo_epi64(t[0], t[2]),
        _mm256_unpackhi_epi64(t[0], t[2]),
        _mm256_unpacklo_epi64(t[1], t[3]),
        _mm256_unpackhi_epi64(t[1], t[3]),
        _mm256_unpacklo_epi64(t[4], t[6]),
        _mm256_unpackhi_epi64(t[4], t[6]),
        _mm256_unpacklo_epi64(t[5], t[7]),
        _mm256_unpackhi_epi64(t[5], t[7]),
    ];
    [
        _mm256_permute2x128_si256::<0x20>(u[0], u[4]),
        _mm256_permute2x128_si256::<0x20>(u[1], u[5]),
        _mm256_permute2x128_si256::<0x20>(u[2], u[6]),
        _mm256_permute2x128_si256::<0x20>(u[3], u[7]),
        _mm256_permute2x128_si256::<0x31>(u[0], u[4]),
        _mm256_permute2x128_si256::<0x31>(u[1], u[5]),
        _mm256_permute2x128_si256::<0x31>(u[2], u[6]),
        _mm256_permute2x128_si256::<0x31>(u[3], u[7]),
    ]
}

/// Byte swap within each 32-bit word (the message words are big-endian).
static BSWAP32: [u8; 32] = [
    3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15,
    14, 13, 12,
];

macro_rules! rotr {
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_srli_epi32::<$n>(x),
            _mm256_slli_epi32::<{ 32 - $n }>(x),
        )
    }};
}

macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_xor_si256(_mm256_xor_si256($a, $b), $c)
    };
}

macro_rules! add {
    ($a:expr, $b:expr) => {
        _mm256_add_epi32($a, $b)
    };
    ($a:expr, $b:expr, $($rest:expr),+) => {
        _mm256_add_epi32($a, add!($b, $($rest),+))
    };
}

#[target_feature(enable = "avx2")]
unsafe fn compress_x8_avx2(states: &mut [[u32; 8]; LANES], blocks: &[[u8; 64]; LANES]) {
    let bswap = _mm256_loadu_si256(BSWAP32.as_ptr() as *const __m256i);
    // Word i of the eight blocks in w[i] (two transposes of eight 32-byte rows).
    let mut w = [_mm256_setzero_si256(); 16];
    for half in 0..2 {
        let rows: [__m256i; 8] = core::array::from_fn(|j| {
            _mm256_loadu_si256(blocks[j][32 * half..].as_ptr() as *const __m256i)
        });
        for (i, c) in transpose(rows).into_iter().enumerate() {
            w[8 * half + i] = _mm256_shuffle_epi8(c, bswap);
        }
    }
    let rows: [__m256i; 8] =
        core::array::from_fn(|j| _mm256_loadu_si256(states[j].as_ptr() as *const __m256i));
    let init = transpose(rows);
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = init;
    for t in 0..64 {
        let wt = if t < 16 {
            w[t]
        } else {
            // W_t = sigma1(W_{t-2}) + W_{t-7} + sigma0(W_{t-15}) + W_{t-16}, in a ring of 16.
            let (w2, w7, w15, w16) = (
                w[(t - 2) % 16],
                w[(t - 7) % 16],
                w[(t - 15) % 16],
                w[t % 16],
            );
            let s1 = xor3!(rotr!(w2, 17), rotr!(w2, 19), _mm256_srli_epi32::<10>(w2));
            let s0 = xor3!(rotr!(w15, 7), rotr!(w15, 18), _mm256_srli_epi32::<3>(w15));
            let x = add!(s1, w7, s0, w16);
            w[t % 16] = x;
            x
        };
        let big_s1 = xor3!(rotr!(e, 6), rotr!(e, 11), rotr!(e, 25));
        // Ch(e, f, g) = g ^ (e & (f ^ g)).
        let ch = _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g)));
        let t1 = add!(h, big_s1, ch, _mm256_set1_epi32(K256[t] as i32), wt);
        let big_s0 = xor3!(rotr!(a, 2), rotr!(a, 13), rotr!(a, 22));
        // Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)).
        let maj = _mm256_xor_si256(
            b,
            _mm256_and_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(b, c)),
        );
        let t2 = add!(big_s0, maj);
        h = g;
        g = f;
        f = e;
        e = add!(d, t1);
        d = c;
        c = b;
        b = a;
        a = add!(t1, t2);
    }
    let sum = [a, b, c, d, e, f, g, h];
    let rows: [__m256i; 8] = core::array::from_fn(|i| add!(init[i], sum[i]));
    for (j, r) in transpose(rows).into_iter().enumerate() {
        _mm256_storeu_si256(states[j].as_mut_ptr() as *mut __m256i, r);
    }
    // The stack copies may hold words of secret-derived blocks.
    w.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::Level;
    use sha2::digest::generic_array::GenericArray;

    fn lcg(seed: &mut u64) -> u32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 32) as u32
    }

    /// Each lane equals the sha2 crate's compress256 of the same state and block, on random
    /// states and blocks, chained (each output the next input).
    #[test]
    fn matches_sha2_crate_compress256() {
        let Some(t) = crate::simd::available()
            .into_iter()
            .find_map(|l| (l == Level::Avx2).then(|| l.avx2()).flatten())
        else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 5u64;
        let mut states: [[u32; 8]; LANES] =
            core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed)));
        for _ in 0..200 {
            let blocks: [[u8; 64]; LANES] =
                core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed) as u8));
            let mut want = states;
            for (s, b) in want.iter_mut().zip(&blocks) {
                sha2::compress256(s, &[*GenericArray::from_slice(b)]);
            }
            compress_x8(t, &mut states, &blocks);
            assert_eq!(states, want);
        }
    }
}
