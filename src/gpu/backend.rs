//! The GPU backend: the configuration, one [`DeviceEngine`] per GPU in use with its kernel
//! families loaded onto it, the process-wide instance, and the [`Backend`] implementation,
//! which hands each call to its family (`gpu/mldsa`, `gpu/mlkem`, `gpu/ctru`, `gpu/slhdsa`).

use super::config::GpuConfig;
use super::device;
use super::engine::{Bound, DeviceEngine, FailureInjection};
use super::{ctru, hostmem, mldsa, mlkem, slhdsa};
use crate::backend::{
    cpu_backend, Backend, BackendKind, DecapsItem, EncapsItem, SignItem, SlhSignItem,
    SlhVerifyItem, VerifyItem,
};
use crate::{Error, Status};
use once_cell::sync::OnceCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// One GPU with its kernels.
struct Device {
    engine: DeviceEngine,
    /// ML-DSA-44/65/87 and Dilithium2/3/5, indexed by [`mldsa::set_index`].
    mldsa: mldsa::SetKernels,
    /// The ML-KEM and CTRU-Prime kernels, compiled on first use (ML-DSA-only users never pay
    /// for them).
    mlkem: OnceCell<Result<mlkem::SetKernels, String>>,
    ctru: OnceCell<Result<ctru::SetKernels, String>>,
    /// The SLH-DSA kernels, one set at a time, compiled on first use of that set.
    slhdsa: [OnceCell<Result<slhdsa::Kernels, String>>; 12],
}

/// The GPU backend: one [`Device`] per GPU in use (every visible device, or the ones
/// `PQGPU_DEVICES` names), fed from one chunk queue by the scheduler.
pub struct GpuBackend {
    description: String,
    cfg: GpuConfig,
    devices: Vec<Device>,
    fail: FailureInjection,
}

impl GpuBackend {
    /// Reads the configuration and opens every device to use. One device failing to open is
    /// skipped (and logged) when others open; none opening is the first device's error. A bad
    /// setting is `InvalidArgument`.
    fn open() -> Result<GpuBackend, (Error, String)> {
        let cfg = GpuConfig::read().map_err(|e| (Error::InvalidArgument, e))?;
        let ordinals =
            device::ordinals(cfg.devices.as_deref()).map_err(|e| (Error::NoDevice, e))?;
        let workers = cfg
            .mldsa_workers
            .max(cfg.mldsa_sign_workers)
            .max(cfg.kem_workers)
            .max(cfg.slhdsa_verify_workers);
        let mut devices = Vec::new();
        let mut first_err = None;
        for ordinal in ordinals {
            let opened = DeviceEngine::open(ordinal, workers, &cfg).and_then(|e| {
                let mldsa =
                    mldsa::load(&e.ctx, e.arch, &cfg).map_err(|why| (Error::Device, why))?;
                Ok(Device {
                    engine: e,
                    mldsa,
                    mlkem: OnceCell::new(),
                    ctru: OnceCell::new(),
                    slhdsa: Default::default(),
                })
            });
            match opened {
                Ok(d) => devices.push(d),
                Err(e) => {
                    device::log(&format!("GPU {ordinal} unusable: {}", e.1));
                    first_err.get_or_insert(e);
                }
            }
        }
        if devices.is_empty() {
            return Err(first_err.unwrap_or((Error::NoDevice, "no CUDA device".into())));
        }
        let description = match devices.len() {
            1 => devices[0].engine.description.clone(),
            n => format!(
                "{n} GPUs: {}",
                devices
                    .iter()
                    .map(|d| d.engine.description.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        Ok(GpuBackend {
            description,
            fail: FailureInjection::new(cfg.fail_after),
            cfg,
            devices,
        })
    }

    /// Number of devices in use.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// Every device with its kernels of ML-DSA set `p`.
    fn mldsa_units(&self, p: crate::mldsa::ParamSet) -> Vec<Bound<'_, mldsa::Kernels>> {
        let set = mldsa::set_index(p);
        self.devices
            .iter()
            .map(|d| Bound {
                engine: &d.engine,
                kernels: &d.mldsa[set],
            })
            .collect()
    }

    /// Every device with its kernels of CTRU-Prime set `p`, compiled on first use. A device
    /// whose kernels do not load takes no CTRU-Prime work; none loading sends the whole call to
    /// the CPU (`None`, logged).
    fn ctru_units(&self, p: crate::ctru::ParamSet) -> Option<Vec<Bound<'_, ctru::Kernels>>> {
        let set = ctru::set_index(p);
        let mut units = Vec::with_capacity(self.devices.len());
        for d in &self.devices {
            let loaded = d.ctru.get_or_init(|| ctru::load(&d.engine.ctx, &self.cfg));
            match loaded {
                Ok(k) => units.push(Bound {
                    engine: &d.engine,
                    kernels: &k[set],
                }),
                Err(why) => device::log(&format!(
                    "{}: CTRU-Prime GPU kernels unavailable ({why})",
                    d.engine.description
                )),
            }
        }
        if units.is_empty() {
            device::log("CTRU-Prime GPU kernels unavailable on every device; using the CPU");
            return None;
        }
        Some(units)
    }

    /// Every device with its kernels of ML-KEM set `p`, compiled on first use; `None` (logged)
    /// when they load on no device, which sends the call to the CPU.
    fn mlkem_units(&self, p: crate::mlkem::ParamSet) -> Option<Vec<Bound<'_, mlkem::Kernels>>> {
        let set = mlkem::set_index(p);
        let mut units = Vec::with_capacity(self.devices.len());
        for d in &self.devices {
            match d
                .mlkem
                .get_or_init(|| mlkem::load(&d.engine.ctx, &self.cfg))
            {
                Ok(k) => units.push(Bound {
                    engine: &d.engine,
                    kernels: &k[set],
                }),
                Err(why) => device::log(&format!(
                    "{}: ML-KEM GPU kernels unavailable ({why})",
                    d.engine.description
                )),
            }
        }
        if units.is_empty() {
            device::log("ML-KEM GPU kernels unavailable on every device; using the CPU");
            return None;
        }
        Some(units)
    }

    /// Every device with its kernels of SLH-DSA set `p`, compiled on first use; `None` (logged)
    /// when they load on no device, which sends the call to the CPU.
    fn slhdsa_units(&self, p: crate::slhdsa::ParamSet) -> Option<Vec<Bound<'_, slhdsa::Kernels>>> {
        let mut units = Vec::with_capacity(self.devices.len());
        for d in &self.devices {
            match d.slhdsa[p.index()].get_or_init(|| slhdsa::load(&d.engine.ctx, p, &self.cfg)) {
                Ok(k) => units.push(Bound {
                    engine: &d.engine,
                    kernels: k,
                }),
                Err(why) => device::log(&format!(
                    "{}: {} GPU kernels unavailable ({why})",
                    d.engine.description,
                    p.name()
                )),
            }
        }
        if units.is_empty() {
            device::log(&format!(
                "{} GPU kernels unavailable on every device; using the CPU",
                p.name()
            ));
            return None;
        }
        Some(units)
    }

    /// Runs `run`; with the host profile on (`tuning` builds), prints where the host time went,
    /// summed over every worker of every device, and with the kernel profile on, the per-kernel
    /// times of `kernels` batches.
    fn profiled(&self, what: impl FnOnce() -> String, kernels: bool, run: impl FnOnce()) {
        let start = std::time::Instant::now();
        run();
        let tuning = &self.cfg.tuning;
        if !(tuning.host_profile || tuning.timeline.is_some() || kernels && tuning.profile) {
            return;
        }
        // Named only when measured: no formatting on the serving path.
        let what = what();
        if tuning.host_profile {
            let mut sum = [0.0; 3];
            for d in &self.devices {
                d.engine.take_phases(&mut sum);
            }
            eprintln!(
                "host profile {what}: wall {:.2} ms; summed over workers: staging {:.2} ms, GPU wait {:.2} ms, unpacking {:.2} ms",
                start.elapsed().as_secs_f64() * 1e3,
                sum[0] * 1e3,
                sum[1] * 1e3,
                sum[2] * 1e3
            );
        }
        if let Some(path) = &tuning.timeline {
            super::timeline::flush(path, &what);
        }
        if kernels && tuning.profile {
            let mut sum = Default::default();
            for d in &self.devices {
                d.engine.take_kernel_profile(&mut sum);
            }
            for (name, (ms, count)) in sum {
                eprintln!(
                    "profile {what}: {name:14} {ms:9.3} ms summed over workers, {count} launches"
                );
            }
        }
    }
}

type Opened = Result<Arc<GpuBackend>, (Error, String)>;
static BACKEND: OnceCell<Opened> = OnceCell::new();
/// The process that first reached for the GPU (0: none yet). A child of that process must not
/// touch [`BACKEND`] (not even its lock, which a parent's thread may have held at the fork):
/// there the GPU is `NoDevice` and AUTO picks the CPU. When the parent initialised the CUDA
/// driver (`driver`) that is CUDA's own rule; when it did not, its attempt failed before the
/// driver (a missing library, a bad setting), as the child's would. A child of a process that
/// never reached for the GPU opens its own.
static OPENER: AtomicU32 = AtomicU32::new(0);

/// Whether this process is the one that opened (or is opening) the GPU backend; claims it
/// when no process has.
fn opened_here() -> bool {
    let me = crate::process::id();
    match OPENER.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => true,
        Err(p) => p == me,
    }
}

/// Why a forked child cannot use the GPU, if this process is one: the parent initialised the
/// CUDA driver, or reached for the GPU. Reads only this module's state, never the driver.
fn inherited_reason() -> Option<String> {
    if let Some(why) = super::driver::inherited_reason() {
        return Some(why);
    }
    let opener = OPENER.load(Ordering::Acquire);
    if opener == 0 || opener == crate::process::id() {
        return None;
    }
    // The parent's attempt stopped before the driver: its reason holds here too.
    Some(match BACKEND.get() {
        Some(Err((_, why))) => why.clone(),
        _ => format!("forked while parent process {opener} was opening the GPU"),
    })
}

fn engine() -> Result<&'static Arc<GpuBackend>, Error> {
    if let Some(why) = inherited_reason() {
        say_once(&why);
        return Err(Error::NoDevice);
    }
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

/// Logs (under `PQGPU_LOG`) why the GPU is unusable in this process, once per process.
fn say_once(why: &str) {
    static SAID: AtomicU32 = AtomicU32::new(0);
    let me = crate::process::id();
    if SAID.swap(me, Ordering::AcqRel) != me {
        device::log(&format!("GPU unusable: {why}"));
    }
}

/// The process-wide GPU backend, created lazily on first use (never at library load, so a
/// server that forks after loading keeps working). `NoDevice` when no GPU is usable (in a
/// forked child of a process that initialised CUDA too), `Device` when the kernels do not
/// compile, `InvalidArgument` for a bad GPU setting (see [`unavailable_reason`]).
pub fn backend() -> Result<Arc<dyn Backend>, Error> {
    engine().map(|b| b.clone() as Arc<dyn Backend>)
}

/// Why the GPU backend is unusable in this process: in a forked child of a process that
/// initialised CUDA, that (known before any GPU call, and asked without touching the driver);
/// after a failed [`backend`] call, a missing library, no device, a bad setting, or the NVRTC
/// log naming the kernel file. `None` while nothing says the GPU is unusable.
pub fn unavailable_reason() -> Option<String> {
    if let Some(why) = inherited_reason() {
        return Some(why);
    }
    match BACKEND.get() {
        Some(Err((_, why))) => Some(why.clone()),
        _ => None,
    }
}

/// Kernel-only throughput (ops/s) of `op` on `n` items whose inputs are already resident on the
/// first device, timed with CUDA events (no host transfers): a per-GPU figure. For the
/// benchmark, not for tests. `n` above 262144 is measured on 262144 items.
pub fn kernel_throughput(p: crate::mldsa::ParamSet, op: mldsa::Op, n: usize) -> Result<f64, Error> {
    let d = &engine()?.devices[0];
    mldsa::kernel_throughput(&d.engine, &d.mldsa[mldsa::set_index(p)], p, op, n)
}

/// Kernel-only throughput (ops/s) of ML-KEM `op` on `n` items on the first device, inputs
/// resident and timed with CUDA events (see [`mlkem::KemOp`]): a per-GPU figure, for the
/// benchmark. `n` above 131072 is measured on 131072 items.
pub fn mlkem_kernel_throughput(
    p: crate::mlkem::ParamSet,
    op: mlkem::KemOp,
    n: usize,
) -> Result<f64, Error> {
    let b = engine()?;
    let Some(units) = b.mlkem_units(p) else {
        return Err(Error::Device);
    };
    mlkem::kernel_throughput(units[0].engine, units[0].kernels, op, n)
}

/// Kernel-only throughput (ops/s) of SLH-DSA `op` on `n` items on the first device, inputs
/// resident and timed with CUDA events (see [`slhdsa::SlhOp`]): a per-GPU figure, for the
/// benchmark. `n` is capped so the device buffers stay about 2 GB.
pub fn slhdsa_kernel_throughput(
    p: crate::slhdsa::ParamSet,
    op: slhdsa::SlhOp,
    n: usize,
) -> Result<f64, Error> {
    let b = engine()?;
    let Some(units) = b.slhdsa_units(p) else {
        return Err(Error::Device);
    };
    slhdsa::kernel_throughput(units[0].engine, units[0].kernels, op, n)
}

/// Whether SLH-DSA set `p`'s kernels load on every device in use (compiling them on first
/// use), or why not (the NVRTC log). A batch whose kernels do not load runs on the CPU, which a
/// comparison with the CPU cannot tell from the GPU: tests ask this first.
pub fn slhdsa_kernels_loaded(p: crate::slhdsa::ParamSet) -> Result<(), String> {
    let b = engine().map_err(|e| format!("no GPU backend: {e}"))?;
    for d in &b.devices {
        if let Err(why) = d.slhdsa[p.index()].get_or_init(|| slhdsa::load(&d.engine.ctx, p, &b.cfg))
        {
            return Err(format!("{}: {why}", d.engine.description));
        }
    }
    Ok(())
}

/// SHA-256 compressions and Keccak-f[1600] permutations per second on the first device (the
/// ceilings SLH-DSA's figures are set against), measured with `p`'s module.
pub fn hash_ceilings(p: crate::slhdsa::ParamSet) -> Result<slhdsa::Ceilings, Error> {
    let b = engine()?;
    let Some(units) = b.slhdsa_units(p) else {
        return Err(Error::Device);
    };
    slhdsa::hash_ceilings(units[0].engine, units[0].kernels)
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

    fn shared_device(&self) -> bool {
        self.devices.iter().any(|d| d.engine.mps)
    }

    fn mldsa_keygen(
        &self,
        p: crate::mldsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let units = self.mldsa_units(p);
        self.profiled(
            || "keygen".into(),
            false,
            || mldsa::keygen(&units, &self.cfg, p, seeds, pks, sks, statuses),
        );
    }

    fn mldsa_sign(
        &self,
        p: crate::mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let units = self.mldsa_units(p);
        self.profiled(
            || "sign".into(),
            false,
            || mldsa::sign(&units, &self.cfg, &self.fail, p, items, sigs, statuses),
        );
    }

    fn mldsa_verify(
        &self,
        p: crate::mldsa::ParamSet,
        items: &[VerifyItem<'_>],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let units = self.mldsa_units(p);
        self.profiled(
            || "verify".into(),
            false,
            || mldsa::verify(&units, &self.cfg, p, items, statuses),
        );
    }

    fn kem_keygen(
        &self,
        p: crate::ctru::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.ctru_units(p) else {
            return cpu_backend().kem_keygen(p, seeds, pks, sks, statuses);
        };
        self.profiled(
            || "ctru keygen".into(),
            true,
            || ctru::FAMILY.keygen(&units, &self.cfg, p, seeds, pks, sks, statuses),
        );
    }

    fn kem_encaps(
        &self,
        p: crate::ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.ctru_units(p) else {
            return cpu_backend().kem_encaps(p, items, cts, sss, statuses);
        };
        self.profiled(
            || "ctru encaps".into(),
            true,
            || ctru::FAMILY.encaps(&units, &self.cfg, p, items, cts, sss, statuses),
        );
    }

    fn kem_decaps(
        &self,
        p: crate::ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.ctru_units(p) else {
            return cpu_backend().kem_decaps(p, items, sss, statuses);
        };
        self.profiled(
            || "ctru decaps".into(),
            true,
            || ctru::FAMILY.decaps(&units, &self.cfg, p, items, sss, statuses),
        );
    }

    fn mlkem_keygen(
        &self,
        p: crate::mlkem::ParamSet,
        seeds: Option<&[u8]>,
        eks: &mut [u8],
        dks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.mlkem_units(p) else {
            return cpu_backend().mlkem_keygen(p, seeds, eks, dks, statuses);
        };
        let n = statuses.len();
        self.profiled(
            move || format!("{} keygen, {n} items", p.name()),
            true,
            || mlkem::FAMILY.keygen(&units, &self.cfg, p, seeds, eks, dks, statuses),
        );
    }

    fn mlkem_encaps(
        &self,
        p: crate::mlkem::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.mlkem_units(p) else {
            return cpu_backend().mlkem_encaps(p, items, cts, sss, statuses);
        };
        self.profiled(
            || format!("{} encaps, {} items", p.name(), items.len()),
            true,
            || mlkem::FAMILY.encaps(&units, &self.cfg, p, items, cts, sss, statuses),
        );
    }

    fn mlkem_decaps(
        &self,
        p: crate::mlkem::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.mlkem_units(p) else {
            return cpu_backend().mlkem_decaps(p, items, sss, statuses);
        };
        self.profiled(
            || format!("{} decaps, {} items", p.name(), items.len()),
            true,
            || mlkem::FAMILY.decaps(&units, &self.cfg, p, items, sss, statuses),
        );
    }

    fn slhdsa_keygen(
        &self,
        p: crate::slhdsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.slhdsa_units(p) else {
            return cpu_backend().slhdsa_keygen(p, seeds, pks, sks, statuses);
        };
        let n = statuses.len();
        self.profiled(
            move || format!("{} keygen, {n} items", p.name()),
            true,
            || slhdsa::keygen(&units, &self.cfg, p, seeds, pks, sks, statuses),
        );
    }

    fn slhdsa_sign(
        &self,
        p: crate::slhdsa::ParamSet,
        items: &[SlhSignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.slhdsa_units(p) else {
            return cpu_backend().slhdsa_sign(p, items, sigs, statuses);
        };
        self.profiled(
            || format!("{} sign, {} items", p.name(), items.len()),
            true,
            || slhdsa::sign(&units, &self.cfg, p, items, sigs, statuses),
        );
    }

    fn slhdsa_verify(
        &self,
        p: crate::slhdsa::ParamSet,
        items: &[SlhVerifyItem<'_>],
        statuses: &mut [Status],
    ) {
        if inherited(statuses) {
            return;
        }
        let Some(units) = self.slhdsa_units(p) else {
            return cpu_backend().slhdsa_verify(p, items, statuses);
        };
        self.profiled(
            || format!("{} verify, {} items", p.name(), items.len()),
            true,
            || slhdsa::verify(&units, &self.cfg, p, items, statuses),
        );
    }

    fn register_host_memory(&self, buf: &[u8]) -> Result<(), Error> {
        if !opened_here() {
            return Err(Error::NoDevice);
        }
        if !self.devices.iter().all(|d| d.engine.maps_host_memory) {
            device::log("register_host_memory: a GPU cannot address registered host memory");
            return Err(Error::Device);
        }
        hostmem::register(&self.devices[0].engine.ctx, buf.as_ptr(), buf.len()).map_err(
            |(e, why)| {
                device::log(&format!("register_host_memory: {why}"));
                e
            },
        )
    }

    fn unregister_host_memory(&self, ptr: *const u8) -> Result<(), Error> {
        if !opened_here() {
            return Err(Error::NoDevice);
        }
        hostmem::unregister(&self.devices[0].engine.ctx, ptr).map_err(|(e, why)| {
            device::log(&format!("unregister_host_memory: {why}"));
            e
        })
    }
}
