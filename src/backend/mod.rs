//! The batch interface every backend implements, and the CPU backend. The GPU backend
//! (`crate::gpu`) implements the same trait; `crate::select` picks between them, so neither
//! backend module imports the other's caller.
//!
//! A batch call is blocking and writes one [`Status`] per item; a bad item never spoils its
//! neighbours. Outputs are written in place, and only for items that succeed. Randomness for
//! items without seeds, coins or `rnd` is drawn in bulk by the backend (never one system call
//! per item). Callers reach backends through [`crate::api`].

mod cpu;
pub mod registry;

pub use cpu::CpuBackend;
pub(crate) use cpu::{in_pool, pool_threads, spawn_in_pool};

use crate::mldsa::{self, Message};
use crate::{ctru, mlkem, slhdsa, Error, Status};
use std::sync::Arc;

/// Which backend runs the work (`pqg_backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum BackendKind {
    Auto = 0,
    Cpu = 1,
    Gpu = 2,
}

/// One ML-DSA signing request.
#[derive(Clone, Copy, Debug)]
pub struct SignItem<'a> {
    pub sk: &'a [u8],
    pub msg: Message<'a>,
    /// `None`: hedged (fresh randomness); `Some(&[0; 32])`: deterministic.
    pub rnd: Option<&'a [u8; 32]>,
}

/// One ML-DSA verification request.
#[derive(Clone, Copy, Debug)]
pub struct VerifyItem<'a> {
    pub pk: &'a [u8],
    pub msg: Message<'a>,
    pub sig: &'a [u8],
}

/// One SLH-DSA signing request.
#[derive(Clone, Copy, Debug)]
pub struct SlhSignItem<'a> {
    pub sk: &'a [u8],
    pub msg: slhdsa::Message<'a>,
    /// opt_rand (n bytes); `None`: hedged (fresh randomness); PK.seed: deterministic.
    pub rnd: Option<&'a [u8]>,
}

/// One SLH-DSA verification request.
#[derive(Clone, Copy, Debug)]
pub struct SlhVerifyItem<'a> {
    pub pk: &'a [u8],
    pub msg: slhdsa::Message<'a>,
    pub sig: &'a [u8],
}

/// One CTRU-Prime encapsulation request. Many items may share one `pk` slice (the server case).
#[derive(Clone, Copy, Debug)]
pub struct EncapsItem<'a> {
    pub pk: &'a [u8],
    /// `None`: fresh randomness.
    pub coins: Option<&'a [u8; 32]>,
}

/// One CTRU-Prime decapsulation request.
#[derive(Clone, Copy, Debug)]
pub struct DecapsItem<'a> {
    pub sk: &'a [u8],
    pub ct: &'a [u8],
}

/// A batch engine. Output slices have one entry (or one fixed-size chunk) per item; the
/// caller guarantees `statuses.len()` equals the item count.
pub trait Backend: Send + Sync {
    /// `Cpu` or `Gpu` (never `Auto`).
    fn kind(&self) -> BackendKind;

    /// Whether the backend's device is shared with other processes' work (a GPU under NVIDIA's
    /// Multi-Process Service): a context on it keeps fewer batches in flight by default
    /// (`serve::config`).
    fn shared_device(&self) -> bool {
        false
    }

    /// ML-DSA.KeyGen for `statuses.len()` items. `seeds`: n*32 bytes of xi, or `None` for fresh
    /// randomness; `pks`/`sks`: n*pk_len and n*sk_len bytes, contiguous.
    fn mldsa_keygen(
        &self,
        p: mldsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    );

    /// ML-DSA signing; `sigs[i]` receives item i's signature.
    fn mldsa_sign(
        &self,
        p: mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    );

    /// ML-DSA verification: `Ok(())` valid, `Err(VerifyFailed)` invalid.
    fn mldsa_verify(&self, p: mldsa::ParamSet, items: &[VerifyItem<'_>], statuses: &mut [Status]);

    /// slh_keygen for `statuses.len()` items. `seeds`: n*3n bytes (SK.seed || SK.prf ||
    /// PK.seed), or `None` for fresh randomness. The default runs the CPU code on the
    /// process's CPU pool (a backend without its own SLH-DSA engine).
    fn slhdsa_keygen(
        &self,
        p: slhdsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        cpu::slhdsa_keygen(p, seeds, pks, sks, statuses)
    }

    /// SLH-DSA signing; `sigs[i]` receives item i's signature. Default: the CPU code.
    fn slhdsa_sign(
        &self,
        p: slhdsa::ParamSet,
        items: &[SlhSignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        cpu::slhdsa_sign(p, items, sigs, statuses)
    }

    /// SLH-DSA verification: `Ok(())` valid, `Err(VerifyFailed)` invalid. Default: the CPU code.
    fn slhdsa_verify(
        &self,
        p: slhdsa::ParamSet,
        items: &[SlhVerifyItem<'_>],
        statuses: &mut [Status],
    ) {
        cpu::slhdsa_verify(p, items, statuses)
    }

    /// CTRU-Prime KeyGen. `seeds`: n*64 bytes (d || z), or `None` for fresh randomness.
    fn kem_keygen(
        &self,
        p: ctru::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    );

    /// CTRU-Prime Encaps; `cts[i]`, `sss[i]` receive item i's ciphertext and shared secret.
    fn kem_encaps(
        &self,
        p: ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    );

    /// CTRU-Prime Decaps; `sss[i]` receives item i's shared secret.
    fn kem_decaps(
        &self,
        p: ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    );

    /// ML-KEM.KeyGen (FIPS 203) for `statuses.len()` items. `seeds`: n*64 bytes of d || z
    /// (KeyGen_internal), or `None` for fresh randomness; `eks`/`dks`: n*ek_len and n*dk_len
    /// bytes, contiguous. The default runs the CPU code on all cores.
    fn mlkem_keygen(
        &self,
        p: mlkem::ParamSet,
        seeds: Option<&[u8]>,
        eks: &mut [u8],
        dks: &mut [u8],
        statuses: &mut [Status],
    ) {
        use rayon::prelude::*;
        let n = statuses.len();
        let (el, dl) = (p.encaps_key_len(), p.decaps_key_len());
        if seeds.is_some_and(|s| s.len() != n * mlkem::SEED_LEN)
            || eks.len() != n * el
            || dks.len() != n * dl
        {
            return statuses.fill(Err(Error::BadLength));
        }
        eks.par_chunks_mut(el)
            .zip(dks.par_chunks_mut(dl))
            .zip(statuses.par_iter_mut())
            .enumerate()
            .for_each(|(i, ((ek, dk), st))| {
                *st = match seeds {
                    Some(s) => {
                        let seed = s[i * mlkem::SEED_LEN..(i + 1) * mlkem::SEED_LEN]
                            .try_into()
                            .expect("64-byte seed");
                        mlkem::keygen_seeded(p, seed, ek, dk)
                    }
                    None => mlkem::keygen(p, ek, dk),
                };
                if st.is_err() {
                    dk.fill(0);
                }
            });
    }

    /// ML-KEM.Encaps with the modulus check; `coins` is m (Encaps_internal) or `None` for
    /// fresh randomness. `cts[i]`, `sss[i]` receive item i's ciphertext and shared secret. The
    /// default runs the CPU code on all cores.
    fn mlkem_encaps(
        &self,
        p: mlkem::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        use rayon::prelude::*;
        items
            .par_iter()
            .zip(cts.par_iter_mut())
            .zip(sss.par_iter_mut())
            .zip(statuses.par_iter_mut())
            .for_each(|(((it, ct), ss), st)| {
                *st = match it.coins {
                    Some(m) => mlkem::encaps_internal(p, it.pk, m, ct, ss),
                    None => mlkem::encaps(p, it.pk, ct, ss),
                };
                if st.is_err() && ss.len() == mlkem::SHARED_SECRET_LEN {
                    ss.fill(0);
                }
            });
    }

    /// ML-KEM.Decaps with the hash check; `sss[i]` receives item i's shared secret (K-bar for a
    /// wrong ciphertext of the right length). The default runs the CPU code on all cores.
    fn mlkem_decaps(
        &self,
        p: mlkem::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        use rayon::prelude::*;
        items
            .par_iter()
            .zip(sss.par_iter_mut())
            .zip(statuses.par_iter_mut())
            .for_each(|((it, ss), st)| {
                *st = mlkem::decaps(p, it.sk, it.ct, ss);
                if st.is_err() && ss.len() == mlkem::SHARED_SECRET_LEN {
                    ss.fill(0);
                }
            });
    }

    /// Registers the caller's buffer for direct transfers: on the GPU backend it is
    /// page-locked and mapped into every GPU, and batch buffers (keys, signatures, ciphertexts,
    /// shared secrets) that lie inside it move by DMA or zero-copy kernels instead of through
    /// host staging copies. Results are identical either way; registration is only about speed.
    /// The buffer must stay allocated until [`Backend::unregister_host_memory`]. The CPU backend
    /// moves no memory but keeps the same bookkeeping ([`registry::Registry`]), so statuses are
    /// the same. Errors: `InvalidArgument` (empty, over `isize::MAX` bytes, or overlapping a
    /// registered buffer), `Device` (the driver refused). The default keeps no bookkeeping
    /// (for test backends).
    fn register_host_memory(&self, buf: &[u8]) -> Result<(), Error> {
        let _ = buf;
        Ok(())
    }

    /// Undoes [`Backend::register_host_memory`] for the buffer starting at `ptr`, after any
    /// batch still running has finished. `InvalidArgument` when nothing is registered there.
    fn unregister_host_memory(&self, ptr: *const u8) -> Result<(), Error> {
        let _ = ptr;
        Ok(())
    }
}

/// The process-wide CPU backend: in a child process after `fork()`, the child's own.
pub fn cpu_backend() -> Arc<dyn Backend> {
    cpu::backend()
}

/// The calling process's asynchronous jobs: the C ABI's jobs enter at submit, and
/// `pqg_host_unregister` waits for those entered before it.
pub fn jobs_in_flight() -> &'static registry::InFlight {
    cpu::jobs()
}
