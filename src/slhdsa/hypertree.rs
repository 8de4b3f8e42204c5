//! The hypertree: d layers of XMSS trees (FIPS 205 section 7, Alg. 12-13).

use super::address::Adrs;
use super::hash::Hasher;
use super::params::MAX_N;
use super::xmss;

/// The leaf index within a tree at the next layer up, and that tree's index.
fn up(idx_tree: u64, hp: usize) -> (u32, u64) {
    ((idx_tree & ((1u64 << hp) - 1)) as u32, idx_tree >> hp)
}

/// ht_sign (Alg. 12): signs the n-byte `m` (the FORS public key) into SIG_HT.
pub fn sign(hs: &Hasher, m: &[u8], sk_seed: &[u8], idx_tree: u64, idx_leaf: u32, sig: &mut [u8]) {
    let p = hs.params();
    let n = p.n;
    let mut adrs = Adrs::default();
    let mut msg = [0u8; MAX_N];
    msg[..n].copy_from_slice(m);
    let (mut tree, mut leaf) = (idx_tree, idx_leaf);
    for (j, layer_sig) in sig.chunks_exact_mut(p.xmss_sig_len()).take(p.d).enumerate() {
        if j > 0 {
            (leaf, tree) = up(tree, p.hp);
        }
        adrs.set_layer_address(j as u32);
        adrs.set_tree_address(tree);
        let mut root = [0u8; MAX_N];
        xmss::sign(hs, &msg[..n], sk_seed, leaf, &adrs, layer_sig, &mut root);
        msg = root;
    }
}

/// ht_verify (Alg. 13): whether SIG_HT on `m` leads to `pk_root`.
pub fn verify(
    hs: &Hasher,
    m: &[u8],
    sig: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
    pk_root: &[u8],
) -> bool {
    let p = hs.params();
    let n = p.n;
    let mut adrs = Adrs::default();
    let mut node = [0u8; MAX_N];
    node[..n].copy_from_slice(m);
    let (mut tree, mut leaf) = (idx_tree, idx_leaf);
    for (j, layer_sig) in sig.chunks_exact(p.xmss_sig_len()).take(p.d).enumerate() {
        if j > 0 {
            (leaf, tree) = up(tree, p.hp);
        }
        adrs.set_layer_address(j as u32);
        adrs.set_tree_address(tree);
        let mut root = [0u8; MAX_N];
        xmss::pk_from_sig(hs, leaf, layer_sig, &node[..n], &adrs, &mut root);
        node = root;
    }
    node[..n] == pk_root[..n]
}
