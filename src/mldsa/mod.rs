//! ML-DSA (FIPS 204) on the CPU: the ground truth every backend is compared with.
//!
//! Layout: `params` (Tables 1-2), `message` (M' and mu), `reduce`, `zetas` and `ntt` (arithmetic
//! mod q, Alg. 41-45; `avx2` is the same on eight lanes), `poly`/`polyvec` (R_q and its vectors),
//! `sampling` (Alg. 29-34), `rounding` (Alg. 35-40), `packing` (Alg. 16-28), `keys` (a key's
//! working form), `keygen`/`sign`/`verify` (Alg. 6-8), and `expanded` (keys expanded once).
//! Round-3 Dilithium (v3.1) runs through the same code: `variant` holds its differences.
//! Lengths are checked here; secret-dependent work is constant-time and zeroized.
//! The algorithms are generic over k and l (see `dispatch!`), so vectors live on the stack at
//! their exact sizes; only A-hat (up to 56 KiB) goes to the heap, once per operation.

#[cfg(target_arch = "x86_64")]
mod avx2;
mod expanded;
mod keygen;
mod keys;
mod message;
pub(crate) mod ntt;
pub(crate) mod packing;
#[cfg(target_arch = "x86_64")]
mod packing_avx2;
pub mod params;
mod poly;
pub(crate) mod polyvec;
mod reduce;
mod rounding;
#[cfg(target_arch = "x86_64")]
mod rounding_avx2;
mod sampling;
mod sign;
mod variant;
mod verify;
mod zetas;

pub use expanded::{ExpandedPublicKey, ExpandedSecretKey};
pub use message::{Message, PreHash};
pub use params::ParamSet;
pub use sign::max_attempts as max_sign_attempts;
pub use variant::Variant;

use crate::Error;
use zeroize::Zeroizing;

/// Calls `$m::$f::<K, L>(args)` for the parameter set `$p` (k and l are const generics, so every
/// polynomial vector has its exact size on the stack).
macro_rules! dispatch {
    ($p:expr, $m:ident::$f:ident, $($arg:expr),*) => {
        match $p {
            ParamSet::MlDsa44 | ParamSet::Dilithium2 => $m::$f::<4, 4>($($arg),*),
            ParamSet::MlDsa65 | ParamSet::Dilithium3 => $m::$f::<6, 5>($($arg),*),
            ParamSet::MlDsa87 | ParamSet::Dilithium5 => $m::$f::<8, 7>($($arg),*),
        }
    };
}

/// ML-DSA.KeyGen_internal (Alg. 6), or round-3 keygen, from the 32-byte seed xi. `pk`/`sk` must
/// have the exact lengths.
pub fn keygen_internal(
    p: ParamSet,
    xi: &[u8; 32],
    pk: &mut [u8],
    sk: &mut [u8],
) -> Result<(), Error> {
    if pk.len() != p.public_key_len() || sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    dispatch!(p, keygen::keygen_internal, p, xi, pk, sk);
    Ok(())
}

/// ML-DSA.KeyGen (Alg. 1) with a fresh seed from the OS.
pub fn keygen(p: ParamSet, pk: &mut [u8], sk: &mut [u8]) -> Result<(), Error> {
    let mut xi = crate::rng::array32()?;
    let r = keygen_internal(p, &xi, pk, sk);
    zeroize::Zeroize::zeroize(&mut xi);
    r
}

/// Signs `msg` (any interface) with the encoded secret key. `rnd`: `None` = hedged (fresh OS
/// randomness); `Some(&[0; 32])` = deterministic. Errors: `BadLength` (sk or sig length),
/// `BadKey` (s1/s2 coefficients out of range), `InvalidArgument` (context > 255; for round 3
/// any context, pre-hash or external mu), `Rng`.
pub fn sign(
    p: ParamSet,
    sk: &[u8],
    msg: &Message<'_>,
    rnd: Option<&[u8; 32]>,
    sig: &mut [u8],
) -> Result<(), Error> {
    if sk.len() != p.secret_key_len() || sig.len() != p.signature_len() {
        return Err(Error::BadLength);
    }
    let msg = p.variant().message(msg)?;
    let rnd = Zeroizing::new(match rnd {
        Some(r) => *r,
        None => crate::rng::array32()?,
    });
    dispatch!(p, sign::sign, p, sk, &msg, &rnd, sig)
}

/// Verifies `sig` on `msg` (any interface). `Ok(())` when valid, `VerifyFailed` for any invalid or
/// malformed signature (including a wrong signature length), `BadLength` for a wrong pk length,
/// `InvalidArgument` for a context over 255 bytes (round 3: any context, pre-hash or mu).
pub fn verify(p: ParamSet, pk: &[u8], msg: &Message<'_>, sig: &[u8]) -> Result<(), Error> {
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    let msg = p.variant().message(msg)?;
    if sig.len() != p.signature_len() {
        return Err(Error::VerifyFailed);
    }
    if dispatch!(p, verify::verify, p, pk, &msg, sig) {
        Ok(())
    } else {
        Err(Error::VerifyFailed)
    }
}
