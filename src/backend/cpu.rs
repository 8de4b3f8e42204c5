//! The CPU backend: the reference implementations, spread over all cores on a rayon pool.
//! A batch of one runs inline on the caller's thread, paying no thread-pool overhead.
//! Items without seeds, coins or `rnd` get theirs from one bulk draw per batch, never from
//! one system call each.
//!
//! Fork safety: a child process inherits the parent's memory but none of its threads, so a
//! pool (or a lock) inherited from the parent must never be used there. Each process therefore
//! gets its own [`Process`] (pool, backend, registration bookkeeping), found by pid in a
//! lock-free, append-only chain: a child appends its own and never touches its parent's.

use super::registry::{InFlight, Registry};
use super::{
    Backend, BackendKind, DecapsItem, EncapsItem, SignItem, SlhSignItem, SlhVerifyItem, VerifyItem,
};
use crate::{ctru, mldsa, mlkem, slhdsa, Error, Status};
use once_cell::race::OnceBox;
use once_cell::sync::OnceCell;
use rayon::prelude::*;
use std::sync::Arc;
use zeroize::Zeroizing;

/// Items handed to one rayon task at a time: big enough to amortise scheduling, small enough
/// to balance signing's variable retry count.
const MIN_CHUNK: usize = 4;

/// The CPU backend of one process. A context inherited across `fork()` holds its parent's;
/// every call then goes to the child's own (see the module comment).
#[derive(Debug)]
pub struct CpuBackend {
    pid: u32,
    registry: Registry,
}

/// What one process's CPU backend owns.
struct Process {
    pid: u32,
    /// Built on first use; `None` when no thread could be started (batches then run inline).
    pool: OnceCell<Option<rayon::ThreadPool>>,
    backend: Arc<CpuBackend>,
    /// This process's asynchronous jobs (whatever their backend).
    jobs: InFlight,
    /// The chain's next process (a child's, in the child's memory).
    next: OnceBox<Process>,
}

impl Process {
    fn new(pid: u32) -> Process {
        Process {
            pid,
            pool: OnceCell::new(),
            backend: Arc::new(CpuBackend {
                pid,
                registry: Registry::new(),
            }),
            jobs: InFlight::default(),
            next: OnceBox::new(),
        }
    }
}

/// This process's entry: the first in the chain with our pid, appended if there is none.
/// Lock-free (a compare-and-swap per link), so a lock held by a parent's thread at fork time
/// cannot block a child here.
fn process() -> &'static Process {
    static CHAIN: OnceBox<Process> = OnceBox::new();
    let me = crate::process::id();
    let mut node = CHAIN.get_or_init(|| Box::new(Process::new(me)));
    while node.pid != me {
        node = node.next.get_or_init(|| Box::new(Process::new(me)));
    }
    node
}

/// The process-wide CPU backend (of the calling process).
pub(super) fn backend() -> Arc<CpuBackend> {
    process().backend.clone()
}

/// This process's asynchronous jobs.
pub(super) fn jobs() -> &'static InFlight {
    &process().jobs
}

fn pool() -> Option<&'static rayon::ThreadPool> {
    process()
        .pool
        .get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .thread_name(|i| format!("pqgpu-cpu-{i}"))
                .build()
                .ok()
        })
        .as_ref()
}

impl CpuBackend {
    /// The calling process's CPU backend (the same one `select::select` hands out).
    pub fn new() -> Arc<CpuBackend> {
        backend()
    }

    /// `self`, or in a child process the child's own backend.
    fn live(&self) -> &CpuBackend {
        if self.pid == crate::process::id() {
            self
        } else {
            &process().backend
        }
    }
}

/// Runs `f(item)` for every item, writing its status; inline for one item, in parallel otherwise.
fn for_each<T: Send, F>(items: Vec<T>, statuses: &mut [Status], f: F)
where
    F: Fn(T) -> Status + Sync + Send,
{
    let pool = if items.len() <= 1 { None } else { pool() };
    let Some(pool) = pool else {
        for (it, st) in items.into_iter().zip(statuses.iter_mut()) {
            *st = f(it);
        }
        return;
    };
    pool.install(|| {
        items
            .into_par_iter()
            .zip(statuses.par_iter_mut())
            .with_min_len(MIN_CHUNK)
            .for_each(|(it, st)| *st = f(it))
    });
}

/// Fresh randomness for `count` items of `len` bytes, in one draw (on this process's pool).
fn drawn(count: usize, len: usize) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut v = Zeroizing::new(vec![0u8; count * len]);
    if count > 0 {
        in_pool(|| crate::rng::fill_bulk(&mut v))?;
    }
    Ok(v)
}

/// Starts `f` on one of this process's pool threads without waiting for it; false (and `f`
/// dropped) when there is no pool. `f` must not panic (a panic in a spawned job aborts).
pub(crate) fn spawn_in_pool(f: impl FnOnce() + Send + 'static) -> bool {
    match pool() {
        Some(p) => {
            p.spawn(f);
            true
        }
        None => false,
    }
}

/// The threads of this process's pool (0 when there is none).
pub(crate) fn pool_threads() -> usize {
    pool().map_or(0, |p| p.current_num_threads())
}

/// Runs `f` on this process's pool, so that rayon work inside it (parallel checks, bulk
/// randomness) never reaches a pool inherited across `fork()`; inline when there is none.
pub(crate) fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// The contract's rule for a failed item's shared secret: zeroed, unless its own length was
/// the one rejected (then nothing is written to it). The GPU backend does the same per item.
fn zero_secret_on_failure(r: Status, ss: &mut [u8]) -> Status {
    if r.is_err() && ss.len() == mlkem::SHARED_SECRET_LEN {
        ss.fill(0);
    }
    r
}

/// The lengths of one key generation: seed, public key and secret key.
struct KeyLens {
    seed: usize,
    pk: usize,
    sk: usize,
}

/// A batch of key generations on the pool: each item's seed (the caller's, or all drawn in one
/// fresh draw) and its pk and sk pieces of the contiguous outputs handed to `keygen`.
fn keygen_batch<F>(
    seeds: Option<&[u8]>,
    lens: KeyLens,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
    keygen: F,
) where
    F: Fn(&[u8], &mut [u8], &mut [u8]) -> Status + Sync + Send,
{
    let n = statuses.len();
    if pks.len() != n * lens.pk
        || sks.len() != n * lens.sk
        || seeds.is_some_and(|s| s.len() != n * lens.seed)
    {
        return statuses.fill(Err(Error::BadLength));
    }
    let store;
    let seeds = match seeds {
        Some(s) => s,
        None => match drawn(n, lens.seed) {
            Ok(d) => {
                store = d;
                &store[..]
            }
            Err(e) => return statuses.fill(Err(e)),
        },
    };
    let items: Vec<_> = seeds
        .chunks_exact(lens.seed)
        .zip(pks.chunks_exact_mut(lens.pk))
        .zip(sks.chunks_exact_mut(lens.sk))
        .collect();
    for_each(items, statuses, |((seed, pk), sk)| keygen(seed, pk, sk));
}

/// slh_keygen on the CPU pool (the trait's default for every backend).
pub(super) fn slhdsa_keygen(
    p: slhdsa::ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) {
    let lens = KeyLens {
        seed: p.seed_len(),
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    keygen_batch(seeds, lens, pks, sks, statuses, |seed, pk, sk| {
        slhdsa::keygen_internal(p, seed, pk, sk)
    })
}

/// SLH-DSA signing on the CPU pool; hedged items' opt_rand drawn in one bulk draw.
pub(super) fn slhdsa_sign(
    p: slhdsa::ParamSet,
    items: &[SlhSignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    let hedged = items.iter().filter(|it| it.rnd.is_none()).count();
    let rnd = match drawn(hedged, p.n()) {
        Ok(r) => r,
        Err(e) => return statuses.fill(Err(e)),
    };
    let mut fresh = rnd.chunks_exact(p.n());
    let work: Vec<_> = items
        .iter()
        .map(|it| (it, it.rnd.or_else(|| fresh.next())))
        .zip(sigs.iter_mut())
        .collect();
    for_each(work, statuses, |((it, rnd), sig)| {
        slhdsa::sign(p, it.sk, &it.msg, rnd, sig)
    });
}

/// SLH-DSA verification on the CPU pool.
pub(super) fn slhdsa_verify(
    p: slhdsa::ParamSet,
    items: &[SlhVerifyItem<'_>],
    statuses: &mut [Status],
) {
    let work: Vec<_> = items.iter().collect();
    for_each(work, statuses, |it| {
        slhdsa::verify(p, it.pk, &it.msg, it.sig)
    });
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn mldsa_keygen(
        &self,
        p: mldsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let lens = KeyLens {
            seed: 32,
            pk: p.public_key_len(),
            sk: p.secret_key_len(),
        };
        keygen_batch(seeds, lens, pks, sks, statuses, |seed, pk, sk| {
            mldsa::keygen_internal(p, seed.try_into().expect("32-byte seed"), pk, sk)
        })
    }

    fn mldsa_sign(
        &self,
        p: mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let hedged = items.iter().filter(|it| it.rnd.is_none()).count();
        let rnd = match drawn(hedged, 32) {
            Ok(r) => r,
            Err(e) => return statuses.fill(Err(e)),
        };
        let mut fresh = rnd
            .chunks_exact(32)
            .map(|r| r.try_into().expect("32-byte row"));
        let work: Vec<_> = items
            .iter()
            .map(|it| (it, it.rnd.or_else(|| fresh.next())))
            .zip(sigs.iter_mut())
            .collect();
        for_each(work, statuses, |((it, rnd), sig)| {
            mldsa::sign(p, it.sk, &it.msg, rnd, sig)
        });
    }

    fn mldsa_verify(&self, p: mldsa::ParamSet, items: &[VerifyItem<'_>], statuses: &mut [Status]) {
        let _batch = self.live().registry.hold();
        let work: Vec<_> = items.iter().collect();
        for_each(work, statuses, |it| {
            mldsa::verify(p, it.pk, &it.msg, it.sig)
        });
    }

    fn slhdsa_keygen(
        &self,
        p: slhdsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        slhdsa_keygen(p, seeds, pks, sks, statuses)
    }

    fn slhdsa_sign(
        &self,
        p: slhdsa::ParamSet,
        items: &[SlhSignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        slhdsa_sign(p, items, sigs, statuses)
    }

    fn slhdsa_verify(
        &self,
        p: slhdsa::ParamSet,
        items: &[SlhVerifyItem<'_>],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        slhdsa_verify(p, items, statuses)
    }

    fn kem_keygen(
        &self,
        p: ctru::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let lens = KeyLens {
            seed: 64,
            pk: p.public_key_len(),
            sk: p.secret_key_len(),
        };
        keygen_batch(seeds, lens, pks, sks, statuses, |seed, pk, sk| {
            ctru::keygen_derand(p, seed.try_into().expect("64-byte seed"), pk, sk)
        })
    }

    fn kem_encaps(
        &self,
        p: ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let unseeded = items.iter().filter(|it| it.coins.is_none()).count();
        let coins = match drawn(unseeded, 32) {
            Ok(c) => c,
            Err(e) => return statuses.fill(Err(e)),
        };
        let mut fresh = coins
            .chunks_exact(32)
            .map(|c| c.try_into().expect("32-byte row"));
        let work: Vec<_> = items
            .iter()
            .map(|it| {
                (
                    it.pk,
                    it.coins.or_else(|| fresh.next()).expect("coins drawn"),
                )
            })
            .zip(cts.iter_mut())
            .zip(sss.iter_mut())
            .collect();
        for_each(work, statuses, |(((pk, e), ct), ss)| {
            ctru::encaps_derand(p, pk, e, ct, ss)
        });
    }

    fn kem_decaps(
        &self,
        p: ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let work: Vec<_> = items.iter().zip(sss.iter_mut()).collect();
        for_each(work, statuses, |(it, ss)| ctru::decaps(p, it.sk, it.ct, ss));
    }

    fn mlkem_keygen(
        &self,
        p: mlkem::ParamSet,
        seeds: Option<&[u8]>,
        eks: &mut [u8],
        dks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let lens = KeyLens {
            seed: mlkem::SEED_LEN,
            pk: p.encaps_key_len(),
            sk: p.decaps_key_len(),
        };
        keygen_batch(seeds, lens, eks, dks, statuses, |seed, ek, dk| {
            mlkem::keygen_seeded(p, seed.try_into().expect("64-byte seed"), ek, dk)
        })
    }

    fn mlkem_encaps(
        &self,
        p: mlkem::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let unseeded = items.iter().filter(|it| it.coins.is_none()).count();
        let coins = match drawn(unseeded, mlkem::COINS_LEN) {
            Ok(c) => c,
            Err(e) => return statuses.fill(Err(e)),
        };
        let mut fresh = coins
            .chunks_exact(mlkem::COINS_LEN)
            .map(|c| c.try_into().expect("32-byte row"));
        let work: Vec<_> = items
            .iter()
            .map(|it| {
                (
                    it.pk,
                    it.coins.or_else(|| fresh.next()).expect("coins drawn"),
                )
            })
            .zip(cts.iter_mut())
            .zip(sss.iter_mut())
            .collect();
        for_each(work, statuses, |(((ek, m), ct), ss)| {
            zero_secret_on_failure(mlkem::encaps_internal(p, ek, m, ct, ss), ss)
        });
    }

    fn mlkem_decaps(
        &self,
        p: mlkem::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let _batch = self.live().registry.hold();
        let work: Vec<_> = items.iter().zip(sss.iter_mut()).collect();
        for_each(work, statuses, |(it, ss)| {
            zero_secret_on_failure(mlkem::decaps(p, it.sk, it.ct, ss), ss)
        });
    }

    fn register_host_memory(&self, buf: &[u8]) -> Result<(), Error> {
        self.live()
            .registry
            .register(buf.as_ptr() as usize, buf.len())
    }

    fn unregister_host_memory(&self, ptr: *const u8) -> Result<(), Error> {
        if ptr.is_null() {
            return Err(Error::NullPointer);
        }
        self.live().registry.unregister(ptr as usize)
    }
}
