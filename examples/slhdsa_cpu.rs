//! SLH-DSA on one CPU thread: CPU microseconds per keygen, sign and verify for each parameter
//! set, the median and the best of N timed operations (CPU time as SPHINCS+'s own
//! `test/benchmark` reports it, so the two compare on the same core: `scripts/device/slhdsa-cpu.sh`).
//!
//! cargo run --release --example slhdsa_cpu -- [N, default 10] [set names..., default all]

use pqgpu::slhdsa::{self, Message, ParamSet};

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

/// CPU microseconds used by this thread so far: like SPHINCS+'s benchmark (which reads the
/// process's CPU time), unaffected by other processes sharing the core; on an idle core the
/// same as wall time.
fn cpu_us() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Median and best CPU microseconds of `n` runs of `op` (after one untimed run).
fn median_us(n: usize, mut op: impl FnMut(usize)) -> (f64, f64) {
    op(0);
    let mut t: Vec<f64> = (1..=n)
        .map(|i| {
            let s = cpu_us();
            op(i);
            cpu_us() - s
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
