//! Signing and verification operations of the signature families (ML-DSA, SLH-DSA), as
//! PKCS#11 3.2 defines them alike: the pure mechanism (optional CK_SIGN_ADDITIONAL_CONTEXT),
//! the pre-hash mechanism on the caller's digest (CK_HASH_SIGN_ADDITIONAL_CONTEXT) and the
//! pre-hash mechanisms that hash the message here. The family files name the mechanisms.

use super::{mldsa, slhdsa};
use crate::ck::*;
use crate::engine::Engine;
use pqgpu::mldsa::{Message, PreHash};
use pqgpu::serve::{Key, KeyArg, Sig};
use sha2::Digest;

/// The signature family and the form of a signing mechanism: (key type, input) where the
/// input's `PreHash` is a placeholder for CKM_HASH_* (its hash comes with the parameter).
fn mechanism(m: CK_MECHANISM_TYPE) -> Option<(CK_KEY_TYPE, Form)> {
    Some(match m {
        CKM_ML_DSA => (CKK_ML_DSA, Form::Pure),
        CKM_HASH_ML_DSA => (CKK_ML_DSA, Form::Digest),
        CKM_SLH_DSA => (CKK_SLH_DSA, Form::Pure),
        CKM_HASH_SLH_DSA => (CKK_SLH_DSA, Form::Digest),
        m => match (mldsa::hash_of_mechanism(m), slhdsa::hash_of_mechanism(m)) {
            (Some(ph), _) => (CKK_ML_DSA, Form::Hashed(ph)),
            (_, Some(ph)) => (CKK_SLH_DSA, Form::Hashed(ph)),
            _ => return None,
        },
    })
}

#[derive(Clone, Copy)]
enum Form {
    Pure,
    Digest,
    Hashed(PreHash),
}

/// The key type a signing mechanism needs, or `None` for a mechanism that does not sign.
pub fn key_type_of(m: CK_MECHANISM_TYPE) -> Option<CK_KEY_TYPE> {
    mechanism(m).map(|(k, _)| k)
}

/// What the data given to C_Sign / C_Verify is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// The message (CKM_ML_DSA).
    Message,
    /// A digest the caller made (CKM_HASH_ML_DSA).
    Digest(PreHash),
    /// The message, hashed here (CKM_HASH_ML_DSA_<hash>).
    Hashed(PreHash),
}

/// A signing or verification operation, from its Init call to its end.
pub struct Op {
    pub mechanism: CK_MECHANISM_TYPE,
    pub key: Key,
    pub sig: Sig,
    pub input: Input,
    pub ctx: Vec<u8>,
    pub deterministic: bool,
    /// Data of a multi-part operation so far.
    pub parts: Option<Vec<u8>>,
}

/// The digest mechanisms CK_HASH_SIGN_ADDITIONAL_CONTEXT.hash may name (FIPS 204's
/// approved pre-hash functions that have a PKCS#11 digest mechanism).
fn hash_of_digest_mechanism(m: CK_MECHANISM_TYPE) -> Option<PreHash> {
    Some(match m {
        CKM_SHA224 => PreHash::Sha2_224,
        CKM_SHA256 => PreHash::Sha2_256,
        CKM_SHA384 => PreHash::Sha2_384,
        CKM_SHA512 => PreHash::Sha2_512,
        CKM_SHA512_224 => PreHash::Sha2_512_224,
        CKM_SHA512_256 => PreHash::Sha2_512_256,
        CKM_SHA3_224 => PreHash::Sha3_224,
        CKM_SHA3_256 => PreHash::Sha3_256,
        CKM_SHA3_384 => PreHash::Sha3_384,
        CKM_SHA3_512 => PreHash::Sha3_512,
        _ => return None,
    })
}

/// The hedge variant and context string of a parameter, copied.
///
/// # Safety
/// `mech.pParameter` holds `mech.ulParameterLen` bytes (or is NULL with length 0), and a
/// context pointer in it holds `ulContextLen` bytes.
unsafe fn additional_context(
    mech: &CK_MECHANISM,
    with_hash: bool,
) -> Rv<(bool, Vec<u8>, Option<CK_MECHANISM_TYPE>)> {
    let (hedge, pctx, n, hash) = if with_hash {
        if mech.pParameter.is_null()
            || mech.ulParameterLen as usize
                != std::mem::size_of::<CK_HASH_SIGN_ADDITIONAL_CONTEXT>()
        {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        // SAFETY: checked non-NULL and of the struct's size; read unaligned (caller memory).
        let p = unsafe {
            std::ptr::read_unaligned(mech.pParameter as *const CK_HASH_SIGN_ADDITIONAL_CONTEXT)
        };
        (p.hedgeVariant, p.pContext, p.ulContextLen, Some(p.hash))
    } else {
        if mech.pParameter.is_null() && mech.ulParameterLen == 0 {
            return Ok((false, Vec::new(), None));
        }
        if mech.pParameter.is_null()
            || mech.ulParameterLen as usize != std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>()
        {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        // SAFETY: as above.
        let p = unsafe {
            std::ptr::read_unaligned(mech.pParameter as *const CK_SIGN_ADDITIONAL_CONTEXT)
        };
        (p.hedgeVariant, p.pContext, p.ulContextLen, None)
    };
    let deterministic = match hedge {
        CKH_HEDGE_PREFERRED | CKH_HEDGE_REQUIRED => false,
        CKH_DETERMINISTIC_REQUIRED => true,
        _ => return Err(CKR_MECHANISM_PARAM_INVALID),
    };
    if n > 255 || (n > 0 && pctx.is_null()) {
        return Err(CKR_MECHANISM_PARAM_INVALID);
    }
    let ctx = if n == 0 {
        Vec::new()
    } else {
        // SAFETY: the caller's promise; checked non-NULL.
        unsafe { std::slice::from_raw_parts(pctx, n as usize) }.to_vec()
    };
    Ok((deterministic, ctx, hash))
}

/// Starts an operation with `key` (a checked key handle of `sig`, which the mechanism's
/// family signs with).
///
/// # Safety
/// As [`additional_context`].
pub unsafe fn start(mech: &CK_MECHANISM, key: Key, sig: Sig) -> Rv<Op> {
    let m = mech.mechanism;
    let (_, form) = mechanism(m).ok_or(CKR_MECHANISM_INVALID)?;
    let (deterministic, ctx, input) = match form {
        Form::Pure => {
            // SAFETY: the caller's promise.
            let (d, c, _) = unsafe { additional_context(mech, false) }?;
            (d, c, Input::Message)
        }
        Form::Digest => {
            // SAFETY: the caller's promise.
            let (d, c, h) = unsafe { additional_context(mech, true) }?;
            let ph = h
                .and_then(hash_of_digest_mechanism)
                .ok_or(CKR_MECHANISM_PARAM_INVALID)?;
            (d, c, Input::Digest(ph))
        }
        Form::Hashed(ph) => {
            // SAFETY: the caller's promise.
            let (d, c, _) = unsafe { additional_context(mech, false) }?;
            (d, c, Input::Hashed(ph))
        }
    };
    Ok(Op {
        mechanism: m,
        key,
        sig,
        input,
        ctx,
        deterministic,
        parts: None,
    })
}

impl Op {
    /// The operation for one message of a message-based operation (C_SignMessage,
    /// C_VerifyMessage): the message's own parameter (a CK_SIGN_ADDITIONAL_CONTEXT, or for
    /// CKM_HASH_ML_DSA a CK_HASH_SIGN_ADDITIONAL_CONTEXT) replaces the one given at Init; with
    /// none, Init's applies.
    ///
    /// # Safety
    /// `param` holds `len` bytes (or is NULL with `len` 0), as [`start`] requires.
    pub unsafe fn for_message(&self, param: *mut std::ffi::c_void, len: CK_ULONG) -> Rv<Op> {
        if param.is_null() && len == 0 {
            return Ok(Op {
                mechanism: self.mechanism,
                key: self.key.clone(),
                sig: self.sig,
                input: self.input,
                ctx: self.ctx.clone(),
                deterministic: self.deterministic,
                parts: None,
            });
        }
        let mech = CK_MECHANISM {
            mechanism: self.mechanism,
            pParameter: param,
            ulParameterLen: len,
        };
        // SAFETY: the caller's promise.
        unsafe { start(&mech, self.key.clone(), self.sig) }
    }

    pub fn signature_len(&self) -> usize {
        self.sig.signature_len()
    }

    /// Whether C_SignUpdate / C_VerifyUpdate may be used (CKM_HASH_ML_DSA is single-part).
    pub fn multipart(&self) -> bool {
        !matches!(self.input, Input::Digest(_))
    }

    /// Signs `data` into `sig` (exactly the signature's length). The deterministic variant
    /// is ML-DSA's zero rnd, SLH-DSA's PK.seed as opt_rand.
    pub fn sign(&self, e: &Engine, data: &[u8], sig: &mut [u8]) -> Rv {
        let digest = self.digest(data)?;
        let msg = self.message(data, &digest);
        let key = KeyArg::Handle(&self.key);
        let r = match self.sig {
            Sig::MlDsa(_) => {
                let zero = [0u8; 32];
                let rnd = self.deterministic.then_some(&zero);
                e.serve.sign(key, &msg, rnd, sig)
            }
            Sig::SlhDsa(p) => {
                let n = p.n();
                let rnd = self.deterministic.then(|| &self.key.bytes()[2 * n..3 * n]);
                e.serve.slh_sign(key, &slh(msg), rnd, sig)
            }
        };
        r.map_err(from_pqgpu)
    }

    /// Verifies: a wrong-length signature is CKR_SIGNATURE_LEN_RANGE, a bad one
    /// CKR_SIGNATURE_INVALID.
    pub fn verify(&self, e: &Engine, data: &[u8], sig: &[u8]) -> Rv {
        if sig.len() != self.signature_len() {
            return Err(CKR_SIGNATURE_LEN_RANGE);
        }
        let digest = self.digest(data)?;
        let msg = self.message(data, &digest);
        let key = KeyArg::Handle(&self.key);
        let r = match self.sig {
            Sig::MlDsa(_) => e.serve.verify(key, &msg, sig),
            Sig::SlhDsa(_) => e.serve.slh_verify(key, &slh(msg), sig),
        };
        r.map_err(from_pqgpu)
    }

    fn digest(&self, data: &[u8]) -> Rv<Vec<u8>> {
        match self.input {
            Input::Message => Ok(Vec::new()),
            Input::Digest(ph) if data.len() != ph.digest_len() => Err(CKR_DATA_LEN_RANGE),
            Input::Digest(_) => Ok(Vec::new()),
            Input::Hashed(ph) => Ok(prehash(ph, data)),
        }
    }

    fn message<'a>(&'a self, data: &'a [u8], digest: &'a [u8]) -> Message<'a> {
        match self.input {
            Input::Message => Message::Pure {
                ctx: &self.ctx,
                msg: data,
            },
            Input::Digest(ph) => Message::PreHashed {
                ctx: &self.ctx,
                ph,
                digest: data,
            },
            Input::Hashed(ph) => Message::PreHashed {
                ctx: &self.ctx,
                ph,
                digest,
            },
        }
    }
}

/// PH(M) for the pre-hash functions a CKM_HASH_ML_DSA_<hash> mechanism names.
fn prehash(ph: PreHash, m: &[u8]) -> Vec<u8> {
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    fn xof(h: impl ExtendableOutput, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        h.finalize_xof().read(&mut out);
        out
    }
    match ph {
        PreHash::Sha2_224 => sha2::Sha224::digest(m).to_vec(),
        PreHash::Sha2_256 => sha2::Sha256::digest(m).to_vec(),
        PreHash::Sha2_384 => sha2::Sha384::digest(m).to_vec(),
        PreHash::Sha2_512 => sha2::Sha512::digest(m).to_vec(),
        PreHash::Sha2_512_224 => sha2::Sha512_224::digest(m).to_vec(),
        PreHash::Sha2_512_256 => sha2::Sha512_256::digest(m).to_vec(),
        PreHash::Sha3_224 => sha3::Sha3_224::digest(m).to_vec(),
        PreHash::Sha3_256 => sha3::Sha3_256::digest(m).to_vec(),
        PreHash::Sha3_384 => sha3::Sha3_384::digest(m).to_vec(),
        PreHash::Sha3_512 => sha3::Sha3_512::digest(m).to_vec(),
        PreHash::Shake128 => {
            let mut h = sha3::Shake128::default();
            h.update(m);
            xof(h, 32)
        }
        PreHash::Shake256 => {
            let mut h = sha3::Shake256::default();
            h.update(m);
            xof(h, 64)
        }
    }
}

/// The SLH-DSA form of a message this module made (pure or pre-hashed).
fn slh(m: Message<'_>) -> pqgpu::slhdsa::Message<'_> {
    use pqgpu::slhdsa::Message as S;
    match m {
        Message::Pure { ctx, msg } => S::Pure { ctx, msg },
        Message::PreHashed { ctx, ph, digest } => S::PreHashed { ctx, ph, digest },
        Message::Internal(_) | Message::Mu(_) => {
            unreachable!("Op::message makes pure and pre-hashed messages only")
        }
    }
}
