//! The keyed hash functions of FIPS 205 section 11 (PRF, PRF_msg, H_msg, F, H, T_l) for one
//! public key: the SHA2 sets (11.2) with PK.seed's padded block compressed once (its SHA-256
//! and, for n > 16, SHA-512 midstates), and the SHAKE sets (11.1) on single Keccak blocks
//! where the input fits one.

use super::address::Adrs;
use super::params::{Params, MAX_N};
use crate::simd::keccak::{f1600, Shake256};
use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256, Sha512};
use zeroize::Zeroize;

/// SHAKE256's rate in bytes.
const SHAKE_RATE: usize = 136;

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

const SHA256_IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];
const SHA512_IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

impl Hasher {
    pub fn new(p: Params, pk_seed: &[u8]) -> Hasher {
        debug_assert_eq!(pk_seed.len(), p.n);
        let mut seed = [0u8; MAX_N];
        seed[..p.n].copy_from_slice(pk_seed);
        let mut mid256 = SHA256_IV;
        let mut mid512 = SHA512_IV;
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

    /// PRF(PK.seed, SK.seed, ADRS): F's construction on the secret seed.
    pub fn prf(&self, adrs: &Adrs, sk_seed: &[u8], out: &mut [u8]) {
        self.f(adrs, sk_seed, out);
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
