//! The CTRU-Prime KEM: FO transform with implicit rejection (spec section 5.6, with the pqgpu
//! decision: a rejected ciphertext yields the full K-bar = SHA3-512(pk33 || z || ct)[0..32]).

use super::params::{PK_PREFIX_LEN, Z_LEN};
use super::{encode, pack, pke, ParamSet};
use crate::Error;
use sha3::digest::{Digest, ExtendableOutput, Update, XofReader};
use sha3::{Sha3_512, Shake256};
use zeroize::Zeroizing;

/// SHAKE256(input) squeezed into `out`.
fn shake256(input: &[u8], out: &mut [u8]) {
    let mut xof = Shake256::default();
    Update::update(&mut xof, input);
    xof.finalize_xof().read(out);
}

/// SHA3-512 over the concatenation of `parts`.
fn sha3_512(parts: &[&[u8]]) -> Zeroizing<[u8; 64]> {
    let mut h = Sha3_512::new();
    for part in parts {
        Digest::update(&mut h, part);
    }
    Zeroizing::new(h.finalize().into())
}

/// Decodes a public key or reports `BadKey`.
pub(crate) fn decode_pk(p: ParamSet, pk: &[u8]) -> Result<Vec<i32>, Error> {
    encode::decode_pk(pk, p.n(), p.q()).ok_or(Error::BadKey)
}

pub(crate) fn keygen_derand(
    p: ParamSet,
    seed: &[u8; 64],
    pk: &mut [u8],
    sk: &mut [u8],
) -> Result<(), Error> {
    if pk.len() != p.public_key_len() || sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    let (d, z) = seed.split_at(32);
    let mut coins = Zeroizing::new(vec![0u8; 2 * p.coin_half_bytes()]);
    shake256(d, &mut coins);
    let (sk_pke, rest) = sk.split_at_mut(p.sk_pke_len());
    let (sk_pk, sk_z) = rest.split_at_mut(p.public_key_len());
    pke::keygen(p, &coins, pk, sk_pke);
    sk_pk.copy_from_slice(pk);
    sk_z.copy_from_slice(z);
    Ok(())
}

/// Encapsulation core for an already decoded pk; returns K and writes ct.
fn encaps_inner(p: ParamSet, pk: &[u8], h: &[i32], m: &[u8], ct: &mut [u8]) -> Zeroizing<[u8; 64]> {
    let k_s = sha3_512(&[&pk[..PK_PREFIX_LEN], m]);
    let mut coins = Zeroizing::new(vec![0u8; p.coin_half_bytes()]);
    shake256(&k_s[32..], &mut coins);
    pke::encrypt(p, h, m, &coins, ct);
    k_s
}

pub(crate) fn encaps_derand(
    p: ParamSet,
    pk: &[u8],
    e: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) -> Result<(), Error> {
    if pk.len() != p.public_key_len()
        || ct.len() != p.ciphertext_len()
        || ss.len() != p.shared_secret_len()
    {
        return Err(Error::BadLength);
    }
    encaps_decoded(p, pk, &decode_pk(p, pk)?, e, ct, ss);
    Ok(())
}

/// Encaps with the public key already decoded (`h`); lengths checked by the caller.
pub(crate) fn encaps_decoded(
    p: ParamSet,
    pk: &[u8],
    h: &[i32],
    e: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) {
    let mut m = Zeroizing::new(vec![0u8; p.msg_bytes()]);
    shake256(e, &mut m);
    let k_s = encaps_inner(p, pk, h, &m, ct);
    ss.copy_from_slice(&k_s[..32]);
}

pub(crate) fn decaps(p: ParamSet, sk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
    if sk.len() != p.secret_key_len()
        || ct.len() != p.ciphertext_len()
        || ss.len() != p.shared_secret_len()
    {
        return Err(Error::BadLength);
    }
    let (sk_pke, rest) = sk.split_at(p.sk_pke_len());
    let (pk, z) = rest.split_at(p.public_key_len());
    debug_assert_eq!(z.len(), Z_LEN);
    let f = pack::unpack_f(p, sk_pke).ok_or(Error::BadKey)?;
    let h = decode_pk(p, pk)?;
    decaps_decoded(p, &f, &h, pk, z, ct, ss);
    Ok(())
}

/// Decaps with the secret key already unpacked (`f`) and its public key decoded (`h`);
/// lengths checked by the caller.
pub(crate) fn decaps_decoded(
    p: ParamSet,
    f: &[i32],
    h: &[i32],
    pk: &[u8],
    z: &[u8],
    ct: &[u8],
    ss: &mut [u8],
) {
    let mut m = Zeroizing::new(vec![0u8; p.msg_bytes()]);
    pke::decrypt(p, f, ct, &mut m);
    let mut ct2 = Zeroizing::new(vec![0u8; ct.len()]);
    let k_s = encaps_inner(p, pk, h, &m, &mut ct2);
    let k_bar = sha3_512(&[&pk[..PK_PREFIX_LEN], z, ct]);

    // Constant time: compare every byte (padding included), then select K' or K-bar by mask.
    let diff = ct
        .iter()
        .zip(ct2.iter())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    let equal = core::hint::black_box(((diff as u32).wrapping_sub(1) >> 8) as u8); // 0xFF iff equal
    for (o, (&k, &kb)) in ss.iter_mut().zip(k_s.iter().zip(k_bar.iter())) {
        *o = kb ^ (equal & (k ^ kb));
    }
}
