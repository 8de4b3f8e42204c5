//! What is signed: FIPS 204's M' in its four forms, and the message representative mu.

pub use crate::prehash::PreHash;
use crate::simd::keccak::Shake256;
use crate::Error;

/// The input of signing or verification, in each of the interfaces FIPS 204 defines.
#[derive(Clone, Copy, Debug)]
pub enum Message<'a> {
    /// ML-DSA.Sign/Verify (Alg. 2/3): M' = 0 || |ctx| || ctx || M.
    Pure { ctx: &'a [u8], msg: &'a [u8] },
    /// HashML-DSA.Sign/Verify (Alg. 4/5): M' = 1 || |ctx| || ctx || OID(PH) || PH(M); `digest` = PH(M).
    PreHashed {
        ctx: &'a [u8],
        ph: PreHash,
        digest: &'a [u8],
    },
    /// Sign_internal/Verify_internal (Alg. 7/8) on a caller-formed M'.
    Internal(&'a [u8]),
    /// External mu: the 64-byte message representative itself.
    Mu(&'a [u8]),
}

impl Message<'_> {
    /// Checks the shape: context at most 255 bytes (`InvalidArgument`), digest and mu lengths (`BadLength`).
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Message::Pure { ctx, .. } if ctx.len() > 255 => Err(Error::InvalidArgument),
            Message::PreHashed { ctx, .. } if ctx.len() > 255 => Err(Error::InvalidArgument),
            Message::PreHashed { ph, digest, .. } if digest.len() != ph.digest_len() => {
                Err(Error::BadLength)
            }
            Message::Mu(mu) if mu.len() != 64 => Err(Error::BadLength),
            _ => Ok(()),
        }
    }

    /// Absorbs M' into a hasher (not valid for `Mu`, which has no M').
    fn absorb_m_prime(&self, h: &mut Shake256) {
        match *self {
            Message::Pure { ctx, msg } => {
                h.update(&[0, ctx.len() as u8]);
                h.update(ctx);
                h.update(msg);
            }
            Message::PreHashed { ctx, ph, digest } => {
                h.update(&[1, ctx.len() as u8]);
                h.update(ctx);
                h.update(&ph.oid_der());
                h.update(digest);
            }
            Message::Internal(m) => h.update(m),
            Message::Mu(_) => unreachable!("external mu has no M'"),
        }
    }

    /// mu = H(tr || M', 64) (FIPS 204 Alg. 7 line 6), or the given mu. Call `validate` first.
    /// `tr` is 64 bytes (FIPS 204) or 32 (round 3, whose M' is `Internal`: see `Variant::message`).
    pub fn mu(&self, tr: &[u8]) -> [u8; 64] {
        let mut out = [0u8; 64];
        if let Message::Mu(mu) = *self {
            out.copy_from_slice(mu);
            return out;
        }
        let mut h = Shake256::default();
        h.update(tr);
        self.absorb_m_prime(&mut h);
        h.finalize_xof().read(&mut out);
        out
    }
}
