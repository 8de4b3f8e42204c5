//! pqgpu's main job: batched keygen/sign/verify (ML-DSA, SLH-DSA) and keygen/encaps/decaps
//! (CTRU-Prime, ML-KEM)
//! on the GPU and the CPU, side by side, every result checked.
//!
//! Every end-to-end figure goes through the exported C ABI (`pqg_*_submit` + `pqg_job_wait`,
//! single calls through `pqg_mldsa_sign` etc.), the way a C server calls the library: GPU
//! batches once with registered buffers and once with plain heap memory, next to the
//! kernel-only figure (an internal measurement with inputs already on the device).
//!
//! `cargo run --release --bin pqgpu-bench` picks the GPU when one is usable and also measures the
//! CPU backend; `--backend cpu|gpu` forces one. `--sweep` adds batch-size sweeps, `--json FILE`
//! writes every figure.

/// `println!` that ends the benchmark quietly when its output is closed early (piped into
/// `head`), where `println!` would panic; any other failure to write is said on stderr.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::write_out(format_args!($($arg)*))
    };
}

mod report;
mod serve;
mod slhdsa;
mod workload;

use clap::{CommandFactory, Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use pqgpu::backend::BackendKind;
use pqgpu::ffi::pqg_backend_values::{PQG_BACKEND_CPU, PQG_BACKEND_GPU};
use pqgpu::{ctru, gpu, mldsa, mlkem, Alg};
use report::{Latency, Memory, Row};
use std::io::Write;
use std::time::Duration;
use workload::{Context, KemBatch, MlDsaBatch, Registered};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// GPU if usable (then the CPU too, side by side), else CPU.
    Auto,
    /// The CPU backend only (every core; `--threads` sets how many).
    Cpu,
    /// The GPU backend only; fails, with the reason, when no GPU is usable.
    Gpu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Family {
    /// ML-DSA-44/65/87, CTRU-Prime-653/761/1277 and ML-KEM-512/768/1024.
    All,
    /// ML-DSA-44/65/87.
    Mldsa,
    /// CTRU-Prime-653/761/1277 (keygen, encaps, decaps).
    Ctru,
    /// ML-KEM-512/768/1024 (keygen, encaps, decaps).
    Mlkem,
    /// ML-DSA-44/65/87 and round-3 Dilithium2/3/5, side by side.
    Dilithium,
    /// SLH-DSA, the twelve FIPS 205 sets (or those of --slh-sets), each with batch sizes of
    /// its own (printed).
    Slhdsa,
}

#[derive(Parser, Debug)]
#[command(
    version,
    about = "pqgpu benchmark: ops/s per operation and parameter set, every result checked"
)]
struct Args {
    /// Which backends to measure.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Which algorithms to run.
    #[arg(long, value_enum, default_value_t = Family::All)]
    alg: Family,
    /// Batch size on the GPU (with --serve, 0 leaves out the batch figures).
    #[arg(long, default_value_t = 65_536, value_parser = count, allow_negative_numbers = true)]
    gpu_batch: usize,
    /// Batch size on the CPU (0: 64 per core).
    #[arg(long, default_value_t = 0, value_parser = count, allow_negative_numbers = true)]
    cpu_batch: usize,
    /// CPU worker threads (0: all cores).
    #[arg(long, default_value_t = 0, value_parser = count, allow_negative_numbers = true)]
    threads: usize,
    /// Timed repetitions per figure; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = positive, allow_negative_numbers = true)]
    reps: usize,
    /// Single-item calls timed for latency percentiles.
    #[arg(long, default_value_t = 200, value_parser = positive, allow_negative_numbers = true)]
    latency_samples: usize,
    /// Also sweep batch sizes 1, 16, 256, 4K, 64K, 1M (up to --max-batch).
    #[arg(long)]
    sweep: bool,
    /// Largest batch of a sweep (GPU; the CPU stops at 4096).
    #[arg(long, default_value_t = 1 << 20, value_parser = positive, allow_negative_numbers = true)]
    max_batch: usize,
    /// Write all figures as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// The GPU batches' host buffers: registered with `pqg_host_register` once, up front (DMA
    /// and zero-copy kernels, no staging copies), plain pageable memory (staged by the
    /// library), or both, one after the other.
    #[arg(long, value_enum, default_value_t = HostMemory::Both)]
    host_memory: HostMemory,
    /// KEM (CTRU-Prime, ML-KEM) encaps/decaps batches cycle through this many key pairs (1: one server key;
    /// the batch size: every item its own key).
    #[arg(long, default_value_t = 1, value_parser = positive, allow_negative_numbers = true)]
    kem_keys: usize,
    /// SLH-DSA sets to run with --alg slhdsa (comma-separated FIPS 205 names or their endings,
    /// e.g. SHA2-128f,SHA2-128s; default every set).
    #[arg(long, value_delimiter = ',')]
    slh_sets: Vec<String>,
    /// Serving mode only: single-item calls from T threads and N outstanding async
    /// items through the C ABI, with one key handle (see serve.rs).
    #[arg(long)]
    serve: bool,
    /// Serving mode: seconds per figure.
    #[arg(long, default_value_t = 1.0, value_parser = seconds, allow_negative_numbers = true)]
    serve_seconds: f64,
    /// Serving mode: thread counts (comma-separated; 0: no blocking rows).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256,1024", value_parser = count, allow_negative_numbers = true)]
    serve_threads: Vec<usize>,
    /// Serving mode: outstanding async items (comma-separated; 0: no asynchronous rows).
    #[arg(long, value_delimiter = ',', default_value = "1024,4096,16384,65536", value_parser = count, allow_negative_numbers = true)]
    serve_outstanding: Vec<usize>,
    /// Serving mode: asynchronous driver threads (comma-separated); with D > 1 each of D
    /// threads keeps N / D items outstanding on the one context and polls its own jobs.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = positive, allow_negative_numbers = true)]
    serve_drivers: Vec<usize>,
    /// Serving mode: an engine that finishes every item at once (the serving layer's own
    /// ceiling; an internal figure, outputs unchecked).
    #[arg(long)]
    serve_null_engine: bool,
    /// Serving mode: PQG_OPT_CPU_CROSSOVER of the context (default: the library's).
    #[arg(long)]
    serve_crossover: Option<i64>,
    /// Serving mode: option sets, each on a fresh context (comma-separated; each set is
    /// `name=value` pairs joined by '+': wait, batch, crossover, inflight, quiet).
    #[arg(long, value_delimiter = ',')]
    serve_config: Vec<String>,
    /// Serving mode: operations (comma-separated: sign, verify, keygen, encaps, decaps;
    /// default every one but keygen).
    #[arg(long, value_delimiter = ',')]
    serve_ops: Vec<String>,
    /// Serving mode: algorithms by name (comma-separated, e.g. ML-DSA-44; default: all).
    #[arg(long, value_delimiter = ',')]
    serve_algs: Vec<String>,
}

/// Command-line values: a whole number of at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("must be a positive integer".into()),
    }
}

/// Command-line values: a whole number, 0 meaning the default.
fn count(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| "must be a whole number, 0 or more".into())
}

/// Command-line values: a duration in seconds, more than zero.
fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err("must be a number of seconds above 0".into()),
    }
}

/// Writes one line of output (see `say!`). A closed pipe ends the process quietly with the
/// status a tool killed by SIGPIPE reports (141); another error is said and ends it with 1.
fn write_out(line: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("pqgpu-bench: writing the output: {e}");
            std::process::exit(1);
        }
        std::process::exit(141);
    }
}

/// Refuses what the parser cannot see alone, before anything is measured: an option that
/// does not fit the mode, an AUTO run that the library would refuse, an output file that
/// cannot be written. Returns the JSON file, open for writing.
fn check_args(args: &Args) -> Result<Option<std::fs::File>, clap::Error> {
    let mut cmd = Args::command();
    let mut bad = |msg: String| cmd.error(clap::error::ErrorKind::ValueValidation, msg);
    if !args.serve && args.gpu_batch == 0 {
        return Err(bad(
            "--gpu-batch 0: a batch needs at least one item (0 is for --serve: no batch figures)"
                .into(),
        ));
    }
    if args.serve && args.json.is_some() {
        return Err(bad(
            "--json is written by batch runs; --serve prints its figures".into(),
        ));
    }
    // AUTO runs follow PQGPU_BACKEND as the library's AUTO contexts do; an unknown value is
    // refused with the library's own message (on stderr, from the library).
    if args.backend == BackendArg::Auto && pqgpu::select::auto_override().is_err() {
        return Err(bad(
            "--backend auto follows PQGPU_BACKEND, as the library's AUTO contexts do: \
             set it to cpu, gpu or auto, unset it, or pass --backend cpu|gpu"
                .into(),
        ));
    }
    match &args.json {
        None => Ok(None),
        Some(path) => std::fs::File::create(path)
            .map(Some)
            .map_err(|e| bad(format!("--json {}: {e}", path.display()))),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum HostMemory {
    Registered,
    Pageable,
    Both,
}

/// The ML-DSA-family sets of `--alg`.
fn mldsa_sets(f: Family) -> &'static [mldsa::ParamSet] {
    match f {
        Family::All | Family::Mldsa => &mldsa::ParamSet::ALL,
        Family::Ctru | Family::Mlkem | Family::Slhdsa => &[],
        Family::Dilithium => &mldsa::ParamSet::EVERY,
    }
}

/// The KEM sets of `--alg`.
fn kem_sets(f: Family) -> Vec<Alg> {
    let ctru = ctru::ParamSet::ALL.map(Alg::Ctru);
    let mlkem = mlkem::ParamSet::ALL.map(Alg::MlKem);
    match f {
        Family::All => ctru.into_iter().chain(mlkem).collect(),
        Family::Ctru => ctru.to_vec(),
        Family::Mlkem => mlkem.to_vec(),
        Family::Mldsa | Family::Dilithium | Family::Slhdsa => Vec::new(),
    }
}

/// The SLH-DSA sets of `--alg` (and `--slh-sets`).
fn slh_sets(args: &Args) -> Vec<pqgpu::slhdsa::ParamSet> {
    if args.alg != Family::Slhdsa {
        return Vec::new();
    }
    pqgpu::slhdsa::ParamSet::ALL
        .into_iter()
        .filter(|p| {
            args.slh_sets.is_empty() || args.slh_sets.iter().any(|o| p.name().ends_with(o.as_str()))
        })
        .collect()
}

/// One context to measure, with its batch size and label.
struct Target {
    label: String,
    ctx: Context,
    is_gpu: bool,
    batch: usize,
    max_sweep: usize,
}

fn main() {
    let args = Args::parse();
    let json_file = check_args(&args).unwrap_or_else(|e| e.exit());
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
        s.threads = args
            .serve_threads
            .iter()
            .copied()
            .filter(|&t| t > 0)
            .collect();
        s.outstanding = args
            .serve_outstanding
            .iter()
            .copied()
            .filter(|&n| n > 0)
            .collect();
        s.drivers = args.serve_drivers.clone();
        s.null_engine = args.serve_null_engine;
        // Serving takes pageable buffers unless registered ones are asked for alone.
        s.registered = args.host_memory == HostMemory::Registered;
        s.batch = args.gpu_batch;
        s.crossover = args.serve_crossover;
        s.configs = args.serve_config.clone();
        s.ops = args.serve_ops.clone();
        s.alg_names = args.serve_algs.clone();
        s.algs.retain(|&a| match args.alg {
            Family::All => true,
            Family::Mldsa | Family::Dilithium => a < pqgpu::ffi::PQG_CTRU_PRIME_653,
            Family::Ctru => {
                (pqgpu::ffi::PQG_CTRU_PRIME_653..pqgpu::ffi::PQG_ML_KEM_512).contains(&a)
            }
            Family::Mlkem => a >= pqgpu::ffi::PQG_ML_KEM_512,
            Family::Slhdsa => false,
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
        * (mldsa_sets(args.alg).len() + kem_sets(args.alg).len() + slh_sets(&args).len());
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} [{elapsed_precise}, eta {eta}] {msg}")
            .expect("template"),
    );
    let cpu = match Context::new(PQG_BACKEND_CPU as i32) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("pqgpu-bench: {e}");
            std::process::exit(2);
        }
    };
    for t in &targets {
        for &p in mldsa_sets(args.alg) {
            step(&bar, format!("{} {}", t.label, p.name()));
            let r = run_mldsa(&args, t, p, &cpu, &mut rows, &mut latencies);
            fail_on_error(&bar, r);
            bar.inc(1);
        }
        for p in kem_sets(args.alg) {
            step(&bar, format!("{} {}", t.label, p.name()));
            fail_on_error(&bar, run_kem(&args, t, p, &mut rows, &mut latencies));
            bar.inc(1);
        }
        for p in slh_sets(&args) {
            step(&bar, format!("{} {}", t.label, p.name()));
            let r = run_slhdsa(&args, t, p, threads, &cpu, &mut rows, &mut latencies);
            fail_on_error(&bar, r);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    report::print_throughput(&rows);
    report::print_latency(&latencies);
    if let (Some(path), Some(mut file)) = (&args.json, json_file) {
        let doc = report::to_json(&rows, &latencies, threads, gpu::device_description());
        if let Err(e) = serde_json::to_writer_pretty(&mut file, &doc)
            .map_err(std::io::Error::from)
            .and_then(|()| file.write_all(b"\n"))
        {
            eprintln!("pqgpu-bench: writing {}: {e}", path.display());
            std::process::exit(1);
        }
        say!("\nwrote {}", path.display());
    }
    say!("\nall results checked: every signature verified, every shared secret matched");
}

/// Names the step about to run: on the bar, or, when stderr is not a terminal (the bar is then
/// hidden), on a line of its own with the elapsed time, so piped runs still show progress.
fn step(bar: &ProgressBar, msg: String) {
    if bar.is_hidden() {
        eprintln!(
            "[{}/{}, {} s] {msg}",
            bar.position() + 1,
            bar.length().unwrap_or(0),
            bar.elapsed().as_secs()
        );
    }
    bar.set_message(msg);
}

fn fail_on_error(bar: &ProgressBar, r: Result<(), String>) {
    if let Err(e) = r {
        bar.abandon();
        eprintln!("pqgpu-bench: CHECK FAILED: {e}");
        std::process::exit(1);
    }
}

fn choose_targets(args: &Args, threads: usize) -> Result<Vec<Target>, String> {
    let auto_pick = pqgpu::select::auto_override().ok().flatten();
    let cpu_batch = if args.cpu_batch == 0 {
        64 * threads
    } else {
        args.cpu_batch
    };
    let cpu = || -> Result<Target, String> {
        Ok(Target {
            label: format!("cpu x{threads}"),
            ctx: Context::new(PQG_BACKEND_CPU as i32)?,
            is_gpu: false,
            batch: cpu_batch,
            max_sweep: 4096,
        })
    };
    let gpu = || -> Result<Target, String> {
        let ctx =
            Context::new(PQG_BACKEND_GPU as i32).map_err(|e| match gpu::unavailable_reason() {
                Some(why) => format!("{e} ({why})"),
                None => e,
            })?;
        Ok(Target {
            label: "gpu".into(),
            ctx,
            is_gpu: true,
            batch: args.gpu_batch,
            max_sweep: args.max_batch,
        })
    };
    match args.backend {
        BackendArg::Cpu => Ok(vec![cpu()?]),
        BackendArg::Gpu => Ok(vec![gpu().map_err(|e| format!("GPU backend: {e}"))?]),
        // PQGPU_BACKEND=cpu|gpu narrows an AUTO run as it does an AUTO context (an unknown
        // value was refused before).
        BackendArg::Auto if auto_pick == Some(BackendKind::Cpu) => {
            say!("PQGPU_BACKEND=cpu: measuring the CPU backend only");
            Ok(vec![cpu()?])
        }
        BackendArg::Auto if auto_pick == Some(BackendKind::Gpu) => {
            say!("PQGPU_BACKEND=gpu: measuring the GPU backend only");
            Ok(vec![gpu().map_err(|e| format!("GPU backend: {e}"))?])
        }
        BackendArg::Auto => match gpu() {
            Ok(g) => Ok(vec![g, cpu()?]),
            Err(e) => {
                say!("no usable GPU: {e}; measuring the CPU backend only");
                Ok(vec![cpu()?])
            }
        },
    }
}

fn print_environment(threads: usize, targets: &[Target], host_memory: HostMemory, kem_keys: usize) {
    say!(
        "pqgpu {} benchmark (every figure through the C ABI unless marked kernel-only)",
        workload::library_version()
    );
    say!("cpu: {} threads used", threads);
    if let Some(d) = gpu::device_description() {
        say!("gpu: {d}");
    }
    for t in targets {
        say!("target {}: batch {}", t.label, t.batch);
    }
    if targets.iter().any(|t| t.is_gpu) {
        say!("gpu host buffers: {host_memory:?} (--host-memory)");
    }
    if kem_keys > 1 {
        say!("kem encaps/decaps: {kem_keys} key pairs per batch (--kem-keys)");
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

/// The host-memory kinds measured on a target: both (by default) on a GPU, plain memory on
/// the CPU (registration moves nothing there).
fn memories(args: &Args, t: &Target) -> Vec<Memory> {
    match (t.is_gpu, args.host_memory) {
        (false, _) => vec![Memory::Pageable],
        (true, HostMemory::Registered) => vec![Memory::Registered],
        (true, HostMemory::Pageable) => vec![Memory::Pageable],
        (true, HostMemory::Both) => vec![Memory::Registered, Memory::Pageable],
    }
}

/// Registers a batch's buffers with `pqg_host_register` for `Memory::Registered` (what a
/// server does once for its long-lived buffers); unregistered when the guard drops.
fn register<'a>(
    mem: Memory,
    ctx: &'a Context,
    bufs: &[&[u8]],
) -> Result<Option<Registered<'a>>, String> {
    match mem {
        Memory::Pageable => Ok(None),
        Memory::Registered => Registered::new(ctx, bufs).map(Some),
    }
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
    cpu: &Context,
    rows: &mut Vec<Row>,
    lat: &mut Vec<Latency>,
) -> Result<(), String> {
    for n in batch_sizes(args, t) {
        let mut figures = [
            Row::new(&t.label, p.name(), "keygen", n),
            Row::new(&t.label, p.name(), "sign", n),
            Row::new(&t.label, p.name(), "verify", n),
        ];
        for mem in memories(args, t) {
            let mut w = MlDsaBatch::new(p, n);
            let _pinned = register(mem, &t.ctx, &w.host_buffers())?;
            figures[0].set(mem, median_rate(args.reps, n, || w.keygen(&t.ctx))?);
            figures[1].set(mem, median_rate(args.reps, n, || w.sign(&t.ctx))?);
            figures[2].set(mem, median_rate(args.reps, n, || w.verify(&t.ctx))?);
            if t.is_gpu {
                w.cross_check(&t.ctx, cpu, 256)?;
            }
        }
        if t.is_gpu {
            // Kernel-only (internal): a failure, including its own signatures not verifying,
            // aborts.
            for (row, op) in
                figures
                    .iter_mut()
                    .zip([gpu::Op::Keygen, gpu::Op::Sign, gpu::Op::Verify])
            {
                let k = gpu::kernel_throughput(p, op, n)
                    .map_err(|e| format!("{} kernel-only {op:?}: {e}", p.name()))?;
                row.kernel = Some(k);
            }
        }
        rows.extend(figures);
    }
    // Latency of single-item calls: what one TLS handshake or one certificate waits.
    let mut w = MlDsaBatch::new(p, 1);
    for op in ["keygen", "sign", "verify"] {
        let call = || w.single(&t.ctx, op);
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
    p: Alg,
    rows: &mut Vec<Row>,
    lat: &mut Vec<Latency>,
) -> Result<(), String> {
    for n in batch_sizes(args, t) {
        let mut figures = [
            Row::new(&t.label, p.name(), "keygen", n),
            Row::new(&t.label, p.name(), "encaps", n),
            Row::new(&t.label, p.name(), "decaps", n),
        ];
        for mem in memories(args, t) {
            let mut w = KemBatch::new(p, n, args.kem_keys);
            let _pinned = register(mem, &t.ctx, &w.host_buffers())?;
            figures[0].set(mem, median_rate(args.reps, n, || w.keygen(&t.ctx))?);
            figures[1].set(mem, median_rate(args.reps, n, || w.encaps(&t.ctx))?);
            figures[2].set(mem, median_rate(args.reps, n, || w.decaps(&t.ctx))?);
        }
        if let (true, Alg::MlKem(m)) = (t.is_gpu, p) {
            // Kernel-only (internal), ML-KEM only (CTRU-Prime has none): one shared key for
            // `--kem-keys 1`, else a key per item. A failure, including secrets that differ,
            // aborts.
            let (enc, dec) = if args.kem_keys == 1 {
                (gpu::KemOp::EncapsOneKey, gpu::KemOp::DecapsOneKey)
            } else {
                (gpu::KemOp::Encaps, gpu::KemOp::Decaps)
            };
            for (row, op) in figures.iter_mut().zip([gpu::KemOp::Keygen, enc, dec]) {
                let k = gpu::mlkem_kernel_throughput(m, op, n)
                    .map_err(|e| format!("{} kernel-only {op:?}: {e}", p.name()))?;
                row.kernel = Some(k);
            }
        }
        rows.extend(figures);
    }
    let mut w = KemBatch::new(p, 1, 1);
    for op in ["keygen", "encaps", "decaps"] {
        let call = || w.single(&t.ctx, op);
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

/// SLH-DSA keygen, hedged signing and verification of one set at its own batch sizes (see
/// [`slhdsa::batches`]); on the GPU a sample cross-checked with the CPU backend and the
/// kernel-only figures (a key per item), and the latency of single signing calls.
fn run_slhdsa(
    args: &Args,
    t: &Target,
    p: pqgpu::slhdsa::ParamSet,
    threads: usize,
    cpu: &Context,
    rows: &mut Vec<Row>,
    lat: &mut Vec<Latency>,
) -> Result<(), String> {
    let [kg, sg, vf] = slhdsa::batches(p, t.is_gpu, threads);
    let mut figures = [
        Row::new(&t.label, p.name(), "keygen", kg),
        Row::new(&t.label, p.name(), "sign", sg),
        Row::new(&t.label, p.name(), "verify", vf),
    ];
    for mem in memories(args, t) {
        let all = kg.max(sg).max(vf);
        let mut w = slhdsa::SlhDsaBatch::new(p, all);
        let _pinned = register(mem, &t.ctx, &w.host_buffers())?;
        // The keys to sign with first (the timed keygen rewrites the first kg of them).
        w.keygen(&t.ctx, kg.max(sg))?;
        figures[0].set(mem, median_rate(args.reps, kg, || w.keygen(&t.ctx, kg))?);
        figures[1].set(mem, median_rate(args.reps, sg, || w.sign(&t.ctx, sg))?);
        // Signatures to verify: the signing batch's, repeated over the verification batch.
        let signed = sg.min(vf);
        w.sign(&t.ctx, signed)?;
        w.repeat(signed, vf);
        figures[2].set(mem, median_rate(args.reps, vf, || w.verify(&t.ctx, vf))?);
        if t.is_gpu {
            w.cross_check(&t.ctx, cpu, 16)?;
        }
    }
    if t.is_gpu {
        for (row, (op, n)) in figures.iter_mut().zip([
            (gpu::SlhOp::Keygen, kg),
            (gpu::SlhOp::Sign, sg),
            (gpu::SlhOp::Verify, vf),
        ]) {
            let k = gpu::slhdsa_kernel_throughput(p, op, n)
                .map_err(|e| format!("{} kernel-only {op:?}: {e}", p.name()))?;
            row.kernel = Some(k);
        }
    }
    rows.extend(figures);
    let mut w = slhdsa::SlhDsaBatch::new(p, 1);
    w.keygen(&t.ctx, 1)?;
    let samples = if p.params().a >= 12 {
        args.latency_samples.min(5)
    } else {
        args.latency_samples.min(50)
    };
    lat.push(Latency::measure(
        &t.label,
        p.name(),
        "sign",
        samples,
        || w.single_sign(&t.ctx),
    )?);
    Ok(())
}
