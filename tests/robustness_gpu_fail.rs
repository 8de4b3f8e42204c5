//! A GPU failure injected in the middle of a signing batch, through the C ABI: the failed
//! chunks move to the CPU, every item ends with the status and signature that one-at-a-time
//! CPU calls give (nothing half-written, also for BAD_KEY items), and later batches on the
//! now-failed device still complete. Its own test binary: the injection is configured before
//! the process's GPU backend opens. Skips where no GPU is usable.

mod common;

use pqgpu::ffi::*;
use std::ptr::{null, null_mut};

const ALG: pqg_alg = PQG_ML_DSA_44;

fn keypair(ctx: *mut pqg_context, seed: u8) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; pqg_public_key_len(ALG)];
    let mut sk = vec![0u8; pqg_secret_key_len(ALG)];
    let st = unsafe {
        pqg_mldsa_keygen(
            ctx,
            ALG,
            [seed; 32].as_ptr(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    assert_eq!(st, PQG_OK);
    (pk, sk)
}

fn sign_batch(
    ctx: *mut pqg_context,
    items: &[(Vec<u8>, [u8; 32])],
    msg: &[u8],
) -> (Vec<pqg_status>, Vec<Vec<u8>>) {
    let mut sigs = vec![vec![0xC5u8; pqg_signature_len(ALG)]; items.len()];
    let reqs: Vec<pqg_sign_request> = items
        .iter()
        .zip(sigs.iter_mut())
        .map(|((sk, rnd), sig)| pqg_sign_request {
            sk: sk.as_ptr(),
            msg: msg.as_ptr(),
            msg_len: msg.len(),
            context: null(),
            context_len: 0,
            rnd: rnd.as_ptr(),
            sig: sig.as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![12345; items.len()];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_sign_submit(
            ctx,
            ALG,
            reqs.as_ptr(),
            reqs.len(),
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    assert_eq!(
        unsafe { pqg_job_wait(job, 300_000) },
        PQG_OK,
        "the batch never completed"
    );
    unsafe { pqg_job_free(job) };
    (statuses, sigs)
}

#[test]
fn gpu_failure_mid_batch_still_gives_every_item_its_cpu_result() {
    // Small chunks, and the device "fails" after its third signing chunk.
    std::env::set_var("PQGPU_GPU_CHUNK", "64");
    std::env::set_var("PQGPU_GPU_FAIL_AFTER", "3");
    let mut gpu = null_mut();
    let st =
        unsafe { pqg_context_new(pqg_backend_values::PQG_BACKEND_GPU as pqg_backend, &mut gpu) };
    if st != PQG_OK {
        common::ffi::print_gpu_skip(st);
        return;
    }
    let mut cpu = null_mut();
    assert_eq!(
        unsafe { pqg_context_new(pqg_backend_values::PQG_BACKEND_CPU as pqg_backend, &mut cpu) },
        PQG_OK
    );
    let keys: Vec<(Vec<u8>, Vec<u8>)> = (0..16).map(|i| keypair(cpu, i)).collect();
    let mut malformed = keys[0].1.clone();
    malformed[128] = 0xff;
    let msg = b"injected";
    let mut items: Vec<(Vec<u8>, [u8; 32])> = (0..1024usize)
        .map(|i| (keys[i % 16].1.clone(), [(i / 16) as u8; 32]))
        .collect();
    items[100] = (malformed.clone(), [0; 32]);
    items[700] = (malformed, [0; 32]);
    for round in 0..2 {
        let (statuses, sigs) = sign_batch(gpu, &items, msg);
        for (i, (sk, rnd)) in items.iter().enumerate() {
            let mut one = vec![0xC5u8; pqg_signature_len(ALG)];
            let st = unsafe {
                pqg_mldsa_sign(
                    cpu,
                    ALG,
                    sk.as_ptr(),
                    sk.len(),
                    msg.as_ptr(),
                    msg.len(),
                    null(),
                    0,
                    rnd.as_ptr(),
                    one.as_mut_ptr(),
                    one.len(),
                )
            };
            assert_eq!(statuses[i], st, "round {round}, item {i}: status");
            assert_eq!(sigs[i], one, "round {round}, item {i}: signature");
        }
        println!("round {round}: 1024 items, all as on the CPU");
    }
    unsafe {
        pqg_context_free(gpu);
        pqg_context_free(cpu);
    }
}
