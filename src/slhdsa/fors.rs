//! FORS few-time signatures (FIPS 205 section 8, Alg. 14-17). Signing builds each of the k
//! trees once, level by level, for its authentication path and root.

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::MAX_N;
use super::wots::base_2b;
use zeroize::Zeroize;

/// The most FORS trees of any set (k = 35).
const MAX_K: usize = 35;

/// Compresses the k roots into the FORS public key (T_k at FORS_ROOTS).
fn compress_roots(hs: &Hasher, adrs: &Adrs, roots: &[u8], pk: &mut [u8]) {
    let mut pk_adrs = *adrs;
    pk_adrs.set_type_and_clear(AdrsType::ForsRoots);
    pk_adrs.set_key_pair_address(adrs.key_pair_address());
    hs.t(&pk_adrs, roots, pk);
}

/// fors_sign (Alg. 16) of the message digest `md` into SIG_FORS, and the FORS public key
/// (fors_pkFromSig of that signature, Alg. 17) into `pk`. `adrs` is the FORS_TREE address
/// with the tree and key pair set. Each tree's leaves, and then each level, are hashed
/// `hs.lanes()` at a time.
pub fn sign(hs: &Hasher, md: &[u8], sk_seed: &[u8], adrs: &Adrs, sig: &mut [u8], pk: &mut [u8]) {
    let p = hs.params();
    let (n, a, k) = (p.n, p.a, p.k);
    let mut indices = [0u32; MAX_K];
    base_2b(md, a, &mut indices[..k]);
    let mut nodes = vec![0u8; (1usize << a) * n];
    let mut roots = [0u8; MAX_K * MAX_N];
    // FORS_TREE and FORS_PRF addresses of this key pair with a tree height and index.
    let tree_adrs = |z: u32, i: u32| {
        let mut t = *adrs;
        t.set_tree_height(z);
        t.set_tree_index(i);
        t
    };
    let prf_adrs = |i: u32| {
        let mut t = *adrs;
        t.set_type_and_clear(AdrsType::ForsPrf);
        t.set_key_pair_address(adrs.key_pair_address());
        t.set_tree_index(i);
        t
    };
    for (i, tree_sig) in sig.chunks_exact_mut((a + 1) * n).take(k).enumerate() {
        let base = (i << a) as u32;
        let leaf = indices[i] as usize;
        // Leaves: fors_skGen (Alg. 14) then F of each; the signed leaf's secret is revealed.
        hs.prf_many(1 << a, |j| prf_adrs(base + j as u32), sk_seed, &mut nodes);
        tree_sig[..n].copy_from_slice(&nodes[leaf * n..(leaf + 1) * n]);
        hs.f_many(1 << a, |j| tree_adrs(0, base + j as u32), &mut nodes);
        let auth = &mut tree_sig[n..];
        for z in 1..=a {
            let sib = (leaf >> (z - 1)) ^ 1;
            auth[(z - 1) * n..z * n].copy_from_slice(&nodes[sib * n..(sib + 1) * n]);
            let first = (i << (a - z)) as u32;
            let level = |t: usize| tree_adrs(z as u32, first + t as u32);
            hs.h_many(1 << (a - z), level, &mut nodes[..(2usize << (a - z)) * n]);
        }
        roots[i * n..(i + 1) * n].copy_from_slice(&nodes[..n]);
    }
    nodes.zeroize();
    compress_roots(hs, adrs, &roots[..k * n], pk);
}

/// fors_pkFromSig (Alg. 17): the FORS public key implied by SIG_FORS on `md`. The k trees are
/// independent: their leaves, and then each level of their paths, are hashed together.
pub fn pk_from_sig(hs: &Hasher, sig: &[u8], md: &[u8], adrs: &Adrs, pk: &mut [u8]) {
    let p = hs.params();
    let (n, a, k) = (p.n, p.a, p.k);
    let mut indices = [0u32; MAX_K];
    base_2b(md, a, &mut indices[..k]);
    let trees = || sig.chunks_exact((a + 1) * n).take(k);
    // Tree i's node at height z has index ((i << a) + indices[i]) >> z (Alg. 17 lines 9-15).
    let node_adrs = |z: usize, i: usize| {
        let mut t = *adrs;
        t.set_tree_height(z as u32);
        t.set_tree_index((((i as u32) << a) + indices[i]) >> z);
        t
    };
    let mut roots = [0u8; MAX_K * MAX_N];
    for (i, tree_sig) in trees().enumerate() {
        roots[i * n..(i + 1) * n].copy_from_slice(&tree_sig[..n]);
    }
    hs.f_many_public(k, |i| node_adrs(0, i), &mut roots[..k * n]);
    let mut pairs = [0u8; MAX_K * 2 * MAX_N];
    for z in 1..=a {
        for (i, tree_sig) in trees().enumerate() {
            let sib = &tree_sig[z * n..(z + 1) * n];
            let node = &roots[i * n..(i + 1) * n];
            let (left, right) = if (indices[i] >> (z - 1)) & 1 == 0 {
                (node, sib)
            } else {
                (sib, node)
            };
            pairs[2 * i * n..(2 * i + 1) * n].copy_from_slice(left);
            pairs[(2 * i + 1) * n..(2 * i + 2) * n].copy_from_slice(right);
        }
        hs.h_many_public(k, |i| node_adrs(z, i), &mut pairs[..2 * k * n]);
        roots[..k * n].copy_from_slice(&pairs[..k * n]);
    }
    compress_roots(hs, adrs, &roots[..k * n], pk);
}
