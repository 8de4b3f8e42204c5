//! The CTRU-Prime KEM (NTRU over x^n - x - 1), as specified in `shared/spec/ctru-prime.md`.

//!
//! Module map: [`params`] (parameter sets), `reduce` (constant-time arithmetic mod q), `poly`
//! (exact ring products), `inverse` (constant-time field inversion), `cbd` (sampling), `e8`
//! (the lattice code), `encode` (public-key Encode/Decode), `pack` (PackF, PackCT), `pke`
//! (the encryption scheme) and `kem` (the FO transform).

mod cbd;
mod e8;
pub(crate) mod encode;
mod inverse;
mod kem;
pub(crate) mod pack;
pub mod params;
mod pke;
mod poly;
mod reduce;

pub use params::ParamSet;

use crate::Error;

/// KEM.KeyGen from the recorded randomness: `seed` = d (32 bytes) || z (32 bytes).
/// `pk`/`sk` must have the exact lengths (`BadLength`).
pub fn keygen_derand(
    p: ParamSet,
    seed: &[u8; 64],
    pk: &mut [u8],
    sk: &mut [u8],
) -> Result<(), Error> {
    kem::keygen_derand(p, seed, pk, sk)
}

/// KEM.Encaps with the 32-byte coins e. Errors: `BadLength`, `BadKey` (pk fails to decode).
pub fn encaps_derand(
    p: ParamSet,
    pk: &[u8],
    e: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) -> Result<(), Error> {
    kem::encaps_derand(p, pk, e, ct, ss)
}

/// KEM.Decaps. A well-formed but wrong ciphertext gives `Ok` with the implicit-rejection key.
/// Errors: `BadLength`, `BadKey` (sk malformed).
pub fn decaps(p: ParamSet, sk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
    kem::decaps(p, sk, ct, ss)
}

/// KEM.KeyGen with fresh OS randomness.
pub fn keygen(p: ParamSet, pk: &mut [u8], sk: &mut [u8]) -> Result<(), Error> {
    let mut seed = [0u8; 64];
    crate::rng::fill(&mut seed)?;
    let r = keygen_derand(p, &seed, pk, sk);
    zeroize::Zeroize::zeroize(&mut seed);
    r
}

/// KEM.Encaps with fresh OS randomness.
pub fn encaps(p: ParamSet, pk: &[u8], ct: &mut [u8], ss: &mut [u8]) -> Result<(), Error> {
    let mut e = crate::rng::array32()?;
    let r = encaps_derand(p, pk, &e, ct, ss);
    zeroize::Zeroize::zeroize(&mut e);
    r
}
