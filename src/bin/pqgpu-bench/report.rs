//! Tables and JSON for the benchmark's figures.

use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// One throughput figure: a batch call timed end to end.
pub struct Row {
    target: String,
    alg: &'static str,
    op: &'static str,
    batch: usize,
    ops_per_s: f64,
    kernel_ops_per_s: Option<f64>,
}

impl Row {
    pub fn new(
        target: &str,
        alg: &'static str,
        op: &'static str,
        batch: usize,
        ops_per_s: f64,
        kernel: Option<f64>,
    ) -> Row {
        Row {
            target: target.to_string(),
            alg,
            op,
            batch,
            ops_per_s,
            kernel_ops_per_s: kernel,
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
    println!(
        "\nThroughput (end-to-end: host buffers in, host buffers out; median of the timed reps)"
    );
    println!(
        "{:<10} {:<16} {:<7} {:>9} {:>12} {:>14}",
        "backend", "algorithm", "op", "batch", "ops/s", "kernel ops/s"
    );
    for r in rows {
        let k = r.kernel_ops_per_s.map_or_else(|| "-".to_string(), si);
        println!(
            "{:<10} {:<16} {:<7} {:>9} {:>12} {:>14}",
            r.target,
            r.alg,
            r.op,
            r.batch,
            si(r.ops_per_s),
            k
        );
    }
}

pub fn print_latency(lat: &[Latency]) {
    println!("\nLatency of single-item calls (microseconds)");
    println!(
        "{:<10} {:<16} {:<7} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "backend", "algorithm", "op", "samples", "p50", "p90", "p99", "max"
    );
    for l in lat {
        println!(
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
        "version": env!("CARGO_PKG_VERSION"),
        "cpu_threads": threads,
        "gpu": gpu,
        "throughput": rows.iter().map(|r| json!({
            "backend": r.target, "alg": r.alg, "op": r.op, "batch": r.batch,
            "ops_per_s": r.ops_per_s, "kernel_ops_per_s": r.kernel_ops_per_s,
        })).collect::<Vec<_>>(),
        "latency_us": lat.iter().map(|l| json!({
            "backend": l.target, "alg": l.alg, "op": l.op, "samples": l.samples,
            "p50": l.p50.as_secs_f64() * 1e6, "p90": l.p90.as_secs_f64() * 1e6,
            "p99": l.p99.as_secs_f64() * 1e6, "max": l.max.as_secs_f64() * 1e6,
        })).collect::<Vec<_>>(),
    })
}
