//! The benchmark's command line refuses a newcomer's mistakes with a message before it
//! measures anything, and a closed output pipe ends it quietly. Each case runs the built
//! binary; none of them measures more than a two-item CPU batch.

use std::process::{Command, Output, Stdio};

fn bench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pqgpu-bench"));
    c.env_remove("PQGPU_BACKEND");
    c
}

fn run(c: &mut Command) -> (Output, String) {
    let out = c.output().expect("run pqgpu-bench");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "panicked: {err}");
    (out, err)
}

/// Refused with exit status 2, `want` in the message, and nothing measured (no progress line
/// on stderr, no table on stdout).
fn refused(args: &[&str], want: &str) {
    let (out, err) = run(bench().args(args));
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err:?} lacks {want:?}");
    assert!(
        !err.contains("[1/"),
        "{args:?} measured before refusing: {err}"
    );
    assert!(out.stdout.is_empty(), "{args:?} printed: {:?}", out.stdout);
}

#[test]
fn unwritable_json_path_is_refused_before_measuring() {
    refused(
        &["--json", "/no/such/dir/x.json"],
        "--json /no/such/dir/x.json: No such file or directory",
    );
}

#[test]
fn zero_counts_are_refused() {
    for opt in ["--reps", "--latency-samples", "--kem-keys", "--max-batch"] {
        refused(&[opt, "0"], "must be a positive integer");
    }
    refused(
        &["--serve", "--serve-drivers", "1,0"],
        "must be a positive integer",
    );
    refused(
        &["--serve", "--serve-threads", "1,-1"],
        "must be a whole number, 0 or more",
    );
    refused(
        &["--serve", "--serve-seconds", "0"],
        "must be a number of seconds above 0",
    );
}

#[test]
fn negative_batch_sizes_get_a_message() {
    refused(&["--gpu-batch", "-1"], "must be a whole number, 0 or more");
    refused(&["--cpu-batch", "-5"], "must be a whole number, 0 or more");
    refused(&["--gpu-batch", "0"], "a batch needs at least one item");
}

#[test]
fn unknown_backend_variable_is_refused_as_auto_contexts_refuse_it() {
    let (out, err) = run(bench().env("PQGPU_BACKEND", "foo"));
    assert_eq!(out.status.code(), Some(2), "{err}");
    // The library's own line, then the benchmark's.
    assert!(
        err.contains("PQGPU_BACKEND=\"foo\" is not one of cpu, gpu, auto"),
        "{err}"
    );
    assert!(
        err.contains("--backend auto follows PQGPU_BACKEND"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn closed_output_pipe_ends_quietly() {
    let mut child = bench()
        .args(["--backend", "cpu", "--alg", "mldsa", "--cpu-batch", "2"])
        .args(["--reps", "1", "--latency-samples", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pqgpu-bench");
    // The reader goes away before the benchmark writes, as `head` does after its lines.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}
