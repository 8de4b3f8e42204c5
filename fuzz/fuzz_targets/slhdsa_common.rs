//! Shared by the SLH-DSA targets: per-set fixtures (a deterministic key pair and signature,
//! made on first use), the C-ABI verification calls, and the input layout of `common::mutate`
//! widened to twelve sets.

#![allow(dead_code)]

use pqgpu::ffi::*;
use pqgpu::slhdsa::{self, ParamSet};
use pqgpu::Error;
use std::ptr::null_mut;
use std::sync::OnceLock;

pub const MSG: &[u8] = b"fuzz";

/// The C identifier of a set (`PQG_SLH_DSA_*` follow `ParamSet::ALL`'s order).
pub fn alg(p: ParamSet) -> pqg_alg {
    PQG_SLH_DSA_SHA2_128S + p.index() as pqg_alg
}

/// Whether a set is a small-signature ('s') set: many more leaves per XMSS tree, so its key
/// generation (and with it the secret-key check) costs 30-60x an 'f' set's.
pub fn is_small(p: ParamSet) -> bool {
    p.index() % 4 < 2
}

/// A key pair from a fixed seed and the deterministic signature (opt_rand = PK.seed) of `MSG`
/// with an empty context.
pub struct Fixture {
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub sig: Vec<u8>,
}

fn keys(p: ParamSet) -> Fixture {
    let seed: Vec<u8> = (0..p.seed_len()).map(|i| i as u8 ^ 0x5a).collect();
    let mut pk = vec![0u8; p.public_key_len()];
    let mut sk = vec![0u8; p.secret_key_len()];
    slhdsa::keygen_internal(p, &seed, &mut pk, &mut sk).unwrap();
    Fixture {
        pk,
        sk,
        sig: Vec::new(),
    }
}

fn make(p: ParamSet) -> Fixture {
    let n = p.n();
    let Fixture { pk, sk, .. } = keys(p);
    let mut sig = vec![0u8; p.signature_len()];
    let msg = slhdsa::Message::Pure { ctx: b"", msg: MSG };
    let rnd = sk[2 * n..3 * n].to_vec();
    slhdsa::sign(p, &sk, &msg, Some(&rnd), &mut sig).unwrap();
    Fixture { pk, sk, sig }
}

/// The fixture of a set, made the first time the set is drawn (signing an 's' set takes a
/// good part of a second, so only the sets an input reaches pay).
pub fn fixture(p: ParamSet) -> &'static Fixture {
    static FIX: [OnceLock<Fixture>; 12] = [const { OnceLock::new() }; 12];
    FIX[p.index()].get_or_init(|| make(p))
}

/// The fixture's key pair alone (`sig` empty): no signing at start-up.
pub fn fixture_keys(p: ParamSet) -> &'static Fixture {
    static FIX: [OnceLock<Fixture>; 12] = [const { OnceLock::new() }; 12];
    FIX[p.index()].get_or_init(|| keys(p))
}

/// The set of the first input byte and the rest. With the byte's top three bits set (one
/// input in eight) the rest is used as it is, at its own length; otherwise its first two
/// bytes give an offset and the rest is XORed into `base` from there.
pub fn mutate(head: u8, rest: &[u8], base: &[u8]) -> Vec<u8> {
    if head & 0xe0 == 0xe0 {
        return rest.to_vec();
    }
    let mut v = base.to_vec();
    if rest.len() >= 2 && !v.is_empty() {
        let at = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        for (k, &x) in rest[2..].iter().enumerate() {
            let n = v.len();
            v[(at + k) % n] ^= x;
        }
    }
    v
}

/// A CPU context for the C calls, made once.
pub fn context() -> *mut pqg_context {
    struct Ctx(*mut pqg_context);
    // SAFETY: a pqg_context is documented thread-safe.
    unsafe impl Send for Ctx {}
    unsafe impl Sync for Ctx {}
    static CTX: OnceLock<Ctx> = OnceLock::new();
    CTX.get_or_init(|| {
        let mut c = null_mut();
        let cpu = pqg_backend_values::PQG_BACKEND_CPU as pqg_backend;
        // SAFETY: `c` is a valid out pointer.
        assert_eq!(unsafe { pqg_context_new(cpu, &mut c) }, PQG_OK);
        Ctx(c)
    })
    .0
}

/// The contract's status for a library error.
pub fn status(r: Result<(), Error>) -> pqg_status {
    match r {
        Ok(()) => PQG_OK,
        Err(Error::BadLength) => PQG_ERR_BAD_LENGTH,
        Err(Error::BadKey) => PQG_ERR_BAD_KEY,
        Err(Error::VerifyFailed) => PQG_ERR_VERIFY_FAILED,
        Err(Error::InvalidArgument) => PQG_ERR_INVALID_ARGUMENT,
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

/// pqg_slhdsa_verify (pure form) on a CPU context.
pub fn c_verify(p: ParamSet, pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> pqg_status {
    // SAFETY: every pointer comes with its slice's length.
    unsafe {
        pqg_slhdsa_verify(
            context(),
            alg(p),
            pk.as_ptr(),
            pk.len(),
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sig.as_ptr(),
            sig.len(),
        )
    }
}

/// A key handle through pqg_key_new: its status and the handle (NULL on failure).
pub fn c_key_new(p: ParamSet, kind: pqg_key_kind, key: &[u8]) -> (pqg_status, *mut pqg_key) {
    let mut h = null_mut();
    // SAFETY: `key` comes with its length, `h` is a valid out pointer.
    let st = unsafe { pqg_key_new(alg(p), kind, key.as_ptr(), key.len(), &mut h) };
    assert_eq!(
        st == PQG_OK,
        !h.is_null(),
        "pqg_key_new: status {st}, handle {h:?}"
    );
    (st, h)
}

/// pqg_slhdsa_verify_key with a public-key handle.
pub fn c_verify_key(h: *const pqg_key, msg: &[u8], ctx: &[u8], sig: &[u8]) -> pqg_status {
    // SAFETY: `h` is a live handle, every pointer comes with its slice's length.
    unsafe {
        pqg_slhdsa_verify_key(
            context(),
            h,
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sig.as_ptr(),
            sig.len(),
        )
    }
}
