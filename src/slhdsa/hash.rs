//! The keyed hash functions of FIPS 205 section 11 (PRF, PRF_msg, H_msg, F, H, T_l) for one
//! public key: the SHA2 sets (11.2) with PK.seed's padded block compressed once (its SHA-256
//! and, for n > 16, SHA-512 midstates), and the SHAKE sets (11.1) on single Keccak blocks
//! where the input fits one.

use super::address::Adrs;
use super::params::{Params, MAX_N};
use crate::simd::keccak::{f1600, Shake256};
use crate::simd::sha2_consts::{IV256, IV512};
#[cfg(target_arch = "x86_64")]
use crate::simd::{
    keccak_x4::{ShakeX4, SHAKE256_RATE},
    sha256ni::ShaNi,
};
use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256, Sha512};
use zeroize::Zeroize;

/// SHAKE256's rate in bytes.
const SHAKE_RATE: usize = 136;

/// The most inputs the multi-lane hashes take at once (SHA-256 in eight AVX2 lanes).
pub const MAX_LANES: usize = 8;

/// Interleaved SHA-NI streams: four keep `sha256rnds2` busy (one or two are bound by its
/// latency; more spill registers).
#[cfg(target_arch = "x86_64")]
const SHA_NI_LANES: usize = 4;

/// The hash functions bound to one PK.seed.
#[derive(Clone)]
pub struct Hasher {
    p: Params,
    pk_seed: [u8; MAX_N],
    /// SHA-256 state after PK.seed || 0^(64-n) (SHA2 sets).
    mid256: [u32; 8],
    /// SHA-512 state after PK.seed || 0^(128-n) (SHA2 sets with n > 16).
    mid512: [u64; 8],
}

impl Hasher {
    pub fn new(p: Params, pk_seed: &[u8]) -> Hasher {
        debug_assert_eq!(pk_seed.len(), p.n);
        let mut seed = [0u8; MAX_N];
        seed[..p.n].copy_from_slice(pk_seed);
        let mut mid256 = IV256;
        let mut mid512 = IV512;
        if p.sha2 {
            let mut b = [0u8; 64];
            b[..p.n].copy_from_slice(pk_seed);
            sha2::compress256(&mut mid256, &[*GenericArray::from_slice(&b)]);
            if p.n > 16 {
                let mut b = [0u8; 128];
                b[..p.n].copy_from_slice(pk_seed);
                sha2::compress512(&mut mid512, &[*GenericArray::from_slice(&b)]);
            }
        }
        Hasher {
            p,
            pk_seed: seed,
            mid256,
            mid512,
        }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    pub fn pk_seed(&self) -> &[u8] {
        &self.pk_seed[..self.p.n]
    }

    /// F(PK.seed, ADRS, M_1): one n-byte block.
    pub fn f(&self, adrs: &Adrs, m: &[u8], out: &mut [u8]) {
        if self.p.sha2 {
            sha256_tail(&self.mid256, &adrs.compressed(), m, out);
        } else {
            self.shake_thash(adrs, m, out);
        }
    }

    /// H(PK.seed, ADRS, M_2) and T_l(PK.seed, ADRS, M_l): SHA-512 for the SHA2 sets with n > 16.
    pub fn t(&self, adrs: &Adrs, m: &[u8], out: &mut [u8]) {
        if !self.p.sha2 {
            self.shake_thash(adrs, m, out);
        } else if self.p.n == 16 {
            sha256_tail(&self.mid256, &adrs.compressed(), m, out);
        } else {
            sha512_tail(&self.mid512, &adrs.compressed(), m, out);
        }
    }

    /// PRF_msg(SK.prf, opt_rand, M): n bytes (HMAC-SHA-256/512 for SHA2, SHAKE256 otherwise).
    pub fn prf_msg(&self, sk_prf: &[u8], opt_rand: &[u8], msg: &[&[u8]], out: &mut [u8]) {
        let n = self.p.n;
        if !self.p.sha2 {
            let mut s = Shake256::default();
            s.update(sk_prf);
            s.update(opt_rand);
            msg.iter().for_each(|m| s.update(m));
            s.finalize_xof().read(&mut out[..n]);
        } else if n == 16 {
            let d = hmac::<Sha256, 64>(sk_prf, opt_rand, msg);
            out[..n].copy_from_slice(&d[..n]);
        } else {
            let d = hmac::<Sha512, 128>(sk_prf, opt_rand, msg);
            out[..n].copy_from_slice(&d[..n]);
        }
    }

    /// H_msg(R, PK.seed, PK.root, M): m bytes (MGF1 over SHA-256/512 for SHA2, SHAKE256 otherwise).
    pub fn h_msg(&self, r: &[u8], pk_root: &[u8], msg: &[&[u8]], out: &mut [u8]) {
        let m = self.p.m;
        let seed = self.pk_seed();
        if !self.p.sha2 {
            let mut s = Shake256::default();
            s.update(r);
            s.update(seed);
            s.update(pk_root);
            msg.iter().for_each(|x| s.update(x));
            s.finalize_xof().read(&mut out[..m]);
        } else if self.p.n == 16 {
            mgf1_digest::<Sha256>(r, seed, pk_root, msg, &mut out[..m]);
        } else {
            mgf1_digest::<Sha512>(r, seed, pk_root, msg, &mut out[..m]);
        }
    }

    /// How many inputs the multi-lane hashes (`prf_many`, `f_many`, `h_many`) hash at once on
    /// this CPU: for SHA-256 four (interleaved SHA-NI streams) or eight (AVX2 lanes), for
    /// SHAKE four (Keccak states in AVX2 registers), one with the portable code. Callers group
    /// independent work by it.
    pub fn lanes(&self) -> usize {
        #[cfg(target_arch = "x86_64")]
        if self.p.sha2 && ShaNi::detect().is_some() {
            return SHA_NI_LANES;
        }
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level().avx2().is_some() {
            return if self.p.sha2 {
                crate::simd::sha256x8::LANES
            } else {
                4
            };
        }
        1
    }

    /// PRF for `count` addresses: lane j of `out` (n bytes at j * n) = PRF(PK.seed, SK.seed,
    /// adrs(j)), which is F's construction on the secret seed.
    pub fn prf_many(
        &self,
        count: usize,
        adrs: impl Fn(usize) -> Adrs,
        sk_seed: &[u8],
        out: &mut [u8],
    ) {
        self.many(count, self.p.n, adrs, Some(sk_seed), out, true);
    }

    /// F in place on `count` n-byte values: lane j of `buf` = F(PK.seed, adrs(j), lane j).
    pub fn f_many(&self, count: usize, adrs: impl Fn(usize) -> Adrs, buf: &mut [u8]) {
        self.many(count, self.p.n, adrs, None, buf, true);
    }

    /// H on `count` pairs, in place: n bytes at j * n = H(PK.seed, adrs(j), the 2n bytes at
    /// j * 2n) (one level of a tree from the level below).
    pub fn h_many(&self, count: usize, adrs: impl Fn(usize) -> Adrs, buf: &mut [u8]) {
        self.many(count, 2 * self.p.n, adrs, None, buf, true);
    }

    /// `f_many` on public values (verification: a signature's chains): nothing to wipe after.
    pub fn f_many_public(&self, count: usize, adrs: impl Fn(usize) -> Adrs, buf: &mut [u8]) {
        self.many(count, self.p.n, adrs, None, buf, false);
    }

    /// `h_many` on public values (verification: the FORS paths of a signature).
    pub fn h_many_public(&self, count: usize, adrs: impl Fn(usize) -> Adrs, buf: &mut [u8]) {
        self.many(count, 2 * self.p.n, adrs, None, buf, false);
    }

    /// F or H (by `in_len`: n or 2n) on `count` inputs, lanes at a time: input j is `src`, or
    /// else the `in_len` bytes of `buf` at j * in_len; output j goes to `buf` at j * n. Each
    /// group's inputs are read before its outputs are written, so the two may overlap as above.
    /// `wipe`: the inputs may be secret, so the buffers that held them are zeroed at the end
    /// (verification hashes only public values and skips that).
    fn many(
        &self,
        count: usize,
        in_len: usize,
        adrs: impl Fn(usize) -> Adrs,
        src: Option<&[u8]>,
        buf: &mut [u8],
        wipe: bool,
    ) {
        let n = self.p.n;
        #[cfg(target_arch = "x86_64")]
        {
            // SHA-256 (F, PRF; H for n = 16) is one block after PK.seed's.
            if self.p.sha2 && (in_len == n || n == 16) {
                use crate::simd::{sha256ni, sha256x8};
                if let Some(t) = ShaNi::detect() {
                    let compress = |s: &mut _, b: &_| sha256ni::compress(t, s, b);
                    return self.sha256_lanes::<SHA_NI_LANES>(
                        count, in_len, &adrs, src, buf, compress, wipe,
                    );
                }
                if let Some(t) = crate::simd::level().avx2() {
                    let compress = |s: &mut _, b: &_| sha256x8::compress_x8(t, s, b);
                    return self.sha256_lanes::<{ sha256x8::LANES }>(
                        count, in_len, &adrs, src, buf, compress, wipe,
                    );
                }
            }
            // SHA-512 (H for n > 16) is one block after PK.seed's too.
            if self.p.sha2 && n > 16 {
                if let Some(t) = crate::simd::level().avx2() {
                    return self.sha512_lanes(t, count, in_len, &adrs, buf, wipe);
                }
            }
            // SHAKE256 on one block (PK.seed, ADRS, M all fit), four states at once.
            let avx2 = crate::simd::level().avx2().is_some();
            if !self.p.sha2 && n + 32 + in_len < SHAKE_RATE && avx2 {
                return self.shake_lanes(count, in_len, &adrs, src, buf, wipe);
            }
        }
        let mut m = [0u8; 2 * MAX_N];
        for j in 0..count {
            m[..in_len].copy_from_slice(src.unwrap_or(&buf[j * in_len..(j + 1) * in_len]));
            let a = adrs(j);
            let out = &mut buf[j * n..(j + 1) * n];
            if in_len == n {
                self.f(&a, &m[..in_len], out);
            } else {
                self.t(&a, &m[..in_len], out);
            }
        }
        if wipe {
            m.zeroize();
        }
    }

    /// `many` for SHA-256, L lanes per `compress`: each lane's last block is ADRS^c, M and the
    /// padding (at most 22 + 32 + 9 bytes), compressed from PK.seed's midstate.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments)]
    fn sha256_lanes<const L: usize>(
        &self,
        count: usize,
        in_len: usize,
        adrs: &impl Fn(usize) -> Adrs,
        src: Option<&[u8]>,
        buf: &mut [u8],
        compress: impl Fn(&mut [[u32; 8]; L], &[[u8; 64]; L]),
        wipe: bool,
    ) {
        let n = self.p.n;
        let end = 22 + in_len;
        debug_assert!(end + 9 <= 64);
        let mut blocks = [[0u8; 64]; L];
        for b in blocks.iter_mut() {
            b[end] = 0x80;
            b[56..].copy_from_slice(&((64 + end) as u64 * 8).to_be_bytes());
        }
        let mut states = [self.mid256; L];
        for g in (0..count).step_by(L) {
            let lanes = L.min(count - g);
            for (l, b) in blocks.iter_mut().enumerate().take(lanes) {
                let j = g + l;
                b[..22].copy_from_slice(&adrs(j).compressed());
                b[22..end].copy_from_slice(src.unwrap_or(&buf[j * in_len..(j + 1) * in_len]));
            }
            states = [self.mid256; L];
            compress(&mut states, &blocks);
            for (l, st) in states.iter().enumerate().take(lanes) {
                let out = &mut buf[(g + l) * n..(g + l + 1) * n];
                for (o, w) in out.chunks_mut(4).zip(st) {
                    o.copy_from_slice(&w.to_be_bytes()[..o.len()]);
                }
            }
        }
        if wipe {
            blocks.zeroize();
            states.zeroize();
        }
    }

    /// `many` for SHA-512 (H of the sets with n > 16), four AVX2 lanes: each lane's last block
    /// is ADRS^c, M and the padding (at most 22 + 64 + 17 bytes), from PK.seed's midstate.
    #[cfg(target_arch = "x86_64")]
    fn sha512_lanes(
        &self,
        t: crate::simd::Avx2,
        count: usize,
        in_len: usize,
        adrs: &impl Fn(usize) -> Adrs,
        buf: &mut [u8],
        wipe: bool,
    ) {
        use crate::simd::sha512x4::{compress_x4, LANES};
        let n = self.p.n;
        let end = 22 + in_len;
        debug_assert!(end + 17 <= 128);
        let mut blocks = [[0u8; 128]; LANES];
        for b in blocks.iter_mut() {
            b[end] = 0x80;
            b[112..].copy_from_slice(&((128 + end) as u128 * 8).to_be_bytes());
        }
        let mut states = [self.mid512; LANES];
        for g in (0..count).step_by(LANES) {
            let lanes = LANES.min(count - g);
            for (l, b) in blocks.iter_mut().enumerate().take(lanes) {
                let j = g + l;
                b[..22].copy_from_slice(&adrs(j).compressed());
                b[22..end].copy_from_slice(&buf[j * in_len..(j + 1) * in_len]);
            }
            states = [self.mid512; LANES];
            compress_x4(t, &mut states, &blocks);
            for (l, st) in states.iter().enumerate().take(lanes) {
                let out = &mut buf[(g + l) * n..(g + l + 1) * n];
                for (o, w) in out.chunks_mut(8).zip(st) {
                    o.copy_from_slice(&w.to_be_bytes()[..o.len()]);
                }
            }
        }
        if wipe {
            blocks.zeroize();
            states.zeroize();
        }
    }

    /// `many` for SHAKE256, four Keccak states at once: PK.seed || ADRS || M in one block.
    #[cfg(target_arch = "x86_64")]
    fn shake_lanes(
        &self,
        count: usize,
        in_len: usize,
        adrs: &impl Fn(usize) -> Adrs,
        src: Option<&[u8]>,
        buf: &mut [u8],
        wipe: bool,
    ) {
        let n = self.p.n;
        let len = n + 32 + in_len;
        let mut blocks = [[0u8; 4 * MAX_N]; 4];
        for b in blocks.iter_mut() {
            b[..n].copy_from_slice(self.pk_seed());
        }
        let mut outs = [[0u8; SHAKE256_RATE]; 4];
        for g in (0..count).step_by(4) {
            let lanes = 4.min(count - g);
            for (l, b) in blocks.iter_mut().enumerate().take(lanes) {
                let j = g + l;
                b[n..n + 32].copy_from_slice(&adrs(j).0);
                b[n + 32..len].copy_from_slice(src.unwrap_or(&buf[j * in_len..(j + 1) * in_len]));
            }
            let [b0, b1, b2, b3] = &blocks;
            let mut x = ShakeX4::new(
                crate::simd::level(),
                SHAKE256_RATE,
                [&b0[..len], &b1[..len], &b2[..len], &b3[..len]],
            )
            .expect("the AVX2 level");
            let [o0, o1, o2, o3] = &mut outs;
            x.squeeze_blocks([o0, o1, o2, o3]);
            for (l, o) in outs.iter().enumerate().take(lanes) {
                buf[(g + l) * n..(g + l + 1) * n].copy_from_slice(&o[..n]);
            }
        }
        if wipe {
            blocks.zeroize();
            outs.zeroize();
        }
    }

    /// SHAKE256(PK.seed || ADRS || M, 8n): one Keccak block when it fits (F, H, PRF).
    fn shake_thash(&self, adrs: &Adrs, m: &[u8], out: &mut [u8]) {
        let n = self.p.n;
        if n + 32 + m.len() < SHAKE_RATE {
            let mut block = [0u8; SHAKE_RATE];
            block[..n].copy_from_slice(self.pk_seed());
            block[n..n + 32].copy_from_slice(&adrs.0);
            let end = n + 32 + m.len();
            block[n + 32..end].copy_from_slice(m);
            block[end] ^= 0x1f;
            block[SHAKE_RATE - 1] ^= 0x80;
            let mut s = [0u64; 25];
            for (lane, b) in s.iter_mut().zip(block.chunks_exact(8)) {
                *lane = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
            block.zeroize();
            f1600(&mut s);
            let mut bytes = [0u8; MAX_N];
            for (b, lane) in bytes.chunks_exact_mut(8).zip(s.iter()) {
                b.copy_from_slice(&lane.to_le_bytes());
            }
            out[..n].copy_from_slice(&bytes[..n]);
            s.zeroize();
            bytes.zeroize();
        } else {
            let mut s = Shake256::default();
            s.update(self.pk_seed());
            s.update(&adrs.0);
            s.update(m);
            s.finalize_xof().read(&mut out[..n]);
        }
    }
}

/// Trunc_n(SHA-256(PK.seed || 0^(64-n) || ADRS^c || m)) from the midstate after the first block.
fn sha256_tail(mid: &[u32; 8], adrs_c: &[u8; 22], m: &[u8], out: &mut [u8]) {
    let total = 64 + 22 + m.len();
    let mut state = *mid;
    let mut block = [0u8; 64];
    let mut pos = 22;
    block[..22].copy_from_slice(adrs_c);
    let mut rest = m;
    loop {
        let take = rest.len().min(64 - pos);
        block[pos..pos + take].copy_from_slice(&rest[..take]);
        pos += take;
        rest = &rest[take..];
        if pos < 64 {
            break;
        }
        sha2::compress256(&mut state, &[*GenericArray::from_slice(&block)]);
        pos = 0;
    }
    // Padding: 0x80, zeros, the bit length in the last 8 bytes (a second block if needed).
    block[pos] = 0x80;
    block[pos + 1..].fill(0);
    if pos + 1 > 56 {
        sha2::compress256(&mut state, &[*GenericArray::from_slice(&block)]);
        block.fill(0);
    }
    block[56..].copy_from_slice(&((total as u64) * 8).to_be_bytes());
    sha2::compress256(&mut state, &[*GenericArray::from_slice(&block)]);
    block.zeroize();
    let mut digest = [0u8; 32];
    for (d, w) in digest.chunks_exact_mut(4).zip(state.iter()) {
        d.copy_from_slice(&w.to_be_bytes());
    }
    let n = out.len().min(32);
    out[..n].copy_from_slice(&digest[..n]);
    digest.zeroize();
}

/// Trunc_n(SHA-512(PK.seed || 0^(128-n) || ADRS^c || m)) from the midstate after the first block.
fn sha512_tail(mid: &[u64; 8], adrs_c: &[u8; 22], m: &[u8], out: &mut [u8]) {
    let total = 128 + 22 + m.len();
    let mut state = *mid;
    let mut block = [0u8; 128];
    let mut pos = 22;
    block[..22].copy_from_slice(adrs_c);
    let mut rest = m;
    loop {
        let take = rest.len().min(128 - pos);
        block[pos..pos + take].copy_from_slice(&rest[..take]);
        pos += take;
        rest = &rest[take..];
        if pos < 128 {
            break;
        }
        sha2::compress512(&mut state, &[*GenericArray::from_slice(&block)]);
        pos = 0;
    }
    block[pos] = 0x80;
    block[pos + 1..].fill(0);
    if pos + 1 > 112 {
        sha2::compress512(&mut state, &[*GenericArray::from_slice(&block)]);
        block.fill(0);
    }
    block[112..].copy_from_slice(&((total as u128) * 8).to_be_bytes());
    sha2::compress512(&mut state, &[*GenericArray::from_slice(&block)]);
    block.zeroize();
    let mut digest = [0u8; 64];
    for (d, w) in digest.chunks_exact_mut(8).zip(state.iter()) {
        d.copy_from_slice(&w.to_be_bytes());
    }
    let n = out.len().min(64);
    out[..n].copy_from_slice(&digest[..n]);
    digest.zeroize();
}

/// HMAC (RFC 2104) with a key shorter than the block (SK.prf), over opt_rand || M.
fn hmac<D: Digest + Clone, const B: usize>(key: &[u8], opt_rand: &[u8], msg: &[&[u8]]) -> Vec<u8> {
    let mut pad = [0u8; B];
    pad[..key.len()].copy_from_slice(key);
    pad.iter_mut().for_each(|b| *b ^= 0x36);
    let mut inner = D::new();
    inner.update(pad);
    inner.update(opt_rand);
    msg.iter().for_each(|m| inner.update(m));
    let ih = inner.finalize();
    pad.iter_mut().for_each(|b| *b ^= 0x36 ^ 0x5c);
    let mut outer = D::new();
    outer.update(pad);
    pad.zeroize();
    outer.update(&ih);
    outer.finalize().to_vec()
}

/// MGF1-SHA-x(R || PK.seed || SHA-x(R || PK.seed || PK.root || M), out.len()).
fn mgf1_digest<D: Digest + Clone>(
    r: &[u8],
    pk_seed: &[u8],
    pk_root: &[u8],
    msg: &[&[u8]],
    out: &mut [u8],
) {
    let mut h = D::new();
    h.update(r);
    h.update(pk_seed);
    h.update(pk_root);
    msg.iter().for_each(|m| h.update(m));
    let inner = h.finalize();
    let mut seed = D::new();
    seed.update(r);
    seed.update(pk_seed);
    seed.update(&inner);
    for (counter, chunk) in out.chunks_mut(<D as Digest>::output_size()).enumerate() {
        let mut c = seed.clone();
        c.update((counter as u32).to_be_bytes());
        let d = c.finalize();
        chunk.copy_from_slice(&d[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slhdsa::ParamSet;

    /// Every multi-lane path (SHA-256 in SHA-NI streams and in AVX2 lanes, SHAKE256 in four
    /// Keccak states) gives F, H and PRF exactly as the one-input functions do, on random
    /// inputs and addresses, for lane counts that fill groups and that leave them part-full.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lanes_equal_one_input_hashes() {
        use crate::simd::{sha256ni, sha256x8};
        let mut seed = 9u64;
        let mut byte = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        };
        let Some(avx2) = crate::simd::available().into_iter().find_map(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        for p in [
            ParamSet::Sha2_128f,
            ParamSet::Sha2_192f,
            ParamSet::Shake128f,
            ParamSet::Shake256f,
        ] {
            let q = p.params();
            let n = q.n;
            let pk_seed: Vec<u8> = (0..n).map(|_| byte()).collect();
            let sk_seed: Vec<u8> = (0..n).map(|_| byte()).collect();
            let hs = Hasher::new(q, &pk_seed);
            for count in [1, 3, 4, 8, 13] {
                let adrs: Vec<Adrs> = (0..count)
                    .map(|_| Adrs(core::array::from_fn(|_| byte())))
                    .collect();
                let ins: Vec<u8> = (0..count * 2 * n).map(|_| byte()).collect();
                // What the one-input functions give: F, H (T with 2n bytes) and PRF.
                let mut want_f = vec![0u8; count * n];
                let mut want_h = vec![0u8; count * n];
                let mut want_prf = vec![0u8; count * n];
                for j in 0..count {
                    hs.f(
                        &adrs[j],
                        &ins[j * n..(j + 1) * n],
                        &mut want_f[j * n..(j + 1) * n],
                    );
                    hs.t(
                        &adrs[j],
                        &ins[2 * j * n..2 * (j + 1) * n],
                        &mut want_h[j * n..(j + 1) * n],
                    );
                    hs.f(&adrs[j], &sk_seed, &mut want_prf[j * n..(j + 1) * n]);
                }
                type Run<'a> = Box<dyn Fn(usize, Option<&[u8]>, &mut [u8]) + 'a>;
                let at = |j: usize| adrs[j];
                let (hs, at) = (&hs, &at);
                let mut paths: Vec<(&str, Run)> = Vec::new();
                if q.sha2 {
                    paths.push((
                        "avx2 x8",
                        Box::new(|in_len, src, buf| {
                            let c = |s: &mut _, b: &_| sha256x8::compress_x8(avx2, s, b);
                            hs.sha256_lanes::<8>(count, in_len, at, src, buf, c, true)
                        }),
                    ));
                    if let Some(t) = sha256ni::ShaNi::detect() {
                        paths.push((
                            "sha-ni",
                            Box::new(move |in_len, src, buf| {
                                let c = |s: &mut _, b: &_| sha256ni::compress(t, s, b);
                                hs.sha256_lanes::<SHA_NI_LANES>(
                                    count, in_len, at, src, buf, c, false,
                                )
                            }),
                        ));
                    } else {
                        println!("SKIPPED: no SHA extensions on this CPU");
                    }
                } else {
                    paths.push((
                        "keccak x4",
                        Box::new(|in_len, src, buf| {
                            hs.shake_lanes(count, in_len, at, src, buf, true)
                        }),
                    ));
                }
                for (name, run) in &paths {
                    let mut f = ins[..count * n].to_vec();
                    run(n, None, &mut f);
                    assert_eq!(f, want_f, "{} {name} F, {count} lanes", p.name());
                    let mut prf = vec![0u8; count * n];
                    run(n, Some(&sk_seed), &mut prf);
                    assert_eq!(prf, want_prf, "{} {name} PRF, {count} lanes", p.name());
                    // H goes through SHA-512 for n > 16 (below), never these lanes.
                    if !q.sha2 || n == 16 {
                        let mut h = ins.clone();
                        run(2 * n, None, &mut h);
                        assert_eq!(
                            h[..count * n],
                            want_h[..],
                            "{} {name} H, {count} lanes",
                            p.name()
                        );
                    }
                }
                if q.sha2 && n > 16 {
                    let mut h = ins.clone();
                    hs.sha512_lanes(avx2, count, 2 * n, at, &mut h, true);
                    let what = format!("{} SHA-512 x4 H, {count} lanes", p.name());
                    assert_eq!(h[..count * n], want_h[..], "{what}");
                }
            }
        }
    }

    /// The midstate path equals a plain SHA-256 / SHA-512 of the whole input, for inputs ending
    /// in the first tail block, needing a padding block, and spanning several blocks.
    #[test]
    fn midstate_tails_equal_plain_digests() {
        for p in [ParamSet::Sha2_128f, ParamSet::Sha2_256f] {
            let q = p.params();
            let seed: Vec<u8> = (0..q.n as u8).collect();
            let hs = Hasher::new(q, &seed);
            let mut adrs = Adrs::default();
            adrs.set_layer_address(3);
            adrs.set_tree_address(0x0102_0304_0506_0708);
            adrs.set_tree_index(77);
            for len in [0, 16, 32, 33, 41, 42, 64, 100, 106, 107, 200, 1000] {
                let m: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
                let mut got = [0u8; 32];
                sha256_tail(&hs.mid256, &adrs.compressed(), &m, &mut got);
                let mut plain = Sha256::new();
                plain.update(&seed);
                plain.update(vec![0u8; 64 - q.n]);
                plain.update(adrs.compressed());
                plain.update(&m);
                assert_eq!(got[..], plain.finalize()[..], "sha256 len {len}");
                if q.n > 16 {
                    let mut got = [0u8; 64];
                    sha512_tail(&hs.mid512, &adrs.compressed(), &m, &mut got);
                    let mut plain = Sha512::new();
                    plain.update(&seed);
                    plain.update(vec![0u8; 128 - q.n]);
                    plain.update(adrs.compressed());
                    plain.update(&m);
                    assert_eq!(got[..], plain.finalize()[..], "sha512 len {len}");
                }
            }
        }
    }
}
