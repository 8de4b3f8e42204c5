//! WOTS+ one-time signatures (FIPS 205 section 5, Alg. 4-8).

use super::address::{Adrs, AdrsType};
use super::hash::{Hasher, MAX_LANES};
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
pub fn digits(hs: &Hasher, m: &[u8], out: &mut [u32; MAX_LEN]) -> usize {
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

/// Compresses the len chain ends into the WOTS+ public key (T_len at WOTS_PK).
fn compress_pk(hs: &Hasher, adrs: &Adrs, ends: &[u8], out: &mut [u8]) {
    let mut pk_adrs = *adrs;
    pk_adrs.set_type_and_clear(AdrsType::WotsPk);
    pk_adrs.set_key_pair_address(adrs.key_pair_address());
    hs.t(&pk_adrs, ends, out);
}

/// A WOTS+ signature taken while its key's chains are computed: wots_sign (Alg. 7) of the
/// message whose base-w `digits` are given, for key pair `leaf`, into `sig` (len * n bytes).
pub struct SignAt<'a> {
    pub leaf: u32,
    pub digits: &'a [u32; MAX_LEN],
    pub sig: &'a mut [u8],
}

/// wots_pkGen (Alg. 6) for the `count` key pairs from `first` of the tree at `adrs` (layer and
/// tree address set), their public keys into `out` (n bytes each). All count * len chains
/// advance together, `hs.lanes()` hashes at a time; the key pair `sign` names also has its
/// signature taken on the way (chain i's value after digit i steps).
pub fn pk_gen_many(
    hs: &Hasher,
    sk_seed: &[u8],
    adrs: &Adrs,
    first: u32,
    count: usize,
    mut sign: Option<SignAt<'_>>,
    out: &mut [u8],
) {
    let p = hs.params();
    let (n, len) = (p.n, p.wots_len());
    debug_assert!(count <= MAX_LANES);
    // Chain i of key pair first + l at index c = l * len + i.
    let at = |c: usize, ty: AdrsType, hash: u32| {
        let mut a = *adrs;
        a.set_type_and_clear(ty);
        a.set_key_pair_address(first + (c / len) as u32);
        a.set_chain_address((c % len) as u32);
        a.set_hash_address(hash);
        a
    };
    let total = count * len;
    let mut x = [0u8; MAX_LANES * MAX_LEN * MAX_N];
    let x = &mut x[..total * n];
    // Takes the signing key pair's chain values that sit at position `pos` now.
    let mut take = |x: &[u8], pos: u32| {
        if let Some(s) = sign.as_mut() {
            if let Some(l) = s.leaf.checked_sub(first).filter(|&l| (l as usize) < count) {
                for i in 0..len {
                    if s.digits[i] == pos {
                        let c = l as usize * len + i;
                        s.sig[i * n..(i + 1) * n].copy_from_slice(&x[c * n..(c + 1) * n]);
                    }
                }
            }
        }
    };
    // The chains' secret start values (Alg. 6 lines 10-13), then w - 1 steps of F (Alg. 5).
    hs.prf_many(total, |c| at(c, AdrsType::WotsPrf, 0), sk_seed, x);
    take(x, 0);
    for j in 0..W - 1 {
        hs.f_many(total, |c| at(c, AdrsType::WotsHash, j), x);
        take(x, j + 1);
    }
    for (l, (ends, pk)) in x
        .chunks_exact(len * n)
        .zip(out.chunks_exact_mut(n))
        .enumerate()
    {
        let mut a = *adrs;
        a.set_key_pair_address(first + l as u32);
        compress_pk(hs, &a, ends, pk);
    }
    x.zeroize();
}

/// wots_pkFromSig (Alg. 8): the public key a signature `sig` of `m` implies. `adrs` is the
/// WOTS_HASH address with its key pair set. The chains run `hs.lanes()` at a time, the longest
/// remaining first, each lane taking the next chain when its own ends.
pub fn pk_from_sig(hs: &Hasher, sig: &[u8], m: &[u8], adrs: &Adrs, out: &mut [u8]) {
    let n = hs.params().n;
    let mut d = [0u32; MAX_LEN];
    let len = digits(hs, m, &mut d);
    let mut ends = [0u8; MAX_LEN * MAX_N];
    ends[..len * n].copy_from_slice(&sig[..len * n]);
    // The digits come from the public message digest: ordering by them leaks nothing.
    let mut order: [usize; MAX_LEN] = core::array::from_fn(|i| i);
    order[..len].sort_unstable_by_key(|&i| d[i]);
    let mut queue = order[..len].iter().copied().filter(|&i| d[i] < W - 1);
    let lanes = hs.lanes();
    let mut slots = [0usize; MAX_LANES];
    let mut busy = 0;
    let mut pos = d;
    let mut buf = [0u8; MAX_LANES * MAX_N];
    loop {
        while busy < lanes {
            match queue.next() {
                Some(i) => {
                    slots[busy] = i;
                    busy += 1;
                }
                None => break,
            }
        }
        if busy == 0 {
            break;
        }
        for (l, &i) in slots[..busy].iter().enumerate() {
            buf[l * n..(l + 1) * n].copy_from_slice(&ends[i * n..(i + 1) * n]);
        }
        let chain_adrs = |l: usize| {
            let mut a = *adrs;
            a.set_chain_address(slots[l] as u32);
            a.set_hash_address(pos[slots[l]]);
            a
        };
        hs.f_many_public(busy, chain_adrs, &mut buf[..busy * n]);
        // Write back, advance, and drop the chains that reached w - 1 (keeping slot order).
        let mut kept = 0;
        for l in 0..busy {
            let i = slots[l];
            ends[i * n..(i + 1) * n].copy_from_slice(&buf[l * n..(l + 1) * n]);
            pos[i] += 1;
            if pos[i] < W - 1 {
                slots[kept] = i;
                kept += 1;
            }
        }
        busy = kept;
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
