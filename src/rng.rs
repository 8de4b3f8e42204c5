//! Operating-system randomness; its failure is an error (`PQG_ERR_RNG`), never a panic.

use crate::process::PerProcess;
use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use zeroize::{Zeroize, Zeroizing};

/// Fills `buf` from the OS CSPRNG.
pub fn fill(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::getrandom(buf).map_err(|_| Error::Rng)
}

/// Fills `buf` with ChaCha20 stream 0 under `key`: what the GPU kernels' CSPRNG
/// (`kernels/chacha.cuh`) makes of a key, for a chunk whose fresh seeds are expanded on the host.
pub fn expand(key: &[u8; 32], buf: &mut [u8]) {
    ChaCha20Rng::from_seed(*key).fill_bytes(buf);
}

/// Bytes per ChaCha20 stream in [`fill_bulk`] (one rayon task each).
const BULK_BLOCK: usize = 1 << 16;
/// Up to this many bytes [`fill_bulk`] runs on the calling thread: a GPU chunk's coins or rnd
/// (256-512 KiB), where waking the pool for a few blocks cost more than the blocks on a busy
/// host (measured with `serve::exec`'s `REPORT_BLOCK`); a whole batch's seeds stay parallel.
const SERIAL_BULK: usize = 1 << 20;

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
    // Block i is ChaCha20 stream i under the one key, on whichever thread fills it.
    let fill_block = |(i, block): (usize, &mut [u8])| {
        let mut rng = ChaCha20Rng::from_seed(*key);
        rng.set_stream(i as u64);
        rng.fill_bytes(block);
    };
    if buf.len() <= SERIAL_BULK {
        buf.chunks_mut(BULK_BLOCK).enumerate().for_each(fill_block);
    } else {
        buf.par_chunks_mut(BULK_BLOCK)
            .enumerate()
            .for_each(fill_block);
    }
    Ok(())
}

/// Blocks of [`array32`]'s per-thread stock.
const STOCK_BLOCKS: usize = 32;

/// A thread's stock of OS randomness for [`array32`]: drawn 1 KiB at a time, handed out 32
/// bytes at a time, each block wiped as it goes. Per process, so a forked child never hands out
/// bytes its parent drew: there it is wiped and drawn again.
struct Stock {
    /// Blocks not yet handed out: the last `left` of `bytes`.
    left: usize,
    bytes: [u8; 32 * STOCK_BLOCKS],
}

impl Stock {
    fn wipe(&mut self) {
        self.left = 0;
        self.bytes.zeroize();
    }
}

impl Drop for Stock {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

thread_local! {
    static STOCK: std::cell::RefCell<PerProcess<Stock>> = const {
        std::cell::RefCell::new(PerProcess::new(Stock { left: 0, bytes: [0; 32 * STOCK_BLOCKS] }))
    };
}

/// A fresh random 32-byte array (a seed, coins, rnd): one system call per 32 of them, not per
/// single call (a server signing one message at a time on few threads makes millions).
pub fn array32() -> Result<[u8; 32], Error> {
    let drawn = STOCK.try_with(|s| {
        let mut s = s.borrow_mut();
        let s = s.get_mut(Stock::wipe);
        if s.left == 0 {
            fill(&mut s.bytes)?;
            s.left = STOCK_BLOCKS;
        }
        s.left -= 1;
        let at = s.left * 32;
        let block = &mut s.bytes[at..at + 32];
        let mut out = [0u8; 32];
        out.copy_from_slice(block);
        block.zeroize();
        Ok(out)
    });
    // Without the stock (the thread is exiting): straight from the OS.
    drawn.unwrap_or_else(|_| {
        let mut a = [0u8; 32];
        fill(&mut a)?;
        Ok(a)
    })
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

    #[test]
    fn array32_blocks_differ_across_refills_and_are_wiped() {
        let mut seen = Vec::new();
        for _ in 0..3 * STOCK_BLOCKS + 1 {
            let r = array32().unwrap();
            assert!(!seen.contains(&r), "a block repeated");
            seen.push(r);
        }
        STOCK.with(|s| {
            let s = s.borrow();
            let s = s.get().expect("drawn in this process");
            assert!(s.left < STOCK_BLOCKS, "the last call took a block");
            assert!(
                s.bytes[s.left * 32..].iter().all(|&b| b == 0),
                "handed-out blocks wiped"
            );
            assert!(
                s.bytes[..s.left * 32].iter().any(|&b| b != 0),
                "the rest still random"
            );
        });
    }
}
