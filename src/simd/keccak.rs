//! Keccak-f[1600] on one state (portable) and the SHAKE256 sponge built on it, for ML-DSA's
//! single-stream hashes (mu, rho'', c~, SampleInBall, tr). The `sha3` crate gives the same bytes;
//! this sponge permutes only when a block is needed (its reader computes one block ahead, one
//! wasted permutation per hash) and keeps the state in plain words. Branch-free: no branch or
//! index depends on the data, so absorbing secrets (K, rnd, rho') is constant time.

use zeroize::{Zeroize, ZeroizeOnDrop};

const SHAKE256_RATE: usize = 136;

/// Keccak-f[1600] round constants (iota).
pub(crate) const RC: [u64; 24] = [
    0x0000000000000001,
    0x0000000000008082,
    0x800000000000808a,
    0x8000000080008000,
    0x000000000000808b,
    0x0000000080000001,
    0x8000000080008081,
    0x8000000000008009,
    0x000000000000008a,
    0x0000000000000088,
    0x0000000080008009,
    0x000000008000000a,
    0x000000008000808b,
    0x800000000000008b,
    0x8000000000008089,
    0x8000000000008003,
    0x8000000000008002,
    0x8000000000000080,
    0x000000000000800a,
    0x800000008000000a,
    0x8000000080008081,
    0x8000000000008080,
    0x0000000080000001,
    0x8000000080008008,
];

/// Keccak-f[1600] (FIPS 202), lane x + 5y at index x + 5y. The same code is compiled a second
/// time with BMI1/BMI2 (`andn` for chi, `rorx` for the rotations: fewer instructions) and used
/// where the AVX2 level was detected (which includes them).
pub(crate) fn f1600(a: &mut [u64; 25]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = super::level().avx2() {
        return f1600_bmi(t, a);
    }
    f1600_body(a)
}

#[cfg(target_arch = "x86_64")]
fn f1600_bmi(_: super::Avx2, a: &mut [u64; 25]) {
    #[target_feature(enable = "bmi1,bmi2")]
    unsafe fn inner(a: &mut [u64; 25]) {
        f1600_body(a)
    }
    // SAFETY: an `Avx2` token exists only after AVX2, BMI1 and BMI2 were detected.
    unsafe { inner(a) }
}

/// Fixed loop bounds only; the compiler unrolls the inner loops and keeps lanes in registers.
#[inline(always)]
fn f1600_body(a: &mut [u64; 25]) {
    // rho offsets and pi positions along the lane cycle starting at (1, 0).
    const RHO: [u32; 24] = [
        1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44,
    ];
    const PI: [usize; 24] = [
        10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1,
    ];
    for rc in RC {
        // theta
        let mut c = [0u64; 5];
        for x in 0..5 {
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        }
        for x in 0..5 {
            let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
            for y in 0..5 {
                a[x + 5 * y] ^= d;
            }
        }
        // rho and pi
        let mut last = a[1];
        for i in 0..24 {
            let t = a[PI[i]];
            a[PI[i]] = last.rotate_left(RHO[i]);
            last = t;
        }
        // chi
        for y in 0..5 {
            let r: [u64; 5] = core::array::from_fn(|x| a[5 * y + x]);
            for x in 0..5 {
                a[5 * y + x] = r[x] ^ (!r[(x + 1) % 5] & r[(x + 2) % 5]);
            }
        }
        // iota
        a[0] ^= rc;
    }
}

/// SHAKE256 while absorbing (the method names of the `sha3` crate's hasher and reader).
#[derive(Default, Zeroize, ZeroizeOnDrop)]
pub(crate) struct Shake256 {
    s: [u64; 25],
    /// Bytes absorbed into the current block.
    pos: usize,
}

/// SHAKE256 while squeezing.
#[derive(Zeroize, ZeroizeOnDrop)]
pub(crate) struct Shake256Reader {
    s: [u64; 25],
    /// Bytes of the current block already read (the rate: none left).
    pos: usize,
}

impl Shake256 {
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        // Single bytes up to a word boundary, whole words, then the tail.
        while !data.is_empty() {
            if self.pos % 8 == 0 && data.len() >= 8 {
                let w = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
                self.s[self.pos / 8] ^= w;
                self.pos += 8;
                data = &data[8..];
            } else {
                self.s[self.pos / 8] ^= (data[0] as u64) << (8 * (self.pos % 8));
                self.pos += 1;
                data = &data[1..];
            }
            if self.pos == SHAKE256_RATE {
                f1600(&mut self.s);
                self.pos = 0;
            }
        }
    }

    /// Pads (SHAKE's domain bits 1111, then pad10*1) and permutes once.
    pub(crate) fn finalize_xof(mut self) -> Shake256Reader {
        self.s[self.pos / 8] ^= 0x1f << (8 * (self.pos % 8));
        self.s[(SHAKE256_RATE - 1) / 8] ^= 0x80 << (8 * ((SHAKE256_RATE - 1) % 8));
        f1600(&mut self.s);
        Shake256Reader { s: self.s, pos: 0 }
    }
}

impl Shake256Reader {
    pub(crate) fn read(&mut self, mut out: &mut [u8]) {
        // Single bytes up to a word boundary, whole words, then the tail (as `update`).
        while !out.is_empty() {
            if self.pos == SHAKE256_RATE {
                f1600(&mut self.s);
                self.pos = 0;
            }
            if self.pos % 8 == 0 && out.len() >= 8 {
                out[..8].copy_from_slice(&self.s[self.pos / 8].to_le_bytes());
                self.pos += 8;
                out = &mut out[8..];
            } else {
                out[0] = (self.s[self.pos / 8] >> (8 * (self.pos % 8))) as u8;
                self.pos += 1;
                out = &mut out[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{ExtendableOutput, Update, XofReader};

    /// The BMI build of the permutation against the portable build, on chained random states.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn bmi_permutation_matches_portable() {
        let Some(t) = crate::simd::available().last().and_then(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2/BMI on this CPU");
            return;
        };
        let mut a: [u64; 25] =
            core::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut b = a;
        for _ in 0..1000 {
            f1600_body(&mut a);
            f1600_bmi(t, &mut b);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn matches_sha3_crate() {
        let mut seed = 9u64;
        let mut byte = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        };
        // Lengths around the rate and word boundaries, split into uneven updates, and reads
        // that cross block boundaries.
        for len in [
            0usize, 1, 7, 8, 9, 63, 64, 66, 98, 135, 136, 137, 271, 272, 273, 832, 1312, 2592,
        ] {
            let data: Vec<u8> = (0..len).map(|_| byte()).collect();
            for split in [1usize, 3, 8, 64, 135, 1000] {
                let mut want = vec![0u8; 600];
                let mut h = sha3::Shake256::default();
                h.update(&data);
                h.finalize_xof().read(&mut want);
                let mut ours = Shake256::default();
                for part in data.chunks(split) {
                    ours.update(part);
                }
                let mut r = ours.finalize_xof();
                let mut got = vec![0u8; 600];
                let (a, rest) = got.split_at_mut(split.min(136));
                r.read(a);
                r.read(&mut rest[..5]);
                r.read(&mut rest[5..]);
                assert_eq!(got, want, "len {len} split {split}");
            }
        }
    }
}
