//! ML-DSA's signing randomness (rnd) for the calling thread: operating-system randomness
//! drawn 1 KiB at a time and handed out 32 bytes at a time, each block wiped from the buffer
//! as it is handed out. One system call per 32 hedged signatures instead of one per signature
//! (on OpenSSL's thread, which serves every async job). Tagged with the process id: a forked
//! child never hands out bytes its parent drew.

use pqgpu::Error;
use std::cell::RefCell;
use zeroize::{Zeroize, Zeroizing};

const BLOCK: usize = 32;
const BLOCKS: usize = 32;

struct Stock {
    pid: u32,
    /// Blocks not yet handed out: the last `left` of `bytes`.
    left: usize,
    bytes: [u8; BLOCK * BLOCKS],
}

impl Drop for Stock {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

thread_local! {
    static STOCK: RefCell<Stock> = const {
        RefCell::new(Stock { pid: 0, left: 0, bytes: [0; BLOCK * BLOCKS] })
    };
}

/// 32 fresh random bytes.
pub fn array32() -> Result<Zeroizing<[u8; 32]>, Error> {
    let pid = pqgpu::process::id();
    let drawn = STOCK.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.pid != pid || s.left == 0 {
            s.left = 0;
            pqgpu::rng::fill(&mut s.bytes[..])?;
            s.pid = pid;
            s.left = BLOCKS;
        }
        s.left -= 1;
        let at = s.left * BLOCK;
        let block = &mut s.bytes[at..at + BLOCK];
        let mut out = Zeroizing::new([0u8; 32]);
        out.copy_from_slice(block);
        block.zeroize();
        Ok(out)
    });
    match drawn {
        Ok(r) => r,
        // The thread is exiting: straight from the OS.
        Err(_) => pqgpu::rng::array32().map(Zeroizing::new),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn blocks_differ_across_refills_and_are_wiped() {
        let mut seen = Vec::new();
        for _ in 0..3 * super::BLOCKS + 1 {
            let r = super::array32().unwrap();
            assert!(!seen.contains(&*r), "a block repeated");
            seen.push(*r);
        }
        super::STOCK.with(|s| {
            let s = s.borrow();
            let handed = super::BLOCKS - s.left;
            assert!(s.bytes[s.left * super::BLOCK..].iter().all(|&b| b == 0));
            assert!(handed >= 1);
        });
    }
}
