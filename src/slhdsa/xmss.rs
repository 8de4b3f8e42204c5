//! XMSS trees of height h' (FIPS 205 section 6, Alg. 9-11). Signing builds the whole tree
//! once, level by level (the nodes xmss_node computes, each once), which gives both the
//! authentication path and the root.

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::MAX_N;
use super::wots;

/// The root of the XMSS tree at `adrs` (layer and tree address set), and, when `auth` is
/// given, leaf `idx`'s authentication path (h' nodes of n bytes) into it.
pub fn tree(
    hs: &Hasher,
    sk_seed: &[u8],
    adrs: &Adrs,
    idx: u32,
    mut auth: Option<&mut [u8]>,
    root: &mut [u8],
) {
    let p = hs.params();
    let (n, hp) = (p.n, p.hp);
    let mut nodes = vec![0u8; (1usize << hp) * n];
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::WotsHash);
    for (i, leaf) in nodes.chunks_exact_mut(n).enumerate() {
        a.set_key_pair_address(i as u32);
        wots::pk_gen(hs, sk_seed, &mut a, leaf);
    }
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::Tree);
    let mut pair = [0u8; 2 * MAX_N];
    for z in 1..=hp {
        if let Some(auth) = auth.as_deref_mut() {
            let sib = ((idx >> (z - 1)) ^ 1) as usize;
            auth[(z - 1) * n..z * n].copy_from_slice(&nodes[sib * n..(sib + 1) * n]);
        }
        a.set_tree_height(z as u32);
        for i in 0..1usize << (hp - z) {
            pair[..2 * n].copy_from_slice(&nodes[2 * i * n..(2 * i + 2) * n]);
            a.set_tree_index(i as u32);
            hs.t(&a, &pair[..2 * n], &mut nodes[i * n..(i + 1) * n]);
        }
    }
    root[..n].copy_from_slice(&nodes[..n]);
}

/// xmss_sign (Alg. 10) of the n-byte `m` with leaf `idx`; writes SIG_XMSS and returns the
/// tree's root into `root` (what xmss_pkFromSig would compute from the signature).
pub fn sign(
    hs: &Hasher,
    m: &[u8],
    sk_seed: &[u8],
    idx: u32,
    adrs: &Adrs,
    sig: &mut [u8],
    root: &mut [u8],
) {
    let p = hs.params();
    let (wots_sig, auth) = sig[..p.xmss_sig_len()].split_at_mut(p.wots_sig_len());
    tree(hs, sk_seed, adrs, idx, Some(auth), root);
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::WotsHash);
    a.set_key_pair_address(idx);
    wots::sign(hs, m, sk_seed, &mut a, wots_sig);
}

/// xmss_pkFromSig (Alg. 11): the root implied by SIG_XMSS on `m` at leaf `idx`.
pub fn pk_from_sig(hs: &Hasher, idx: u32, sig: &[u8], m: &[u8], adrs: &Adrs, root: &mut [u8]) {
    let p = hs.params();
    let n = p.n;
    let (wots_sig, auth) = sig[..p.xmss_sig_len()].split_at(p.wots_sig_len());
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::WotsHash);
    a.set_key_pair_address(idx);
    let mut node = [0u8; MAX_N];
    wots::pk_from_sig(hs, wots_sig, m, &mut a, &mut node);
    climb(hs, &mut a, AdrsType::Tree, idx, auth, &mut node[..n]);
    root[..n].copy_from_slice(&node[..n]);
}

/// Walks from a leaf (value in `node`, index `idx` in the tree index's low bits) up an
/// authentication path to the root (Alg. 11 lines 6-17, Alg. 17 lines 7-18). `adrs` keeps its
/// tree index base: FORS trees index leaves from i * 2^a.
pub fn climb(hs: &Hasher, adrs: &mut Adrs, ty: AdrsType, idx: u32, auth: &[u8], node: &mut [u8]) {
    let n = hs.params().n;
    if ty == AdrsType::Tree {
        adrs.set_type_and_clear(AdrsType::Tree);
        adrs.set_tree_index(idx);
    }
    let mut pair = [0u8; 2 * MAX_N];
    for (k, sib) in auth.chunks_exact(n).enumerate() {
        adrs.set_tree_height(k as u32 + 1);
        if (idx >> k) & 1 == 0 {
            adrs.set_tree_index(adrs.tree_index() / 2);
            pair[..n].copy_from_slice(node);
            pair[n..2 * n].copy_from_slice(sib);
        } else {
            adrs.set_tree_index((adrs.tree_index() - 1) / 2);
            pair[..n].copy_from_slice(sib);
            pair[n..2 * n].copy_from_slice(node);
        }
        hs.t(adrs, &pair[..2 * n], node);
    }
}
