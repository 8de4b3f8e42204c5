//! Four SHA-512 compressions at once, one per 64-bit lane of AVX2 registers: SLH-DSA's H on
//! four independent inputs for the sets with n > 16 (FORS and XMSS tree levels). Data-
//! independent: no branch or index depends on a state or message word.

use super::sha2_consts::K512;
use super::Avx2;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Four lanes.
pub(crate) const LANES: usize = 4;

/// Compresses `blocks[j]` into `states[j]` for the four lanes (SHA-512's compression function,
/// FIPS 180-4 section 6.4.2, big-endian message words).
pub(crate) fn compress_x4(_: Avx2, states: &mut [[u64; 8]; LANES], blocks: &[[u8; 128]; LANES]) {
    // SAFETY: an `Avx2` token exists only after AVX2 was detected (`simd::Level::avx2`).
    unsafe { compress_x4_avx2(states, blocks) }
}

/// Transposes a 4x4 matrix of 64-bit words held as four rows: row i becomes column i.
#[target_feature(enable = "avx2")]
unsafe fn transpose(r: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
    let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
    let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
    let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
    [
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    ]
}

/// Byte swap within each 64-bit word (the message words are big-endian).
static BSWAP64: [u8; 32] = [
    7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12,
    11, 10, 9, 8,
];

macro_rules! rotr {
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_srli_epi64::<$n>(x),
            _mm256_slli_epi64::<{ 64 - $n }>(x),
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
        _mm256_add_epi64($a, $b)
    };
    ($a:expr, $b:expr, $($rest:expr),+) => {
        _mm256_add_epi64($a, add!($b, $($rest),+))
    };
}

#[target_feature(enable = "avx2")]
unsafe fn compress_x4_avx2(states: &mut [[u64; 8]; LANES], blocks: &[[u8; 128]; LANES]) {
    let bswap = _mm256_loadu_si256(BSWAP64.as_ptr() as *const __m256i);
    // Word i of the four blocks in w[i] (four transposes of four 32-byte rows).
    let mut w = [_mm256_setzero_si256(); 16];
    for q in 0..4 {
        let rows: [__m256i; 4] = core::array::from_fn(|j| {
            _mm256_loadu_si256(blocks[j][32 * q..].as_ptr() as *const __m256i)
        });
        for (i, c) in transpose(rows).into_iter().enumerate() {
            w[4 * q + i] = _mm256_shuffle_epi8(c, bswap);
        }
    }
    let mut init = [_mm256_setzero_si256(); 8];
    for half in 0..2 {
        let rows: [__m256i; 4] = core::array::from_fn(|j| {
            _mm256_loadu_si256(states[j][4 * half..].as_ptr() as *const __m256i)
        });
        init[4 * half..4 * half + 4].copy_from_slice(&transpose(rows));
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = init;
    for (t, &k) in K512.iter().enumerate() {
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
            let s1 = xor3!(rotr!(w2, 19), rotr!(w2, 61), _mm256_srli_epi64::<6>(w2));
            let s0 = xor3!(rotr!(w15, 1), rotr!(w15, 8), _mm256_srli_epi64::<7>(w15));
            let x = add!(s1, w7, s0, w16);
            w[t % 16] = x;
            x
        };
        let big_s1 = xor3!(rotr!(e, 14), rotr!(e, 18), rotr!(e, 41));
        // Ch(e, f, g) = g ^ (e & (f ^ g)).
        let ch = _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g)));
        let t1 = add!(h, big_s1, ch, _mm256_set1_epi64x(k as i64), wt);
        let big_s0 = xor3!(rotr!(a, 28), rotr!(a, 34), rotr!(a, 39));
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
    for half in 0..2 {
        let rows: [__m256i; 4] =
            core::array::from_fn(|i| add!(init[4 * half + i], sum[4 * half + i]));
        for (j, r) in transpose(rows).into_iter().enumerate() {
            _mm256_storeu_si256(states[j][4 * half..].as_mut_ptr() as *mut __m256i, r);
        }
    }
    // The stack copies may hold words of secret-derived blocks.
    w.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::Level;
    use sha2::digest::generic_array::GenericArray;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed ^ (*seed >> 29)
    }

    /// Each lane equals the sha2 crate's compress512 of the same state and block, on random
    /// states and blocks, chained (each output the next input).
    #[test]
    fn matches_sha2_crate_compress512() {
        let Some(t) = crate::simd::available()
            .into_iter()
            .find_map(|l| (l == Level::Avx2).then(|| l.avx2()).flatten())
        else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 7u64;
        let mut states: [[u64; 8]; LANES] =
            core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed)));
        for _ in 0..200 {
            let blocks: [[u8; 128]; LANES] =
                core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed) as u8));
            let mut want = states;
            for (s, b) in want.iter_mut().zip(&blocks) {
                sha2::compress512(s, &[*GenericArray::from_slice(b)]);
            }
            compress_x4(t, &mut states, &blocks);
            assert_eq!(states, want);
        }
    }
}
