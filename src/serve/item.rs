//! One queued request: the operation with raw views of the caller's buffers, and where its
//! status goes.
//!
//! The dispatcher keeps items past the call that made them, so their buffers are held as raw
//! addresses that the submitter promised stay valid until the item's completion is reported
//! (blocking calls wait for it; asynchronous jobs document it). Every item reports exactly one
//! status: [`Item::finish`], or `Err(Panic)` from its `Drop` if it is dropped unfinished.

use super::key::{Key, Lent};
use crate::backend::{DecapsItem, EncapsItem, SignItem, SlhSignItem, SlhVerifyItem, VerifyItem};
use crate::mldsa::{self, Message, PreHash};
use crate::{api, ctru, mlkem, slhdsa, Alg, Error, Kem, Status};
use std::sync::Arc;
use zeroize::{Zeroize, Zeroizing};

/// A caller-owned input buffer, read until the item completes.
#[derive(Clone, Copy, Debug)]
pub struct RawIn {
    ptr: *const u8,
    len: usize,
}

/// A caller-owned output buffer, written (at most once, whole) before the item completes.
#[derive(Clone, Copy, Debug)]
pub struct RawOut {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: plain addresses whose validity until completion the submitter promised; the
// dispatcher touches each buffer from one thread at a time (the one running the item).
unsafe impl Send for RawIn {}
unsafe impl Sync for RawIn {}
unsafe impl Send for RawOut {}
unsafe impl Sync for RawOut {}

impl RawIn {
    /// # Safety
    /// `s` must stay valid, and unwritten, until the item holding this completes.
    pub unsafe fn new(s: &[u8]) -> RawIn {
        RawIn {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// # Safety
    /// Only while the item that holds this is running (before its completion).
    unsafe fn get<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the submitter's promise (see `new`).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl RawOut {
    /// # Safety
    /// `s` must stay valid, and untouched by others, until the item holding this completes.
    pub unsafe fn new(s: &mut [u8]) -> RawOut {
        RawOut {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// # Safety
    /// Only while the item that holds this is running, from the thread running it.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get<'a>(self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: the submitter's promise (see `new`); one writer at a time.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// [`Message`] with its slices held raw.
#[derive(Clone, Copy, Debug)]
pub enum RawMsg {
    Pure {
        ctx: RawIn,
        msg: RawIn,
    },
    PreHashed {
        ctx: RawIn,
        ph: PreHash,
        digest: RawIn,
    },
    Internal(RawIn),
    Mu(RawIn),
}

impl RawMsg {
    /// # Safety
    /// As [`RawIn::new`] for every slice of `m`.
    pub unsafe fn new(m: &Message<'_>) -> RawMsg {
        // SAFETY: forwarded.
        unsafe {
            match *m {
                Message::Pure { ctx, msg } => RawMsg::Pure {
                    ctx: RawIn::new(ctx),
                    msg: RawIn::new(msg),
                },
                Message::PreHashed { ctx, ph, digest } => RawMsg::PreHashed {
                    ctx: RawIn::new(ctx),
                    ph,
                    digest: RawIn::new(digest),
                },
                Message::Internal(m) => RawMsg::Internal(RawIn::new(m)),
                Message::Mu(m) => RawMsg::Mu(RawIn::new(m)),
            }
        }
    }

    /// # Safety
    /// As [`RawIn::new`] for every slice of `m`.
    pub unsafe fn new_slh(m: &slhdsa::Message<'_>) -> RawMsg {
        // SAFETY: forwarded.
        unsafe {
            match *m {
                slhdsa::Message::Pure { ctx, msg } => RawMsg::new(&Message::Pure { ctx, msg }),
                slhdsa::Message::PreHashed { ctx, ph, digest } => {
                    RawMsg::new(&Message::PreHashed { ctx, ph, digest })
                }
                slhdsa::Message::Internal(m) => RawMsg::new(&Message::Internal(m)),
            }
        }
    }

    /// The message of an SLH-DSA op (made by [`RawMsg::new_slh`], so never `Mu`).
    ///
    /// # Safety
    /// As [`RawIn::get`].
    unsafe fn get_slh<'a>(self) -> slhdsa::Message<'a> {
        // SAFETY: forwarded.
        unsafe {
            match self.get() {
                Message::Pure { ctx, msg } => slhdsa::Message::Pure { ctx, msg },
                Message::PreHashed { ctx, ph, digest } => {
                    slhdsa::Message::PreHashed { ctx, ph, digest }
                }
                Message::Internal(m) => slhdsa::Message::Internal(m),
                Message::Mu(_) => unreachable!("SLH-DSA ops are made from slhdsa::Message"),
            }
        }
    }

    /// # Safety
    /// As [`RawIn::get`].
    unsafe fn get<'a>(self) -> Message<'a> {
        // SAFETY: forwarded.
        unsafe {
            match self {
                RawMsg::Pure { ctx, msg } => Message::Pure {
                    ctx: ctx.get(),
                    msg: msg.get(),
                },
                RawMsg::PreHashed { ctx, ph, digest } => Message::PreHashed {
                    ctx: ctx.get(),
                    ph,
                    digest: digest.get(),
                },
                RawMsg::Internal(m) => Message::Internal(m.get()),
                RawMsg::Mu(m) => Message::Mu(m.get()),
            }
        }
    }
}

/// The key of a request: a handle, or encoded bytes read in place.
pub enum KeyRef {
    Handle(Held),
    Bytes(RawIn),
}

/// A key handle as an op holds it.
pub enum Held {
    /// With a reference count of its own.
    Counted(Key),
    /// Without: valid while the submitter holds the handle and then, once queued, while the
    /// queue holds it for the op (`dispatch`).
    Lent(Lent),
}

impl std::ops::Deref for Held {
    type Target = Key;
    fn deref(&self) -> &Key {
        match self {
            Held::Counted(k) => k,
            Held::Lent(k) => k,
        }
    }
}

impl KeyRef {
    /// # Safety
    /// As [`RawIn::get`].
    unsafe fn bytes(&self) -> &[u8] {
        match self {
            KeyRef::Handle(k) => k.bytes(),
            // SAFETY: forwarded.
            KeyRef::Bytes(b) => unsafe { b.get() },
        }
    }
}

/// The key argument of the safe entry points: a handle, or an encoded key for an algorithm.
#[derive(Clone, Copy, Debug)]
pub enum KeyArg<'a> {
    /// A handle: an op made from it holds its own reference.
    Handle(&'a Key),
    /// A handle the caller keeps alive until the op has been queued (the queue then holds
    /// it for the op) or has completed: an op made from it holds no reference of its own.
    Lent(&'a Key),
    Bytes(Alg, &'a [u8]),
}

impl KeyArg<'_> {
    fn alg(&self) -> Alg {
        match self {
            KeyArg::Handle(k) | KeyArg::Lent(k) => k.alg(),
            KeyArg::Bytes(a, _) => *a,
        }
    }

    /// A handle as lent for a call that returns only once its op has completed.
    pub(crate) fn lent(self) -> Self {
        match self {
            KeyArg::Handle(k) => KeyArg::Lent(k),
            other => other,
        }
    }

    /// # Safety
    /// As [`RawIn::new`] for the bytes; a lent handle as [`KeyArg::Lent`] says.
    unsafe fn raw(&self) -> KeyRef {
        match self {
            KeyArg::Handle(k) => KeyRef::Handle(Held::Counted((*k).clone())),
            // SAFETY: forwarded.
            KeyArg::Lent(k) => KeyRef::Handle(Held::Lent(unsafe { k.lend() })),
            // SAFETY: forwarded.
            KeyArg::Bytes(_, b) => KeyRef::Bytes(unsafe { RawIn::new(b) }),
        }
    }

    fn mldsa(&self) -> Result<mldsa::ParamSet, Error> {
        match self.alg() {
            Alg::MlDsa(p) => Ok(p),
            _ => Err(Error::InvalidArgument),
        }
    }

    fn slhdsa(&self) -> Result<slhdsa::ParamSet, Error> {
        match self.alg() {
            Alg::SlhDsa(p) => Ok(p),
            _ => Err(Error::InvalidArgument),
        }
    }

    fn kem(&self) -> Result<Kem, Error> {
        self.alg().kem()
    }
}

/// A signature scheme and parameter set: the signing and verifying ops' algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sig {
    MlDsa(mldsa::ParamSet),
    SlhDsa(slhdsa::ParamSet),
}

impl Sig {
    pub const fn alg(self) -> Alg {
        match self {
            Sig::MlDsa(p) => Alg::MlDsa(p),
            Sig::SlhDsa(p) => Alg::SlhDsa(p),
        }
    }

    pub const fn name(self) -> &'static str {
        self.alg().name()
    }

    pub const fn signature_len(self) -> usize {
        self.alg().signature_len()
    }
}

/// One request.
pub enum Op {
    /// `rnd`: ML-DSA's 32 bytes, or SLH-DSA's opt_rand in the first n.
    Sign {
        p: Sig,
        key: KeyRef,
        msg: RawMsg,
        rnd: Option<Zeroizing<[u8; 32]>>,
        sig: RawOut,
    },
    Verify {
        p: Sig,
        key: KeyRef,
        msg: RawMsg,
        sig: RawIn,
    },
    Encaps {
        p: Kem,
        key: KeyRef,
        coins: Option<Zeroizing<[u8; 32]>>,
        ct: RawOut,
        ss: RawOut,
    },
    Decaps {
        p: Kem,
        key: KeyRef,
        ct: RawIn,
        ss: RawOut,
    },
    /// A key pair (any family); `seed` is xi (ML-DSA, the first 32 bytes), d || z (the first 64)
    /// or SK.seed || SK.prf || PK.seed (SLH-DSA, the first 3n).
    Keygen {
        alg: Alg,
        seed: Option<Zeroizing<[u8; 96]>>,
        pk: RawOut,
        sk: RawOut,
    },
}

/// Which backend call an op belongs to: ops of one class run in one backend batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Sign(Sig),
    Verify(Sig),
    Encaps(Kem),
    Decaps(Kem),
    /// Key generation of one algorithm, seeded or not (the backends take seeds for all items
    /// of a batch or for none).
    Keygen(Alg, bool),
}

impl Op {
    /// # Safety
    /// Every slice stays valid (outputs untouched by others) until the op's item completes;
    /// a [`KeyArg::Lent`] handle until the op is queued or has completed.
    pub unsafe fn sign(
        key: KeyArg<'_>,
        msg: &Message<'_>,
        rnd: Option<&[u8; 32]>,
        sig: &mut [u8],
    ) -> Result<Op, Error> {
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Sign {
                p: Sig::MlDsa(key.mldsa()?),
                key: key.raw(),
                msg: RawMsg::new(msg),
                rnd: rnd.map(|r| Zeroizing::new(*r)),
                sig: RawOut::new(sig),
            })
        }
    }

    /// # Safety
    /// As [`Op::sign`].
    pub unsafe fn verify(key: KeyArg<'_>, msg: &Message<'_>, sig: &[u8]) -> Result<Op, Error> {
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Verify {
                p: Sig::MlDsa(key.mldsa()?),
                key: key.raw(),
                msg: RawMsg::new(msg),
                sig: RawIn::new(sig),
            })
        }
    }

    /// An SLH-DSA signing op; `rnd` is opt_rand (n bytes, else `BadLength`) or `None` for
    /// hedged signing.
    ///
    /// # Safety
    /// As [`Op::sign`].
    pub unsafe fn slh_sign(
        key: KeyArg<'_>,
        msg: &slhdsa::Message<'_>,
        rnd: Option<&[u8]>,
        sig: &mut [u8],
    ) -> Result<Op, Error> {
        let p = key.slhdsa()?;
        let rnd = match rnd {
            None => None,
            Some(r) if r.len() == p.n() => {
                let mut buf = Zeroizing::new([0u8; 32]);
                buf[..r.len()].copy_from_slice(r);
                Some(buf)
            }
            Some(_) => return Err(Error::BadLength),
        };
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Sign {
                p: Sig::SlhDsa(p),
                key: key.raw(),
                msg: RawMsg::new_slh(msg),
                rnd,
                sig: RawOut::new(sig),
            })
        }
    }

    /// An SLH-DSA verification op.
    ///
    /// # Safety
    /// As [`Op::sign`].
    pub unsafe fn slh_verify(
        key: KeyArg<'_>,
        msg: &slhdsa::Message<'_>,
        sig: &[u8],
    ) -> Result<Op, Error> {
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Verify {
                p: Sig::SlhDsa(key.slhdsa()?),
                key: key.raw(),
                msg: RawMsg::new_slh(msg),
                sig: RawIn::new(sig),
            })
        }
    }

    /// # Safety
    /// As [`Op::sign`].
    pub unsafe fn encaps(
        key: KeyArg<'_>,
        coins: Option<&[u8; 32]>,
        ct: &mut [u8],
        ss: &mut [u8],
    ) -> Result<Op, Error> {
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Encaps {
                p: key.kem()?,
                key: key.raw(),
                coins: coins.map(|c| Zeroizing::new(*c)),
                ct: RawOut::new(ct),
                ss: RawOut::new(ss),
            })
        }
    }

    /// # Safety
    /// As [`Op::sign`].
    pub unsafe fn decaps(key: KeyArg<'_>, ct: &[u8], ss: &mut [u8]) -> Result<Op, Error> {
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Decaps {
                p: key.kem()?,
                key: key.raw(),
                ct: RawIn::new(ct),
                ss: RawOut::new(ss),
            })
        }
    }

    /// # Safety
    /// As [`Op::sign`]. `seed`: 32 bytes (ML-DSA xi) or 64 (CTRU-Prime d || z), else
    /// `BadLength`; `None` for fresh randomness.
    pub unsafe fn keygen(
        alg: Alg,
        seed: Option<&[u8]>,
        pk: &mut [u8],
        sk: &mut [u8],
    ) -> Result<Op, Error> {
        let want = alg.seed_len();
        let seed = match seed {
            None => None,
            Some(s) if s.len() == want => {
                let mut buf = Zeroizing::new([0u8; 96]);
                buf[..want].copy_from_slice(s);
                Some(buf)
            }
            Some(_) => return Err(Error::BadLength),
        };
        // SAFETY: forwarded.
        unsafe {
            Ok(Op::Keygen {
                alg,
                seed,
                pk: RawOut::new(pk),
                sk: RawOut::new(sk),
            })
        }
    }

    /// The key handle the op names without holding it ([`KeyArg::Lent`]), if any: whoever
    /// keeps the op past its submitter's call must hold that handle for it.
    pub(crate) fn lent_key(&self) -> Option<&Key> {
        let key = match self {
            Op::Sign { key, .. }
            | Op::Verify { key, .. }
            | Op::Encaps { key, .. }
            | Op::Decaps { key, .. } => key,
            Op::Keygen { .. } => return None,
        };
        match key {
            KeyRef::Handle(Held::Lent(k)) => Some(k),
            _ => None,
        }
    }

    pub fn class(&self) -> Class {
        match self {
            Op::Sign { p, .. } => Class::Sign(*p),
            Op::Verify { p, .. } => Class::Verify(*p),
            Op::Encaps { p, .. } => Class::Encaps(*p),
            Op::Decaps { p, .. } => Class::Decaps(*p),
            Op::Keygen { alg, seed, .. } => Class::Keygen(*alg, seed.is_some()),
        }
    }

    /// A keygen op's seed bytes (32 for ML-DSA, 64 for CTRU-Prime); `None` otherwise.
    pub fn seed(&self) -> Option<&[u8]> {
        match self {
            Op::Keygen {
                alg: Alg::MlDsa(_),
                seed: Some(s),
                ..
            } => Some(&s[..32]),
            Op::Keygen {
                alg: Alg::SlhDsa(p),
                seed: Some(s),
                ..
            } => Some(&s[..p.seed_len()]),
            Op::Keygen { seed: Some(s), .. } => Some(&s[..64]),
            _ => None,
        }
    }

    /// The checks a one-at-a-time call makes before any work, in the same order, so each
    /// item fails with the status the plain function would give: key kind and length, the
    /// message's shape, output lengths.
    pub fn check(&self) -> Status {
        fn key_ok(key: &KeyRef, alg: Alg, secret: bool) -> Status {
            use super::key::KeyKind;
            match key {
                KeyRef::Handle(k) => {
                    let want = if secret {
                        KeyKind::Secret
                    } else {
                        KeyKind::Public
                    };
                    if k.alg() != alg || k.kind() != want {
                        return Err(Error::InvalidArgument);
                    }
                }
                KeyRef::Bytes(b) => {
                    let len = if secret {
                        alg.secret_key_len()
                    } else {
                        alg.public_key_len()
                    };
                    if b.len() != len {
                        return Err(Error::BadLength);
                    }
                }
            }
            Ok(())
        }
        // SAFETY (all `get` below): called by the submitter before the op is queued, while
        // its buffers are valid.
        match self {
            Op::Sign {
                p, key, msg, sig, ..
            } => {
                key_ok(key, p.alg(), true)?;
                if sig.len() != p.signature_len() {
                    return Err(Error::BadLength);
                }
                unsafe { msg.get() }.validate()
            }
            Op::Verify { p, key, msg, sig } => {
                key_ok(key, p.alg(), false)?;
                unsafe { msg.get() }.validate()?;
                if sig.len() != p.signature_len() {
                    return Err(Error::VerifyFailed);
                }
                Ok(())
            }
            Op::Encaps { p, key, ct, ss, .. } => {
                key_ok(key, p.alg(), false)?;
                if ct.len() != p.ciphertext_len() || ss.len() != p.shared_secret_len() {
                    return Err(Error::BadLength);
                }
                Ok(())
            }
            Op::Decaps { p, key, ct, ss } => {
                key_ok(key, p.alg(), true)?;
                if ct.len() != p.ciphertext_len() || ss.len() != p.shared_secret_len() {
                    return Err(Error::BadLength);
                }
                Ok(())
            }
            Op::Keygen { alg, pk, sk, .. } => {
                if pk.len() != alg.public_key_len() || sk.len() != alg.secret_key_len() {
                    return Err(Error::BadLength);
                }
                Ok(())
            }
        }
    }

    /// Runs the op on the CPU, writing the caller's outputs directly (the CPU functions write
    /// them only on success). Handles take the expanded-key fast paths.
    pub fn run_cpu(&self) -> Status {
        // SAFETY (all `get` below): the op is running; its buffers are valid (submitter's
        // promise) and only this thread writes its outputs.
        unsafe {
            match self {
                Op::Sign {
                    p: Sig::MlDsa(p),
                    key,
                    msg,
                    rnd,
                    sig,
                } => {
                    let rnd = rnd.as_deref();
                    match key {
                        KeyRef::Handle(k) => k.mldsa_sk()?.sign(&msg.get(), rnd, sig.get()),
                        KeyRef::Bytes(b) => mldsa::sign(*p, b.get(), &msg.get(), rnd, sig.get()),
                    }
                }
                Op::Sign {
                    p: Sig::SlhDsa(p),
                    key,
                    msg,
                    rnd,
                    sig,
                } => {
                    let rnd = rnd.as_ref().map(|r| &r[..p.n()]);
                    let m = msg.get_slh();
                    match key {
                        KeyRef::Handle(k) => k.slhdsa_sk()?.sign(&m, rnd, sig.get()),
                        KeyRef::Bytes(b) => slhdsa::sign(*p, b.get(), &m, rnd, sig.get()),
                    }
                }
                Op::Verify {
                    p: Sig::MlDsa(p),
                    key,
                    msg,
                    sig,
                } => match key {
                    KeyRef::Handle(k) => k.mldsa_pk()?.verify(&msg.get(), sig.get()),
                    KeyRef::Bytes(b) => mldsa::verify(*p, b.get(), &msg.get(), sig.get()),
                },
                Op::Verify {
                    p: Sig::SlhDsa(p),
                    key,
                    msg,
                    sig,
                } => match key {
                    KeyRef::Handle(k) => k.slhdsa_pk()?.verify(&msg.get_slh(), sig.get()),
                    KeyRef::Bytes(b) => slhdsa::verify(*p, b.get(), &msg.get_slh(), sig.get()),
                },
                Op::Encaps {
                    p,
                    key,
                    coins,
                    ct,
                    ss,
                } => match (*p, key, coins.as_deref()) {
                    (Kem::Ctru(_), KeyRef::Handle(k), c) => {
                        k.ctru_pk()?.encaps(c, ct.get(), ss.get())
                    }
                    (Kem::Ctru(p), KeyRef::Bytes(b), Some(c)) => {
                        ctru::encaps_derand(p, b.get(), c, ct.get(), ss.get())
                    }
                    (Kem::Ctru(p), KeyRef::Bytes(b), None) => {
                        ctru::encaps(p, b.get(), ct.get(), ss.get())
                    }
                    (Kem::MlKem(p), key, Some(m)) => {
                        mlkem::encaps_internal(p, key.bytes(), m, ct.get(), ss.get())
                    }
                    (Kem::MlKem(p), key, None) => mlkem::encaps(p, key.bytes(), ct.get(), ss.get()),
                },
                Op::Decaps { p, key, ct, ss } => match (*p, key) {
                    (Kem::Ctru(_), KeyRef::Handle(k)) => k.ctru_sk()?.decaps(ct.get(), ss.get()),
                    (Kem::Ctru(p), KeyRef::Bytes(b)) => {
                        ctru::decaps(p, b.get(), ct.get(), ss.get())
                    }
                    // A handle's dk passed the hash check when it was made.
                    (Kem::MlKem(p), KeyRef::Handle(k)) => {
                        mlkem::decaps_checked(p, k.mlkem_dk()?, ct.get(), ss.get())
                    }
                    (Kem::MlKem(p), KeyRef::Bytes(b)) => {
                        mlkem::decaps(p, b.get(), ct.get(), ss.get())
                    }
                },
                Op::Keygen { alg, seed, pk, sk } => {
                    // The CPU backend's own single-item path (its randomness, its zeroing).
                    let cpu = crate::backend::cpu_backend();
                    match alg {
                        Alg::MlDsa(p) => {
                            let xi = seed.as_deref().map(|s| {
                                let mut x = [0u8; 32];
                                x.copy_from_slice(&s[..32]);
                                Zeroizing::new(x)
                            });
                            api::mldsa_keygen_one(&*cpu, *p, xi.as_deref(), pk.get(), sk.get())
                        }
                        Alg::Ctru(p) => api::kem_keygen_one(
                            &*cpu,
                            *p,
                            seed.as_ref().map(|s| s[..64].try_into().expect("64 bytes")),
                            pk.get(),
                            sk.get(),
                        ),
                        Alg::SlhDsa(p) => api::slhdsa_keygen_one(
                            &*cpu,
                            *p,
                            seed.as_ref().map(|s| &s[..p.seed_len()]),
                            pk.get(),
                            sk.get(),
                        ),
                        Alg::MlKem(p) => api::kem_keygen_one(
                            &*cpu,
                            *p,
                            seed.as_ref().map(|s| s[..64].try_into().expect("64 bytes")),
                            pk.get(),
                            sk.get(),
                        ),
                    }
                }
            }
        }
    }

    /// The backend's view of a sign op (`None` for another class).
    ///
    /// # Safety
    /// Only while the op is running; the result must not outlive that.
    pub unsafe fn sign_item<'a>(&'a self) -> Option<SignItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Sign {
                p: Sig::MlDsa(_),
                key,
                msg,
                rnd,
                ..
            } => Some(unsafe {
                SignItem {
                    sk: key.bytes(),
                    msg: msg.get(),
                    rnd: rnd.as_deref(),
                }
            }),
            _ => None,
        }
    }

    /// # Safety
    /// As [`Op::sign_item`].
    pub unsafe fn verify_item<'a>(&'a self) -> Option<VerifyItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Verify {
                p: Sig::MlDsa(_),
                key,
                msg,
                sig,
            } => Some(unsafe {
                VerifyItem {
                    pk: key.bytes(),
                    msg: msg.get(),
                    sig: sig.get(),
                }
            }),
            _ => None,
        }
    }

    /// The backend's view of an SLH-DSA sign op (`None` for another class).
    ///
    /// # Safety
    /// As [`Op::sign_item`].
    pub unsafe fn slh_sign_item<'a>(&'a self) -> Option<SlhSignItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Sign {
                p: Sig::SlhDsa(p),
                key,
                msg,
                rnd,
                ..
            } => Some(unsafe {
                SlhSignItem {
                    sk: key.bytes(),
                    msg: msg.get_slh(),
                    rnd: rnd.as_ref().map(|r| &r[..p.n()]),
                }
            }),
            _ => None,
        }
    }

    /// # Safety
    /// As [`Op::sign_item`].
    pub unsafe fn slh_verify_item<'a>(&'a self) -> Option<SlhVerifyItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Verify {
                p: Sig::SlhDsa(_),
                key,
                msg,
                sig,
            } => Some(unsafe {
                SlhVerifyItem {
                    pk: key.bytes(),
                    msg: msg.get_slh(),
                    sig: sig.get(),
                }
            }),
            _ => None,
        }
    }

    /// # Safety
    /// As [`Op::sign_item`].
    pub unsafe fn encaps_item<'a>(&'a self) -> Option<EncapsItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Encaps { key, coins, .. } => Some(unsafe {
                EncapsItem {
                    pk: key.bytes(),
                    coins: coins.as_deref(),
                }
            }),
            _ => None,
        }
    }

    /// # Safety
    /// As [`Op::sign_item`].
    pub unsafe fn decaps_item<'a>(&'a self) -> Option<DecapsItem<'a>> {
        match self {
            // SAFETY: forwarded.
            Op::Decaps { key, ct, .. } => Some(unsafe {
                DecapsItem {
                    sk: key.bytes(),
                    ct: ct.get(),
                }
            }),
            _ => None,
        }
    }

    /// The caller's first output: the signature, ciphertext or public key (empty for verify
    /// and decaps).
    ///
    /// # Safety
    /// Only while the op is running, from the thread running it; one live view at a time.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn first_out<'a>(&self) -> &'a mut [u8] {
        // SAFETY: forwarded.
        unsafe {
            match self {
                Op::Sign { sig, .. } => sig.get(),
                Op::Encaps { ct, .. } => ct.get(),
                Op::Keygen { pk, .. } => pk.get(),
                Op::Verify { .. } | Op::Decaps { .. } => &mut [],
            }
        }
    }

    /// The caller's secret output: the shared secret or secret key (empty for sign, verify).
    ///
    /// # Safety
    /// As [`Op::first_out`].
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn secret_out<'a>(&self) -> &'a mut [u8] {
        // SAFETY: forwarded.
        unsafe {
            match self {
                Op::Encaps { ss, .. } | Op::Decaps { ss, .. } => ss.get(),
                Op::Keygen { sk, .. } => sk.get(),
                Op::Sign { .. } | Op::Verify { .. } => &mut [],
            }
        }
    }

    /// Zeroes every output: an engine that failed the op may have been writing them.
    pub fn clear_outputs(&self) {
        // SAFETY: the op has not completed, so its buffers are still the caller's promise.
        unsafe {
            self.first_out().zeroize();
            self.secret_out().zeroize();
        }
    }

    /// Zeroes the secret outputs (shared secrets, secret keys) of a failed op.
    fn zero_secrets(&self) {
        // SAFETY: the op has not completed yet, so its buffer is still the caller's promise.
        unsafe { self.secret_out() }.zeroize();
    }
}

/// Where items report: the blocking caller, or an asynchronous job. Must not panic.
pub trait Completion: Send + Sync {
    /// Item `index` of this completion's submission ended with `status`; its buffers are
    /// the caller's again. Called exactly once per item.
    fn complete(&self, index: usize, status: Status);
}

/// A queued request.
pub struct Item {
    pub op: Op,
    sink: Option<(Arc<dyn Completion>, usize)>,
}

impl Item {
    #[inline]
    pub fn new(op: Op, done: Arc<dyn Completion>, index: usize) -> Item {
        Item {
            op,
            sink: Some((done, index)),
        }
    }

    /// Reports the item's status (zeroing its secret outputs first when it failed). After
    /// this the item no longer touches the caller's buffers; later calls do nothing.
    pub fn finish(&mut self, status: Status) {
        self.report(status);
    }

    fn report(&mut self, status: Status) {
        if let Some((done, index)) = self.sink.take() {
            if status.is_err() {
                self.op.zero_secrets();
            }
            done.complete(index, status);
        }
    }
}

impl Drop for Item {
    /// An item dropped unfinished (a panic on its way) still ends with a status.
    fn drop(&mut self) {
        self.report(Err(Error::Panic));
    }
}
