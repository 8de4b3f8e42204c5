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

/// The decapsulation key check of FIPS 203 §7.3: the length, and H(ek) = h inside dk.
/// `BadLength` or `BadKey`.
pub fn check_decaps_key(p: ParamSet, dk: &[u8]) -> Result<(), Error> {
    if dk.len() != p.decaps_key_len() {
        return Err(Error::BadLength);
    }
    kem::check_decaps_key(p, dk)
}
