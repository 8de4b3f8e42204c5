//! ML-KEM (FIPS 203): KeyGen, Encaps and Decaps for ML-KEM-512/768/1024 on one CPU core.
//!
//! The arithmetic is libcrux-ml-kem's (formally verified; AVX2 code chosen at run time, a
//! portable path elsewhere): measured on one core it was 2.4-6x faster than RustCrypto's
//! `ml-kem` for every operation and set (BENCHMARKS.md, CPU section). This module fixes the
//! byte-slice interface the rest of the library uses, does FIPS 203's input checks (§7.2 the
//! encapsulation key's modulus check, §7.3 the decapsulation key's hash check) and zeroizes the
//! secrets it copies. Decapsulation of a ciphertext of the right length always succeeds: a
//! wrong one gives the implicit-rejection key K-bar = J(z || c), selected in constant time.

mod kem;
mod params;

pub use params::{ParamSet, COINS_LEN, SEED_LEN, SHARED_SECRET_LEN};

use crate::Error;
use zeroize::Zeroize;

/// ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithm 16) into `ek` and `dk` (exact lengths, else
/// `BadLength`).
pub fn keygen_internal(
    p: ParamSet,
    d: &[u8; 32],
    z: &[u8; 32],
    ek: &mut [u8],
    dk: &mut [u8],
) -> Result<(), Error> {
    if ek.len() != p.encaps_key_len() || dk.len() != p.decaps_key_len() {
        return Err(Error::BadLength);
    }
    let mut seed = [0u8; SEED_LEN];
    seed[..32].copy_from_slice(d);
    seed[32..].copy_from_slice(z);
    kem::keygen(p, &seed, ek, dk);
    seed.zeroize();
    Ok(())
}

/// ML-KEM.KeyGen (Algorithm 19) with d and z from the operating system.
pub fn keygen(p: ParamSet, ek: &mut [u8], dk: &mut [u8]) -> Result<(), Error> {
    if ek.len() != p.encaps_key_len() || dk.len() != p.decaps_key_len() {
        return Err(Error::BadLength);
    }
    let mut seed = [0u8; SEED_LEN];
    crate::rng::fill(&mut seed)?;
    kem::keygen(p, &seed, ek, dk);
    seed.zeroize();
    Ok(())
}

/// ML-KEM.KeyGen_internal from `seed` = d || z, the form the batch layers carry.
pub fn keygen_seeded(
    p: ParamSet,
    seed: &[u8; SEED_LEN],
    ek: &mut [u8],
    dk: &mut [u8],
) -> Result<(), Error> {
    if ek.len() != p.encaps_key_len() || dk.len() != p.decaps_key_len() {
        return Err(Error::BadLength);
    }
    kem::keygen(p, seed, ek, dk);
    Ok(())
}

/// ML-KEM.Encaps_internal(ek, m) (Algorithm 17) after the modulus check of §7.2.
/// Errors: `BadLength` (ek, ct or ss), `BadKey` (ek holds a coefficient >= q); nothing is written
/// on error.
pub fn encaps_internal(
    p: ParamSet,
    ek: &[u8],
    m: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) -> Result<(), Error> {
    if ek.len() != p.encaps_key_len()
        || ct.len() != p.ciphertext_len()
        || ss.len() != SHARED_SECRET_LEN
    {
        return Err(Error::BadLength);
    }
    kem::encaps(p, ek, m, ct, ss)
}

/// ML-KEM.Encaps (Algorithm 20) with m from the operating system.
pub fn encaps(p: ParamSet, ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> Result<(), Error> {
    let mut m = crate::rng::array32()?;
    let r = encaps_internal(p, ek, &m, ct, ss);
    m.zeroize();
    r
}

/// ML-KEM.Decaps (Algorithm 21) after the hash check of §7.3.
/// Errors: `BadLength` (dk, ct or ss), `BadKey` (H(ek) stored in dk is wrong); nothing is
/// written on error. A wrong ciphertext of the right length is `Ok` with K-bar.
pub fn decaps(p: ParamSet, dk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
    if dk.len() != p.decaps_key_len()
        || ct.len() != p.ciphertext_len()
        || ss.len() != SHARED_SECRET_LEN
    {
        return Err(Error::BadLength);
    }
    kem::decaps(p, dk, ct, ss)
}

/// Decapsulation of a key already checked with [`check_decaps_key`] (a key handle's): the
/// same as [`decaps`] without the hash check.
pub fn decaps_checked(p: ParamSet, dk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
    if dk.len() != p.decaps_key_len()
        || ct.len() != p.ciphertext_len()
        || ss.len() != SHARED_SECRET_LEN
    {
        return Err(Error::BadLength);
    }
    kem::decaps_unchecked(p, dk, ct, ss);
    Ok(())
}

/// The encapsulation key check of FIPS 203 §7.2: the length, and ByteEncode12(ByteDecode12(ek))
/// = ek (every coefficient below q). `BadLength` or `BadKey`.
pub fn check_encaps_key(p: ParamSet, ek: &[u8]) -> Result<(), Error> {
    if ek.len() != p.encaps_key_len() {
        return Err(Error::BadLength);
    }
    kem::check_encaps_key(p, ek)
}

/// The modulus check of FIPS 203 §7.2 on an encapsulation key of `p`'s length: whether every
/// 12-bit coefficient of its t̂ is below q. The same verdict as [`check_encaps_key`] (tested
/// against it) at about a twentieth of its time: for checking a GPU batch's keys on the host
/// while the GPU works. An encapsulation key is public: branches on it are harmless.
pub fn modulus_check(p: ParamSet, ek: &[u8]) -> bool {
    let t = &ek[..384 * p.k()];
    let mut over = 0u32;
    for c in t.chunks_exact(3) {
        let (b0, b1, b2) = (u32::from(c[0]), u32::from(c[1]), u32::from(c[2]));
        let c0 = b0 | ((b1 & 0xF) << 8);
        let c1 = (b1 >> 4) | (b2 << 4);
        // The top bit is set exactly when a coefficient exceeds q - 1 = 3328.
        over |= 3328u32.wrapping_sub(c0) | 3328u32.wrapping_sub(c1);
    }
    over >> 31 == 0
}

/// The decapsulation key check of FIPS 203 §7.3: the length, and H(ek) = h inside dk.
/// `BadLength` or `BadKey`.
pub fn check_decaps_key(p: ParamSet, dk: &[u8]) -> Result<(), Error> {
    if dk.len() != p.decaps_key_len() {
        return Err(Error::BadLength);
    }
    kem::check_decaps_key(p, dk)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets coefficient `i` of ek's t̂ (12 bits, little-endian pairs in 3 bytes) to `v`.
    fn set_coefficient(ek: &mut [u8], i: usize, v: u16) {
        let (at, v) = (3 * (i / 2), u32::from(v));
        if i % 2 == 0 {
            ek[at] = v as u8;
            ek[at + 1] = (ek[at + 1] & 0xF0) | (v >> 8) as u8;
        } else {
            ek[at + 1] = (ek[at + 1] & 0x0F) | ((v & 0xF) << 4) as u8;
            ek[at + 2] = (v >> 4) as u8;
        }
    }

    /// The fast modulus check agrees with libcrux's on real keys, on keys with one coefficient
    /// set to each value around q at either position of a byte triple, and on random bytes.
    #[test]
    fn modulus_check_agrees_with_the_full_check() {
        for p in ParamSet::ALL {
            let mut ek = vec![0u8; p.encaps_key_len()];
            let mut dk = vec![0u8; p.decaps_key_len()];
            keygen_internal(p, &[7u8; 32], &[9u8; 32], &mut ek, &mut dk).expect("keygen");
            let agree = |ek: &[u8], what: &str| {
                let full = check_encaps_key(p, ek).is_ok();
                assert_eq!(modulus_check(p, ek), full, "{} {what}", p.name());
                full
            };
            assert!(agree(&ek, "real key"));
            let coefficients = 256 * p.k();
            let mut seen_bad = 0;
            for i in [0, 1, 2, 3, 255, 256, coefficients - 2, coefficients - 1] {
                for v in [0, 1, 3327, 3328, 3329, 3330, 4095] {
                    let mut bad = ek.clone();
                    set_coefficient(&mut bad, i, v);
                    seen_bad += usize::from(!agree(&bad, &format!("coefficient {i} = {v}")));
                }
            }
            assert_eq!(seen_bad, 8 * 3, "{}: values q and above rejected", p.name());
            let mut s = 0x9E37_79B9_7F4A_7C15u64;
            for k in 0..64 {
                let mut rnd = ek.clone();
                for b in rnd[..384 * p.k()].iter_mut() {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Mostly small bytes, so that some random keys pass.
                    *b = (s >> 56) as u8 & if k % 2 == 0 { 0xFF } else { 0x3F };
                }
                agree(&rnd, &format!("random key {k}"));
            }
        }
    }
}
