//! Shared by the decoder targets (each uses part of it): the first input byte picks the
//! parameter set and whether the rest is used at its own length (a length check) or resized
//! to the decoder's length.

#![allow(dead_code)]

use pqgpu::{ctru, mldsa};

pub const MLDSA: [mldsa::ParamSet; 3] = [
    mldsa::ParamSet::MlDsa44,
    mldsa::ParamSet::MlDsa65,
    mldsa::ParamSet::MlDsa87,
];
pub const CTRU: [ctru::ParamSet; 3] = [
    ctru::ParamSet::Ctru653,
    ctru::ParamSet::Ctru761,
    ctru::ParamSet::Ctru1277,
];

/// (set index, bytes to decode). The first byte picks the set; with its top three bits set
/// (one input in eight) the rest is decoded as it is, at its own length (length checks);
/// otherwise bytes 1-2 give an offset and the rest is XORed into the set's valid encoding
/// `base(set)` from there, so that most inputs are near-valid and reach the deep checks.
pub fn mutate(data: &[u8], base: impl Fn(usize) -> Vec<u8>) -> Option<(usize, Vec<u8>)> {
    let (&head, rest) = data.split_first()?;
    let set = (head % 3) as usize;
    if head & 0xe0 == 0xe0 {
        return Some((set, rest.to_vec()));
    }
    let mut v = base(set);
    if rest.len() >= 2 && !v.is_empty() {
        let at = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        for (k, &x) in rest[2..].iter().enumerate() {
            let n = v.len();
            v[(at + k) % n] ^= x;
        }
    }
    Some((set, v))
}

/// A fixed ML-DSA key pair and a valid signature on `MSG`, per set.
pub struct MldsaFixture {
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub sig: Vec<u8>,
}
pub const MSG: &[u8] = b"fuzz";

pub fn mldsa_fixture(p: mldsa::ParamSet) -> MldsaFixture {
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = vec![0u8; p.secret_key_len()];
    mldsa::keygen_internal(p, &[7; 32], &mut pk, &mut sk).unwrap();
    let mut sig = vec![0u8; p.signature_len()];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    mldsa::sign(p, &sk, &msg, Some(&[0; 32]), &mut sig).unwrap();
    MldsaFixture { pk, sk, sig }
}

/// A fixed CTRU-Prime key pair and a valid ciphertext, per set.
pub struct CtruFixture {
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub ct: Vec<u8>,
}

pub fn ctru_fixture(p: ctru::ParamSet) -> CtruFixture {
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = vec![0u8; p.secret_key_len()];
    ctru::keygen_derand(p, &[9; 64], &mut pk, &mut sk).unwrap();
    let mut ct = vec![0u8; p.ciphertext_len()];
    let mut ss = [0u8; 32];
    ctru::encaps_derand(p, &pk, &[3; 32], &mut ct, &mut ss).unwrap();
    CtruFixture { pk, sk, ct }
}
