//! Operating-system randomness; its failure is an error (`PQG_ERR_RNG`), never a panic.

use crate::Error;

/// Fills `buf` from the OS CSPRNG.
pub fn fill(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::getrandom(buf).map_err(|_| Error::Rng)
}

/// A fresh random 32-byte array.
pub fn array32() -> Result<[u8; 32], Error> {
    let mut a = [0u8; 32];
    fill(&mut a)?;
    Ok(a)
}
