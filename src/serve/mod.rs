//! Serving one request at a time at batch speed (issue #13): key handles ([`key`]), the
//! coalescing dispatcher ([`dispatch`]), completion notification ([`notify`]) and the
//! context options ([`config`]).
//!
//! [`Serve`] is the per-context part: the entry points (`sign`, `verify`, `encaps`, `decaps`,
//! each blocking, writing into the caller's buffer) and `submit` for asynchronous items.

pub mod config;
mod dispatch;
mod exec;
pub mod item;
pub mod key;
pub mod notify;
mod uncounted;

pub use config::{Config, Opt};
pub use dispatch::Observer;
pub use item::{Class, Completion, KeyArg, Op, Sig};
pub use key::{Key, KeyKind};

use crate::backend::Backend;
use crate::mldsa::Message;
use crate::{slhdsa, Status};
use dispatch::Dispatcher;
use std::sync::Arc;

/// The serving state of one context.
pub struct Serve {
    pub config: Arc<Config>,
    pub notify: Arc<notify::Notify>,
    dispatcher: Dispatcher,
}

impl Serve {
    pub fn new(backend: Arc<dyn Backend>) -> Serve {
        let config = Arc::new(Config::for_backend(backend.shared_device()));
        let notify: Arc<notify::Notify> = Arc::default();
        Serve {
            dispatcher: Dispatcher::new(backend, config.clone(), notify.clone()),
            config,
            notify,
        }
    }

    /// Signs one message: `sig` is written on success only.
    pub fn sign(
        &self,
        key: KeyArg<'_>,
        msg: &Message<'_>,
        rnd: Option<&[u8; 32]>,
        sig: &mut [u8],
    ) -> Status {
        // SAFETY: `run` returns only after the op has completed, within these borrows (so
        // the handle, if any, can be lent).
        self.dispatcher
            .run(unsafe { Op::sign(key.lent(), msg, rnd, sig) }?)
    }

    /// Verifies one signature: `Ok` valid, `Err(VerifyFailed)` invalid.
    pub fn verify(&self, key: KeyArg<'_>, msg: &Message<'_>, sig: &[u8]) -> Status {
        // SAFETY: as in `sign`.
        self.dispatcher
            .run(unsafe { Op::verify(key.lent(), msg, sig) }?)
    }

    /// Signs one message with SLH-DSA (`rnd`: opt_rand, n bytes, or `None` for hedged):
    /// `sig` is written on success only.
    pub fn slh_sign(
        &self,
        key: KeyArg<'_>,
        msg: &slhdsa::Message<'_>,
        rnd: Option<&[u8]>,
        sig: &mut [u8],
    ) -> Status {
        // SAFETY: as in `sign`.
        self.dispatcher
            .run(unsafe { Op::slh_sign(key.lent(), msg, rnd, sig) }?)
    }

    /// Verifies one SLH-DSA signature: `Ok` valid, `Err(VerifyFailed)` invalid.
    pub fn slh_verify(&self, key: KeyArg<'_>, msg: &slhdsa::Message<'_>, sig: &[u8]) -> Status {
        // SAFETY: as in `sign`.
        self.dispatcher
            .run(unsafe { Op::slh_verify(key.lent(), msg, sig) }?)
    }

    /// Encapsulates: `ct` and `ss` written on success; `ss` zeroed on failure.
    pub fn encaps(
        &self,
        key: KeyArg<'_>,
        coins: Option<&[u8; 32]>,
        ct: &mut [u8],
        ss: &mut [u8],
    ) -> Status {
        // SAFETY: as in `sign`.
        let op = unsafe { Op::encaps(key.lent(), coins, ct, ss) };
        self.run_zeroing(op, ss)
    }

    /// Decapsulates: `ss` written on success, zeroed on failure.
    pub fn decaps(&self, key: KeyArg<'_>, ct: &[u8], ss: &mut [u8]) -> Status {
        // SAFETY: as in `sign`.
        let op = unsafe { Op::decaps(key.lent(), ct, ss) };
        self.run_zeroing(op, ss)
    }

    /// Generates one key pair (ML-DSA or CTRU-Prime, as `alg` says) into `pk` and `sk`:
    /// `seed` is xi (32 bytes) or d || z (64), or `None` for fresh randomness. Concurrent
    /// calls on a GPU context are batched like the other operations. `sk` is zeroed on failure.
    pub fn keygen(
        &self,
        alg: crate::Alg,
        seed: Option<&[u8]>,
        pk: &mut [u8],
        sk: &mut [u8],
    ) -> Status {
        // SAFETY: as in `sign`.
        let op = unsafe { Op::keygen(alg, seed, pk, sk) };
        self.run_zeroing(op, sk)
    }

    fn run_zeroing(&self, op: Result<Op, crate::Error>, ss: *mut [u8]) -> Status {
        let st = op.and_then(|op| self.dispatcher.run(op));
        if st.is_err() {
            // SAFETY: the op (if any) has completed, so `ss` is the caller's exclusive borrow
            // again; it was only turned into a pointer to be reused after the op.
            unsafe { zeroize::Zeroize::zeroize(&mut *ss) };
        }
        st
    }

    /// Starts the dispatcher's threads now (otherwise they start with the first queued item),
    /// so that later submits only queue; false if none could start.
    pub fn start(&self) -> bool {
        self.dispatcher.start()
    }

    /// Sets the observer told of every run of items (once per context; later calls are
    /// ignored). Tracing: it sees the batches the dispatcher forms.
    pub fn set_observer(&self, f: Observer) {
        self.dispatcher.set_observer(f)
    }

    /// Queues ops for asynchronous completion; each reports to `done` under its index.
    ///
    /// # Safety
    /// The ops' buffers (see [`Op::sign`]) stay valid until `done` has been told about them;
    /// a lent key handle ([`KeyArg::Lent`]) until this returns (the queue then holds it).
    pub unsafe fn submit(&self, ops: Vec<(usize, Op)>, done: Arc<dyn Completion>) {
        self.dispatcher.submit(ops, done)
    }

    /// Queues one op that has passed [`Op::check`]; it reports to `done` under index 0.
    ///
    /// # Safety
    /// As [`Serve::submit`].
    #[inline]
    pub unsafe fn submit_one(&self, op: Op, done: Arc<dyn Completion>) {
        self.dispatcher.submit_one(op, done)
    }
}
