//! Zeroization 32 or 8 bytes at a time. The `zeroize` crate clears an array with one volatile store per
//! element, so a byte array takes one store per byte (ExpandMask's four-stream output, 2720
//! bytes, cost 2720 stores on every signing attempt).

use core::ops::{Deref, DerefMut};
use zeroize::Zeroize;

/// Clears `b` with volatile stores, 32 bytes each where AVX2 was detected and 8 bytes each
/// otherwise (the unaligned bytes at either end one at a time), then the `zeroize` crate's
/// fence.
pub(crate) fn wipe(b: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::level().avx2() {
        return wipe_avx2(t, b);
    }
    wipe_words(b);
}

/// The same for 32-bit words (polynomial coefficients).
pub(crate) fn wipe_i32(c: &mut [i32]) {
    // SAFETY: every bit pattern is a valid u8, and u8 has no alignment requirement.
    wipe(unsafe { c.align_to_mut::<u8>() }.1);
}

/// 8-byte volatile stores.
fn wipe_words(b: &mut [u8]) {
    // SAFETY: every bit pattern is a valid u64, so the aligned middle may be viewed as u64s.
    let (head, words, tail) = unsafe { b.align_to_mut::<u64>() };
    head.zeroize();
    words.zeroize();
    tail.zeroize();
}

/// 32-byte stores (a quarter of the stores of `wipe_words`), the last bytes as there. Each store
/// is an `asm!` block, which the compiler may not remove (as it may not remove a volatile store;
/// `write_volatile` of a vector went through a stack copy).
#[cfg(target_arch = "x86_64")]
fn wipe_avx2(_: super::Avx2, b: &mut [u8]) {
    use core::arch::x86_64::_mm256_setzero_si256;
    #[target_feature(enable = "avx2")]
    fn clear(b: &mut [u8]) {
        let zero = _mm256_setzero_si256();
        let mut chunks = b.chunks_exact_mut(32);
        for c in &mut chunks {
            // SAFETY: the store writes exactly the 32 bytes of c, borrowed exclusively; vmovdqu
            // needs no alignment.
            unsafe {
                core::arch::asm!(
                    "vmovdqu ymmword ptr [{p}], {z}",
                    p = in(reg) c.as_mut_ptr(),
                    z = in(ymm_reg) zero,
                    options(nostack, preserves_flags),
                )
            };
        }
        wipe_words(chunks.into_remainder());
    }
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { clear(b) };
}

/// A byte array cleared by [`wipe`] when dropped: `Zeroizing<[u8; N]>` at an eighth (or a
/// 32nd) of the stores.
#[derive(Clone)]
#[repr(C, align(8))]
pub(crate) struct Wiped<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Wiped<N> {
    fn default() -> Self {
        Wiped([0; N])
    }
}

impl<const N: usize> Drop for Wiped<N> {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl<const N: usize> Deref for Wiped<N> {
    type Target = [u8; N];
    fn deref(&self) -> &[u8; N] {
        &self.0
    }
}

impl<const N: usize> DerefMut for Wiped<N> {
    fn deref_mut(&mut self) -> &mut [u8; N] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipe_clears_every_byte_at_every_alignment() {
        let mut buf = [0xa5u8; 64];
        for start in 0..9 {
            for end in start..64 {
                buf.fill(0xa5);
                wipe(&mut buf[start..end]);
                assert!(buf[start..end].iter().all(|&b| b == 0));
                assert!(buf[..start].iter().chain(&buf[end..]).all(|&b| b == 0xa5));
            }
        }
        let mut c = [-1i32; 40];
        for start in 0..9 {
            c.fill(-1);
            wipe_i32(&mut c[start..]);
            assert!(c[start..].iter().all(|&x| x == 0) && c[..start].iter().all(|&x| x == -1));
        }
    }

    /// Both store widths, whatever the process's level.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn both_widths_clear_exactly_the_slice() {
        let mut buf = [0xa5u8; 160];
        for level in crate::simd::available() {
            for start in 0..40 {
                for end in (start..160).step_by(7) {
                    buf.fill(0xa5);
                    match level.avx2() {
                        Some(t) => wipe_avx2(t, &mut buf[start..end]),
                        None => wipe_words(&mut buf[start..end]),
                    }
                    assert!(buf[start..end].iter().all(|&b| b == 0));
                    assert!(buf[..start].iter().chain(&buf[end..]).all(|&b| b == 0xa5));
                }
            }
        }
    }
}
