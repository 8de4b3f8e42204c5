//! Shared by the decoder targets (each uses part of it): the first input byte picks the
//! parameter set and whether the rest is used at its own length (a length check) or resized
//! to the decoder's length.

#![allow(dead_code)]

use pqgpu::{ctru, mldsa, Error};

pub const MLDSA: [mldsa::ParamSet; 3] = [
    mldsa::ParamSet::MlDsa44,
    mldsa::ParamSet::MlDsa65,
    mldsa::ParamSet::MlDsa87,
];
/// The round-3 Dilithium sets (v3.1): ML-DSA's lattice numbers, their own encodings (32-byte
/// tr and c~), reached through the same decoders.
pub const DILITHIUM: [mldsa::ParamSet; 3] = mldsa::ParamSet::ROUND3;
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

/// pkDecode (Alg. 23) through verification of the fixture's signature, plain and through the
/// expanded key (#13's key handles): any right-length bytes decode (t1 has no illegal values),
/// so only the real key verifies; a wrong length is `BadLength`. Both paths must agree.
pub fn mldsa_pk(sets: &[mldsa::ParamSet; 3], fix: &[MldsaFixture], data: &[u8]) {
    let Some((set, pk)) = mutate(data, |s| fix[s].pk.clone()) else {
        return;
    };
    let p = sets[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    let r = mldsa::verify(p, &pk, &msg, &fix[set].sig);
    match r {
        Ok(()) => assert_eq!(pk, fix[set].pk, "a different public key verified"),
        Err(e) if pk.len() != p.public_key_len() => assert_eq!(e, Error::BadLength),
        Err(e) => assert_eq!(e, Error::VerifyFailed),
    }
    let via_expanded =
        mldsa::ExpandedPublicKey::new(p, &pk).and_then(|k| k.verify(&msg, &fix[set].sig));
    assert_eq!(via_expanded, r, "the expanded public key disagrees");
}

/// skDecode (Alg. 25) through signing, plain and through the expanded key: out-of-range s1/s2
/// is `BadKey`, a decodable key signs (or exhausts the attempt bound: `BadKey`) with nothing
/// written on failure; both paths give the same status and the same signature.
pub fn mldsa_sk(sets: &[mldsa::ParamSet; 3], fix: &[MldsaFixture], data: &[u8]) {
    let Some((set, sk)) = mutate(data, |s| fix[s].sk.clone()) else {
        return;
    };
    let p = sets[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    let mut sig = vec![0u8; p.signature_len()];
    let r = mldsa::sign(p, &sk, &msg, Some(&[0; 32]), &mut sig);
    match r {
        Ok(()) => assert!(sig.iter().any(|&b| b != 0)),
        Err(e) if sk.len() != p.secret_key_len() => assert_eq!(e, Error::BadLength),
        Err(e) => {
            assert_eq!(e, Error::BadKey);
            assert!(
                sig.iter().all(|&b| b == 0),
                "a failed signature was written"
            );
        }
    }
    let mut sig2 = vec![0u8; p.signature_len()];
    let r2 =
        mldsa::ExpandedSecretKey::new(p, &sk).and_then(|k| k.sign(&msg, Some(&[0; 32]), &mut sig2));
    assert_eq!(r2, r, "the expanded secret key disagrees");
    assert!(sig2 == sig, "the expanded secret key signed differently");
}

/// sigDecode (Alg. 27) and HintBitUnpack (Alg. 21) through verification, plain and through the
/// expanded key: only the fixture's own signature verifies (the encoding checks leave no
/// second form of it); anything else, any length, is `VerifyFailed`.
pub fn mldsa_sig(sets: &[mldsa::ParamSet; 3], fix: &[MldsaFixture], data: &[u8]) {
    let Some((set, sig)) = mutate(data, |s| fix[s].sig.clone()) else {
        return;
    };
    let p = sets[set];
    let msg = mldsa::Message::Pure { ctx: b"", msg: MSG };
    let r = mldsa::verify(p, &fix[set].pk, &msg, &sig);
    match r {
        Ok(()) => assert_eq!(sig, fix[set].sig, "a different signature verified"),
        Err(e) => assert_eq!(e, Error::VerifyFailed),
    }
    let via_expanded =
        mldsa::ExpandedPublicKey::new(p, &fix[set].pk).and_then(|k| k.verify(&msg, &sig));
    assert_eq!(via_expanded, r, "the expanded public key disagrees");
}
