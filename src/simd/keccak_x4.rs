//! Four Keccak-f[1600] states in the 64-bit lanes of AVX2 registers, for four SHAKE128/256
//! streams at once (ExpandA, ExpandS, ExpandMask). Data-independent: no branch or index depends
//! on the state, so absorbing secrets (rho', rho'') is constant time.

use super::keccak::RC;
use super::Level;
use core::arch::x86_64::*;
use zeroize::{Zeroize, ZeroizeOnDrop};

pub(crate) const SHAKE128_RATE: usize = 168;
pub(crate) const SHAKE256_RATE: usize = 136;

/// Four SHAKE states, interleaved: word i of stream j is `s[4 * i + j]` (one __m256i per word).
/// Zeroized on drop, since ExpandS and ExpandMask absorb secret seeds.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
#[repr(C, align(32))]
pub(crate) struct ShakeX4 {
    s: [u64; 100],
    rate: usize,
    /// AVX-512F/VL were detected: permute with `f1600_x4_vl` (same states, fewer instructions).
    vl: bool,
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
        let mut st = ShakeX4 {
            s: [0; 100],
            rate,
            vl: super::avx512vl(),
        };
        for (j, input) in inputs.iter().enumerate() {
            let mut words = input.chunks_exact(8);
            for (w, chunk) in words.by_ref().enumerate() {
                st.s[4 * w + j] ^= u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            }
            // The tail, a byte at a time (no variable-length copy: that is a call to memcpy).
            for (b, &x) in words.remainder().iter().enumerate() {
                st.s[4 * (len / 8) + j] ^= (x as u64) << (8 * b);
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
            // returns only after std::is_x86_feature_detected!("avx2"); `vl` is set only after
            // avx512f and avx512vl were detected too (`simd::avx512vl`).
            unsafe {
                if self.vl {
                    f1600_x4_vl(&mut self.s)
                } else {
                    f1600_x4(&mut self.s)
                }
            };
            let [o0, o1, o2, o3] = &mut out;
            let block = |o: &mut [u8]| -> *mut u8 { o[blk * rate..(blk + 1) * rate].as_mut_ptr() };
            // SAFETY: as above (AVX2 is available); each pointer is the start of `rate` writable
            // bytes of out[j] (the slices above).
            unsafe {
                store_block(
                    &self.s,
                    [block(o0), block(o1), block(o2), block(o3)],
                    rate / 8,
                )
            };
        }
    }
}

/// The first `words` words of the four streams into `dst[j]` (`words` * 8 writable bytes each):
/// four words at a time through a 4x4 transpose of 64-bit lanes (one 32-byte store per stream
/// instead of four 8-byte ones), then the last word (both rates are 1 mod 4 words: 21 and 17).
#[target_feature(enable = "avx2")]
unsafe fn store_block(s: &[u64; 100], dst: [*mut u8; 4], words: usize) {
    assert!(words % 4 == 1 && words <= 25);
    let p = s.as_ptr() as *const __m256i;
    for w in (0..words - 1).step_by(4) {
        // Row i holds word w + i of streams 0..4.
        let [r0, r1, r2, r3] = [0, 1, 2, 3].map(|i| _mm256_loadu_si256(p.add(w + i)));
        // (w s0, w+1 s0, w s2, w+1 s2), (w s1, w+1 s1, w s3, w+1 s3), the same for w+2, w+3.
        let t0 = _mm256_unpacklo_epi64(r0, r1);
        let t1 = _mm256_unpackhi_epi64(r0, r1);
        let t2 = _mm256_unpacklo_epi64(r2, r3);
        let t3 = _mm256_unpackhi_epi64(r2, r3);
        let c = [
            _mm256_permute2x128_si256::<0x20>(t0, t2),
            _mm256_permute2x128_si256::<0x20>(t1, t3),
            _mm256_permute2x128_si256::<0x31>(t0, t2),
            _mm256_permute2x128_si256::<0x31>(t1, t3),
        ];
        for (d, v) in dst.iter().zip(c) {
            _mm256_storeu_si256(d.add(8 * w) as *mut __m256i, v);
        }
    }
    let r = _mm256_loadu_si256(p.add(words - 1));
    let (lo, hi) = (_mm256_castsi256_si128(r), _mm256_extracti128_si256::<1>(r));
    let at = 8 * (words - 1);
    _mm_storel_epi64(dst[0].add(at) as *mut __m128i, lo);
    _mm_storel_epi64(dst[1].add(at) as *mut __m128i, _mm_unpackhi_epi64(lo, lo));
    _mm_storel_epi64(dst[2].add(at) as *mut __m128i, hi);
    _mm_storel_epi64(dst[3].add(at) as *mut __m128i, _mm_unpackhi_epi64(hi, hi));
}

/// Byte shuffles that rotate each 64-bit lane left by 8 and by 56 bits.
static ROL8: [u8; 32] = [
    7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11,
    12, 13, 14,
];
static ROL56: [u8; 32] = [
    1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12,
    13, 14, 15, 8,
];

macro_rules! rol {
    ($x:expr, 0) => {
        $x
    };
    // Whole-byte rotations are one byte shuffle.
    ($x:expr, 8) => {
        _mm256_shuffle_epi8($x, _mm256_loadu_si256(ROL8.as_ptr() as *const __m256i))
    };
    ($x:expr, 56) => {
        _mm256_shuffle_epi8($x, _mm256_loadu_si256(ROL56.as_ptr() as *const __m256i))
    };
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_slli_epi64::<$n>(x),
            _mm256_srli_epi64::<{ 64 - $n }>(x),
        )
    }};
}

macro_rules! xor5 {
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
        _mm256_xor_si256(
            _mm256_xor_si256(_mm256_xor_si256($a, $b), _mm256_xor_si256($c, $d)),
            $e,
        )
    };
}

/// One output plane of rho, pi and chi: the five lanes `$i` of `$a` (each XORed with its theta
/// column value from `$d` and rotated by `$r`) give lanes 5y..5y+5 of `$e`. Planes are done one
/// at a time, so that few values are live at once.
macro_rules! plane {
    ($a:ident, $e:ident, $d:ident, $y:literal, [$($i:literal),*], [$($x:literal),*], [$($r:tt),*], $rol:ident, $chi:ident) => {{
        let [b0, b1, b2, b3, b4] = [$($rol!(_mm256_xor_si256($a[$i], $d[$x]), $r)),*];
        $e[5 * $y] = $chi!(b0, b1, b2);
        $e[5 * $y + 1] = $chi!(b1, b2, b3);
        $e[5 * $y + 2] = $chi!(b2, b3, b4);
        $e[5 * $y + 3] = $chi!(b3, b4, b0);
        $e[5 * $y + 4] = $chi!(b4, b0, b1);
    }};
}

/// chi's a ^ (~b & c).
macro_rules! chi {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_xor_si256($a, _mm256_andnot_si256($b, $c))
    };
}

/// One round from state `$a` into `$e` (theta, rho, pi, chi, iota).
/// `$rol`, `$chi` and `$xor5` name the forms of those steps (AVX2 or AVX-512VL).
macro_rules! round {
    ($a:ident, $e:ident, $rc:expr, $rol:ident, $chi:ident, $xor5:ident) => {{
        let c0 = $xor5!($a[0], $a[5], $a[10], $a[15], $a[20]);
        let c1 = $xor5!($a[1], $a[6], $a[11], $a[16], $a[21]);
        let c2 = $xor5!($a[2], $a[7], $a[12], $a[17], $a[22]);
        let c3 = $xor5!($a[3], $a[8], $a[13], $a[18], $a[23]);
        let c4 = $xor5!($a[4], $a[9], $a[14], $a[19], $a[24]);
        let d = [
            _mm256_xor_si256(c4, $rol!(c1, 1)),
            _mm256_xor_si256(c0, $rol!(c2, 1)),
            _mm256_xor_si256(c1, $rol!(c3, 1)),
            _mm256_xor_si256(c2, $rol!(c4, 1)),
            _mm256_xor_si256(c3, $rol!(c0, 1)),
        ];
        // b[y + 5 * ((2x + 3y) mod 5)] = rol(a[x + 5y] ^ d[x], r[x + 5y]).
        plane!(
            $a,
            $e,
            d,
            0,
            [0, 6, 12, 18, 24],
            [0, 1, 2, 3, 4],
            [0, 44, 43, 21, 14],
            $rol,
            $chi
        );
        plane!(
            $a,
            $e,
            d,
            1,
            [3, 9, 10, 16, 22],
            [3, 4, 0, 1, 2],
            [28, 20, 3, 45, 61],
            $rol,
            $chi
        );
        plane!(
            $a,
            $e,
            d,
            2,
            [1, 7, 13, 19, 20],
            [1, 2, 3, 4, 0],
            [1, 6, 25, 8, 18],
            $rol,
            $chi
        );
        plane!(
            $a,
            $e,
            d,
            3,
            [4, 5, 11, 17, 23],
            [4, 0, 1, 2, 3],
            [27, 36, 10, 15, 56],
            $rol,
            $chi
        );
        plane!(
            $a,
            $e,
            d,
            4,
            [2, 8, 14, 15, 21],
            [2, 3, 4, 0, 1],
            [62, 55, 39, 41, 2],
            $rol,
            $chi
        );
        $e[0] = _mm256_xor_si256($e[0], _mm256_set1_epi64x($rc as i64));
    }};
}

/// Keccak-f[1600] on four interleaved states: rounds alternate between two register arrays.
#[target_feature(enable = "avx2")]
unsafe fn f1600_x4(s: &mut [u64; 100]) {
    let p = s.as_mut_ptr() as *mut __m256i;
    let mut a = [_mm256_setzero_si256(); 25];
    let mut e = [_mm256_setzero_si256(); 25];
    for (i, r) in a.iter_mut().enumerate() {
        *r = _mm256_loadu_si256(p.add(i));
    }
    for rc in RC.chunks_exact(2) {
        round!(a, e, rc[0], rol, chi, xor5);
        round!(e, a, rc[1], rol, chi, xor5);
    }
    for (i, r) in a.iter().enumerate() {
        _mm256_storeu_si256(p.add(i), *r);
    }
    // The registers held the state; clear the stack copies (they may hold secret-derived words).
    a.zeroize();
    e.zeroize();
}

/// AVX-512VL forms of the three steps on 256-bit registers, as `asm!` (the crate's MSRV predates
/// the AVX-512 intrinsics): a rotation is one `vprolq` (AVX2 needs two shifts and an OR), chi's
/// a ^ (~b & c) and a three-way XOR are one `vpternlogq` each. Data-independent like the rest.
macro_rules! rol_vl {
    ($x:expr, 0) => {
        $x
    };
    ($x:expr, $n:literal) => {{
        let x: __m256i = $x;
        let y: __m256i;
        // SAFETY: a register-only instruction of AVX-512VL, which the caller of f1600_x4_vl
        // detected.
        unsafe {
            core::arch::asm!(
                concat!("vprolq {y}, {x}, ", stringify!($n)),
                x = in(ymm_reg) x,
                y = lateout(ymm_reg) y,
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        y
    }};
}

/// `vpternlogq` with truth table `$imm` (bit 4a + 2b + c holds f(a, b, c)), result in a's register.
macro_rules! ternlog {
    ($a:expr, $b:expr, $c:expr, $imm:literal) => {{
        let mut a: __m256i = $a;
        let (b, c): (__m256i, __m256i) = ($b, $c);
        // SAFETY: a register-only instruction of AVX-512VL, which the caller of f1600_x4_vl
        // detected.
        unsafe {
            core::arch::asm!(
                concat!("vpternlogq {a}, {b}, {c}, ", stringify!($imm)),
                a = inout(ymm_reg) a,
                b = in(ymm_reg) b,
                c = in(ymm_reg) c,
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        a
    }};
}

/// a ^ (~b & c): table 0xd2.
macro_rules! chi_vl {
    ($a:expr, $b:expr, $c:expr) => {
        ternlog!($a, $b, $c, 0xd2)
    };
}

/// a ^ b ^ c ^ d ^ e as two three-way XORs (table 0x96).
macro_rules! xor5_vl {
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {{
        let t = ternlog!($a, $b, $c, 0x96);
        ternlog!(t, $d, $e, 0x96)
    }};
}

/// `f1600_x4` with the AVX-512VL steps: the same rounds on the same registers, about half the
/// vector instructions per round.
///
/// # Safety
/// AVX2, AVX-512F and AVX-512VL must be available.
#[target_feature(enable = "avx2")]
unsafe fn f1600_x4_vl(s: &mut [u64; 100]) {
    let p = s.as_mut_ptr() as *mut __m256i;
    let mut a = [_mm256_setzero_si256(); 25];
    let mut e = [_mm256_setzero_si256(); 25];
    for (i, r) in a.iter_mut().enumerate() {
        *r = _mm256_loadu_si256(p.add(i));
    }
    for rc in RC.chunks_exact(2) {
        round!(a, e, rc[0], rol_vl, chi_vl, xor5_vl);
        round!(e, a, rc[1], rol_vl, chi_vl, xor5_vl);
    }
    for (i, r) in a.iter().enumerate() {
        _mm256_storeu_si256(p.add(i), *r);
    }
    a.zeroize();
    e.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{ExtendableOutput, Update, XofReader};

    /// The two permutations agree on random states, many times over (each output is the next
    /// input, so every lane, rotation and round constant is exercised).
    #[test]
    fn avx512vl_permutation_matches_avx2() {
        if !crate::simd::available().contains(&Level::Avx2) || !crate::simd::avx512vl() {
            println!("SKIPPED: no AVX-512VL on this CPU");
            return;
        }
        let mut seed = 3u64;
        let mut a: [u64; 100] =
            core::array::from_fn(|_| u64::from_le_bytes(core::array::from_fn(|_| lcg(&mut seed))));
        let mut b = a;
        for _ in 0..1000 {
            // SAFETY: AVX2 and AVX-512F/VL were detected above.
            unsafe {
                f1600_x4(&mut a);
                f1600_x4_vl(&mut b);
            }
            assert_eq!(a, b);
        }
    }

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
                for vl in [false, true] {
                    if vl && !crate::simd::avx512vl() {
                        println!("SKIPPED: no AVX-512VL on this CPU");
                        continue;
                    }
                    let mut x =
                        ShakeX4::new(Level::Avx2, rate, [&ins[0], &ins[1], &ins[2], &ins[3]])
                            .expect("avx2");
                    x.vl = vl;
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
                        assert_eq!(outs[j], want, "rate {rate} len {len} lane {j} vl {vl}");
                    }
                }
            }
        }
    }
}
