//! slh_keygen_internal, slh_sign_internal and slh_verify_internal (FIPS 205 section 9,
//! Alg. 18-20), on an M given as the pieces of M' (see `message`).

use super::address::{Adrs, AdrsType};
use super::hash::Hasher;
use super::params::{Params, MAX_N};
use super::{fors, hypertree, xmss};
use zeroize::Zeroizing;

/// The largest m (H_msg output bytes) of any set.
const MAX_M: usize = 49;

/// slh_keygen_internal (Alg. 18): PK.root from the three seeds; writes pk (2n) and sk (4n).
pub fn keygen(
    p: Params,
    sk_seed: &[u8],
    sk_prf: &[u8],
    pk_seed: &[u8],
    pk: &mut [u8],
    sk: &mut [u8],
) {
    let n = p.n;
    let hs = Hasher::new(p, pk_seed);
    let mut adrs = Adrs::default();
    adrs.set_layer_address(p.d as u32 - 1);
    let mut root = [0u8; MAX_N];
    xmss::tree(&hs, sk_seed, &adrs, 0, None, None, &mut root);
    sk[..n].copy_from_slice(sk_seed);
    sk[n..2 * n].copy_from_slice(sk_prf);
    sk[2 * n..3 * n].copy_from_slice(pk_seed);
    sk[3 * n..4 * n].copy_from_slice(&root[..n]);
    pk[..n].copy_from_slice(pk_seed);
    pk[n..2 * n].copy_from_slice(&root[..n]);
}

/// Splits H_msg's digest into md, idx_tree and idx_leaf (Alg. 19 lines 7-13).
fn split_digest<'a>(p: &Params, digest: &'a [u8]) -> (&'a [u8], u64, u32) {
    let (md, rest) = digest.split_at(p.md_len());
    let (t, l) = rest.split_at(p.tree_idx_len());
    let to_int = |b: &[u8]| b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64);
    let tree_bits = p.h - p.hp;
    let idx_tree = if tree_bits >= 64 {
        to_int(t)
    } else {
        to_int(t) & ((1u64 << tree_bits) - 1)
    };
    let idx_leaf = (to_int(&l[..p.leaf_idx_len()]) & ((1u64 << p.hp) - 1)) as u32;
    (md, idx_tree, idx_leaf)
}

/// The FORS address of the leaf the digest selects.
fn fors_adrs(idx_tree: u64, idx_leaf: u32) -> Adrs {
    let mut adrs = Adrs::default();
    adrs.set_tree_address(idx_tree);
    adrs.set_type_and_clear(AdrsType::ForsTree);
    adrs.set_key_pair_address(idx_leaf);
    adrs
}

/// slh_sign_internal (Alg. 19) of M (the pieces of `msg`) with opt_rand `addrnd`.
/// `sk` is 4n bytes and `sig` the set's signature length.
pub fn sign(p: Params, sk: &[u8], msg: &[&[u8]], addrnd: &[u8], sig: &mut [u8]) {
    sign_with(&Hasher::new(p, &sk[2 * p.n..3 * p.n]), sk, msg, addrnd, sig);
}

/// [`sign`] with the hash functions of the key's PK.seed made beforehand (a key handle's).
pub fn sign_with(hs: &Hasher, sk: &[u8], msg: &[&[u8]], addrnd: &[u8], sig: &mut [u8]) {
    let p = *hs.params();
    let n = p.n;
    let sk_seed = Zeroizing::new(sk[..n].to_vec());
    let (sk_prf, pk_root) = (&sk[n..2 * n], &sk[3 * n..4 * n]);
    let (r, rest) = sig.split_at_mut(n);
    hs.prf_msg(sk_prf, addrnd, msg, r);
    let mut digest = [0u8; MAX_M];
    hs.h_msg(r, pk_root, msg, &mut digest);
    let (md, idx_tree, idx_leaf) = split_digest(&p, &digest[..p.m]);
    let (sig_fors, sig_ht) = rest.split_at_mut(p.fors_sig_len());
    let mut pk_fors = [0u8; MAX_N];
    fors::sign(
        hs,
        md,
        &sk_seed,
        &fors_adrs(idx_tree, idx_leaf),
        sig_fors,
        &mut pk_fors,
    );
    hypertree::sign(hs, &pk_fors[..n], &sk_seed, idx_tree, idx_leaf, sig_ht);
}

/// slh_verify_internal (Alg. 20): whether `sig` is a signature of M under `pk` (2n bytes).
pub fn verify(p: Params, pk: &[u8], msg: &[&[u8]], sig: &[u8]) -> bool {
    verify_with(&Hasher::new(p, &pk[..p.n]), pk, msg, sig)
}

/// [`verify`] with the hash functions of the key's PK.seed made beforehand (a key handle's).
pub fn verify_with(hs: &Hasher, pk: &[u8], msg: &[&[u8]], sig: &[u8]) -> bool {
    let p = *hs.params();
    if sig.len() != p.sig_len() {
        return false;
    }
    let n = p.n;
    let pk_root = &pk[n..2 * n];
    let (r, rest) = sig.split_at(n);
    let mut digest = [0u8; MAX_M];
    hs.h_msg(r, pk_root, msg, &mut digest);
    let (md, idx_tree, idx_leaf) = split_digest(&p, &digest[..p.m]);
    let (sig_fors, sig_ht) = rest.split_at(p.fors_sig_len());
    let mut pk_fors = [0u8; MAX_N];
    fors::pk_from_sig(
        hs,
        sig_fors,
        md,
        &fors_adrs(idx_tree, idx_leaf),
        &mut pk_fors,
    );
    hypertree::verify(hs, &pk_fors[..n], sig_ht, idx_tree, idx_leaf, pk_root)
}
