//! WOTS+ one-time signatures (FIPS 205 section 5, Alg. 4-8).

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::{LEN2, LG_W, MAX_N, W};
use zeroize::Zeroize;

/// The most chains of any set (len = 2n + 3 for n = 32).
pub const MAX_LEN: usize = 2 * MAX_N + LEN2;

/// base_2b (Alg. 4): the first `out.len()` b-bit digits of `x`, most significant first.
pub fn base_2b(x: &[u8], b: usize, out: &mut [u32]) {
    let mut inp = 0;
    let mut bits = 0usize;
    let mut total: u64 = 0;
    for o in out.iter_mut() {
        while bits < b {
            total = (total << 8) | x[inp] as u64;
            inp += 1;
            bits += 8;
        }
        bits -= b;
        *o = ((total >> bits) & ((1u64 << b) - 1)) as u32;
    }
}

/// The len base-w digits WOTS+ signs for an n-byte message: len_1 message digits and the
/// len_2 checksum digits (Alg. 6 lines 2-9).
fn digits(hs: &Hasher, m: &[u8], out: &mut [u32; MAX_LEN]) -> usize {
    let p = hs.params();
    let (len1, len) = (p.len1(), p.wots_len());
    base_2b(m, LG_W, &mut out[..len1]);
    let mut csum: u32 = out[..len1].iter().map(|&d| W - 1 - d).sum();
    // Left-align the checksum's len_2 * lg_w = 12 bits in two bytes.
    csum <<= (8 - (LEN2 * LG_W) % 8) % 8;
    let bytes = (csum as u16).to_be_bytes();
    base_2b(&bytes, LG_W, &mut out[len1..len]);
    len
}

/// chain (Alg. 5): `steps` applications of F from position `start`, in place.
pub fn chain(hs: &Hasher, x: &mut [u8], start: u32, steps: u32, adrs: &mut Adrs) {
    let n = hs.params().n;
    let mut tmp = [0u8; MAX_N];
    for j in start..start + steps {
        adrs.set_hash_address(j);
        tmp[..n].copy_from_slice(&x[..n]);
        hs.f(adrs, &tmp[..n], x);
    }
    tmp.zeroize();
}

/// The chain's secret start value (Alg. 6 lines 10-13 / Alg. 5's callers): PRF at WOTS_PRF.
fn secret(hs: &Hasher, sk_seed: &[u8], adrs: &Adrs, i: u32, out: &mut [u8]) {
    let mut sk_adrs = *adrs;
    sk_adrs.set_type_and_clear(AdrsType::WotsPrf);
    sk_adrs.set_key_pair_address(adrs.key_pair_address());
    sk_adrs.set_chain_address(i);
    hs.prf(&sk_adrs, sk_seed, out);
}

/// Compresses the len chain ends into the WOTS+ public key (T_len at WOTS_PK).
fn compress_pk(hs: &Hasher, adrs: &Adrs, ends: &[u8], out: &mut [u8]) {
    let mut pk_adrs = *adrs;
    pk_adrs.set_type_and_clear(AdrsType::WotsPk);
    pk_adrs.set_key_pair_address(adrs.key_pair_address());
    hs.t(&pk_adrs, ends, out);
}

/// wots_pkGen (Alg. 6). `adrs` is a WOTS_HASH address with its key pair set.
pub fn pk_gen(hs: &Hasher, sk_seed: &[u8], adrs: &mut Adrs, out: &mut [u8]) {
    let p = hs.params();
    let (n, len) = (p.n, p.wots_len());
    let mut ends = [0u8; MAX_LEN * MAX_N];
    for i in 0..len {
        let x = &mut ends[i * n..(i + 1) * n];
        secret(hs, sk_seed, adrs, i as u32, x);
        adrs.set_chain_address(i as u32);
        chain(hs, x, 0, W - 1, adrs);
    }
    compress_pk(hs, adrs, &ends[..len * n], out);
}

/// wots_sign (Alg. 7): the len * n-byte signature of the n-byte message `m` into `sig`.
pub fn sign(hs: &Hasher, m: &[u8], sk_seed: &[u8], adrs: &mut Adrs, sig: &mut [u8]) {
    let n = hs.params().n;
    let mut d = [0u32; MAX_LEN];
    let len = digits(hs, m, &mut d);
    for (i, &di) in d[..len].iter().enumerate() {
        let x = &mut sig[i * n..(i + 1) * n];
        secret(hs, sk_seed, adrs, i as u32, x);
        adrs.set_chain_address(i as u32);
        chain(hs, x, 0, di, adrs);
    }
}

/// wots_pkFromSig (Alg. 8): the public key a signature `sig` of `m` implies.
pub fn pk_from_sig(hs: &Hasher, sig: &[u8], m: &[u8], adrs: &mut Adrs, out: &mut [u8]) {
    let n = hs.params().n;
    let mut d = [0u32; MAX_LEN];
    let len = digits(hs, m, &mut d);
    let mut ends = [0u8; MAX_LEN * MAX_N];
    ends[..len * n].copy_from_slice(&sig[..len * n]);
    for (i, &di) in d[..len].iter().enumerate() {
        adrs.set_chain_address(i as u32);
        chain(hs, &mut ends[i * n..(i + 1) * n], di, W - 1 - di, adrs);
    }
    compress_pk(hs, adrs, &ends[..len * n], out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_2b_splits_big_endian() {
        let mut out = [0u32; 4];
        base_2b(&[0xab, 0xcd], 4, &mut out);
        assert_eq!(out, [0xa, 0xb, 0xc, 0xd]);
        let mut out = [0u32; 2];
        base_2b(&[0xff, 0x00, 0x0f], 12, &mut out);
        assert_eq!(out, [0xff0, 0x00f]);
    }
}
