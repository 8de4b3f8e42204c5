//! Operating-system randomness; its failure is an error (`PQG_ERR_RNG`), never a panic.

use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use zeroize::Zeroizing;

/// Fills `buf` from the OS CSPRNG.
pub fn fill(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::getrandom(buf).map_err(|_| Error::Rng)
}

/// Bytes per ChaCha20 stream in [`fill_bulk`] (one rayon task each).
const BULK_BLOCK: usize = 1 << 16;

/// Fills a large `buf` (a GPU batch's coins, rnd or seeds) with ChaCha20 keyed by 32 bytes
/// of OS randomness, one stream per 64 KiB block on all cores: the same construction as the
/// kernel's own CSPRNG, without one multi-megabyte system call per batch on one core. Small
/// buffers come from the OS directly.
pub fn fill_bulk(buf: &mut [u8]) -> Result<(), Error> {
    use rayon::prelude::*;
    if buf.len() <= BULK_BLOCK {
        return fill(buf);
    }
    let key = Zeroizing::new(array32()?);
    buf.par_chunks_mut(BULK_BLOCK)
        .enumerate()
        .for_each(|(i, block)| {
            let mut rng = ChaCha20Rng::from_seed(*key);
            rng.set_stream(i as u64);
            rng.fill_bytes(block);
        });
    Ok(())
}

/// A fresh random 32-byte array.
pub fn array32() -> Result<[u8; 32], Error> {
    let mut a = [0u8; 32];
    fill(&mut a)?;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_blocks_are_distinct_and_calls_differ() {
        let mut a = vec![0u8; 4 * BULK_BLOCK + 5];
        let mut b = vec![0u8; 4 * BULK_BLOCK + 5];
        fill_bulk(&mut a).unwrap();
        fill_bulk(&mut b).unwrap();
        assert_ne!(a, b);
        let blocks: Vec<&[u8]> = a.chunks(BULK_BLOCK).collect();
        for i in 0..blocks.len() {
            for j in i + 1..blocks.len() {
                assert_ne!(blocks[i][..5], blocks[j][..5], "streams {i} and {j} repeat");
            }
        }
        // Roughly balanced bits: a stuck or zero stream would fail this.
        let ones: u32 = a.iter().map(|x| x.count_ones()).sum();
        let bits = (a.len() * 8) as f64;
        assert!((ones as f64 / bits - 0.5).abs() < 0.01);
    }
}
