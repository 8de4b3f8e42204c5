//! The CUDA backend: ML-DSA and CTRU-Prime in large batches on one or more NVIDIA GPUs.
//!
//! * `device`: probe and context (no GPU: a clean `NoDevice`).
//! * `module`: embedded CUDA sources, NVRTC compile per parameter set, on-disk PTX cache.
//! * `worker`: a stream with its memory pool (reused device and pinned host buffers).
//! * `keygen`, `sign`, `verify`: one module per operation.
//! * `bench`: kernel-only timing behind [`kernel_throughput`].
//!
//! Kernel design and measurements: `kernels/README.md`.
//!
//! * `ctru_kem` (`ctru/`): CTRU-Prime keygen, encaps and decaps on the GPU.
//! * `engine`, `scheduler`: one engine per GPU (every visible device, or `PQGPU_DEVICES`),
//!   all fed from one chunk queue.
//!
//! Batches are cut into chunks of `CHUNK` (`SIGN_CHUNK`) items that `MLDSA_WORKERS` (`KEM_WORKERS`) workers per GPU
//! (threads, each with its own stream) run side by side, so memory stays bounded and one
//! chunk's host work and copies overlap another's kernels. A chunk that fails on a GPU moves
//! to the healthy GPUs, and to the CPU when none is left.

mod bench;
#[path = "ctru/mod.rs"]
mod ctru_kem;
mod device;
mod engine;
mod hostio;
pub(crate) mod hostmem;
mod keygen;
mod message;
mod module;
mod scheduler;
mod sign;
mod verify;
mod worker;

use crate::backend::{
    cpu_backend, Backend, BackendKind, DecapsItem, EncapsItem, SignItem, VerifyItem,
};
use crate::{ctru, mldsa, Error, Status};
use engine::DeviceEngine;
use once_cell::sync::OnceCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Items per chunk: big enough to fill the GPU with the other workers' chunks, small enough
/// that chunks stagger and one's copies overlap another's kernels. Measured on the H200
/// (batch 65536): 4096 best for keygen and verify (output/input-copy bound), 16384 for sign.
/// `PQGPU_GPU_CHUNK` overrides both, `PQGPU_KEYGEN_CHUNK` keygen's alone, for tuning.
const CHUNK: usize = 4096;
const SIGN_CHUNK: usize = 16384;
/// Chunks in flight at once per GPU, one stream and host thread each, for ML-DSA and for
/// CTRU-Prime (`PQGPU_GPU_WORKERS` sets both). Measured on the H200 (16-core host, batch
/// 65,536): 8 workers made ML-DSA keygen 5-10 % slower than 4, and CTRU-Prime-761 encaps,
/// decaps and keygen 27 %, 14 % and 16 % faster (its chunks are short and host-bound).
const MLDSA_WORKERS: usize = 4;
const KEM_WORKERS: usize = 8;

/// Threads per block of the stream kernels (one Keccak state per thread).
const BLOCK_STREAM: u32 = 128;
/// Threads per block of the polynomial kernels (one task per block).
const BLOCK_POLY: u32 = 256;

fn blocks(threads: usize, per_block: u32) -> usize {
    threads.div_ceil(per_block as usize)
}

/// Sizes shared with the kernels (FIPS 204 Table 2); `sig_stride` pads signatures to 8 bytes.
/// `variant` (FIPS 204 or round 3) decides how the host checks and stages messages.
pub(crate) struct Geometry {
    variant: mldsa::Variant,
    k: usize,
    l: usize,
    pk_len: usize,
    sk_len: usize,
    sig_len: usize,
    sig_stride: usize,
    hbuf_len: usize,
}

impl Geometry {
    fn of(p: mldsa::ParamSet) -> Geometry {
        Geometry {
            variant: p.variant(),
            k: p.k(),
            l: p.l(),
            pk_len: p.public_key_len(),
            sk_len: p.secret_key_len(),
            sig_len: p.signature_len(),
            sig_stride: p.signature_len().div_ceil(8) * 8,
            hbuf_len: 64 + p.k() * 32 * p.w1_bits(),
        }
    }
}

/// The GPU backend: one [`DeviceEngine`] per GPU in use (every visible device, or the ones
/// `PQGPU_DEVICES` names), fed from one chunk queue by [`scheduler::run_chunks`].
pub struct GpuBackend {
    description: String,
    keygen_chunk: usize,
    chunk: usize,
    sign_chunk: usize,
    /// Workers per GPU used by ML-DSA and by CTRU-Prime batches.
    mldsa_workers: usize,
    kem_workers: usize,
    engines: Vec<DeviceEngine>,
    /// Failure injection for tests (`PQGPU_GPU_FAIL_AFTER=n`): after n signing chunks have
    /// run on a GPU, each further one reports a device failure once its work is done and its
    /// outputs are written, as a fault found at the final synchronisation would.
    fail_after: Option<usize>,
    sign_chunks_run: std::sync::atomic::AtomicUsize,
}

/// Index of `p`'s kernels in [`engine::DeviceEngine::kernels`] (the order of `ParamSet::EVERY`).
pub(crate) fn set_index(p: mldsa::ParamSet) -> usize {
    match p {
        mldsa::ParamSet::MlDsa44 => 0,
        mldsa::ParamSet::MlDsa65 => 1,
        mldsa::ParamSet::MlDsa87 => 2,
        mldsa::ParamSet::Dilithium2 => 3,
        mldsa::ParamSet::Dilithium3 => 4,
        mldsa::ParamSet::Dilithium5 => 5,
    }
}

impl GpuBackend {
    /// Opens every device to use. One device failing to open is skipped (and logged) when
    /// others open; none opening is the first device's error.
    fn open() -> Result<GpuBackend, (Error, String)> {
        let ordinals = device::ordinals().map_err(|e| (Error::NoDevice, e))?;
        let settings = crate::settings::get();
        let forced = settings.gpu_workers;
        let mldsa_workers = forced.unwrap_or(MLDSA_WORKERS);
        let kem_workers = forced.unwrap_or(KEM_WORKERS);
        let workers = mldsa_workers.max(kem_workers);
        let mut engines = Vec::new();
        let mut first_err = None;
        for ordinal in ordinals {
            match DeviceEngine::open(ordinal, workers) {
                Ok(e) => engines.push(e),
                Err(e) => {
                    device::log(&format!("GPU {ordinal} unusable: {}", e.1));
                    first_err.get_or_insert(e);
                }
            }
        }
        if engines.is_empty() {
            return Err(first_err.unwrap_or((Error::NoDevice, "no CUDA device".into())));
        }
        let description = match engines.len() {
            1 => engines[0].description.clone(),
            n => format!(
                "{n} GPUs: {}",
                engines
                    .iter()
                    .map(|e| e.description.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        Ok(GpuBackend {
            description,
            keygen_chunk: settings
                .keygen_chunk
                .or(settings.gpu_chunk)
                .unwrap_or(CHUNK),
            chunk: settings.gpu_chunk.unwrap_or(CHUNK),
            sign_chunk: settings.gpu_chunk.unwrap_or(SIGN_CHUNK),
            mldsa_workers,
            kem_workers,
            engines,
            fail_after: settings.gpu_fail_after,
            sign_chunks_run: Default::default(),
        })
    }

    /// `Err` once `PQGPU_GPU_FAIL_AFTER` chunks have run (see `fail_after`).
    fn injected_failure(&self) -> Result<(), String> {
        let run = self.sign_chunks_run.fetch_add(1, Ordering::SeqCst);
        match self.fail_after {
            Some(n) if run >= n => Err(format!("injected failure after {n} chunks")),
            _ => Ok(()),
        }
    }

    /// Number of devices in use.
    pub fn device_count(&self) -> usize {
        self.engines.len()
    }

    /// Runs `run`; with `PQGPU_HOST_PROFILE` set, prints where the host time went, summed over
    /// every worker of every device (for tuning only).
    pub(crate) fn profiled(&self, what: &str, run: impl FnOnce()) {
        let start = std::time::Instant::now();
        run();
        if !crate::settings::get().host_profile {
            return;
        }
        let mut sum = [0.0; 3];
        for wk in self.engines.iter().flat_map(|e| &e.workers) {
            let mut w = wk.lock().unwrap_or_else(|e| e.into_inner());
            for (s, p) in sum.iter_mut().zip(w.phases.iter_mut()) {
                *s += std::mem::take(p);
            }
        }
        eprintln!(
            "host profile {what}: wall {:.2} ms; summed over workers: staging {:.2} ms, GPU wait {:.2} ms, unpacking {:.2} ms",
            start.elapsed().as_secs_f64() * 1e3,
            sum[0] * 1e3,
            sum[1] * 1e3,
            sum[2] * 1e3
        );
    }
}

type Opened = Result<Arc<GpuBackend>, (Error, String)>;
static BACKEND: OnceCell<Opened> = OnceCell::new();
/// The process that first reached for the GPU (0: none yet). CUDA state does not survive
/// `fork()`: a child of that process must not touch [`BACKEND`] (not even its lock, which a
/// parent's thread may have held at the fork), so there the GPU is `NoDevice` and AUTO picks
/// the CPU. A child of a process that never touched the GPU opens its own.
static OPENER: AtomicU32 = AtomicU32::new(0);

/// Whether this process is the one that opened (or is opening) the GPU backend.
fn opened_here() -> bool {
    let me = std::process::id();
    match OPENER.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => true,
        Err(p) => p == me,
    }
}

fn engine() -> Result<&'static Arc<GpuBackend>, Error> {
    if !opened_here() {
        return Err(Error::NoDevice);
    }
    let r = BACKEND.get_or_init(|| {
        GpuBackend::open()
            .map(Arc::new)
            .inspect_err(|(_, why)| device::log(&format!("GPU backend unavailable: {why}")))
    });
    r.as_ref().map_err(|(e, _)| *e)
}

/// The process-wide GPU backend, created lazily on first use (never at library load, so a
/// server that forks after loading keeps working). `NoDevice` when no GPU is usable,
/// `Device` when the kernels do not compile (see [`unavailable_reason`]).
pub fn backend() -> Result<Arc<dyn Backend>, Error> {
    engine().map(|b| b.clone() as Arc<dyn Backend>)
}

/// Why the GPU backend is unusable (after a failed [`backend`] call): a missing library,
/// no device, or the NVRTC log naming the kernel file.
pub fn unavailable_reason() -> Option<String> {
    if !opened_here() {
        return Some("a child process after fork() cannot use its parent's CUDA state".into());
    }
    match BACKEND.get() {
        Some(Err((_, why))) => Some(why.clone()),
        _ => None,
    }
}

/// An ML-DSA operation, for kernel-only measurements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Keygen,
    Sign,
    Verify,
}

/// Most items kept resident for a kernel-only measurement: the rate has long saturated by
/// then, and 1M ML-DSA-87 signing tasks would need about 100 GB of device memory.
const MAX_RESIDENT: usize = 1 << 18;

/// Kernel-only throughput (ops/s) of `op` on `n` items whose inputs are already resident on the
/// first device, timed with CUDA events (no host transfers): a per-GPU figure. For the
/// benchmark, not for tests. `n` above 262144 is measured on 262144 items.
pub fn kernel_throughput(p: mldsa::ParamSet, op: Op, n: usize) -> Result<f64, Error> {
    let e = &engine()?.engines[0];
    let mut w = e.workers[0].lock().unwrap_or_else(|e| e.into_inner());
    let n = n.clamp(1, MAX_RESIDENT);
    let m = bench::throughput(&mut w, &e.kernels[set_index(p)], p, op, n)
        .map_err(device::device_error)?;
    if m.unverified > 0 {
        // The benchmark's own signatures must verify, or the figure means nothing.
        device::log(&format!(
            "kernel_throughput: {} of {n} signatures failed to verify",
            m.unverified
        ));
        return Err(Error::Device);
    }
    Ok(m.ops_per_s)
}

/// Number of GPUs the backend spreads batches over (0 when no GPU is usable).
pub fn device_count() -> usize {
    engine().map_or(0, |b| b.device_count())
}

/// A one-line description of the device in use (name, SMs, driver), for benchmark reports.
pub fn device_description() -> Option<String> {
    engine().ok().map(|b| b.description.clone())
}

/// A context inherited across `fork()` holds the parent's backend, whose CUDA state is
/// unusable here: its calls end at once with `NoDevice` (see [`OPENER`]).
fn inherited(statuses: &mut [Status]) -> bool {
    if opened_here() {
        return false;
    }
    statuses.iter_mut().for_each(|s| *s = Err(Error::NoDevice));
    true
}

impl Backend for GpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }

    fn mldsa_keygen(
        &self,
        p: mldsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let n = statuses.len();
        let g = Geometry::of(p);
        if pks.len() != n * g.pk_len
            || sks.len() != n * g.sk_len
            || seeds.is_some_and(|s| s.len() != n * 32)
        {
            statuses.iter_mut().for_each(|s| *s = Err(Error::BadLength));
            return;
        }
        let set = set_index(p);
        let reg = hostmem::snapshot();
        // Without seeds, each chunk draws its own into its pinned staging buffer (in bulk, on
        // its worker, overlapping other chunks' GPU work): no batch-sized buffer of secrets.
        let seed_chunks: Vec<Option<&[u8]>> = match seeds {
            Some(s) => s.chunks(self.keygen_chunk * 32).map(Some).collect(),
            None => vec![None; n.div_ceil(self.keygen_chunk)],
        };
        let chunks: Vec<_> = seed_chunks
            .into_iter()
            .zip(pks.chunks_mut(self.keygen_chunk * g.pk_len))
            .zip(sks.chunks_mut(self.keygen_chunk * g.sk_len))
            .zip(statuses.chunks_mut(self.keygen_chunk))
            .collect();
        self.profiled("keygen", || {
            scheduler::run_chunks(
                &self.engines,
                self.mldsa_workers,
                chunks,
                |e, w, (((sd, pk), sk), st)| {
                    match keygen::keygen_chunk(w, &e.kernels[set], &g, &reg, *sd, pk, sk) {
                        Ok(drawn) => st.fill(drawn),
                        Err(e) => return Err(format!("{e:?}")),
                    }
                    Ok(())
                },
                |(((sd, pk), sk), st)| cpu_backend().mldsa_keygen(p, sd, pk, sk, st),
            )
        });
    }

    fn mldsa_sign(
        &self,
        p: mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let g = Geometry::of(p);
        let set = set_index(p);
        let reg = hostmem::snapshot();
        let chunks: Vec<_> = items
            .chunks(self.sign_chunk)
            .zip(sigs.chunks_mut(self.sign_chunk))
            .zip(statuses.chunks_mut(self.sign_chunk))
            .collect();
        self.profiled("sign", || {
            scheduler::run_chunks(
                &self.engines,
                self.mldsa_workers,
                chunks,
                |e, w, ((it, sg), st)| {
                    sign::sign_chunk(w, &e.kernels[set], &g, &reg, it, sg, st)
                        .map_err(|e| format!("{e:?}"))?;
                    self.injected_failure()
                },
                |((it, sg), st)| cpu_backend().mldsa_sign(p, it, sg, st),
            )
        });
    }

    fn mldsa_verify(&self, p: mldsa::ParamSet, items: &[VerifyItem<'_>], statuses: &mut [Status]) {
        if inherited(statuses) {
            return;
        }
        let g = Geometry::of(p);
        let set = set_index(p);
        let reg = hostmem::snapshot();
        let chunks: Vec<_> = items
            .chunks(self.chunk)
            .zip(statuses.chunks_mut(self.chunk))
            .collect();
        self.profiled("verify", || {
            scheduler::run_chunks(
                &self.engines,
                self.mldsa_workers,
                chunks,
                |e, w, (it, st)| {
                    verify::verify_chunk(w, &e.kernels[set], &g, &reg, it, st)
                        .map_err(|e| format!("{e:?}"))
                },
                |(it, st)| cpu_backend().mldsa_verify(p, it, st),
            )
        });
    }

    fn kem_keygen(
        &self,
        p: ctru::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        ctru_kem::kem_keygen(self, p, seeds, pks, sks, statuses)
    }

    fn kem_encaps(
        &self,
        p: ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        ctru_kem::kem_encaps(self, p, items, cts, sss, statuses)
    }

    fn kem_decaps(
        &self,
        p: ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        ctru_kem::kem_decaps(self, p, items, sss, statuses)
    }

    fn register_host_memory(&self, buf: &[u8]) -> Result<(), Error> {
        if !opened_here() {
            return Err(Error::NoDevice);
        }
        if !self.engines.iter().all(|e| e.maps_host_memory) {
            device::log("register_host_memory: a GPU cannot address registered host memory");
            return Err(Error::Device);
        }
        hostmem::register(&self.engines[0].ctx, buf.as_ptr(), buf.len()).map_err(|(e, why)| {
            device::log(&format!("register_host_memory: {why}"));
            e
        })
    }

    fn unregister_host_memory(&self, ptr: *const u8) -> Result<(), Error> {
        if !opened_here() {
            return Err(Error::NoDevice);
        }
        hostmem::unregister(&self.engines[0].ctx, ptr).map_err(|(e, why)| {
            device::log(&format!("unregister_host_memory: {why}"));
            e
        })
    }
}
