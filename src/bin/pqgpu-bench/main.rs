//! pqgpu's main job: batched keygen/sign/verify (ML-DSA) and keygen/encaps/decaps (CTRU-Prime)
//! on the GPU and the CPU, side by side, every result checked.
//!
//! `cargo run --release --bin pqgpu-bench` picks the GPU when one is usable and also measures the
//! CPU backend; `--backend cpu|gpu` forces one. `--sweep` adds batch-size sweeps, `--json FILE`
//! writes every figure.

mod report;
mod serve;
mod workload;

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use pqgpu::backend::{self, Backend, BackendKind};
use pqgpu::{ctru, gpu, mldsa};
use report::{Latency, Row};
use std::sync::Arc;
use std::time::Duration;
use workload::{KemBatch, MlDsaBatch, Registered};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// GPU if usable (then the CPU too, side by side), else CPU.
    Auto,
    Cpu,
    Gpu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Family {
    All,
    Mldsa,
    Ctru,
}

#[derive(Parser, Debug)]
#[command(
    version,
    about = "pqgpu benchmark: ops/s per operation and parameter set, every result checked"
)]
struct Args {
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Which algorithms to run.
    #[arg(long, value_enum, default_value_t = Family::All)]
    alg: Family,
    /// Batch size on the GPU.
    #[arg(long, default_value_t = 65_536)]
    gpu_batch: usize,
    /// Batch size on the CPU (0: 64 per core).
    #[arg(long, default_value_t = 0)]
    cpu_batch: usize,
    /// CPU worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Timed repetitions per figure; the median is reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Single-item calls timed for latency percentiles.
    #[arg(long, default_value_t = 200)]
    latency_samples: usize,
    /// Also sweep batch sizes 1, 16, 256, 4K, 64K, 1M (up to --max-batch).
    #[arg(long)]
    sweep: bool,
    /// Largest batch of a sweep (GPU; the CPU stops at 4096).
    #[arg(long, default_value_t = 1 << 20)]
    max_batch: usize,
    /// Write all figures as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// The GPU batches' host buffers: registered with the backend once, up front (DMA and
    /// zero-copy kernels, no staging copies), or plain pageable memory (staged by the host).
    #[arg(long, value_enum, default_value_t = HostMemory::Registered)]
    host_memory: HostMemory,
    /// CTRU-Prime encaps/decaps batches cycle through this many key pairs (1: one server key;
    /// the batch size: every item its own key).
    #[arg(long, default_value_t = 1)]
    kem_keys: usize,
    /// Serving mode only (issue #13): single-item calls from T threads and N outstanding async
    /// items through the C ABI, with one key handle (see serve.rs).
    #[arg(long)]
    serve: bool,
    /// Serving mode: seconds per figure.
    #[arg(long, default_value_t = 1.0)]
    serve_seconds: f64,
    /// Serving mode: thread counts (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256,1024")]
    serve_threads: Vec<usize>,
    /// Serving mode: outstanding async items (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1024,4096,16384,65536")]
    serve_outstanding: Vec<usize>,
    /// Serving mode: PQG_OPT_CPU_CROSSOVER of the context (default: the library's).
    #[arg(long)]
    serve_crossover: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum HostMemory {
    Registered,
    Pageable,
}

/// One backend to measure, with its batch size and label.
struct Target {
    label: String,
    backend: Arc<dyn Backend>,
    batch: usize,
    max_sweep: usize,
}

fn main() {
    let args = Args::parse();
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("rayon pool");
    if args.serve {
        let mut s = serve::ServeArgs::full(match args.backend {
            BackendArg::Auto => pqgpu::ffi::pqg_backend_values::PQG_BACKEND_AUTO,
            BackendArg::Cpu => pqgpu::ffi::pqg_backend_values::PQG_BACKEND_CPU,
            BackendArg::Gpu => pqgpu::ffi::pqg_backend_values::PQG_BACKEND_GPU,
        } as i32);
        s.duration = Duration::from_secs_f64(args.serve_seconds);
        s.threads = args.serve_threads.clone();
        s.outstanding = args.serve_outstanding.clone();
        s.batch = args.gpu_batch;
        s.crossover = args.serve_crossover;
        s.algs.retain(|&a| match args.alg {
            Family::All => true,
            Family::Mldsa => a < pqgpu::ffi::PQG_CTRU_PRIME_653,
            Family::Ctru => a >= pqgpu::ffi::PQG_CTRU_PRIME_653,
        });
        if let Err(e) = serve::run(&s) {
            eprintln!("pqgpu-bench: CHECK FAILED: {e}");
            std::process::exit(1);
        }
        return;
    }
    let targets = match choose_targets(&args, threads) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("pqgpu-bench: {e}");
            std::process::exit(2);
        }
    };
    print_environment(threads, &targets, args.host_memory, args.kem_keys);

    let mut rows = Vec::new();
    let mut latencies = Vec::new();
    let steps = targets.len()
        * (usize::from(args.alg != Family::Ctru) * 3 + usize::from(args.alg != Family::Mldsa) * 3);
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("template"));
    let cpu = backend::cpu_backend();
    for t in &targets {
        if args.alg != Family::Ctru {
            for p in mldsa::ParamSet::ALL {
                bar.set_message(format!("{} {}", t.label, p.name()));
                let r = run_mldsa(&args, t, p, cpu.as_ref(), &mut rows, &mut latencies);
                fail_on_error(&bar, r);
                bar.inc(1);
            }
        }
        if args.alg != Family::Mldsa {
            for p in ctru::ParamSet::ALL {
                bar.set_message(format!("{} {}", t.label, p.name()));
                fail_on_error(&bar, run_kem(&args, t, p, &mut rows, &mut latencies));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    report::print_throughput(&rows);
    report::print_latency(&latencies);
    if let Some(path) = &args.json {
        let doc = report::to_json(&rows, &latencies, threads, gpu::device_description());
        std::fs::write(path, serde_json::to_string_pretty(&doc).expect("json"))
            .expect("write JSON");
        println!("\nwrote {}", path.display());
    }
    println!("\nall results checked: every signature verified, every shared secret matched");
}

fn fail_on_error(bar: &ProgressBar, r: Result<(), String>) {
    if let Err(e) = r {
        bar.abandon();
        eprintln!("pqgpu-bench: CHECK FAILED: {e}");
        std::process::exit(1);
    }
}

fn choose_targets(args: &Args, threads: usize) -> Result<Vec<Target>, String> {
    let cpu_batch = if args.cpu_batch == 0 {
        64 * threads
    } else {
        args.cpu_batch
    };
    let cpu = Target {
        label: format!("cpu x{threads}"),
        backend: backend::cpu_backend(),
        batch: cpu_batch,
        max_sweep: 4096,
    };
    let gpu = |b: Arc<dyn Backend>| Target {
        label: "gpu".into(),
        backend: b,
        batch: args.gpu_batch,
        max_sweep: args.max_batch,
    };
    match args.backend {
        BackendArg::Cpu => Ok(vec![cpu]),
        BackendArg::Gpu => backend::select(BackendKind::Gpu)
            .map(|b| vec![gpu(b)])
            .map_err(|e| format!("GPU backend: {}", why_no_gpu(e))),
        BackendArg::Auto => match backend::select(BackendKind::Gpu) {
            Ok(b) => Ok(vec![gpu(b), cpu]),
            Err(e) => {
                println!(
                    "no usable GPU ({}): measuring the CPU backend only",
                    why_no_gpu(e)
                );
                Ok(vec![cpu])
            }
        },
    }
}

/// The GPU backend's own reason (missing library, no device, kernel compile log), else `e`.
fn why_no_gpu(e: pqgpu::Error) -> String {
    gpu::unavailable_reason().unwrap_or_else(|| e.to_string())
}

fn print_environment(threads: usize, targets: &[Target], host_memory: HostMemory, kem_keys: usize) {
    println!("pqgpu {} benchmark", env!("CARGO_PKG_VERSION"));
    println!("cpu: {} threads used", threads);
    if let Some(d) = gpu::device_description() {
        println!("gpu: {d}");
    }
    for t in targets {
        println!("target {}: batch {}", t.label, t.batch);
    }
    if targets.iter().any(|t| t.backend.kind() == BackendKind::Gpu) {
        println!("gpu host buffers: {host_memory:?} (--host-memory)");
    }
    if kem_keys > 1 {
        println!("ctru encaps/decaps: {kem_keys} key pairs per batch (--kem-keys)");
    }
}

/// The median of `reps` timings of `f` (each a whole batch), as ops/s for `n` items, after
/// one untimed warm-up call (buffer growth, first touch of fresh pages, kernel loading).
fn median_rate(
    reps: usize,
    n: usize,
    mut f: impl FnMut() -> Result<Duration, String>,
) -> Result<f64, String> {
    f()?;
    let mut times: Vec<Duration> = (0..reps.max(1)).map(|_| f()).collect::<Result<_, _>>()?;
    times.sort();
    Ok(n as f64 / times[times.len() / 2].as_secs_f64())
}

/// Registers a batch's buffers with a GPU backend when `--host-memory registered` (what a
/// server does once for its long-lived buffers); unregistered when the guard drops.
fn register<'a>(
    args: &Args,
    be: &'a dyn Backend,
    bufs: &[&[u8]],
) -> Result<Option<Registered<'a>>, String> {
    if args.host_memory != HostMemory::Registered || be.kind() != BackendKind::Gpu {
        return Ok(None);
    }
    Registered::new(be, bufs).map(Some)
}

fn sweep_sizes(max: usize) -> Vec<usize> {
    [1, 16, 256, 4096, 65_536, 1 << 20]
        .into_iter()
        .filter(|&b| b <= max)
        .collect()
}

/// The target's batch size, then (with `--sweep`) the sweep's other sizes.
fn batch_sizes(args: &Args, t: &Target) -> Vec<usize> {
    let mut sizes = vec![t.batch];
    if args.sweep {
        sizes.extend(
            sweep_sizes(t.max_sweep)
                .into_iter()
                .filter(|&b| b != t.batch),
        );
    }
    sizes
}

fn run_mldsa(
    args: &Args,
    t: &Target,
    p: mldsa::ParamSet,
    cpu: &dyn Backend,
    rows: &mut Vec<Row>,
    lat: &mut Vec<Latency>,
) -> Result<(), String> {
    let be = t.backend.as_ref();
    let is_gpu = be.kind() == BackendKind::Gpu;
    for n in batch_sizes(args, t) {
        let mut w = MlDsaBatch::new(p, n);
        let _pinned = register(args, be, &w.host_buffers())?;
        let kg = median_rate(args.reps, n, || w.keygen(be))?;
        let sg = median_rate(args.reps, n, || w.sign(be))?;
        let vf = median_rate(args.reps, n, || w.verify(be))?;
        if is_gpu {
            w.cross_check(cpu, 256)?;
        }
        // Kernel-only figures; a failure (including its own signatures not verifying) aborts.
        let kernel = |op: gpu::Op| match is_gpu {
            false => Ok(None),
            true => gpu::kernel_throughput(p, op, n)
                .map(Some)
                .map_err(|e| format!("{} kernel-only {op:?}: {e}", p.name())),
        };
        rows.push(Row::new(
            &t.label,
            p.name(),
            "keygen",
            n,
            kg,
            kernel(gpu::Op::Keygen)?,
        ));
        rows.push(Row::new(
            &t.label,
            p.name(),
            "sign",
            n,
            sg,
            kernel(gpu::Op::Sign)?,
        ));
        rows.push(Row::new(
            &t.label,
            p.name(),
            "verify",
            n,
            vf,
            kernel(gpu::Op::Verify)?,
        ));
    }
    // Latency of single-item calls: what one TLS handshake or one certificate waits.
    let mut w = MlDsaBatch::new(p, 1);
    for op in ["keygen", "sign", "verify"] {
        let call = || match op {
            "keygen" => w.keygen(be),
            "sign" => w.sign(be),
            _ => w.verify(be),
        };
        lat.push(Latency::measure(
            &t.label,
            p.name(),
            op,
            args.latency_samples,
            call,
        )?);
    }
    Ok(())
}

fn run_kem(
    args: &Args,
    t: &Target,
    p: ctru::ParamSet,
    rows: &mut Vec<Row>,
    lat: &mut Vec<Latency>,
) -> Result<(), String> {
    let be = t.backend.as_ref();
    for n in batch_sizes(args, t) {
        let mut w = KemBatch::new(p, n, args.kem_keys);
        let _pinned = register(args, be, &w.host_buffers())?;
        let kg = median_rate(args.reps, n, || w.keygen(be))?;
        let en = median_rate(args.reps, n, || w.encaps(be))?;
        let de = median_rate(args.reps, n, || w.decaps(be))?;
        rows.push(Row::new(&t.label, p.name(), "keygen", n, kg, None));
        rows.push(Row::new(&t.label, p.name(), "encaps", n, en, None));
        rows.push(Row::new(&t.label, p.name(), "decaps", n, de, None));
    }
    let mut w = KemBatch::new(p, 1, 1);
    for op in ["keygen", "encaps", "decaps"] {
        let call = || match op {
            "keygen" => w.keygen(be),
            "encaps" => w.encaps(be),
            _ => w.decaps(be),
        };
        lat.push(Latency::measure(
            &t.label,
            p.name(),
            op,
            args.latency_samples,
            call,
        )?);
    }
    Ok(())
}
