//! Zeroization a word at a time. The `zeroize` crate clears an array with one volatile store per
//! element, so a byte array takes one store per byte (ExpandMask's four-stream output, 2720
//! bytes, cost 2720 stores on every signing attempt).

use core::ops::{Deref, DerefMut};
use zeroize::Zeroize;

/// Clears `b` with volatile 8-byte stores (the unaligned bytes at either end one at a time), then
/// the `zeroize` crate's fence.
pub(crate) fn wipe(b: &mut [u8]) {
    // SAFETY: every bit pattern is a valid u64, so the aligned middle may be viewed as u64s.
    let (head, words, tail) = unsafe { b.align_to_mut::<u64>() };
    head.zeroize();
    words.zeroize();
    tail.zeroize();
}

/// The same for 32-bit words (polynomial coefficients).
pub(crate) fn wipe_i32(c: &mut [i32]) {
    // SAFETY: as in `wipe`.
    let (head, words, tail) = unsafe { c.align_to_mut::<u64>() };
    head.zeroize();
    words.zeroize();
    tail.zeroize();
}

/// A byte array cleared by [`wipe`] when dropped: `Zeroizing<[u8; N]>` at an eighth of the
/// stores.
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
        let mut c = [-1i32; 9];
        for start in 0..3 {
            c.fill(-1);
            wipe_i32(&mut c[start..]);
            assert!(c[start..].iter().all(|&x| x == 0) && c[..start].iter().all(|&x| x == -1));
        }
    }
}
