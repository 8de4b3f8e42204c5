//! A context that describes itself through the C ABI (`pqg_context_describe`): the backend,
//! what was requested and why this backend, the devices, and why a GPU is unusable when AUTO
//! fell back to the CPU; the buffer rules of the call; and `PQGPU_BACKEND` (a known value
//! decides AUTO, an unknown one makes AUTO fail with `PQG_ERR_INVALID_ARGUMENT`), checked in
//! child processes of this test binary because the library reads its settings once.

mod common;

use common::ffi::{describe, field, Ctx};
use pqgpu::ffi::pqg_backend_values::{PQG_BACKEND_AUTO, PQG_BACKEND_CPU, PQG_BACKEND_GPU};
use pqgpu::ffi::*;
use std::process::Command;
use std::ptr::{null, null_mut};

const AUTO: pqg_backend = PQG_BACKEND_AUTO as pqg_backend;
const CPU: pqg_backend = PQG_BACKEND_CPU as pqg_backend;
const GPU: pqg_backend = PQG_BACKEND_GPU as pqg_backend;

/// The fields every description has, with the values they must have on any context.
fn check_common_fields(d: &str, ctx: &Ctx) {
    let backend = match unsafe { pqg_context_backend(ctx.0) } {
        b if b == CPU => "cpu",
        b if b == GPU => "gpu",
        b => panic!("pqg_context_backend gave {b}"),
    };
    assert_eq!(field(d, "backend"), Some(backend), "{d}");
    let threads: usize = field(d, "cpu_threads").expect(d).parse().expect(d);
    assert!(threads >= 1, "{d}");
    assert!(
        matches!(field(d, "cpu_simd"), Some("avx2" | "portable")),
        "{d}"
    );
    assert_eq!(field(d, "version"), Some(env!("CARGO_PKG_VERSION")), "{d}");
    assert!(d.ends_with('\n') && !d.contains('\0'), "{d:?}");
    for line in d.lines() {
        assert!(line.contains('='), "not key=value: {line:?}");
    }
}

#[test]
fn cpu_context_describes_itself() {
    let ctx = Ctx::cpu();
    let d = ctx.describe();
    check_common_fields(&d, &ctx);
    assert_eq!(field(&d, "requested"), Some("cpu"), "{d}");
    assert_eq!(field(&d, "chosen_by"), Some("request"), "{d}");
    // A CPU request never asks about the GPU.
    assert_eq!(field(&d, "gpu_unusable"), None, "{d}");
    assert_eq!(field(&d, "gpu"), None, "{d}");
    println!("{d}");
}

#[test]
fn describe_checks_its_arguments_and_writes_only_what_fits() {
    let ctx = Ctx::cpu();
    let text = ctx.describe();
    let size = text.len() + 1;
    let mut written = 12345usize;
    // NULL context.
    let st = unsafe { pqg_context_describe(null(), null_mut(), 0, &mut written) };
    assert_eq!((st, written), (PQG_ERR_NULL_POINTER, 12345));
    // NULL buffer with a length.
    let st = unsafe { pqg_context_describe(ctx.0, null_mut(), 10, &mut written) };
    assert_eq!((st, written), (PQG_ERR_NULL_POINTER, 12345));
    // Too small by one: nothing written, the size needed reported.
    let mut buf = vec![0xC5u8; size - 1];
    let st =
        unsafe { pqg_context_describe(ctx.0, buf.as_mut_ptr().cast(), buf.len(), &mut written) };
    assert_eq!((st, written), (PQG_ERR_BAD_LENGTH, size));
    assert!(
        buf.iter().all(|&b| b == 0xC5),
        "a rejected length was written to"
    );
    // Room to spare, and `written` may be NULL.
    let mut buf = vec![0xC5u8; size + 8];
    let st = unsafe { pqg_context_describe(ctx.0, buf.as_mut_ptr().cast(), buf.len(), null_mut()) };
    assert_eq!(st, PQG_OK);
    assert_eq!(&buf[..size - 1], text.as_bytes());
    assert_eq!(buf[size - 1], 0);
    assert!(
        buf[size..].iter().all(|&b| b == 0xC5),
        "written past the NUL"
    );
}

/// AUTO says what it chose and why; on a machine without a GPU (CI) that is the CPU, with the
/// reason the GPU is unusable.
#[test]
fn auto_context_says_why() {
    let ctx = Ctx::new(AUTO).expect("AUTO context");
    let d = ctx.describe();
    check_common_fields(&d, &ctx);
    assert_eq!(field(&d, "requested"), Some("auto"), "{d}");
    let by_variable = !matches!(
        std::env::var("PQGPU_BACKEND").as_deref().map(str::trim),
        Err(_) | Ok("" | "auto")
    );
    match (field(&d, "backend"), field(&d, "chosen_by")) {
        (_, Some("PQGPU_BACKEND")) => assert!(by_variable, "{d}"),
        (Some("gpu"), Some("gpu usable")) => {
            let n: usize = field(&d, "gpu_devices").expect(&d).parse().unwrap();
            assert!(n >= 1 && !field(&d, "gpu").expect(&d).is_empty(), "{d}");
            assert_eq!(field(&d, "gpu_unusable"), None, "{d}");
        }
        (Some("cpu"), Some("no usable gpu")) => {
            let why = field(&d, "gpu_unusable").expect(&d);
            assert!(!why.trim().is_empty() && why != "unknown", "{d}");
            // The library's reason, as the Rust API gives it (on one line).
            let reason = pqgpu::gpu::unavailable_reason().expect("a reason");
            assert_eq!(why, reason.replace(['\n', '\r', '\0'], " "), "{d}");
        }
        _ => panic!("inconsistent description:\n{d}"),
    }
    println!("{d}");
}

#[test]
fn gpu_context_lists_its_devices() {
    let Some(ctx) = Ctx::gpu_or_skip() else {
        return;
    };
    let d = ctx.describe();
    check_common_fields(&d, &ctx);
    assert_eq!(field(&d, "requested"), Some("gpu"), "{d}");
    let n: usize = field(&d, "gpu_devices").expect(&d).parse().unwrap();
    assert!(n >= 1, "{d}");
    assert!(!field(&d, "gpu").expect(&d).is_empty(), "{d}");
    println!("{d}");
}

// ------------------------------------------------------------------ PQGPU_BACKEND

/// Runs [`child`] in a fresh process of this binary with `PQGPU_BACKEND=value`; its
/// (stdout, stderr) after asserting that it ran and passed.
fn run_child(value: &str) -> (String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--include-ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env("PQGPU_BACKEND", value)
        .env("PQGPU_CONTEXT_TEST_CHILD", "1")
        .output()
        .expect("run the child");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "PQGPU_BACKEND={value}: child failed\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

#[test]
fn unknown_backend_variable_fails_auto_with_a_message() {
    let (_, stderr) = run_child("cuda");
    assert!(
        stderr.contains("PQGPU_BACKEND=\"cuda\"") && stderr.contains("cpu, gpu, auto"),
        "the message names the value and the choices: {stderr}"
    );
    assert_eq!(
        stderr.matches("PQGPU_BACKEND=").count(),
        1,
        "said once per process: {stderr}"
    );
}

#[test]
fn backend_variable_cpu_decides_auto() {
    let (stdout, _) = run_child("CPU");
    assert!(stdout.contains("chosen_by=PQGPU_BACKEND"), "{stdout}");
}

/// The child's half of the `PQGPU_BACKEND` tests (ignored unless run by them).
#[test]
#[ignore = "run in a child process by the PQGPU_BACKEND tests"]
fn child() {
    assert!(
        std::env::var_os("PQGPU_CONTEXT_TEST_CHILD").is_some(),
        "run by the PQGPU_BACKEND tests only"
    );
    let value = std::env::var("PQGPU_BACKEND").expect("set by the parent");
    match value.as_str() {
        "cuda" => {
            for _ in 0..2 {
                let mut c = std::ptr::dangling_mut::<pqg_context>();
                assert_eq!(
                    unsafe { pqg_context_new(AUTO, &mut c) },
                    PQG_ERR_INVALID_ARGUMENT
                );
                assert!(c.is_null(), "out is NULL on failure");
            }
            // Explicit requests do not consult the variable.
            let cpu = Ctx::cpu();
            assert_eq!(describe(cpu.0).lines().next(), Some("backend=cpu"));
        }
        "CPU" => {
            let ctx = Ctx::new(AUTO).expect("AUTO context");
            let d = ctx.describe();
            assert_eq!(field(&d, "backend"), Some("cpu"), "{d}");
            assert_eq!(field(&d, "requested"), Some("auto"), "{d}");
            assert_eq!(field(&d, "gpu_unusable"), None, "{d}");
            println!("{d}");
        }
        other => panic!("unexpected PQGPU_BACKEND={other}"),
    }
}
