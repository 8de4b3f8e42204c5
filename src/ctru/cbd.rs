//! Centered binomial sampling CBD_eta (spec section 5.1).

use zeroize::Zeroizing;

/// n coefficients of CBD_eta from `buf` (at least ceil(2 eta n / 8) bytes), read as a bitstream,
/// least significant bit first: coefficient i is the sum of bits [2 eta i, 2 eta i + eta) minus
/// the sum of the next eta bits.
pub(crate) fn sample(buf: &[u8], n: usize, eta: usize) -> Zeroizing<Vec<i32>> {
    debug_assert!(buf.len() >= (2 * eta * n).div_ceil(8));
    let bit = |j: usize| ((buf[j >> 3] >> (j & 7)) & 1) as i32;
    let out = (0..n)
        .map(|i| {
            let base = 2 * eta * i;
            (0..eta).map(|k| bit(base + k) - bit(base + eta + k)).sum()
        })
        .collect();
    Zeroizing::new(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_and_six_bit_chunks() {
        // eta = 2: byte 0b1011_0001 -> low nibble 0001 -> 1 - 0 = 1; high nibble 1011 -> 1+1 - (0+1) = 1
        assert_eq!(&sample(&[0b1011_0001], 2, 2)[..], &[1, 1]);
        assert_eq!(&sample(&[0b1100_0011], 2, 2)[..], &[2, -2]);
        // eta = 3: bits 0..5 = 111000 -> 3, bits 6..11 = 000111 -> -3
        assert_eq!(&sample(&[0b0000_0111, 0b0000_1110], 2, 3)[..], &[3, -3]);
    }
}
