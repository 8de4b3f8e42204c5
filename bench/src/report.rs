//! Tables and JSON for the benchmark's figures.

use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Where a batch's buffers live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Registered with `pqg_host_register` (DMA and zero-copy kernels).
    Registered,
    /// Plain heap memory (staged through pinned buffers by the library).
    Pageable,
}

/// The figures of one operation at one batch size: through the C ABI with registered and
/// with plain buffers, and kernel-only (internal, GPU only).
pub struct Row {
    target: String,
    alg: &'static str,
    op: &'static str,
    batch: usize,
    registered: Option<f64>,
    pageable: Option<f64>,
    pub kernel: Option<f64>,
}

impl Row {
    pub fn new(target: &str, alg: &'static str, op: &'static str, batch: usize) -> Row {
        Row {
            target: target.to_string(),
            alg,
            op,
            batch,
            registered: None,
            pageable: None,
            kernel: None,
        }
    }

    pub fn set(&mut self, mem: Memory, ops_per_s: f64) {
        match mem {
            Memory::Registered => self.registered = Some(ops_per_s),
            Memory::Pageable => self.pageable = Some(ops_per_s),
        }
    }
}

/// Percentiles of single-item call latency.
pub struct Latency {
    target: String,
    alg: &'static str,
    op: &'static str,
    samples: usize,
    p50: Duration,
    p90: Duration,
    p99: Duration,
    max: Duration,
}

impl Latency {
    /// Times `samples` calls of `f` (after one warm-up call).
    pub fn measure(
        target: &str,
        alg: &'static str,
        op: &'static str,
        samples: usize,
        mut f: impl FnMut() -> Result<Duration, String>,
    ) -> Result<Latency, String> {
        f()?;
        let samples = samples.max(1);
        let mut t = Vec::with_capacity(samples);
        for _ in 0..samples {
            let start = Instant::now();
            f()?;
            t.push(start.elapsed());
        }
        t.sort();
        let pct = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
        Ok(Latency {
            target: target.into(),
            alg,
            op,
            samples,
            p50: pct(0.5),
            p90: pct(0.9),
            p99: pct(0.99),
            max: t[t.len() - 1],
        })
    }
}

/// 1234567.0 -> "1.23 M".
fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn us(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

pub fn print_throughput(rows: &[Row]) {
    say!(
        "\nThroughput, ops/s through the C ABI (submit + wait; median of the timed reps), \
         registered and plain host buffers; kernel-only is internal (inputs already on the GPU)"
    );
    say!(
        "{:<10} {:<16} {:<7} {:>9} {:>12} {:>12} {:>12}",
        "backend",
        "algorithm",
        "op",
        "batch",
        "registered",
        "pageable",
        "kernel-only"
    );
    let f = |x: Option<f64>| x.map_or_else(|| "-".to_string(), si);
    for r in rows {
        say!(
            "{:<10} {:<16} {:<7} {:>9} {:>12} {:>12} {:>12}",
            r.target,
            r.alg,
            r.op,
            r.batch,
            f(r.registered),
            f(r.pageable),
            f(r.kernel)
        );
    }
}

pub fn print_latency(lat: &[Latency]) {
    say!("\nLatency of single-item calls (microseconds)");
    say!(
        "{:<10} {:<16} {:<7} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "backend",
        "algorithm",
        "op",
        "samples",
        "p50",
        "p90",
        "p99",
        "max"
    );
    for l in lat {
        say!(
            "{:<10} {:<16} {:<7} {:>8} {:>9} {:>9} {:>9} {:>9}",
            l.target,
            l.alg,
            l.op,
            l.samples,
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.max)
        );
    }
}

pub fn to_json(rows: &[Row], lat: &[Latency], threads: usize, gpu: Option<String>) -> Value {
    json!({
        "version": crate::workload::library_version(),
        "cpu_threads": threads,
        "gpu": gpu,
        "throughput": rows.iter().map(|r| json!({
            "backend": r.target, "alg": r.alg, "op": r.op, "batch": r.batch,
            "c_abi_registered_ops_per_s": r.registered.map(round),
            "c_abi_pageable_ops_per_s": r.pageable.map(round),
            "kernel_only_ops_per_s": r.kernel.map(round),
        })).collect::<Vec<_>>(),
        "latency_us": lat.iter().map(|l| json!({
            "backend": l.target, "alg": l.alg, "op": l.op, "samples": l.samples,
            "p50": micros(l.p50), "p90": micros(l.p90),
            "p99": micros(l.p99), "max": micros(l.max),
        })).collect::<Vec<_>>(),
    })
}

/// Whole operations per second: more digits than that are noise.
fn round(x: f64) -> f64 {
    x.round()
}

/// Microseconds to one decimal.
fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}
