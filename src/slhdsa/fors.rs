//! FORS few-time signatures (FIPS 205 section 8, Alg. 14-17). Signing builds each of the k
//! trees once, level by level, for its authentication path and root.

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::MAX_N;
use super::wots::base_2b;
use super::xmss;
use zeroize::Zeroize;

/// The most FORS trees of any set (k = 35).
const MAX_K: usize = 35;

/// fors_skGen (Alg. 14): the secret value of leaf `idx` (counted across all k trees).
fn sk_gen(hs: &Hasher, sk_seed: &[u8], adrs: &Adrs, idx: u32, out: &mut [u8]) {
    let mut sk_adrs = *adrs;
    sk_adrs.set_type_and_clear(AdrsType::ForsPrf);
    sk_adrs.set_key_pair_address(adrs.key_pair_address());
    sk_adrs.set_tree_index(idx);
    hs.prf(&sk_adrs, sk_seed, out);
}

/// Compresses the k roots into the FORS public key (T_k at FORS_ROOTS).
fn compress_roots(hs: &Hasher, adrs: &Adrs, roots: &[u8], pk: &mut [u8]) {
    let mut pk_adrs = *adrs;
    pk_adrs.set_type_and_clear(AdrsType::ForsRoots);
    pk_adrs.set_key_pair_address(adrs.key_pair_address());
    hs.t(&pk_adrs, roots, pk);
}

/// fors_sign (Alg. 16) of the message digest `md` into SIG_FORS, and the FORS public key
/// (fors_pkFromSig of that signature, Alg. 17) into `pk`. `adrs` is the FORS_TREE address
/// with the tree and key pair set.
pub fn sign(hs: &Hasher, md: &[u8], sk_seed: &[u8], adrs: &Adrs, sig: &mut [u8], pk: &mut [u8]) {
    let p = hs.params();
    let (n, a, k) = (p.n, p.a, p.k);
    let mut indices = [0u32; MAX_K];
    base_2b(md, a, &mut indices[..k]);
    let mut nodes = vec![0u8; (1usize << a) * n];
    let mut roots = [0u8; MAX_K * MAX_N];
    let mut sk = [0u8; MAX_N];
    let mut pair = [0u8; 2 * MAX_N];
    let mut adrs = *adrs;
    for (i, tree_sig) in sig.chunks_exact_mut((a + 1) * n).take(k).enumerate() {
        let base = (i << a) as u32;
        let leaf = indices[i];
        // Leaves: F of each secret value; the signed leaf's secret value is revealed.
        adrs.set_tree_height(0);
        for (j, node) in nodes.chunks_exact_mut(n).enumerate() {
            sk_gen(hs, sk_seed, &adrs, base + j as u32, &mut sk[..n]);
            if j as u32 == leaf {
                tree_sig[..n].copy_from_slice(&sk[..n]);
            }
            adrs.set_tree_index(base + j as u32);
            hs.f(&adrs, &sk[..n], node);
        }
        let auth = &mut tree_sig[n..];
        for z in 1..=a {
            let sib = ((leaf >> (z - 1)) ^ 1) as usize;
            auth[(z - 1) * n..z * n].copy_from_slice(&nodes[sib * n..(sib + 1) * n]);
            adrs.set_tree_height(z as u32);
            for t in 0..1usize << (a - z) {
                pair[..2 * n].copy_from_slice(&nodes[2 * t * n..(2 * t + 2) * n]);
                adrs.set_tree_index((i << (a - z)) as u32 + t as u32);
                hs.t(&adrs, &pair[..2 * n], &mut nodes[t * n..(t + 1) * n]);
            }
        }
        roots[i * n..(i + 1) * n].copy_from_slice(&nodes[..n]);
    }
    sk.zeroize();
    nodes.zeroize();
    compress_roots(hs, &adrs, &roots[..k * n], pk);
}

/// fors_pkFromSig (Alg. 17): the FORS public key implied by SIG_FORS on `md`.
pub fn pk_from_sig(hs: &Hasher, sig: &[u8], md: &[u8], adrs: &Adrs, pk: &mut [u8]) {
    let p = hs.params();
    let (n, a, k) = (p.n, p.a, p.k);
    let mut indices = [0u32; MAX_K];
    base_2b(md, a, &mut indices[..k]);
    let mut roots = [0u8; MAX_K * MAX_N];
    let mut adrs = *adrs;
    for (i, tree_sig) in sig.chunks_exact((a + 1) * n).take(k).enumerate() {
        let (sk, auth) = tree_sig.split_at(n);
        let node = &mut roots[i * n..(i + 1) * n];
        adrs.set_tree_height(0);
        adrs.set_tree_index(((i as u32) << a) + indices[i]);
        hs.f(&adrs, sk, node);
        xmss::climb(hs, &mut adrs, AdrsType::ForsTree, indices[i], auth, node);
    }
    compress_roots(hs, &adrs, &roots[..k * n], pk);
}
