//! Exact products in Z[x]/(x^n - x - 1), then reduction mod q or mod q2 (spec section 4.1).
//!
//! Products are computed with Karatsuba over wrapping machine integers. Wrapping is harmless:
//! every step is a ring operation of Z/2^w, so the result is the exact integer product modulo
//! 2^w. For mod-q products w = 32 and the exact coefficients (at most 3 * n * q * 7 < 2^28 in
//! absolute value: one operand small, the other below q) fit in an i32, so the result is exact.
//! For mod-q2 products w = 16 is enough because q2 divides 2^16, and 16-bit lanes are twice as
//! wide in SIMD.
//!
//! On AVX2 both products run as vector code instead: for the CTRU-Prime sizes an NTT product
//! over two 16-bit primes with CRT (`simd::ctru_ntt`: the exact integer product, then the same
//! reductions, so the same values for the callers' input ranges), else a schoolbook product
//! (`simd::ctru_avx2`, `vpmaddwd` on 16-bit inputs, exact 32-bit sums: the same ring Z/2^32).

use super::reduce::Zq;
use crate::simd;
use zeroize::{Zeroize, Zeroizing};

/// A machine integer used as an element of Z/2^w.
trait Coeff: Copy + Default + Zeroize {
    /// Below this length a schoolbook product beats another Karatsuba level.
    const SCHOOLBOOK_MAX: usize;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

macro_rules! wrapping_coeff {
    ($t:ty, $max:expr) => {
        impl Coeff for $t {
            const SCHOOLBOOK_MAX: usize = $max;
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
        }
    };
}
wrapping_coeff!(i32, 96);
wrapping_coeff!(u16, 192);

/// Scratch space that [`mul_full`] needs for operands of length `len`.
fn scratch_len<T: Coeff>(len: usize) -> usize {
    if len <= T::SCHOOLBOOK_MAX {
        0
    } else {
        let h = len.div_ceil(2);
        8 * h + scratch_len::<T>(h)
    }
}

/// out = a * b as a full product of length 2len-1.
fn mul_full<T: Coeff>(a: &[T], b: &[T], out: &mut [T], scratch: &mut [T]) {
    let len = a.len();
    debug_assert!(b.len() == len && out.len() == 2 * len - 1);
    if len <= T::SCHOOLBOOK_MAX {
        schoolbook(a, b, out);
        return;
    }
    // a = a0 + x^h a1 with a0 of length h and a1 of length l <= h.
    let h = len.div_ceil(2);
    let l = len - h;
    let (z0, rest) = scratch.split_at_mut(2 * h - 1);
    let (z1, rest) = rest.split_at_mut(2 * h - 1);
    let (z2, rest) = rest.split_at_mut(2 * l - 1);
    let (sa, rest) = rest.split_at_mut(h);
    let (sb, rest) = rest.split_at_mut(h);
    mul_full(&a[..h], &b[..h], z0, rest);
    mul_full(&a[h..], &b[h..], z2, rest);
    sa.copy_from_slice(&a[..h]);
    sb.copy_from_slice(&b[..h]);
    for (s, &x) in sa.iter_mut().zip(&a[h..]) {
        *s = s.add(x);
    }
    for (s, &x) in sb.iter_mut().zip(&b[h..]) {
        *s = s.add(x);
    }
    mul_full(sa, sb, z1, rest);
    // z1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1
    for (m, &x) in z1.iter_mut().zip(z0.iter()) {
        *m = m.sub(x);
    }
    for (m, &x) in z1.iter_mut().zip(z2.iter()) {
        *m = m.sub(x);
    }
    out.fill(T::default());
    out[..2 * h - 1].copy_from_slice(z0);
    out[2 * h..].copy_from_slice(z2);
    for (o, &x) in out[h..3 * h - 1].iter_mut().zip(z1.iter()) {
        *o = o.add(x);
    }
}

fn schoolbook<T: Coeff>(a: &[T], b: &[T], out: &mut [T]) {
    let len = a.len();
    out.fill(T::default());
    for (i, &ai) in a.iter().enumerate() {
        for (o, &bj) in out[i..i + len].iter_mut().zip(b) {
            *o = o.add(ai.mul(bj));
        }
    }
}

/// a * b mod (x^n - x - 1) in Z/2^w, unreduced coefficients.
fn mul_ring<T: Coeff>(a: &[T], b: &[T]) -> Zeroizing<Vec<T>> {
    let n = a.len();
    assert_eq!(b.len(), n);
    // The temporaries hold secret-dependent values: wiped on drop.
    let mut d = Zeroizing::new(vec![T::default(); 2 * n - 1]);
    let mut scratch = Zeroizing::new(vec![T::default(); scratch_len::<T>(n)]);
    mul_full(a, b, &mut d, &mut scratch);
    Zeroizing::new(fold(&d, n))
}

/// Reduces a full product (length 2n-1) modulo x^n - x - 1: x^(n+k) = x^(k+1) + x^k, and the
/// degree is at most 2n-2, so one pass suffices.
fn fold<T: Coeff>(d: &[T], n: usize) -> Vec<T> {
    let mut c = d[..n].to_vec();
    for k in 0..n - 1 {
        let hi = d[n + k];
        c[k] = c[k].add(hi);
        c[k + 1] = c[k + 1].add(hi);
    }
    c
}

/// a * b mod (x^n - x - 1) in Z/2^32: on AVX2 the vector product (the same ring, so the same
/// values, for the i16-sized coefficients of every caller), else the Karatsuba above.
fn mul_ring_i32(a: &[i32], b: &[i32]) -> Zeroizing<Vec<i32>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return simd::ctru_avx2::mul_ring(t, a, b);
    }
    mul_ring(a, b)
}

/// Whether the AVX2 NTT product (`simd::ctru_ntt`) is used for this n rather than the AVX2
/// schoolbook. Measured one-core (docs/cpu-simd.md), the NTT product is 1.5x to 2x faster at
/// every CTRU-Prime n (653, 761, 1277); smaller n, measured nowhere, keep the schoolbook.
#[cfg(target_arch = "x86_64")]
fn use_ntt(n: usize) -> bool {
    const NTT_MIN: usize = 653;
    (NTT_MIN..=simd::ctru_ntt::N_MAX).contains(&n)
}

/// a * b in R_q with coefficients in [0, q). Inputs: one operand small (|.| <= 7), the other
/// with |coefficients| < q, so the exact product coefficients fit in an i32 (and in the NTT
/// product's CRT range).
pub(crate) fn mul_mod_q(a: &[i32], b: &[i32], zq: &Zq) -> Zeroizing<Vec<i32>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        if use_ntt(a.len()) && simd::ctru_ntt::Q_RANGE.contains(&zq.q) {
            return simd::ctru_ntt::mul_mod_q(t, a, b, zq.q);
        }
    }
    let mut c = mul_ring_i32(a, b);
    for x in c.iter_mut() {
        *x = zq.reduce(*x);
    }
    c
}

/// a * b in Z_{2^bits}[x]/(x^n - x - 1) (bits <= 16) with coefficients in [0, 2^bits). On the
/// NTT path (bits <= 11) one operand must be small (|.| <= 15), as f is in decryption.
pub(crate) fn mul_mod_pow2(a: &[i32], b: &[i32], bits: u32) -> Zeroizing<Vec<i32>> {
    debug_assert!(bits <= 16);
    let mask = ((1u32 << bits) - 1) as u16;
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        if use_ntt(a.len()) && bits <= 11 {
            return simd::ctru_ntt::mul_mod_pow2(t, a, b, bits);
        }
        // The vector product is exact mod 2^32, so its low `bits` bits are this one's.
        let mut c = simd::ctru_avx2::mul_ring(t, a, b);
        c.iter_mut().for_each(|x| *x &= mask as i32);
        return c;
    }
    // Truncation to u16 is reduction mod 2^16, which 2^bits divides.
    let a16 = Zeroizing::new(a.iter().map(|&x| x as u16).collect::<Vec<u16>>());
    let b16 = Zeroizing::new(b.iter().map(|&x| x as u16).collect::<Vec<u16>>());
    let c = mul_ring(&a16, &b16);
    Zeroizing::new(c.iter().map(|&x| (x & mask) as i32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain O(n^2) product with explicit reduction x^n = x + 1, over i64.
    fn reference_product(a: &[i32], b: &[i32]) -> Vec<i64> {
        let n = a.len();
        let mut d = vec![0i64; 2 * n - 1];
        for i in 0..n {
            for j in 0..n {
                d[i + j] += a[i] as i64 * b[j] as i64;
            }
        }
        for k in (n..2 * n - 1).rev() {
            let t = d[k];
            d[k] = 0;
            d[k - n] += t;
            d[k - n + 1] += t;
        }
        d.truncate(n);
        d
    }

    /// The AVX2 token, or `None` (with the SKIPPED line) on a CPU without AVX2.
    #[cfg(target_arch = "x86_64")]
    fn avx2_or_skip() -> Option<crate::simd::Avx2> {
        let t = crate::simd::Level::Avx2
            .avx2()
            .filter(|_| std::is_x86_feature_detected!("avx2"));
        if t.is_none() {
            println!("SKIPPED: no AVX2 on this CPU");
        }
        t
    }

    /// A xorshift64 stream (test inputs only).
    #[cfg(target_arch = "x86_64")]
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The AVX2 product against the portable Karatsuba on random inputs: every i16 value for
    /// the mod-2^32 ring (sums overflow, as they may in the portable ring too), and any i32
    /// for the mod-2^bits product (both truncate to 16 bits).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_product_matches_portable() {
        let Some(t) = avx2_or_skip() else {
            return;
        };
        let mut next = xorshift(0x0f0f_1234_5678_9abcu64);
        for n in [1, 2, 3, 5, 31, 32, 33, 81, 97, 653, 761, 1277] {
            for round in 0..6 {
                let a: Vec<i32> = (0..n).map(|_| next() as i16 as i32).collect();
                let b: Vec<i32> = match round % 3 {
                    0 => (0..n).map(|_| (next() % 15) as i32 - 7).collect(),
                    1 => (0..n).map(|_| next() as i16 as i32).collect(),
                    _ => (0..n)
                        .map(|_| [i16::MIN, i16::MAX][(next() & 1) as usize] as i32)
                        .collect(),
                };
                let want = mul_ring(&a, &b);
                let got = crate::simd::ctru_avx2::mul_ring(t, &a, &b);
                assert_eq!(&got[..], &want[..], "n={n} round={round}");
                let big: Vec<i32> = (0..n).map(|_| next() as i32).collect();
                let want16 = mul_ring(
                    &big.iter().map(|&x| x as u16).collect::<Vec<_>>(),
                    &b.iter().map(|&x| x as u16).collect::<Vec<_>>(),
                );
                let got16 = crate::simd::ctru_avx2::mul_ring(t, &big, &b);
                for i in 0..n {
                    assert_eq!(got16[i] as u16, want16[i], "n={n} i={i}");
                }
            }
        }
    }

    /// The AVX2 NTT product against the portable Karatsuba at the extremes of its contract: one
    /// operand small (|.| <= 7 mod q, <= 15 mod 2^bits), the other anywhere in (-q, q) or
    /// [0, 2^bits), including all-extreme operands whose centered product reaches
    /// n * (q-1)/2 * 7, the largest coefficient the CRT must recover; both operand orders.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ntt_product_matches_portable() {
        let Some(t) = avx2_or_skip() else {
            return;
        };
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let ns = [
            1, 2, 3, 16, 17, 97, 639, 640, 641, 653, 761, 768, 769, 1000, 1277, 1280,
        ];
        for n in ns {
            for (round, q) in [4621, 4591, 7879, 8191].into_iter().enumerate() {
                let zq = Zq::new(q);
                let h = (q - 1) / 2;
                let bigs: [Vec<i32>; 4] = [
                    (0..n)
                        .map(|_| (next() % (2 * q as u64 - 1)) as i32 - (q - 1))
                        .collect(),
                    vec![h; n],
                    vec![h + 1; n], // centered: -h
                    (0..n)
                        .map(|_| [q - 1, 1 - q, h, -h][(next() & 3) as usize])
                        .collect(),
                ];
                let smalls: [Vec<i32>; 3] = [
                    (0..n).map(|_| (next() % 15) as i32 - 7).collect(),
                    vec![7; n],
                    (0..n).map(|_| [7, -7][(next() & 1) as usize]).collect(),
                ];
                for (i, a) in bigs.iter().enumerate() {
                    for (j, b) in smalls.iter().enumerate() {
                        let want: Vec<i32> = mul_ring(a, b).iter().map(|&x| zq.reduce(x)).collect();
                        let got = crate::simd::ctru_ntt::mul_mod_q(t, a, b, q);
                        assert_eq!(&got[..], &want[..], "n={n} q={q} big {i} small {j}");
                        let got = crate::simd::ctru_ntt::mul_mod_q(t, b, a, q);
                        assert_eq!(&got[..], &want[..], "n={n} q={q} swapped {i} {j}");
                    }
                }
                let bits = [10, 11, 1, 5][round];
                let top = 1i32 << bits;
                let bigs: [Vec<i32>; 3] = [
                    (0..n).map(|_| (next() % top as u64) as i32).collect(),
                    vec![top / 2; n], // centered: -2^(bits-1)
                    (0..n)
                        .map(|_| [top / 2, top / 2 - 1][(next() & 1) as usize])
                        .collect(),
                ];
                let smalls: [Vec<i32>; 3] = [
                    (0..n).map(|_| (next() % 31) as i32 - 15).collect(),
                    vec![15; n],
                    vec![-15; n],
                ];
                let mask = (top - 1) as u16;
                for (i, a) in bigs.iter().enumerate() {
                    for (j, b) in smalls.iter().enumerate() {
                        let a16: Vec<u16> = a.iter().map(|&x| x as u16).collect();
                        let b16: Vec<u16> = b.iter().map(|&x| x as u16).collect();
                        let want: Vec<i32> = mul_ring(&a16, &b16)
                            .iter()
                            .map(|&x| (x & mask) as i32)
                            .collect();
                        let got = crate::simd::ctru_ntt::mul_mod_pow2(t, a, b, bits);
                        assert_eq!(&got[..], &want[..], "n={n} bits={bits} {i} {j}");
                        let got = crate::simd::ctru_ntt::mul_mod_pow2(t, b, a, bits);
                        assert_eq!(&got[..], &want[..], "n={n} bits={bits} swapped {i} {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn karatsuba_matches_schoolbook() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, q) in [(653, 4621), (761, 4591), (1277, 7879), (5, 7), (81, 4591)] {
            let zq = Zq::new(q);
            for _ in 0..3 {
                let a: Vec<i32> = (0..n).map(|_| (next() % q as u64) as i32).collect();
                let b: Vec<i32> = (0..n).map(|_| (next() % 15) as i32 - 7).collect();
                let want = reference_product(&a, &b);
                let got = mul_mod_q(&a, &b, &zq);
                for i in 0..n {
                    assert_eq!(got[i] as i64, want[i].rem_euclid(q as i64));
                }
                let got2 = mul_mod_pow2(&a, &b, 11);
                for i in 0..n {
                    assert_eq!(got2[i] as i64, want[i].rem_euclid(2048));
                }
            }
        }
    }

    /// Constant-time check (run under valgrind by scripts/ct-memcheck.sh, which selects tests
    /// named `ct_check`): the products of encaps (h * r mod q), keygen (g * f^-1 mod q, both
    /// secret), decrypt (c * f mod 2^bits) and the CBD sampler on secret inputs, on the portable
    /// code and on both AVX2 products (NTT and schoolbook) where present. Memcheck must report no
    /// branch or memory index that depends on them.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ct_check_ctru_kernels() {
        use crate::ctru::ParamSet;
        use crate::simd::ct_check::secret;
        for p in [ParamSet::Ctru653, ParamSet::Ctru1277] {
            let n = p.n();
            let zq = Zq::new(p.q());
            let coins = vec![0xa5u8; p.coin_half_bytes()];
            secret(&coins[..]);
            let r = crate::ctru::cbd::sample(&coins, n, p.eta());
            let h: Vec<i32> = (0..n).map(|i| (i as i32 * 37) % p.q()).collect();
            let c: Vec<i32> = (0..n).map(|i| (i as i32 * 11) & 0x3ff).collect();
            let mut f: Vec<i32> = (0..n).map(|i| 2 * ((i % 5) as i32 - 2)).collect();
            f[0] += 1;
            secret(&f[..]);
            // A secret dense operand, as f^-1 in keygen.
            let f_inv = h.clone();
            secret(&f_inv[..]);
            // Whichever path this process uses (the AVX2 NTT product where present), then the
            // portable ring and the AVX2 schoolbook.
            std::hint::black_box(mul_mod_q(&h, &r, &zq));
            std::hint::black_box(mul_mod_q(&r, &f_inv, &zq));
            std::hint::black_box(mul_mod_pow2(&c, &f, p.q2_bits()));
            std::hint::black_box(mul_ring(&h, &r));
            let c16: Vec<u16> = c.iter().map(|&x| x as u16).collect();
            let f16: Vec<u16> = f.iter().map(|&x| x as u16).collect();
            std::hint::black_box(mul_ring(&c16, &f16));
            if let Some(t) = crate::simd::level().avx2() {
                std::hint::black_box(crate::simd::ctru_avx2::mul_ring(t, &h, &r));
                std::hint::black_box(crate::simd::ctru_avx2::mul_ring(t, &c, &f));
            }
            // Control (scripts/ct-memcheck.sh): a branch on the sampled r and one on f must be
            // reported, or the secrets above were not marked.
            if crate::settings::get().ct_control {
                if r[1] > 0 {
                    std::hint::black_box(1);
                }
                if f[1] > 0 {
                    std::hint::black_box(2);
                }
            }
        }
    }
}
