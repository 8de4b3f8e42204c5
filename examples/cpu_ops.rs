//! One-thread CPU operation rates, portable code vs the vector paths (`pqgpu::simd`).
//!
//! cargo run --release --example cpu_ops -- [SECONDS per figure, default 0.3] [RUNS, default 3]
//!     [portable|simd|both, default both] [mldsa|ctru|all|<set name>, default all]
//!     [ML-DSA operation: keygen|sign|verify, default all three; for per-operation profiles]
//! Prints the best of RUNS short runs (the machine may be shared), ops/s per thread.
//! SECONDS = `xN` runs every operation exactly N times instead (for instruction counts under
//! `valgrind --tool=callgrind`, which are repeatable on a busy machine).

use pqgpu::{ctru, mldsa, simd};
use std::time::Instant;

fn rate(secs: f64, runs: usize, mut op: impl FnMut()) -> f64 {
    op();
    if let Some(n) = ITERS.get().copied().flatten() {
        let t = Instant::now();
        for _ in 0..n {
            op();
        }
        return n as f64 / t.elapsed().as_secs_f64();
    }
    let mut best: f64 = 0.0;
    for _ in 0..runs {
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            op();
            n += 1;
        }
        best = best.max(n as f64 / t.elapsed().as_secs_f64());
    }
    best
}

static ITERS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    ITERS
        .set(args.first().and_then(|s| s.strip_prefix('x')?.parse().ok()))
        .unwrap();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(0.3);
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let which = args.get(2).map(String::as_str).unwrap_or("both");
    let algs = args.get(3).map(String::as_str).unwrap_or("all");
    let only = args.get(4).map(String::as_str);
    let timed = |op: &str| only.is_none_or(|o| o == op);
    let paths: &[bool] = match which {
        "portable" => &[false],
        "simd" => &[true],
        _ => &[false, true],
    };
    println!("| path | algorithm | op | ops/s (1 thread) |");
    println!("|---|---|---|---|");
    for &on in paths {
        simd::set_enabled(on);
        let path = simd::active();
        if algs != "ctru" && !algs.starts_with("CTRU") {
            for p in mldsa::ParamSet::ALL {
                if algs.starts_with("ML-DSA") && algs != p.name() {
                    continue;
                }
                let mut pk = vec![0u8; p.public_key_len()];
                let mut sk = vec![0u8; p.secret_key_len()];
                let mut sig = vec![0u8; p.signature_len()];
                let mut xi = [7u8; 32];
                let kg = timed("keygen").then(|| {
                    rate(secs, runs, || {
                        xi[0] = xi[0].wrapping_add(1);
                        mldsa::keygen_internal(p, &xi, &mut pk, &mut sk).unwrap();
                    })
                });
                // One fixed key for signing and verification, whatever keygen ran: the number of
                // signing attempts depends on the key.
                mldsa::keygen_internal(p, &[7u8; 32], &mut pk, &mut sk).unwrap();
                let mut m = [0u8; 32];
                let msg = |m: &[u8; 32]| *m;
                let sg = timed("sign").then(|| {
                    rate(secs, runs, || {
                        m[0] = m[0].wrapping_add(1);
                        let mm = msg(&m);
                        let message = mldsa::Message::Pure { ctx: b"", msg: &mm };
                        mldsa::sign(p, &sk, &message, Some(&[0; 32]), &mut sig).unwrap();
                    })
                });
                let message = mldsa::Message::Pure { ctx: b"", msg: &m };
                mldsa::sign(p, &sk, &message, Some(&[0; 32]), &mut sig).unwrap();
                let vf = timed("verify").then(|| {
                    rate(secs, runs, || {
                        mldsa::verify(p, &pk, &message, &sig).unwrap();
                    })
                });
                for (op, r) in [("keygen", kg), ("sign", sg), ("verify", vf)] {
                    if let Some(r) = r {
                        println!("| {path} | {} | {op} | {r:.0} |", p.name());
                    }
                }
            }
        }
        if algs != "mldsa" && !algs.starts_with("ML-DSA") {
            for p in ctru::ParamSet::ALL {
                if algs.starts_with("CTRU") && algs != p.name() {
                    continue;
                }
                let mut pk = vec![0u8; p.public_key_len()];
                let mut sk = vec![0u8; p.secret_key_len()];
                let mut ct = vec![0u8; p.ciphertext_len()];
                let mut ss = vec![0u8; p.shared_secret_len()];
                let mut seed = [3u8; 64];
                let kg = rate(secs, runs, || {
                    seed[0] = seed[0].wrapping_add(1);
                    ctru::keygen_derand(p, &seed, &mut pk, &mut sk).unwrap();
                });
                let mut e = [5u8; 32];
                let en = rate(secs, runs, || {
                    e[0] = e[0].wrapping_add(1);
                    ctru::encaps_derand(p, &pk, &e, &mut ct, &mut ss).unwrap();
                });
                let de = rate(secs, runs, || {
                    ctru::decaps(p, &sk, &ct, &mut ss).unwrap();
                });
                for (op, r) in [("keygen", kg), ("encaps", en), ("decaps", de)] {
                    println!("| {path} | {} | {op} | {r:.0} |", p.name());
                }
            }
        }
    }
}
