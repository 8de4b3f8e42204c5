//! The CTRU-Prime KEM (NTRU over x^n - x - 1), as specified in `shared/spec/ctru-prime.md`.
//!
//! Bit-exact with the official reference (`Prime-KEM/FPTRU-KEM`, which calls the scheme FPTRU)
//! under the pqgpu decisions: the official NTRU-Prime-style public-key encoding, SHA3-512 and
//! SHAKE256 only, and decapsulation of a wrong ciphertext returns the full implicit-rejection key
//! K-bar = SHA3-512(pk[0..33] || z || ct)[0..32] (the reference mixes in only its low bits).
//!
//! Key formats are checked strictly: a public key must be the canonical encoding of values in
//! [0, q) (the reference silently reduces out-of-range values), and the secret-key part PackF(f)
//! must hold f = 2f' + 1 with f' in [-eta, eta] and a zero padding nibble. Anything else is
//! `BadKey`. Secret-dependent work (sampling, products, inversion, E8 decoding, the ciphertext
//! comparison and the key selection) runs in constant time, and secret temporaries are zeroized.
//!
//! Module map: [`params`] (parameter sets), `reduce` (constant-time arithmetic mod q), `poly`
//! (exact ring products), `inverse` (constant-time field inversion; `recip`, the start and end
//! it shares with its AVX2 twin), `cbd` (sampling), `e8` (the lattice code), `encode`
//! (public-key Encode/Decode), `pack` (PackF, PackCT), `pke` (the encryption scheme) and `kem`
//! (the FO transform).

pub(crate) mod cbd;
mod e8;
pub(crate) mod encode;
mod expanded;
pub(crate) mod inverse;
mod kem;
pub(crate) mod pack;
pub mod params;
mod pke;
mod poly;
pub(crate) mod recip;
pub(crate) mod reduce;

pub use expanded::{ExpandedPublicKey, ExpandedSecretKey};
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

/// KEM.Encaps with the 32-byte coins e: m = SHAKE256(e), (K || s) = SHA3-512(pk[0..33] || m),
/// ct = PKE.Enc(pk, m; SHAKE256(s)), ss = K. Errors: `BadLength` (pk, ct or ss length), `BadKey`
/// (pk is not a canonical encoding).
pub fn encaps_derand(
    p: ParamSet,
    pk: &[u8],
    e: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) -> Result<(), Error> {
    kem::encaps_derand(p, pk, e, ct, ss)
}

/// KEM.Decaps. A ciphertext of the right length that does not re-encrypt to itself (byte for
/// byte, padding bits included) gives `Ok` with the implicit-rejection key K-bar, selected in
/// constant time. Errors: `BadLength` (sk, ct or ss length), `BadKey` (PackF(f) or the embedded
/// pk malformed; the trailing z is not checked).
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
