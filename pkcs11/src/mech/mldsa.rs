//! ML-DSA (FIPS 204) as PKCS#11 3.2 defines it: CKK_ML_DSA keys with CKA_PARAMETER_SET,
//! CKM_ML_DSA_KEY_PAIR_GEN, CKM_ML_DSA (pure, optional CK_SIGN_ADDITIONAL_CONTEXT),
//! CKM_HASH_ML_DSA (the caller's digest, CK_HASH_SIGN_ADDITIONAL_CONTEXT) and
//! CKM_HASH_ML_DSA_<hash> (the token hashes the message).

use crate::ck::*;
use crate::engine::Engine;
use pqgpu::mldsa::{Message, ParamSet, PreHash};
use pqgpu::serve::{Key, KeyArg};
use pqgpu::Alg;
use sha2::Digest;
use zeroize::Zeroizing;

pub const SIGN_MECHANISMS: [CK_MECHANISM_TYPE; 12] = [
    CKM_ML_DSA,
    CKM_HASH_ML_DSA,
    CKM_HASH_ML_DSA_SHA224,
    CKM_HASH_ML_DSA_SHA256,
    CKM_HASH_ML_DSA_SHA384,
    CKM_HASH_ML_DSA_SHA512,
    CKM_HASH_ML_DSA_SHA3_224,
    CKM_HASH_ML_DSA_SHA3_256,
    CKM_HASH_ML_DSA_SHA3_384,
    CKM_HASH_ML_DSA_SHA3_512,
    CKM_HASH_ML_DSA_SHAKE128,
    CKM_HASH_ML_DSA_SHAKE256,
];

pub fn set_of(ckp: CK_ULONG) -> Rv<ParamSet> {
    match ckp {
        CKP_ML_DSA_44 => Ok(ParamSet::MlDsa44),
        CKP_ML_DSA_65 => Ok(ParamSet::MlDsa65),
        CKP_ML_DSA_87 => Ok(ParamSet::MlDsa87),
        _ => Err(CKR_PARAMETER_SET_NOT_SUPPORTED),
    }
}

/// The range of public key sizes in bytes (as the 3.2 mechanism info gives it).
pub fn key_size_range() -> (CK_ULONG, CK_ULONG) {
    (
        ParamSet::MlDsa44.public_key_len() as CK_ULONG,
        ParamSet::MlDsa87.public_key_len() as CK_ULONG,
    )
}

/// A fresh key pair: (public key, secret key, seed xi).
pub type Pair = (Vec<u8>, Zeroizing<Vec<u8>>, Zeroizing<Vec<u8>>);

/// ML-DSA.KeyGen_internal(seed) on the CPU backend (one key: see [`crate::engine`]).
fn keygen(p: ParamSet, seed: &[u8; 32]) -> Rv<(Vec<u8>, Zeroizing<Vec<u8>>)> {
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
    let cpu = pqgpu::backend::cpu_backend();
    pqgpu::api::mldsa_keygen_one(&*cpu, p, Some(seed), &mut pk, &mut sk).map_err(from_pqgpu)?;
    Ok((pk, sk))
}

/// ML-DSA.KeyGen from a fresh seed (kept as CKA_SEED).
pub fn generate(p: ParamSet) -> Rv<Pair> {
    let mut seed = Zeroizing::new([0u8; 32]);
    getrandom::getrandom(&mut seed[..]).map_err(|_| CKR_GENERAL_ERROR)?;
    let (pk, sk) = keygen(p, &seed)?;
    Ok((pk, sk, Zeroizing::new(seed.to_vec())))
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
    pub set: ParamSet,
    pub input: Input,
    pub ctx: Vec<u8>,
    pub deterministic: bool,
    /// Data of a multi-part operation so far.
    pub parts: Option<Vec<u8>>,
}

fn hash_of_mechanism(m: CK_MECHANISM_TYPE) -> Option<PreHash> {
    Some(match m {
        CKM_HASH_ML_DSA_SHA224 => PreHash::Sha2_224,
        CKM_HASH_ML_DSA_SHA256 => PreHash::Sha2_256,
        CKM_HASH_ML_DSA_SHA384 => PreHash::Sha2_384,
        CKM_HASH_ML_DSA_SHA512 => PreHash::Sha2_512,
        CKM_HASH_ML_DSA_SHA3_224 => PreHash::Sha3_224,
        CKM_HASH_ML_DSA_SHA3_256 => PreHash::Sha3_256,
        CKM_HASH_ML_DSA_SHA3_384 => PreHash::Sha3_384,
        CKM_HASH_ML_DSA_SHA3_512 => PreHash::Sha3_512,
        CKM_HASH_ML_DSA_SHAKE128 => PreHash::Shake128,
        CKM_HASH_ML_DSA_SHAKE256 => PreHash::Shake256,
        _ => return None,
    })
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

/// Starts an operation with `key` (a checked ML-DSA key handle of set `set`).
///
/// # Safety
/// As [`additional_context`].
pub unsafe fn start(mech: &CK_MECHANISM, key: Key, set: ParamSet) -> Rv<Op> {
    let m = mech.mechanism;
    let (deterministic, ctx, input) = if m == CKM_ML_DSA {
        // SAFETY: the caller's promise.
        let (d, c, _) = unsafe { additional_context(mech, false) }?;
        (d, c, Input::Message)
    } else if m == CKM_HASH_ML_DSA {
        // SAFETY: the caller's promise.
        let (d, c, h) = unsafe { additional_context(mech, true) }?;
        let ph = h
            .and_then(hash_of_digest_mechanism)
            .ok_or(CKR_MECHANISM_PARAM_INVALID)?;
        (d, c, Input::Digest(ph))
    } else if let Some(ph) = hash_of_mechanism(m) {
        // SAFETY: the caller's promise.
        let (d, c, _) = unsafe { additional_context(mech, false) }?;
        (d, c, Input::Hashed(ph))
    } else {
        return Err(CKR_MECHANISM_INVALID);
    };
    Ok(Op {
        mechanism: m,
        key,
        set,
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
                set: self.set,
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
        unsafe { start(&mech, self.key.clone(), self.set) }
    }

    pub fn signature_len(&self) -> usize {
        self.set.signature_len()
    }

    /// Whether C_SignUpdate / C_VerifyUpdate may be used (CKM_HASH_ML_DSA is single-part).
    pub fn multipart(&self) -> bool {
        !matches!(self.input, Input::Digest(_))
    }

    /// Signs `data` into `sig` (exactly the signature's length).
    pub fn sign(&self, e: &Engine, data: &[u8], sig: &mut [u8]) -> Rv {
        let digest = self.digest(data)?;
        let msg = self.message(data, &digest);
        let zero = [0u8; 32];
        let rnd = self.deterministic.then_some(&zero);
        e.serve
            .sign(KeyArg::Handle(&self.key), &msg, rnd, sig)
            .map_err(from_pqgpu)
    }

    /// Verifies: a wrong-length signature is CKR_SIGNATURE_LEN_RANGE, a bad one
    /// CKR_SIGNATURE_INVALID.
    pub fn verify(&self, e: &Engine, data: &[u8], sig: &[u8]) -> Rv {
        if sig.len() != self.signature_len() {
            return Err(CKR_SIGNATURE_LEN_RANGE);
        }
        let digest = self.digest(data)?;
        let msg = self.message(data, &digest);
        e.serve
            .verify(KeyArg::Handle(&self.key), &msg, sig)
            .map_err(from_pqgpu)
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

/// Checks an imported public key (its length and encoding).
pub fn check_public(p: ParamSet, value: &[u8]) -> Rv {
    if value.len() != p.public_key_len() {
        return Err(CKR_ATTRIBUTE_VALUE_INVALID);
    }
    Key::new(Alg::MlDsa(p), pqgpu::serve::KeyKind::Public, value)
        .map(|_| ())
        .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
}

/// An imported private key's (sk, seed if given).
pub type Imported = (Zeroizing<Vec<u8>>, Option<Zeroizing<Vec<u8>>>);

/// An imported private key: CKA_VALUE (sk) and/or CKA_SEED (xi). With the seed the key is
/// regenerated from it (and must equal a CKA_VALUE also given); without, sk is checked.
/// Returns (sk, seed if given).
pub fn import_private(p: ParamSet, value: Option<&[u8]>, seed: Option<&[u8]>) -> Rv<Imported> {
    match (value, seed) {
        (None, None) => Err(CKR_TEMPLATE_INCOMPLETE),
        (value, Some(seed)) => {
            let seed: Zeroizing<[u8; 32]> =
                Zeroizing::new(seed.try_into().map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?);
            let (_, sk) = keygen(p, &seed)?;
            if value.is_some_and(|v| v != &sk[..]) {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
            Ok((sk, Some(Zeroizing::new(seed.to_vec()))))
        }
        (Some(v), None) => {
            if v.len() != p.secret_key_len() {
                return Err(CKR_ATTRIBUTE_VALUE_INVALID);
            }
            Key::new(Alg::MlDsa(p), pqgpu::serve::KeyKind::Secret, v)
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            Ok((Zeroizing::new(v.to_vec()), None))
        }
    }
}
