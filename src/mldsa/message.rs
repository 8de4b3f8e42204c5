//! What is signed: FIPS 204's M' in its four forms, and the message representative mu.

use crate::simd::keccak::Shake256;
use crate::Error;

/// The pre-hash functions of HashML-DSA (FIPS 204 section 5.4). Discriminants are `pqg_hash` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum PreHash {
    Sha2_224 = 1,
    Sha2_256 = 2,
    Sha2_384 = 3,
    Sha2_512 = 4,
    Sha2_512_224 = 5,
    Sha2_512_256 = 6,
    Sha3_224 = 7,
    Sha3_256 = 8,
    Sha3_384 = 9,
    Sha3_512 = 10,
    Shake128 = 11,
    Shake256 = 12,
}

impl PreHash {
    pub const ALL: [PreHash; 12] = [
        PreHash::Sha2_224,
        PreHash::Sha2_256,
        PreHash::Sha2_384,
        PreHash::Sha2_512,
        PreHash::Sha2_512_224,
        PreHash::Sha2_512_256,
        PreHash::Sha3_224,
        PreHash::Sha3_256,
        PreHash::Sha3_384,
        PreHash::Sha3_512,
        PreHash::Shake128,
        PreHash::Shake256,
    ];

    /// Maps a `pqg_hash` value.
    pub fn from_code(code: i32) -> Result<PreHash, Error> {
        PreHash::ALL
            .get((code as usize).wrapping_sub(1))
            .copied()
            .filter(|_| code >= 1)
            .ok_or(Error::InvalidArgument)
    }

    /// The last byte of the NIST hash-algorithm OID 2.16.840.1.101.3.4.2.x.
    const fn oid_arc(self) -> u8 {
        match self {
            PreHash::Sha2_256 => 0x01,
            PreHash::Sha2_384 => 0x02,
            PreHash::Sha2_512 => 0x03,
            PreHash::Sha2_224 => 0x04,
            PreHash::Sha2_512_224 => 0x05,
            PreHash::Sha2_512_256 => 0x06,
            PreHash::Sha3_224 => 0x07,
            PreHash::Sha3_256 => 0x08,
            PreHash::Sha3_384 => 0x09,
            PreHash::Sha3_512 => 0x0a,
            PreHash::Shake128 => 0x0b,
            PreHash::Shake256 => 0x0c,
        }
    }

    /// DER encoding of the hash function's OID, as HashML-DSA puts it into M'.
    pub const fn oid_der(self) -> [u8; 11] {
        [
            0x06,
            0x09,
            0x60,
            0x86,
            0x48,
            0x01,
            0x65,
            0x03,
            0x04,
            0x02,
            self.oid_arc(),
        ]
    }

    /// The digest length the caller must pass (SHAKE-128: 32 bytes, SHAKE-256: 64 bytes).
    pub const fn digest_len(self) -> usize {
        match self {
            PreHash::Sha2_224 | PreHash::Sha2_512_224 | PreHash::Sha3_224 => 28,
            PreHash::Sha2_256 | PreHash::Sha2_512_256 | PreHash::Sha3_256 | PreHash::Shake128 => 32,
            PreHash::Sha2_384 | PreHash::Sha3_384 => 48,
            PreHash::Sha2_512 | PreHash::Sha3_512 | PreHash::Shake256 => 64,
        }
    }
}

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
