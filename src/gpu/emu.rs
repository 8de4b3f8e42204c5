//! Builds and runs `kernels/emu`'s harness: the kernels' per-thread code compiled with the
//! system's C++ compiler (a shim gives CUDA's names host meanings) and run one thread at a
//! time (or, in `fibers.h` harnesses, a block at a time with every thread a fiber), for tests on
//! machines without a GPU (`ctru/emulated.rs`, `mlkem/emulated.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first C++ compiler that answers (`CXX`, then `c++`, `g++`, `clang++`).
pub fn compiler() -> Option<String> {
    let env = crate::settings::test_env::cxx();
    env.into_iter()
        .chain(["c++", "g++", "clang++"].map(String::from))
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// A harness binary in its own directory, removed when dropped.
pub struct Harness(PathBuf);

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().expect("harness dir"));
    }
}

impl Harness {
    /// The harness built with `defines` (a family's `-D` list, or none) in a fresh directory
    /// named after `label`.
    pub fn build(cxx: &str, label: &str, defines: &[String]) -> Harness {
        Self::build_source(cxx, label, "harness.cpp", defines)
    }

    /// As `build`, from another source of `kernels/emu`.
    pub fn build_source(cxx: &str, label: &str, source: &str, defines: &[String]) -> Harness {
        // Tests run in parallel: each build its own directory.
        static BUILDS: AtomicUsize = AtomicUsize::new(0);
        let nth = BUILDS.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("pqgpu-emu-{}-{label}-{nth}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = dir.join("harness");
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels/emu")
            .join(source);
        let out = Command::new(cxx)
            .args(["-std=c++17", "-O1", "-w", "-o"])
            .arg(&exe)
            .arg(&src)
            .args(defines)
            .output()
            .expect("run the C++ compiler");
        assert!(
            out.status.success(),
            "{cxx} failed on {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Harness(exe)
    }

    /// Runs the harness in `mode` on `input`; its stdout.
    pub fn run(&self, mode: &str, input: &[u8]) -> Vec<u8> {
        let mut child = Command::new(&self.0)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the harness");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().expect("harness output");
        writer.join().expect("writer").expect("write input");
        assert!(out.status.success(), "harness {mode} failed");
        out.stdout
    }
}
