//! XMSS trees of height h' (FIPS 205 section 6, Alg. 9-11). Signing builds the whole tree
//! once, level by level (the nodes xmss_node computes, each once), which gives both the
//! authentication path and the root.

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::MAX_N;
use super::wots;

/// The root of the XMSS tree at `adrs` (layer and tree address set), and, when `auth` is
/// given, leaf `idx`'s authentication path (h' nodes of n bytes) into it. The leaves' WOTS+
/// keys are computed `hs.lanes()` at a time; `sign` takes one of them's signature on the way.
pub fn tree(
    hs: &Hasher,
    sk_seed: &[u8],
    adrs: &Adrs,
    idx: u32,
    mut auth: Option<&mut [u8]>,
    mut sign: Option<wots::SignAt<'_>>,
    root: &mut [u8],
) {
    let p = hs.params();
    let (n, hp) = (p.n, p.hp);
    let leaves = 1usize << hp;
    let mut nodes = vec![0u8; leaves * n];
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::WotsHash);
    let lanes = hs.lanes();
    for (g, pks) in nodes.chunks_mut(lanes * n).enumerate() {
        let first = g * lanes;
        let count = lanes.min(leaves - first);
        // Only the group holding the signing leaf needs it.
        let s = sign
            .as_mut()
            .filter(|s| (s.leaf as usize).wrapping_sub(first) < count);
        let s = s.map(|s| wots::SignAt {
            leaf: s.leaf,
            digits: s.digits,
            sig: &mut *s.sig,
        });
        wots::pk_gen_many(hs, sk_seed, &a, first as u32, count, s, pks);
    }
    let mut a = *adrs;
    a.set_type_and_clear(AdrsType::Tree);
    for z in 1..=hp {
        if let Some(auth) = auth.as_deref_mut() {
            let sib = ((idx >> (z - 1)) ^ 1) as usize;
            auth[(z - 1) * n..z * n].copy_from_slice(&nodes[sib * n..(sib + 1) * n]);
        }
        a.set_tree_height(z as u32);
        let node_adrs = |i: usize| {
            let mut b = a;
            b.set_tree_index(i as u32);
            b
        };
        hs.h_many(
            leaves >> z,
            node_adrs,
            &mut nodes[..(leaves >> (z - 1)) * n],
        );
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
    let mut digits = [0u32; wots::MAX_LEN];
    wots::digits(hs, m, &mut digits);
    let at = wots::SignAt {
        leaf: idx,
        digits: &digits,
        sig: wots_sig,
    };
    tree(hs, sk_seed, adrs, idx, Some(auth), Some(at), root);
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
    wots::pk_from_sig(hs, wots_sig, m, &a, &mut node);
    climb(hs, &mut a, idx, auth, &mut node[..n]);
    root[..n].copy_from_slice(&node[..n]);
}

/// Walks from a leaf (value in `node`, index `idx`) up an XMSS authentication path to the
/// root (Alg. 11 lines 6-17).
pub fn climb(hs: &Hasher, adrs: &mut Adrs, idx: u32, auth: &[u8], node: &mut [u8]) {
    let n = hs.params().n;
    adrs.set_type_and_clear(AdrsType::Tree);
    adrs.set_tree_index(idx);
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
