//! The pre-fork server pattern through pqgpu.so (provider/bench/prefork.c, built against
//! scripts/openssl35.sh's static OpenSSL 3.5): a master loads the configuration and an ML-DSA-44
//! key, optionally signs once itself, and forks four workers that sign with `EVP_DigestSign`
//! and verify through pqgpu and through OpenSSL's default provider.
//!
//! For `backend = auto` and `backend = gpu`, with and without the master's signature: the
//! master that only loaded has not reached for the GPU (provider parameters `pqgpu-backend`
//! none, `pqgpu-cuda-pid` 0, no /dev/nvidia* descriptor open); every worker ends with statuses
//! (no crash, no hang); an AUTO worker signs everything, on the GPU or on the CPU with the
//! reason given (`pqgpu-gpu-unusable`, and the trace's `engine Cpu gpu_unusable=` line); a GPU
//! worker signs everything on the GPU or nothing, with the reason on the OpenSSL error queue.
//! On CI (no GPU) that is the CPU, and the GPU refusing, in every cell.

mod common;

use common::{Cfg, Env};
use std::path::{Path, PathBuf};
use std::process::Command;

const WORKERS: usize = 4;
const SIGNS: usize = 25;

/// Builds prefork into the scratch directory, or `None` (with the reason printed) when there is
/// no C compiler or no OpenSSL 3.5 headers and static libraries.
fn build(e: &Env) -> Option<PathBuf> {
    let cache = e.bin.parent().and_then(Path::parent)?;
    if !cache.join("include/openssl/evp.h").is_file() || !cache.join("lib/libcrypto.a").is_file() {
        println!(
            "SKIPPED: no OpenSSL 3.5 headers and static libraries in {} (run scripts/openssl35.sh)",
            cache.display()
        );
        return None;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        println!("SKIPPED: no C compiler ({cc})");
        return None;
    }
    let out = e.path("prefork");
    let o = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/build.sh"))
        .args([out.as_os_str(), "prefork.c".as_ref()])
        .env("PQGPU_OPENSSL_CACHE", cache)
        .output()
        .expect("run bench/build.sh");
    assert!(
        o.status.success(),
        "building prefork failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(out)
}

/// The value of `key` in a `key=value` line; quoted values may hold spaces.
fn value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}="))? + key.len() + 2;
    let rest = &line[start..];
    match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next(),
        None => rest.split(' ').next(),
    }
}

/// Runs the master with `backend` (and `cpu_crossover = 0`, so every request may go to the GPU)
/// and `master_signs` signatures before the fork; its output, after the checks every cell
/// shares: the master untouched after loading, every worker reported and exited.
fn run(e: &Env, prefork: &Path, backend: &str, master_signs: usize) -> String {
    let cnf = std::fs::read_to_string(e.path("pq.cnf")).unwrap().replace(
        "backend = cpu\n",
        &format!("backend = {backend}\ncpu_crossover = 0\n"),
    );
    assert!(cnf.contains(&format!("backend = {backend}")), "{cnf}");
    let name = format!("{backend}-{master_signs}.cnf");
    e.write(&name, cnf.as_bytes());
    e.clear_trace();
    let o = Command::new(prefork)
        .args(["--key", "key.pem", "--workers", &WORKERS.to_string()])
        .args(["--signs", &SIGNS.to_string()])
        .args(["--master-signs", &master_signs.to_string()])
        .current_dir(&e.dir)
        .env("OPENSSL_CONF", e.path(&name))
        .env_remove("OPENSSL_MODULES")
        .env_remove("PQGPU_BACKEND")
        .output()
        .expect("run prefork");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let cell = format!("backend = {backend}, master signs {master_signs}");
    println!("---- {cell}\n{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{cell}: a worker did not exit:\n{out}");
    let loaded = out
        .lines()
        .find(|l| l.starts_with("master phase=loaded"))
        .expect(&out);
    for (k, v) in [("backend", "none"), ("cuda_pid", "0"), ("nvidia_fds", "0")] {
        assert_eq!(
            value(loaded, k),
            Some(v),
            "{cell}: loading touched the GPU: {loaded}"
        );
    }
    let done = format!("workers={WORKERS} exited={WORKERS} ");
    assert!(out.contains(&done), "{cell}:\n{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("worker i=")).count(),
        WORKERS
    );
    out
}

/// The worker lines of `out` as (backend, signed, verified, verified by the default
/// provider, gpu_unusable, error).
fn workers(out: &str) -> Vec<(String, usize, usize, usize, String, String)> {
    out.lines()
        .filter(|l| l.starts_with("worker i="))
        .map(|l| {
            let n = |k| -> usize {
                let v = value(l, k).expect(l);
                v.split('/').next().unwrap().parse().expect(l)
            };
            let s = |k| value(l, k).expect(l).to_string();
            let signs: usize = value(l, "signed")
                .and_then(|v| v.split('/').nth(1))
                .expect(l)
                .parse()
                .unwrap();
            assert_eq!(signs, SIGNS, "{l}");
            (
                s("backend"),
                n("signed"),
                n("verified"),
                n("verified_default"),
                s("gpu_unusable"),
                s("error"),
            )
        })
        .collect()
}

#[test]
fn prefork_workers_sign_on_the_gpu_or_say_why_not() {
    let Some(e) = Env::new("prefork") else {
        return;
    };
    let Some(prefork) = build(&e) else { return };
    e.ok(
        Cfg::Def,
        &["genpkey", "-algorithm", "ML-DSA-44", "-out", "key.pem"],
    );
    for master_signs in [0, 1] {
        // AUTO: every worker signs; on the CPU only with the reason.
        let out = run(&e, &prefork, "auto", master_signs);
        let inherited = "CUDA initialised by parent process";
        let master_on_gpu = out.contains("master phase=self-tested backend=gpu");
        for (backend, signed, verified, by_default, unusable, error) in workers(&out) {
            assert_eq!(
                (signed, verified, by_default),
                (SIGNS, SIGNS, SIGNS),
                "{out}"
            );
            assert!(error.is_empty(), "{out}");
            match backend.as_str() {
                "gpu" => assert!(!master_on_gpu, "{out}"),
                "cpu" => assert!(
                    !unusable.is_empty() && (!master_on_gpu || unusable.contains(inherited)),
                    "CPU without the reason:\n{out}"
                ),
                _ => panic!("worker backend {backend}:\n{out}"),
            }
        }
        if out.contains("backend=cpu gpu_unusable") {
            assert!(
                e.traced("engine Cpu gpu_unusable=") >= 1,
                "the trace says why"
            );
        }
        assert!(e.traced("sign ML-DSA-44") >= WORKERS * SIGNS);
        // GPU: every worker signs everything on the GPU, or nothing with the reason on the
        // error queue; never the CPU.
        let out = run(&e, &prefork, "gpu", master_signs);
        let master_on_gpu = out.contains("master phase=self-tested backend=gpu");
        for (backend, signed, verified, by_default, _, error) in workers(&out) {
            match backend.as_str() {
                "gpu" => {
                    assert!(!master_on_gpu, "{out}");
                    assert_eq!((signed, verified, by_default), (SIGNS, SIGNS, SIGNS));
                }
                "none" => {
                    assert_eq!(signed, 0, "{out}");
                    assert!(
                        error.contains("GPU unusable") && error.contains("backend = gpu: "),
                        "no reason on the error queue:\n{out}"
                    );
                    assert!(!master_on_gpu || error.contains(inherited), "{out}");
                    assert!(e.traced("engine refused NoDevice gpu_unusable=") >= 1);
                }
                _ => panic!("worker backend {backend}:\n{out}"),
            }
        }
    }
}
