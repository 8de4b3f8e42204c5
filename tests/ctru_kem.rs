//! CTRU-Prime KEM properties: random round trips, implicit rejection of every single-bit flip,
//! length and key-format errors, and the fresh-randomness entry points.

use pqgpu::ctru::{self, ParamSet};
use pqgpu::Error;
use rand::rngs::StdRng as Rng64;
use rand::{Rng, RngCore, SeedableRng};
use sha3::digest::Digest;

/// Random keys per parameter set for the round-trip test; each key also gets several encapsulations.
const ROUND_TRIP_KEYS: usize = 1000;
const ENCAPS_PER_KEY: usize = 2;

struct Keys {
    pk: Vec<u8>,
    sk: Vec<u8>,
}

fn keygen(p: ParamSet, rng: &mut Rng64) -> Keys {
    let mut seed = [0u8; 64];
    rng.fill_bytes(&mut seed);
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = vec![0u8; p.secret_key_len()];
    ctru::keygen_derand(p, &seed, &mut pk, &mut sk).unwrap();
    Keys { pk, sk }
}

fn encaps(p: ParamSet, pk: &[u8], rng: &mut Rng64) -> (Vec<u8>, [u8; 32]) {
    let mut e = [0u8; 32];
    rng.fill_bytes(&mut e);
    let mut ct = vec![0u8; p.ciphertext_len()];
    let mut ss = [0u8; 32];
    ctru::encaps_derand(p, pk, &e, &mut ct, &mut ss).unwrap();
    (ct, ss)
}

fn decaps(p: ParamSet, sk: &[u8], ct: &[u8]) -> [u8; 32] {
    let mut ss = [0u8; 32];
    ctru::decaps(p, sk, ct, &mut ss).unwrap();
    ss
}

/// K-bar = SHA3-512(pk33 || z || ct)[0..32], the pqgpu implicit-rejection key.
fn rejection_key(p: ParamSet, sk: &[u8], ct: &[u8]) -> [u8; 32] {
    let pk_start = p.secret_key_len() - 32 - p.public_key_len();
    let pk33 = &sk[pk_start..pk_start + 33];
    let z = &sk[p.secret_key_len() - 32..];
    let mut h = sha3::Sha3_512::new();
    h.update(pk33);
    h.update(z);
    h.update(ct);
    h.finalize()[..32].try_into().unwrap()
}

fn round_trips(p: ParamSet, seed: u64) {
    let mut rng = Rng64::seed_from_u64(seed);
    for _ in 0..ROUND_TRIP_KEYS {
        let keys = keygen(p, &mut rng);
        for _ in 0..ENCAPS_PER_KEY {
            let (ct, ss) = encaps(p, &keys.pk, &mut rng);
            assert_eq!(decaps(p, &keys.sk, &ct), ss, "{}: round trip", p.name());
        }
    }
}

#[test]
fn round_trips_653() {
    round_trips(ParamSet::Ctru653, 653);
}

#[test]
fn round_trips_761() {
    round_trips(ParamSet::Ctru761, 761);
}

#[test]
fn round_trips_1277() {
    round_trips(ParamSet::Ctru1277, 1277);
}

/// Every single-bit flip of a valid ciphertext (padding bits included) must be rejected with K-bar.
fn all_bit_flips(p: ParamSet) {
    let mut rng = Rng64::seed_from_u64(0xB17 + p.n() as u64);
    let keys = keygen(p, &mut rng);
    let (ct, ss) = encaps(p, &keys.pk, &mut rng);
    let mut flipped = 0;
    for byte in 0..ct.len() {
        for bit in 0..8 {
            let mut bad = ct.clone();
            bad[byte] ^= 1 << bit;
            let got = decaps(p, &keys.sk, &bad);
            assert_eq!(
                got,
                rejection_key(p, &keys.sk, &bad),
                "{}: flip byte {byte} bit {bit}",
                p.name()
            );
            assert_ne!(got, ss);
            flipped += 1;
        }
    }
    assert_eq!(flipped, 8 * p.ciphertext_len());
}

#[test]
fn bit_flips_rejected_653() {
    all_bit_flips(ParamSet::Ctru653);
}

#[test]
fn bit_flips_rejected_761() {
    all_bit_flips(ParamSet::Ctru761);
}

#[test]
fn bit_flips_rejected_1277() {
    all_bit_flips(ParamSet::Ctru1277);
}

#[test]
fn wrong_lengths_are_bad_length() {
    let mut rng = Rng64::seed_from_u64(7);
    for p in ParamSet::ALL {
        let keys = keygen(p, &mut rng);
        let (ct, _) = encaps(p, &keys.pk, &mut rng);
        let (pk_len, sk_len, ct_len) = (p.public_key_len(), p.secret_key_len(), p.ciphertext_len());
        let seed = [0u8; 64];
        let e = [0u8; 32];
        for delta in [-1i64, 1] {
            let adj = |len: usize| (len as i64 + delta) as usize;
            let (mut pk, mut sk) = (vec![0u8; adj(pk_len)], vec![0u8; sk_len]);
            assert_eq!(
                ctru::keygen_derand(p, &seed, &mut pk, &mut sk),
                Err(Error::BadLength)
            );
            let (mut pk, mut sk) = (vec![0u8; pk_len], vec![0u8; adj(sk_len)]);
            assert_eq!(
                ctru::keygen_derand(p, &seed, &mut pk, &mut sk),
                Err(Error::BadLength)
            );

            let mut ct_out = vec![0u8; ct_len];
            let mut ss = vec![0u8; 32];
            let short_pk = vec![0u8; adj(pk_len)];
            assert_eq!(
                ctru::encaps_derand(p, &short_pk, &e, &mut ct_out, &mut ss),
                Err(Error::BadLength)
            );
            let mut bad_ct = vec![0u8; adj(ct_len)];
            assert_eq!(
                ctru::encaps_derand(p, &keys.pk, &e, &mut bad_ct, &mut ss),
                Err(Error::BadLength)
            );
            let mut bad_ss = vec![0u8; adj(32)];
            assert_eq!(
                ctru::encaps_derand(p, &keys.pk, &e, &mut ct_out, &mut bad_ss),
                Err(Error::BadLength)
            );

            let bad_sk = vec![0u8; adj(sk_len)];
            assert_eq!(
                ctru::decaps(p, &bad_sk, &ct, &mut ss),
                Err(Error::BadLength)
            );
            assert_eq!(
                ctru::decaps(p, &keys.sk, &ct[..ct_len - 1], &mut ss),
                Err(Error::BadLength)
            );
            assert_eq!(
                ctru::decaps(p, &keys.sk, &ct, &mut bad_ss),
                Err(Error::BadLength)
            );
        }
        // Another parameter set's sizes are wrong lengths too.
        let other = ParamSet::ALL.into_iter().find(|&o| o != p).unwrap();
        let mut ss = [0u8; 32];
        assert_eq!(
            ctru::decaps(other, &keys.sk, &ct, &mut ss),
            Err(Error::BadLength)
        );
    }
}

#[test]
fn malformed_keys_are_bad_key() {
    let mut rng = Rng64::seed_from_u64(8);
    for p in ParamSet::ALL {
        let keys = keygen(p, &mut rng);
        let (ct, ss) = encaps(p, &keys.pk, &mut rng);
        let mut out_ct = vec![0u8; p.ciphertext_len()];
        let mut out_ss = [0u8; 32];
        let e = [1u8; 32];

        // A pk whose Decode yields values >= q (all bytes 0xFF), and one with a corrupted last
        // byte (the top-level value out of range).
        let mut bad_pks = vec![vec![0xFF; p.public_key_len()]];
        let mut last = keys.pk.clone();
        *last.last_mut().unwrap() = 0xFF;
        bad_pks.push(last);
        for bad_pk in &bad_pks {
            assert_eq!(
                ctru::encaps_derand(p, bad_pk, &e, &mut out_ct, &mut out_ss),
                Err(Error::BadKey),
                "{}: malformed pk",
                p.name()
            );
            let mut sk = keys.sk.clone();
            sk[p.sk_pke_len()..p.sk_pke_len() + p.public_key_len()].copy_from_slice(bad_pk);
            assert_eq!(ctru::decaps(p, &sk, &ct, &mut out_ss), Err(Error::BadKey));
        }

        // sk coefficients out of range (nibble 15), a wrong parity of f_0, a nonzero pad nibble.
        let n = p.n();
        let mut bad_sks = Vec::new();
        let mut sk = keys.sk.clone();
        sk[3] |= 0xF0;
        bad_sks.push(sk);
        let mut sk = keys.sk.clone();
        sk[0] ^= 0x01;
        bad_sks.push(sk);
        let mut sk = keys.sk.clone();
        sk[n / 2] |= 0x10;
        bad_sks.push(sk);
        for sk in &bad_sks {
            assert_eq!(
                ctru::decaps(p, sk, &ct, &mut out_ss),
                Err(Error::BadKey),
                "{}: malformed sk",
                p.name()
            );
        }

        // Corrupting z is not a format error: decapsulation still succeeds.
        let mut sk = keys.sk.clone();
        *sk.last_mut().unwrap() ^= 1;
        assert_eq!(decaps(p, &sk, &ct), ss);
    }
}

#[test]
fn random_garbage_never_panics() {
    let mut rng = Rng64::seed_from_u64(9);
    for p in ParamSet::ALL {
        let keys = keygen(p, &mut rng);
        for _ in 0..20 {
            let mut ct = vec![0u8; p.ciphertext_len()];
            rng.fill_bytes(&mut ct);
            let ss = decaps(p, &keys.sk, &ct);
            assert_eq!(ss, rejection_key(p, &keys.sk, &ct));
            let mut pk = vec![0u8; p.public_key_len()];
            rng.fill_bytes(&mut pk);
            let mut out_ct = vec![0u8; p.ciphertext_len()];
            let mut out_ss = [0u8; 32];
            let r = ctru::encaps_derand(p, &pk, &[rng.gen(); 32], &mut out_ct, &mut out_ss);
            assert!(r == Ok(()) || r == Err(Error::BadKey));
        }
    }
}

#[test]
fn fresh_randomness_round_trip() {
    for p in ParamSet::ALL {
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = vec![0u8; p.secret_key_len()];
        ctru::keygen(p, &mut pk, &mut sk).unwrap();
        let mut ct = vec![0u8; p.ciphertext_len()];
        let mut ss = [0u8; 32];
        ctru::encaps(p, &pk, &mut ct, &mut ss).unwrap();
        assert_eq!(decaps(p, &sk, &ct), ss);
        // Two key generations differ.
        let mut pk2 = vec![0u8; p.public_key_len()];
        ctru::keygen(p, &mut pk2, &mut sk).unwrap();
        assert_ne!(pk, pk2);
    }
}
