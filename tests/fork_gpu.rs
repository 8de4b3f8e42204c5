//! Fork and the GPU (contract v0.2), through the C ABI as a pre-fork server uses it.
//!
//! A master loads its keys (a CPU keygen, key handles, parameters, a CPU context's serving
//! options and a signature) and has not initialised CUDA. Then it does GPU work: a GPU context
//! and one signature where a GPU is usable; elsewhere (CI) the test marks the process as
//! having initialised the driver, as that work would. Its forked child knows: AUTO contexts
//! run on the CPU and `pqg_context_describe` names the parent's CUDA state, GPU contexts fail
//! with `PQG_ERR_NO_DEVICE` and `PQGPU_LOG=1` prints the reason, the Rust API
//! (`pqgpu::gpu::unavailable_reason`) gives it, and work still ends with statuses.
//!
//! The driver state is per process, so the checks run in one fresh process of this test binary
//! (with `PQGPU_LOG=1`, read once per process), started by the test below.

mod common;

use common::ffi::{field, Ctx};
use pqgpu::ffi::pqg_backend_values::{PQG_BACKEND_AUTO, PQG_BACKEND_CPU, PQG_BACKEND_GPU};
use pqgpu::ffi::*;
use std::process::Command;
use std::ptr::{null, null_mut};

const AUTO: pqg_backend = PQG_BACKEND_AUTO as pqg_backend;
const CPU: pqg_backend = PQG_BACKEND_CPU as pqg_backend;
const GPU: pqg_backend = PQG_BACKEND_GPU as pqg_backend;
const ALG: pqg_alg = PQG_ML_DSA_44;
const MSG: &[u8] = b"pre-fork server";

#[test]
fn a_child_of_a_process_that_initialised_cuda_says_why_and_still_signs() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "master", "--include-ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env("PQGPU_LOG", "1")
        .env_remove("PQGPU_BACKEND")
        .env("PQGPU_FORK_TEST_MASTER", "1")
        .output()
        .expect("run the master");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "master failed\n{stdout}\n{stderr}"
    );
    print!("{stdout}");
    // The child's GPU context failed with the reason on stderr (PQGPU_LOG=1), once.
    let said = "pqgpu: GPU unusable: CUDA initialised by parent process";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
}

/// A key pair, made on a CPU context.
fn keypair(ctx: &Ctx) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; pqg_public_key_len(ALG)];
    let mut sk = vec![0u8; pqg_secret_key_len(ALG)];
    let st = unsafe {
        pqg_mldsa_keygen(
            ctx.0,
            ALG,
            [7u8; 32].as_ptr(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    assert_eq!(st, PQG_OK);
    (pk, sk)
}

fn key(kind: pqg_key_kind, bytes: &[u8]) -> *mut pqg_key {
    let mut k = null_mut();
    assert_eq!(
        unsafe { pqg_key_new(ALG, kind, bytes.as_ptr(), bytes.len(), &mut k) },
        PQG_OK
    );
    k
}

/// A deterministic signature of [`MSG`] with `sk` on `ctx`: (status, signature).
fn sign(ctx: *mut pqg_context, sk: *const pqg_key) -> (pqg_status, Vec<u8>) {
    let mut sig = vec![0u8; pqg_signature_len(ALG)];
    let st = unsafe {
        pqg_mldsa_sign_key(
            ctx,
            sk,
            MSG.as_ptr(),
            MSG.len(),
            null(),
            0,
            [0u8; 32].as_ptr(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    };
    (st, sig)
}

fn verify(ctx: *mut pqg_context, pk: *const pqg_key, sig: &[u8]) -> pqg_status {
    unsafe {
        pqg_mldsa_verify_key(
            ctx,
            pk,
            MSG.as_ptr(),
            MSG.len(),
            null(),
            0,
            sig.as_ptr(),
            sig.len(),
        )
    }
}

/// The master's half (a fresh process with `PQGPU_LOG=1`; ignored unless run by the test).
#[test]
#[ignore = "run in a fresh process by the fork test"]
fn master() {
    assert!(
        std::env::var_os("PQGPU_FORK_TEST_MASTER").is_some(),
        "run by the fork test only"
    );
    // Loading: a CPU context with serving options, a key pair, handles, parameters, a
    // signature on the CPU. None of it reaches for the GPU.
    let cpu = Ctx::new(CPU).unwrap();
    assert_eq!(
        unsafe { pqg_context_set_option(cpu.0, PQG_OPT_CPU_CROSSOVER, 0) },
        PQG_OK
    );
    let (pk, sk) = keypair(&cpu);
    let (skh, pkh) = (key(PQG_KEY_SECRET, &sk), key(PQG_KEY_PUBLIC, &pk));
    assert!(pqg_signature_len(ALG) > 0);
    let (st, expected) = sign(cpu.0, skh);
    assert_eq!(st, PQG_OK);
    assert_eq!(
        pqgpu::gpu::cuda_initialised_by(),
        None,
        "loading keys initialised CUDA"
    );
    assert_eq!(
        pqgpu::gpu::unavailable_reason(),
        None,
        "loading keys reached for the GPU"
    );

    // GPU work in the master: real where a GPU is usable, else marked as it would be.
    let me = std::process::id();
    let gpu = match Ctx::new(GPU) {
        Ok(gpu) => {
            assert_eq!(sign(gpu.0, skh), (PQG_OK, expected.clone()));
            println!(
                "GPU work in the master: {}",
                gpu.describe().lines().next().unwrap()
            );
            Some(gpu)
        }
        Err(st) => {
            println!("no GPU (status {st}): the master's CUDA initialisation is simulated");
            pqgpu::gpu::simulate_cuda_initialised();
            None
        }
    };
    assert_eq!(pqgpu::gpu::cuda_initialised_by(), Some(me));

    // SAFETY: the child runs the checks below (no panics: failures are exit codes) and
    // leaves with _exit.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let code = child_checks(me, gpu.as_ref(), skh, pkh, &expected);
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child check {} failed (exit status {status:#x})",
        libc::WEXITSTATUS(status)
    );
    // The parent is undisturbed.
    assert_eq!(sign(cpu.0, skh), (PQG_OK, expected));
    unsafe {
        pqg_key_free(skh);
        pqg_key_free(pkh);
    }
}

/// In the child: every check, as an exit code (0: all passed).
fn child_checks(
    parent: u32,
    parent_gpu: Option<&Ctx>,
    skh: *const pqg_key,
    pkh: *const pqg_key,
    expected: &[u8],
) -> i32 {
    let named = format!("CUDA initialised by parent process {parent} before fork()");
    // The Rust API says why, before any context is made.
    match pqgpu::gpu::unavailable_reason() {
        Some(why) if why.starts_with(&named) => {}
        _ => return 10,
    }
    // AUTO: the CPU, and the description says why.
    let Ok(auto) = Ctx::new(AUTO) else { return 11 };
    let d = auto.describe();
    if unsafe { pqg_context_backend(auto.0) } != CPU
        || field(&d, "chosen_by") != Some("no usable gpu")
        || !field(&d, "gpu_unusable").is_some_and(|w| w.starts_with(&named))
    {
        return 12;
    }
    // ... and signs and verifies there (with the keys loaded before the fork).
    if sign(auto.0, skh) != (PQG_OK, expected.to_vec()) || verify(auto.0, pkh, expected) != PQG_OK {
        return 13;
    }
    // GPU: PQG_ERR_NO_DEVICE, twice (the log line is printed once).
    for _ in 0..2 {
        let mut c = std::ptr::dangling_mut::<pqg_context>();
        if unsafe { pqg_context_new(GPU, &mut c) } != PQG_ERR_NO_DEVICE || !c.is_null() {
            return 14;
        }
    }
    // A GPU context inherited from the parent: a status at once, never a hang.
    if let Some(g) = parent_gpu {
        let (st, _) = sign(g.0, skh);
        if st != PQG_ERR_NO_DEVICE {
            return 15;
        }
        if !field(&g.describe(), "gpu_unusable").is_some_and(|w| w.starts_with(&named)) {
            return 16;
        }
    }
    0
}
