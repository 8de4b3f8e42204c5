//! BitUnpack of 18- and 20-bit fields (FIPS 204 Alg. 19, the widths of y and z) on eight 32-bit
//! lanes (AVX2): the same fields as `packing::unpack_centered`, mapped by the same c = b - field.
//! Byte shuffles with fixed indices only, so unpacking the secret mask y is constant time.

use super::params::N;
use crate::simd::Avx2;
use core::arch::x86_64::*;

/// Eight fields of `B` bits from the start of `src` (which has 16 + B / 2 readable bytes): the
/// two halves of four fields each start at byte 0 and byte B / 2.
#[inline]
#[target_feature(enable = "avx2")]
fn fields8<const B: usize>(src: &[u8]) -> __m256i {
    assert!(src.len() >= B / 2 + 16);
    // SAFETY: src[0..16] and src[B/2..B/2 + 16] are in bounds (checked above).
    let (lo, hi) = unsafe {
        (
            _mm_loadu_si128(src.as_ptr() as *const __m128i),
            _mm_loadu_si128(src.as_ptr().add(B / 2) as *const __m128i),
        )
    };
    let x = _mm256_set_m128i(hi, lo);
    // Lane k of each half: the three bytes from bit k * B on, then shifted right by (k * B) % 8.
    let (idx, shift) = if B == 18 {
        (
            _mm256_setr_epi8(
                0, 1, 2, -1, 2, 3, 4, -1, 4, 5, 6, -1, 6, 7, 8, -1, 0, 1, 2, -1, 2, 3, 4, -1, 4, 5,
                6, -1, 6, 7, 8, -1,
            ),
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        )
    } else {
        (
            _mm256_setr_epi8(
                0, 1, 2, -1, 2, 3, 4, -1, 5, 6, 7, -1, 7, 8, 9, -1, 0, 1, 2, -1, 2, 3, 4, -1, 5, 6,
                7, -1, 7, 8, 9, -1,
            ),
            _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4),
        )
    };
    let v = _mm256_srlv_epi32(_mm256_shuffle_epi8(x, idx), shift);
    _mm256_and_si256(v, _mm256_set1_epi32((1 << B) - 1))
}

#[target_feature(enable = "avx2")]
fn unpack_avx2<const B: usize>(buf: &[u8], b: i32, out: &mut [i32; N]) {
    assert_eq!(buf.len(), 32 * B);
    let bv = _mm256_set1_epi32(b);
    let step = B; // bytes per eight fields
                  // The last group would read past the buffer: it goes through a padded copy.
    let mut last = [0u8; 32];
    last[..step].copy_from_slice(&buf[31 * step..]);
    for g in 0..32 {
        let f = if g < 31 {
            fields8::<B>(&buf[g * step..])
        } else {
            fields8::<B>(&last)
        };
        // SAFETY: out[8g..8g + 8] is in bounds (g < 32); storeu has no alignment requirement.
        unsafe {
            _mm256_storeu_si256(
                out.as_mut_ptr().add(8 * g) as *mut __m256i,
                _mm256_sub_epi32(bv, f),
            )
        };
    }
    // The copy held secret fields (y).
    zeroize::Zeroize::zeroize(&mut last);
}

/// `packing::unpack_centered` for `bits` = 18 or 20: out[i] = b - field i.
pub(crate) fn unpack_centered(_: Avx2, buf: &[u8], bits: usize, b: i32, out: &mut [i32; N]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    match bits {
        18 => unsafe { unpack_avx2::<18>(buf, b, out) },
        20 => unsafe { unpack_avx2::<20>(buf, b, out) },
        _ => unreachable!("only the widths of y and z"),
    }
}

/// For the key's widths B (3, 4, 10, 13 bits): the byte shuffle that puts the four bytes from
/// byte 8k... of field k's start (bit kB) into lane k, in both 128-bit halves (lanes 4-7 are
/// fields 4-7), and the shift kB mod 8 that brings the field down.
const fn key_fields(b: usize) -> ([i8; 32], [i32; 8]) {
    let mut idx = [0i8; 32];
    let mut shift = [0i32; 8];
    let mut k = 0;
    while k < 8 {
        let mut j = 0;
        while j < 4 {
            // Bytes past the 16 loaded are never needed (kB / 8 + 3 <= 14 for B <= 13).
            idx[4 * k + j] = (k * b / 8 + j) as i8;
            j += 1;
        }
        shift[k] = (k * b % 8) as i32;
        k += 1;
    }
    (idx, shift)
}
static KEY_FIELDS: [([i8; 32], [i32; 8]); 4] =
    [key_fields(3), key_fields(4), key_fields(10), key_fields(13)];

/// Eight fields of `B` bits (3, 4, 10 or 13) from the 16 bytes at `src` (mapped to b - field
/// when `sub`) into out[i..i + 8].
#[inline]
#[target_feature(enable = "avx2")]
fn unpack8<const B: usize>(src: &[u8; 16], sub: Option<i32>, out: &mut [i32; N], i: usize) {
    let (idx, shift) = &KEY_FIELDS[match B {
        3 => 0,
        4 => 1,
        10 => 2,
        _ => 3,
    }];
    // SAFETY: `idx` is 32 readable bytes, `shift` 8 readable i32s, `src` 16 readable bytes.
    let (idx, shift, x) = unsafe {
        (
            _mm256_loadu_si256(idx.as_ptr() as *const __m256i),
            _mm256_loadu_si256(shift.as_ptr() as *const __m256i),
            _mm256_broadcastsi128_si256(_mm_loadu_si128(src.as_ptr() as *const __m128i)),
        )
    };
    let v = _mm256_srlv_epi32(_mm256_shuffle_epi8(x, idx), shift);
    let f = _mm256_and_si256(v, _mm256_set1_epi32((1 << B) - 1));
    let c = match sub {
        Some(b) => _mm256_sub_epi32(_mm256_set1_epi32(b), f),
        None => f,
    };
    super::avx2::store(out, i, c);
}

#[target_feature(enable = "avx2")]
fn unpack_key_avx2<const B: usize>(buf: &[u8], sub: Option<i32>, out: &mut [i32; N]) {
    assert_eq!(buf.len(), 32 * B);
    // Groups whose 16-byte load stays inside `buf` read it in place; the rest (the last
    // 16 / B or so) go through a zero-padded copy of the tail.
    let full = (32 * B - 16) / B + 1;
    for g in 0..full {
        let src: &[u8; 16] = buf[g * B..g * B + 16].try_into().expect("16 bytes");
        unpack8::<B>(src, sub, out, 8 * g);
    }
    let mut tail = [0u8; 32];
    let rest = &buf[full * B..];
    tail[..rest.len()].copy_from_slice(rest);
    for g in full..32 {
        let at = (g - full) * B;
        let src: &[u8; 16] = tail[at..at + 16].try_into().expect("16 bytes");
        unpack8::<B>(src, sub, out, 8 * g);
    }
    // The copy may hold secret fields (s1, s2, t0).
    zeroize::Zeroize::zeroize(&mut tail);
}

/// BitUnpack (`sub` = Some(b): c = b - field) or SimpleBitUnpack (None) of the key's widths, 3,
/// 4, 10 and 13 bits: `packing::unpack_with`'s fields. Fixed shuffles and shifts only, so
/// unpacking the secret s1, s2 and t0 is constant time.
pub(crate) fn unpack_key(_: Avx2, buf: &[u8], bits: usize, sub: Option<i32>, out: &mut [i32; N]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe {
        match bits {
            3 => unpack_key_avx2::<3>(buf, sub, out),
            4 => unpack_key_avx2::<4>(buf, sub, out),
            10 => unpack_key_avx2::<10>(buf, sub, out),
            13 => unpack_key_avx2::<13>(buf, sub, out),
            _ => unreachable!("only the widths of s1, s2, t0 and t1"),
        }
    }
}

/// The 32 coefficients a[32g..32g + 32] (each in [0, 255]) as bytes, in order.
#[inline]
#[target_feature(enable = "avx2")]
fn bytes32(a: &[i32; N], g: usize) -> __m256i {
    assert!(g < N / 32);
    // SAFETY: a[32g..32g + 32] is in bounds (checked above); loadu is unaligned.
    let [v0, v1, v2, v3] = core::array::from_fn(|k| unsafe {
        _mm256_loadu_si256(a.as_ptr().add(32 * g + 8 * k) as *const __m256i)
    });
    // packus works per 128-bit half: dword k of the result holds v[k % 4] lanes 4(k / 4)..+4.
    let x = _mm256_packus_epi16(_mm256_packus_epi32(v0, v1), _mm256_packus_epi32(v2, v3));
    _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

#[target_feature(enable = "avx2")]
fn pack_w1_avx2(a: &[i32; N], bits: usize, out: &mut [u8]) {
    assert_eq!(out.len(), 32 * bits);
    for g in 0..N / 32 {
        let c = bytes32(a, g);
        if bits == 4 {
            // Byte k = c[2k] | c[2k + 1] << 4.
            let m = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x1001));
            let p = _mm256_permute4x64_epi64::<0xd8>(_mm256_packus_epi16(m, m));
            // SAFETY: out[16g..16g + 16] is in bounds (32 * 4 bytes, g < 8).
            unsafe {
                _mm_storeu_si128(
                    out.as_mut_ptr().add(16 * g) as *mut __m128i,
                    _mm256_castsi256_si128(p),
                )
            };
        } else {
            // Each dword: c0 | c1 << 6 | c2 << 12 | c3 << 18, then its three low bytes.
            let m = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x4001));
            let d = _mm256_madd_epi16(m, _mm256_set1_epi32(0x1000_0001));
            let idx = _mm256_setr_epi8(
                0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9, 10,
                12, 13, 14, -1, -1, -1, -1,
            );
            let s = _mm256_shuffle_epi8(d, idx);
            let s = _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
            // SAFETY: out[24g..24g + 24] is in bounds (32 * 6 bytes, g < 8).
            unsafe {
                let o = out.as_mut_ptr().add(24 * g);
                _mm_storeu_si128(o as *mut __m128i, _mm256_castsi256_si128(s));
                _mm_storel_epi64(o.add(16) as *mut __m128i, _mm256_extracti128_si256::<1>(s));
            }
        }
    }
}

/// SimpleBitPack of w1 (coefficients in [0, 2^bits)) for `bits` = 4 or 6 (w1Encode's widths).
pub(crate) fn pack_w1(_: Avx2, a: &[i32; N], bits: usize, out: &mut [u8]) {
    assert!(bits == 4 || bits == 6);
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { pack_w1_avx2(a, bits, out) }
}

/// Eight fields of `B` bits (B <= 16) from a[i..i + 8] (mapped to b - c when `sub`), packed
/// into `B` bytes at out[0..B]: pairs within 64-bit lanes, then quads within 128-bit halves,
/// then the two 4B-bit halves joined. Fixed shifts only, so packing secrets is constant time.
#[inline]
#[target_feature(enable = "avx2")]
fn pack8<const B: usize>(a: &[i32; N], i: usize, sub: Option<i32>, out: &mut [u8]) {
    let c = super::avx2::load(a, i);
    let f = match sub {
        Some(b) => _mm256_sub_epi32(_mm256_set1_epi32(b), c),
        None => c,
    };
    // Each 64-bit lane: field 2k | field 2k + 1 << B.
    let mask = _mm256_set1_epi64x((1 << B) - 1);
    let p = _mm256_or_si256(
        _mm256_and_si256(f, mask),
        _mm256_srl_epi64(f, _mm_cvtsi32_si128(32 - B as i32)),
    );
    // The low 64-bit lane of each half: its pair | the next pair << 2B.
    let next = _mm256_bsrli_epi128::<8>(p);
    let d = _mm256_or_si256(p, _mm256_sll_epi64(next, _mm_cvtsi32_si128(2 * B as i32)));
    let lo = _mm256_extract_epi64::<0>(d) as u64 as u128;
    let hi = _mm256_extract_epi64::<2>(d) as u64 as u128;
    let v = lo & ((1u128 << (4 * B)) - 1) | hi << (4 * B);
    out[..B].copy_from_slice(&v.to_le_bytes()[..B]);
}

#[target_feature(enable = "avx2")]
fn pack_avx2<const B: usize>(a: &[i32; N], sub: Option<i32>, out: &mut [u8]) {
    assert_eq!(out.len(), 32 * B);
    for (g, o) in out.chunks_exact_mut(B).enumerate() {
        pack8::<B>(a, 8 * g, sub, o);
    }
}

/// Eight fields b - c of `B` = 18 or 20 bits from a[i..i + 8] into `B` bytes at out[0..B]: pairs
/// within 64-bit lanes (2B <= 40 bits), then each half's two pairs joined in a u128 (4B bits =
/// B / 2 whole bytes). Fixed shifts only (z is not secret once accepted, but y's range is).
#[inline]
#[target_feature(enable = "avx2")]
fn pack8_wide<const B: usize>(a: &[i32; N], i: usize, b: i32, out: &mut [u8]) {
    let f = _mm256_sub_epi32(_mm256_set1_epi32(b), super::avx2::load(a, i));
    // Each 64-bit lane: field 2k | field 2k + 1 << B (the odd field moved down from bit 32
    // alone: shifting the whole lane would bring the even field's top bits along).
    let even = _mm256_and_si256(f, _mm256_set1_epi64x((1 << B) - 1));
    let odd = _mm256_blend_epi32::<0xAA>(_mm256_setzero_si256(), f);
    let p = _mm256_or_si256(
        even,
        _mm256_srl_epi64(odd, _mm_cvtsi32_si128(32 - B as i32)),
    );
    let e = [
        _mm256_extract_epi64::<0>(p),
        _mm256_extract_epi64::<1>(p),
        _mm256_extract_epi64::<2>(p),
        _mm256_extract_epi64::<3>(p),
    ]
    .map(|x| x as u64 as u128);
    let lo = e[0] | e[1] << (2 * B);
    let hi = e[2] | e[3] << (2 * B);
    out[..B / 2].copy_from_slice(&lo.to_le_bytes()[..B / 2]);
    out[B / 2..B].copy_from_slice(&hi.to_le_bytes()[..B / 2]);
}

#[target_feature(enable = "avx2")]
fn pack_wide_avx2<const B: usize>(a: &[i32; N], b: i32, out: &mut [u8]) {
    assert_eq!(out.len(), 32 * B);
    for (g, o) in out.chunks_exact_mut(B).enumerate() {
        pack8_wide::<B>(a, 8 * g, b, o);
    }
}

/// BitPack of z (fields b - c of 18 or 20 bits, in [0, 2^bits) as the portable form needs).
pub(crate) fn pack_z(_: Avx2, a: &[i32; N], bits: usize, b: i32, out: &mut [u8]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe {
        match bits {
            18 => pack_wide_avx2::<18>(a, b, out),
            20 => pack_wide_avx2::<20>(a, b, out),
            _ => unreachable!("only the widths of z"),
        }
    }
}

/// BitPack (`sub` = Some(b): fields b - c) or SimpleBitPack (None) of the key's widths, 3, 4, 10
/// and 13 bits, for coefficients whose fields lie in [0, 2^bits) (as the portable form needs).
pub(crate) fn pack_key(_: Avx2, a: &[i32; N], bits: usize, sub: Option<i32>, out: &mut [u8]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe {
        match bits {
            3 => pack_avx2::<3>(a, sub, out),
            4 => pack_avx2::<4>(a, sub, out),
            10 => pack_avx2::<10>(a, sub, out),
            13 => pack_avx2::<13>(a, sub, out),
            _ => unreachable!("only the widths of s1, s2, t0 and t1"),
        }
    }
}
