//! Centered binomial sampling CBD_eta (spec section 5.1).

use zeroize::{Zeroize, Zeroizing};

/// n coefficients of CBD_eta from `buf` (at least ceil(2 eta n / 8) bytes), read as a bitstream,
/// least significant bit first: coefficient i is the sum of bits [2 eta i, 2 eta i + eta) minus
/// the sum of the next eta bits.
///
/// Eight coefficients take 2 eta whole bytes, so each group of eight is one little-endian word;
/// the bit counts are shifts and adds (no table, no branch on the secret bits).
pub(crate) fn sample(buf: &[u8], n: usize, eta: usize) -> Zeroizing<Vec<i32>> {
    let width = 2 * eta;
    assert!(eta <= 4 && buf.len() >= (width * n).div_ceil(8));
    let mut out = Zeroizing::new(vec![0i32; n]);
    // Wiped at the end: it holds the secret bits.
    let mut word = [0u8; 8];
    for (k, group) in out.chunks_mut(8).enumerate() {
        let start = k * width;
        let end = buf.len().min(start + width);
        word[..end - start].copy_from_slice(&buf[start..end]);
        word[end - start..].fill(0);
        let w = u64::from_le_bytes(word);
        for (i, c) in group.iter_mut().enumerate() {
            let bits = w >> (width * i);
            let mut sum = 0i32;
            for j in 0..eta {
                sum += ((bits >> j) & 1) as i32 - ((bits >> (eta + j)) & 1) as i32;
            }
            *c = sum;
        }
    }
    word.zeroize();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, bit by bit.
    fn bitwise(buf: &[u8], n: usize, eta: usize) -> Vec<i32> {
        let bit = |j: usize| ((buf[j >> 3] >> (j & 7)) & 1) as i32;
        (0..n)
            .map(|i| {
                let base = 2 * eta * i;
                (0..eta).map(|k| bit(base + k) - bit(base + eta + k)).sum()
            })
            .collect()
    }

    #[test]
    fn nibbles_and_six_bit_chunks() {
        // eta = 2: byte 0b1011_0001 -> low nibble 0001 -> 1 - 0 = 1; high nibble 1011 -> 1+1 - (0+1) = 1
        assert_eq!(&sample(&[0b1011_0001], 2, 2)[..], &[1, 1]);
        assert_eq!(&sample(&[0b1100_0011], 2, 2)[..], &[2, -2]);
        // eta = 3: bits 0..5 = 111000 -> 3, bits 6..11 = 000111 -> -3
        assert_eq!(&sample(&[0b0000_0111, 0b0000_1110], 2, 3)[..], &[3, -3]);
    }

    /// Word-wise against bit-by-bit, for every parameter set's (n, eta), exact-length and
    /// longer buffers (the bytes past the last coefficient must not matter).
    #[test]
    fn matches_bitwise_definition() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for p in crate::ctru::ParamSet::ALL {
            let (n, eta) = (p.n(), p.eta());
            for extra in [0usize, 1, 7] {
                for _ in 0..20 {
                    let buf: Vec<u8> = (0..(2 * eta * n).div_ceil(8) + extra)
                        .map(|_| {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            state as u8
                        })
                        .collect();
                    assert_eq!(
                        &sample(&buf, n, eta)[..],
                        &bitwise(&buf, n, eta)[..],
                        "n={n}"
                    );
                }
            }
        }
        // All ones and all zeros: the extreme values.
        for eta in [2, 3] {
            assert!(sample(&[0xFF; 64], 80, eta).iter().all(|&c| c == 0));
            assert!(sample(&[0; 64], 80, eta).iter().all(|&c| c == 0));
        }
    }
}
