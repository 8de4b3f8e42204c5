//! Shared by the decoder-level targets (`decode_mldsa`, `decode_ctru`): input shaping and the
//! spec-side reading of bit fields, written here from FIPS 204 and the CTRU-Prime spec, not
//! taken from the library.

#![allow(dead_code)]

/// (choice, bytes to decode, raw). `data[0]` picks the decoder and set (`choice`); the rest
/// goes through `common::mutate`: one input in eight at its own length (`raw`: length checks),
/// the others XORed into the valid encoding `base(choice)` at an offset (near-valid inputs).
pub fn shape(data: &[u8], base: impl Fn(usize) -> Vec<u8>) -> Option<(usize, Vec<u8>, bool)> {
    let (&choice, rest) = data.split_first()?;
    let raw = rest.first().is_some_and(|&h| h & 0xe0 == 0xe0);
    let (_, bytes) = super::common::mutate(rest, |_| base(choice as usize))?;
    Some((choice as usize, bytes, raw))
}

/// Field `i` of `bits` bits (at most 25) of a little-endian bit string: bits i*bits ..
/// (i+1)*bits, bit k of the string being bit k % 8 of byte k / 8 (FIPS 204 Alg. 16-19, the
/// CTRU-Prime PackCT of spec 6.3).
pub fn field(b: &[u8], i: usize, bits: usize) -> u32 {
    let bit = i * bits;
    let w = b[bit / 8..]
        .iter()
        .take(4)
        .enumerate()
        .fold(0u64, |w, (k, &x)| w | (x as u64) << (8 * k));
    ((w >> (bit % 8)) & ((1u64 << bits) - 1)) as u32
}
