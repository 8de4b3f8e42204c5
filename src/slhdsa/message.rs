//! What is signed: FIPS 205's M' for the pure interface (Alg. 22/24), HashSLH-DSA (Alg. 23/25)
//! and the internal interface (the caller's M).

use crate::prehash::PreHash;
use crate::Error;

/// The input of signing or verification, in each of the interfaces FIPS 205 defines.
#[derive(Clone, Copy, Debug)]
pub enum Message<'a> {
    /// slh_sign / slh_verify: M' = 0 || |ctx| || ctx || M.
    Pure { ctx: &'a [u8], msg: &'a [u8] },
    /// hash_slh_sign / hash_slh_verify: M' = 1 || |ctx| || ctx || OID(PH) || PH(M);
    /// `digest` = PH(M), computed by the caller.
    PreHashed {
        ctx: &'a [u8],
        ph: PreHash,
        digest: &'a [u8],
    },
    /// slh_sign_internal / slh_verify_internal on the caller's M.
    Internal(&'a [u8]),
}

impl Message<'_> {
    /// Checks the shape: context at most 255 bytes (`InvalidArgument`), digest length (`BadLength`).
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Message::Pure { ctx, .. } | Message::PreHashed { ctx, .. } if ctx.len() > 255 => {
                Err(Error::InvalidArgument)
            }
            Message::PreHashed { ph, digest, .. } if digest.len() != ph.digest_len() => {
                Err(Error::BadLength)
            }
            _ => Ok(()),
        }
    }

    /// Runs `f` on M' as a list of pieces (no copy of the message). Call `validate` first.
    pub(crate) fn with_pieces<R>(&self, f: impl FnOnce(&[&[u8]]) -> R) -> R {
        match *self {
            Message::Pure { ctx, msg } => f(&[&[0, ctx.len() as u8], ctx, msg]),
            Message::PreHashed { ctx, ph, digest } => {
                f(&[&[1, ctx.len() as u8], ctx, &ph.oid_der(), digest])
            }
            Message::Internal(m) => f(&[m]),
        }
    }
}
