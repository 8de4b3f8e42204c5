//! SHA-256 compressions with the SHA extensions (SHA-NI), several independent blocks at once:
//! one stream is bound by the latency of `sha256rnds2`, so the rounds of N streams are
//! interleaved to keep the unit busy. SLH-DSA's F, H and PRF on independent inputs. Data-
//! independent: no branch or index depends on a state or message word.

use super::sha2_consts::K256;
use core::arch::x86_64::*;
use std::sync::OnceLock;

/// Proof that the SHA extensions (with SSSE3 and SSE4.1) were detected and the vector paths
/// are on: only [`ShaNi::detect`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct ShaNi(());

impl ShaNi {
    /// The token where the CPU has the SHA extensions and the vector paths are enabled.
    pub(crate) fn detect() -> Option<ShaNi> {
        static HAS: OnceLock<bool> = OnceLock::new();
        let has = *HAS.get_or_init(|| {
            std::is_x86_feature_detected!("sha")
                && std::is_x86_feature_detected!("ssse3")
                && std::is_x86_feature_detected!("sse4.1")
        });
        (has && super::level() != super::Level::Portable).then_some(ShaNi(()))
    }
}

/// Compresses `blocks[j]` into `states[j]` for N independent lanes (SHA-256's compression
/// function, FIPS 180-4 section 6.2.2).
pub(crate) fn compress<const N: usize>(
    _: ShaNi,
    states: &mut [[u32; 8]; N],
    blocks: &[[u8; 64]; N],
) {
    // SAFETY: a `ShaNi` token exists only after sha, ssse3 and sse4.1 were detected.
    unsafe { compress_ni(states, blocks) }
}

#[target_feature(enable = "sha,ssse3,sse4.1")]
unsafe fn compress_ni<const N: usize>(states: &mut [[u32; 8]; N], blocks: &[[u8; 64]; N]) {
    // The extensions keep the state as (A, B, E, F) and (C, D, G, H) in two registers.
    let bswap = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
    let mut s0 = [_mm_setzero_si128(); N];
    let mut s1 = [_mm_setzero_si128(); N];
    let mut m = [[_mm_setzero_si128(); 4]; N];
    for j in 0..N {
        let dcba = _mm_loadu_si128(states[j].as_ptr() as *const __m128i);
        let hgfe = _mm_loadu_si128(states[j][4..].as_ptr() as *const __m128i);
        let cdab = _mm_shuffle_epi32::<0xb1>(dcba);
        let efgh = _mm_shuffle_epi32::<0x1b>(hgfe);
        s0[j] = _mm_alignr_epi8::<8>(cdab, efgh);
        s1[j] = _mm_blend_epi16::<0xf0>(efgh, cdab);
        for (q, mq) in m[j].iter_mut().enumerate() {
            let p = blocks[j][16 * q..].as_ptr() as *const __m128i;
            *mq = _mm_shuffle_epi8(_mm_loadu_si128(p), bswap);
        }
    }
    let (init0, init1) = (s0, s1);
    // Sixteen groups of four rounds; message words W_16.. come from the previous four groups.
    for q in 0..16 {
        let k = _mm_loadu_si128(K256[4 * q..].as_ptr() as *const __m128i);
        for j in 0..N {
            let mj = &mut m[j];
            if q >= 4 {
                // W_t = sigma1(W_t-2) + W_t-7 + sigma0(W_t-15) + W_t-16, four at a time.
                let w = _mm_sha256msg1_epu32(mj[q % 4], mj[(q + 1) % 4]);
                let w = _mm_add_epi32(w, _mm_alignr_epi8::<4>(mj[(q + 3) % 4], mj[(q + 2) % 4]));
                mj[q % 4] = _mm_sha256msg2_epu32(w, mj[(q + 3) % 4]);
            }
            let wk = _mm_add_epi32(mj[q % 4], k);
            s1[j] = _mm_sha256rnds2_epu32(s1[j], s0[j], wk);
            s0[j] = _mm_sha256rnds2_epu32(s0[j], s1[j], _mm_shuffle_epi32::<0x0e>(wk));
        }
    }
    for j in 0..N {
        let abef = _mm_add_epi32(s0[j], init0[j]);
        let cdgh = _mm_add_epi32(s1[j], init1[j]);
        let feba = _mm_shuffle_epi32::<0x1b>(abef);
        let dchg = _mm_shuffle_epi32::<0xb1>(cdgh);
        let dcba = _mm_blend_epi16::<0xf0>(feba, dchg);
        let hgfe = _mm_alignr_epi8::<8>(dchg, feba);
        _mm_storeu_si128(states[j].as_mut_ptr() as *mut __m128i, dcba);
        _mm_storeu_si128(states[j][4..].as_mut_ptr() as *mut __m128i, hgfe);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::digest::generic_array::GenericArray;

    fn lcg(seed: &mut u64) -> u32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 32) as u32
    }

    fn check<const N: usize>(t: ShaNi) {
        let mut seed = N as u64;
        let mut states: [[u32; 8]; N] =
            core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed)));
        for _ in 0..100 {
            let blocks: [[u8; 64]; N] =
                core::array::from_fn(|_| core::array::from_fn(|_| lcg(&mut seed) as u8));
            let mut want = states;
            for (s, b) in want.iter_mut().zip(&blocks) {
                sha2::compress256(s, &[*GenericArray::from_slice(b)]);
            }
            compress(t, &mut states, &blocks);
            assert_eq!(states, want, "{N} lanes");
        }
    }

    /// Each lane equals the sha2 crate's compress256 of the same state and block, on random
    /// states and blocks, chained (each output the next input).
    #[test]
    fn matches_sha2_crate_compress256() {
        let Some(t) = ShaNi::detect() else {
            println!("SKIPPED: no SHA extensions on this CPU");
            return;
        };
        check::<1>(t);
        check::<2>(t);
        check::<4>(t);
        check::<8>(t);
    }
}
