//! SLH-DSA (FIPS 205) on the CPU, all twelve parameter sets: the ground truth for every backend.
//!
//! Layout: `params` (Table 2), `address` (ADRS and ADRS^c), `hash` (section 11: the SHA2 and
//! SHAKE instantiations of PRF, PRF_msg, H_msg, F, H and T_l for one PK.seed), `wots`
//! (Alg. 4-8), `xmss` (Alg. 9-11), `hypertree` (Alg. 12-13), `fors` (Alg. 14-17), `sign`
//! (the internal functions, Alg. 18-20) and `message` (M' of the pure, pre-hash and internal
//! interfaces). Lengths are checked here. Every index that steers memory access or branching
//! comes from public data (the digest of R and M); secret seeds only flow through the hashes.

pub(crate) mod address;
mod fors;
pub(crate) mod hash;
mod hypertree;
mod keys;
mod message;
pub mod params;
mod sign;
pub(crate) mod wots;
mod xmss;

pub use crate::prehash::PreHash;
pub use keys::{ExpandedPublicKey, ExpandedSecretKey};
pub use message::Message;
pub use params::ParamSet;

use crate::Error;
use zeroize::Zeroizing;

/// slh_keygen_internal (Alg. 18) from the 3n-byte seed SK.seed || SK.prf || PK.seed. `pk`
/// (2n bytes) and `sk` (4n bytes) must have the exact lengths.
pub fn keygen_internal(
    p: ParamSet,
    seed: &[u8],
    pk: &mut [u8],
    sk: &mut [u8],
) -> Result<(), Error> {
    if seed.len() != p.seed_len()
        || pk.len() != p.public_key_len()
        || sk.len() != p.secret_key_len()
    {
        return Err(Error::BadLength);
    }
    let n = p.n();
    sign::keygen(
        p.params(),
        &seed[..n],
        &seed[n..2 * n],
        &seed[2 * n..],
        pk,
        sk,
    );
    Ok(())
}

/// slh_keygen (Alg. 21) with fresh seeds from the OS.
pub fn keygen(p: ParamSet, pk: &mut [u8], sk: &mut [u8]) -> Result<(), Error> {
    let mut seed = Zeroizing::new([0u8; 96]);
    crate::rng::fill(&mut seed[..p.seed_len()])?;
    keygen_internal(p, &seed[..p.seed_len()], pk, sk)
}

/// Signs `msg` (any interface) with the 4n-byte secret key. `rnd` is opt_rand (n bytes):
/// `None` = hedged (fresh OS randomness); PK.seed (`sk[2n..3n]`) = the deterministic variant.
/// Errors: `BadLength` (sk, rnd, sig or digest length), `InvalidArgument` (context > 255), `Rng`.
pub fn sign(
    p: ParamSet,
    sk: &[u8],
    msg: &Message<'_>,
    rnd: Option<&[u8]>,
    sig: &mut [u8],
) -> Result<(), Error> {
    let n = p.n();
    if sk.len() != p.secret_key_len()
        || sig.len() != p.signature_len()
        || rnd.is_some_and(|r| r.len() != n)
    {
        return Err(Error::BadLength);
    }
    msg.validate()?;
    let mut addrnd = Zeroizing::new([0u8; params::MAX_N]);
    match rnd {
        Some(r) => addrnd[..n].copy_from_slice(r),
        None => crate::rng::fill(&mut addrnd[..n])?,
    }
    msg.with_pieces(|m| sign::sign(p.params(), sk, m, &addrnd[..n], sig));
    Ok(())
}

/// R = PRF_msg(SK.prf, opt_rand, M) and H_msg(R, PK.seed, PK.root, M) of one signing (Alg. 19
/// lines 5-6), for a backend that builds the trees itself. The caller has checked the lengths
/// (`sk` 4n, `addrnd` and `r` n, `digest` m bytes) and validated `msg`.
pub(crate) fn sign_digest(
    p: ParamSet,
    sk: &[u8],
    msg: &Message<'_>,
    addrnd: &[u8],
    r: &mut [u8],
    digest: &mut [u8],
) {
    let n = p.n();
    let hs = hash::Hasher::new(p.params(), &sk[2 * n..3 * n]);
    msg.with_pieces(|m| {
        hs.prf_msg(&sk[n..2 * n], addrnd, m, r);
        hs.h_msg(r, &sk[3 * n..4 * n], m, digest);
    });
}

/// H_msg(R, PK.seed, PK.root, M) of one verification (Alg. 20 line 8), R the signature's first
/// n bytes; lengths checked by the caller (`pk` 2n, `digest` m bytes), `msg` validated.
pub(crate) fn verify_digest(
    p: ParamSet,
    pk: &[u8],
    msg: &Message<'_>,
    r: &[u8],
    digest: &mut [u8],
) {
    let n = p.n();
    let hs = hash::Hasher::new(p.params(), &pk[..n]);
    msg.with_pieces(|m| hs.h_msg(r, &pk[n..2 * n], m, digest));
}

/// Verifies `sig` on `msg` (any interface). `Ok(())` when valid, `VerifyFailed` for any invalid
/// signature (including a wrong length), `BadLength` for a wrong pk or digest length,
/// `InvalidArgument` for a context over 255 bytes.
pub fn verify(p: ParamSet, pk: &[u8], msg: &Message<'_>, sig: &[u8]) -> Result<(), Error> {
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    msg.validate()?;
    if sig.len() != p.signature_len() {
        return Err(Error::VerifyFailed);
    }
    if msg.with_pieces(|m| sign::verify(p.params(), pk, m, sig)) {
        Ok(())
    } else {
        Err(Error::VerifyFailed)
    }
}
