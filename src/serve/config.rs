//! The serving options of a context (`pqg_context_set_option`), stored once in the context and
//! read by the dispatcher: never from the environment.

use crate::Error;
use std::sync::atomic::{AtomicU64, Ordering};

/// The options. Discriminants are the C ABI's `PQG_OPT_*` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Opt {
    /// Longest time (µs) the first item of a batch waits for company: 0..=1,000,000.
    MaxWaitUs = 1,
    /// Most items in one backend batch: 1..=1,048,576.
    MaxBatch = 2,
    /// Batches (and, for blocking calls, the load) below this many items run on the CPU
    /// instead of the GPU: 0..=1,048,576. No effect on a CPU context.
    CpuCrossover = 3,
    /// Batches a context runs at once (its dispatcher threads, started at the first queued
    /// item; later changes do not apply): 1..=64.
    MaxInFlight = 4,
    /// Arrivals paused this long (µs) count as "nothing else is arriving" and flush the queue:
    /// 0..=1,000,000 (capped at a quarter of the maximum wait).
    QuietUs = 5,
}

impl Opt {
    pub fn from_code(code: i32) -> Result<Opt, Error> {
        Ok(match code {
            1 => Opt::MaxWaitUs,
            2 => Opt::MaxBatch,
            3 => Opt::CpuCrossover,
            4 => Opt::MaxInFlight,
            5 => Opt::QuietUs,
            _ => return Err(Error::InvalidArgument),
        })
    }

    fn range(self) -> (u64, u64) {
        match self {
            Opt::MaxWaitUs => (0, 1_000_000),
            Opt::MaxBatch => (1, 1 << 20),
            Opt::CpuCrossover => (0, 1 << 20),
            Opt::MaxInFlight => (1, 64),
            Opt::QuietUs => (0, 1_000_000),
        }
    }
}

/// Defaults.
/// * Maximum wait 500 us: bounds what a lone item under load pays (issue #13: at most 2 ms)
///   and leaves room under the 5 ms p99 target for a batch's own run. On the H200 (seventh
///   session, ML-DSA-44 signing, 1,024 blocking threads, two in flight, two runs each)
///   500 us gave 298 k / 311 k/s at p99 5.5 / 4.3 ms, 1,000 us 292 k / 285 k/s at p99
///   7.7 / 6.1 ms, 2,000 us 242 k / 251 k/s.
/// * Maximum batch 65,536: the GPU engine's efficient size (larger batches gain little).
/// * CPU crossover: the number of cores (see [`default_cpu_crossover`]).
/// * Four batches in flight: each on a GPU worker (stream) of its own, so one batch's host
///   work and rejection-loop rounds overlap the others' kernels. On the H200 (eleventh
///   session, after the GPU scheduler gave concurrent batches distinct workers), four against
///   two: 1,024 blocking ML-DSA-44 signers 421 k / 378 k/s at p99 4.4 / 4.4 ms against
///   354 k / 341 k/s at 5.2 / 5.1 ms; 4,096 asynchronous signatures outstanding 1.14 M/s at
///   p99 4.1 ms against 1.06 M/s at 9.7 ms; verification and CTRU-Prime at 8,192 outstanding
///   p99 2.8-3.5 ms against 7.2-8.5 ms. (Before that fix every single-chunk batch waited for
///   the first worker, and more in flight only made batches smaller: two was best then.)
/// * Two batches in flight on a GPU shared with other processes through MPS
///   ([`Config::for_backend`]): their batches run beside this process's, so fewer and larger
///   ones do more. On the H200 (`openssl speed -multi 4 -async_jobs 1000 ML-DSA-44` under
///   MPS, five comparisons) two against four: 1.07-1.14 M
///   against 0.91-1.08 M signatures/s, and verification 4-10 % faster too.
/// * Quiet gap 50 µs: blocking callers whose items just completed come back within a few µs
///   each, so a 50 µs pause means they are all waiting; it adds at most that to a light load.
///
/// scripts/device/serve.sh measures the grid (wait x in-flight x batch, crossover 0..128) that
/// confirms or moves the GPU-side ones.
pub const DEFAULT_MAX_WAIT_US: u64 = 500;
pub const DEFAULT_MAX_BATCH: u64 = 65536;
pub const DEFAULT_MAX_IN_FLIGHT: u64 = 4;
pub const DEFAULT_MAX_IN_FLIGHT_SHARED: u64 = 2;
pub const DEFAULT_QUIET_US: u64 = 50;

/// The default crossover: the cores of this machine (1..=64). While fewer blocking calls are
/// outstanding than there are cores, each runs at once on a core of its own at the CPU's
/// single-call latency (about 0.1 ms for ML-DSA-44 signing), which a GPU batch (0.3 ms and
/// more, plus the wait) cannot beat; from there on the CPU is saturated (on the H200 host,
/// CPU signing stops growing at 16 threads) and the GPU's batches win.
pub fn default_cpu_crossover() -> u64 {
    static CORES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get() as u64)
            .clamp(1, 64)
    })
}

#[derive(Debug)]
pub struct Config {
    values: [AtomicU64; 5],
}

impl Default for Config {
    fn default() -> Self {
        Config {
            values: [
                AtomicU64::new(DEFAULT_MAX_WAIT_US),
                AtomicU64::new(DEFAULT_MAX_BATCH),
                AtomicU64::new(default_cpu_crossover()),
                AtomicU64::new(DEFAULT_MAX_IN_FLIGHT),
                AtomicU64::new(DEFAULT_QUIET_US),
            ],
        }
    }
}

impl Config {
    /// The defaults for a context on a backend whose device other processes share
    /// (`shared`: [`crate::backend::Backend::shared_device`]) or not.
    pub fn for_backend(shared: bool) -> Config {
        let c = Config::default();
        if shared {
            c.store(Opt::MaxInFlight, DEFAULT_MAX_IN_FLIGHT_SHARED);
        }
        c
    }

    fn store(&self, opt: Opt, v: u64) {
        self.values[opt as usize - 1].store(v, Ordering::Relaxed);
    }

    /// Sets an option; a value outside its range is `InvalidArgument`.
    pub fn set(&self, opt: Opt, value: i64) -> Result<(), Error> {
        let (lo, hi) = opt.range();
        let v = u64::try_from(value).map_err(|_| Error::InvalidArgument)?;
        if v < lo || v > hi {
            return Err(Error::InvalidArgument);
        }
        self.store(opt, v);
        Ok(())
    }

    pub fn get(&self, opt: Opt) -> u64 {
        self.values[opt as usize - 1].load(Ordering::Relaxed)
    }
}
