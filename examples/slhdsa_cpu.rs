//! SLH-DSA on one CPU thread: microseconds per keygen, sign and verify for each parameter set,
//! the median and the best of N timed operations (the form SPHINCS+'s own `test/benchmark` reports, so the
//! two can be compared on the same core: `scripts/device/slhdsa-cpu.sh`).
//!
//! cargo run --release --example slhdsa_cpu -- [N, default 10] [set names..., default all]

use pqgpu::slhdsa::{self, Message, ParamSet};
use std::time::Instant;

const ALL: [ParamSet; 12] = [
    ParamSet::Sha2_128s,
    ParamSet::Shake128s,
    ParamSet::Sha2_128f,
    ParamSet::Shake128f,
    ParamSet::Sha2_192s,
    ParamSet::Shake192s,
    ParamSet::Sha2_192f,
    ParamSet::Shake192f,
    ParamSet::Sha2_256s,
    ParamSet::Shake256s,
    ParamSet::Sha2_256f,
    ParamSet::Shake256f,
];

/// Median and best microseconds of `n` runs of `op` (after one untimed run).
fn median_us(n: usize, mut op: impl FnMut(usize)) -> (f64, f64) {
    op(0);
    let mut t: Vec<f64> = (1..=n)
        .map(|i| {
            let s = Instant::now();
            op(i);
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[n / 2], t[0])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(10);
    let names: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    println!("| set | keygen us | sign us | verify us | best keygen | best sign | best verify |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for p in ALL {
        if !names.is_empty() && !names.contains(&p.name()) {
            continue;
        }
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = vec![0u8; p.secret_key_len()];
        let mut sig = vec![0u8; p.signature_len()];
        let mut seed = vec![7u8; p.seed_len()];
        let kg = median_us(n, |i| {
            seed[0] = i as u8;
            slhdsa::keygen_internal(p, &seed, &mut pk, &mut sk).unwrap();
        });
        let mut m = [0u8; 32];
        let sg = median_us(n, |i| {
            m[0] = i as u8;
            let msg = Message::Pure { ctx: b"", msg: &m };
            slhdsa::sign(p, &sk, &msg, None, &mut sig).unwrap();
        });
        let msg = Message::Pure { ctx: b"", msg: &m };
        let vf = median_us(n, |_| slhdsa::verify(p, &pk, &msg, &sig).unwrap());
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            p.name(),
            kg.0,
            sg.0,
            vf.0,
            kg.1,
            sg.1,
            vf.1
        );
    }
}
