//! Kernel-only throughput: keys, jobs and signatures made resident on the device first (by the
//! kernels themselves), then the operation timed with CUDA events (median of three runs after a
//! warm-up). Every signature of the timed signing must verify on the GPU, or the figure is
//! refused. And the two ceilings the SLH-DSA figures are set against: SHA-256 compressions and
//! Keccak-f[1600] permutations per second on one device.

use super::kernels::{job_row, Kernels, CTX_BYTES, JOB_BYTES};
use crate::gpu::device;
use crate::gpu::engine::DeviceEngine;
use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use crate::Error;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::DriverError;

/// What to time. `Sign` has a key per item; `SignOneKey` one key whose top-tree leaves are
/// already built (a key handle's batch after its first chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlhOp {
    Keygen,
    Sign,
    SignOneKey,
    Verify,
}

/// Median seconds of `f` over three runs after one warm-up.
fn time<F>(w: &mut Worker, mut f: F) -> Result<f64, DriverError>
where
    F: FnMut(&mut Worker) -> Result<(), DriverError>,
{
    f(w)?;
    w.sync()?;
    let mut times = Vec::new();
    for _ in 0..3 {
        let start = w.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = w.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        start.record(&w.stream)?;
        f(w)?;
        end.record(&w.stream)?;
        end.synchronize()?;
        times.push(start.elapsed_ms(&end)? as f64 / 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}

/// Deterministic filler bytes (xorshift), so the benchmark needs no OS randomness.
fn filler(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

struct Run {
    seconds: f64,
    /// Signatures the GPU's verification rejected.
    rejected: usize,
}

/// `rows` repeated to `len` bytes.
fn repeat(rows: &[u8], len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        let k = rows.len().min(len - v.len());
        v.extend_from_slice(&rows[..k]);
    }
    v
}

/// Items per batch whose signatures are made for verification (and for keygen's check): at
/// most one GPU-filling signing batch (the s sets sign a few thousand per second), repeated
/// over the items with their jobs and keys.
fn signed_for_check(k: &Kernels, n: usize) -> usize {
    n.min(((1usize << 21) / (k.s.q.d << k.s.q.hp)).max(1))
}

fn measure(w: &mut Worker, k: &Kernels, op: SlhOp, n: usize) -> Result<Run, DriverError> {
    let s = k.s;
    let (nb, q) = (s.n, s.q);
    let one = op == SlhOp::SignOneKey;
    let ns = signed_for_check(k, n);
    // Keys made before the timing, and items signed (their trees' buffers sized for them).
    let (made, signed) = match op {
        SlhOp::Keygen => (n, ns),
        SlhOp::Sign | SlhOp::SignOneKey => (n, n),
        SlhOp::Verify => (ns, ns),
    };
    let seeds = w.dev("slh_b_seeds", n * 3 * nb)?;
    let ctx = w.dev("slh_b_ctx", n * CTX_BYTES)?;
    let kleaves = w.dev("slh_b_kleaves", made * s.leaves * nb)?;
    let pk = w.dev("slh_b_pk", n * 2 * nb)?;
    let sk = w.dev("slh_b_sk", n * 4 * nb)?;
    let jobs = w.dev("slh_b_jobs", n * JOB_BYTES)?;
    let groots = w.dev("slh_b_groots", signed * q.k * s.groups * nb)?;
    let roots = w.dev("slh_b_roots", signed * q.k * nb)?;
    let pkf = w.dev("slh_b_pkf", signed * nb)?;
    let leaves = w.dev("slh_b_leaves", signed * q.d * s.leaves * nb)?;
    let htroots = w.dev("slh_b_htroots", signed * q.d * nb)?;
    let sigs = w.dev("slh_b_sigs", n * s.sig)?;
    let ok: Dev<u32> = w.dev("slh_b_ok", n)?;
    // Inputs: seeds, and jobs of random digests (key i for item i, or key 0).
    let mut host = filler(n * 3 * nb, 0x205);
    w.htod(seeds, &host)?;
    let digests = filler(n * q.m, 0xD16);
    let rs = filler(n * nb, 0x1234);
    let mut job_h = vec![0u8; n * JOB_BYTES];
    for (i, row) in job_h.chunks_exact_mut(JOB_BYTES).enumerate() {
        let key = if one { 0 } else { i as u32 };
        let d = &digests[i * q.m..(i + 1) * q.m];
        job_row(&q, d, key, &rs[i * nb..(i + 1) * nb], row);
    }
    w.htod(jobs, &job_h)?;
    let key_gen = |w: &mut Worker, m: usize| -> Result<(), DriverError> {
        k.prep(w, seeds, 3 * nb, (0, 2 * nb), ctx, m)?;
        k.keygen_leaves(w, ctx, kleaves, m)?;
        k.keygen_top(w, seeds, ctx, kleaves, (pk, sk), m)
    };
    // The trees of the first m items, and signing them from the secret keys.
    let trees = |w: &mut Worker, m: usize| -> Result<(), DriverError> {
        k.fors_leaves(w, jobs, ctx, groots, sigs, m)?;
        k.fors_top(w, jobs, ctx, (groots, roots), sigs, m)?;
        k.fors_pk(w, jobs, ctx, (roots, pkf), sigs, m)?;
        k.ht_leaves(w, jobs, ctx, leaves, q.d - 1, m)?;
        k.ht_top(w, jobs, ctx, (leaves, kleaves), htroots, sigs, m)?;
        k.wots_sign(w, jobs, ctx, (pkf, htroots), sigs, m)
    };
    let sign = |w: &mut Worker, m: usize| -> Result<(), DriverError> {
        let keys = if one { 1 } else { m };
        k.prep(w, sk, 4 * nb, (0, 2 * nb), ctx, keys)?;
        k.keygen_leaves(w, ctx, kleaves, keys)?;
        trees(w, m)
    };
    let verify = |w: &mut Worker, m: usize| k.verify(w, jobs, pk, (sigs, s.sig), ok, m);
    key_gen(w, made)?;
    sign(w, signed)?;
    w.sync()?;
    let mut pk_h = vec![0u8; made * 2 * nb];
    w.dtoh(&mut pk_h, pk)?;
    w.sync()?;
    if op == SlhOp::Verify && ns < n {
        let mut sig_h = vec![0u8; ns * s.sig];
        w.dtoh(&mut sig_h, sigs)?;
        w.sync()?;
        w.htod(sigs, &repeat(&sig_h, n * s.sig))?;
        w.htod(pk, &repeat(&pk_h, n * 2 * nb))?;
        w.htod(jobs, &repeat(&job_h[..ns * JOB_BYTES], n * JOB_BYTES))?;
        w.sync()?;
    }
    let seconds = match op {
        SlhOp::Keygen => time(w, |w| key_gen(w, n))?,
        SlhOp::Sign => time(w, |w| sign(w, n))?,
        // The key's context and top-tree leaves are built by the untimed signing above.
        SlhOp::SignOneKey => time(w, |w| trees(w, n))?,
        SlhOp::Verify => time(w, |w| verify(w, n))?,
    };
    // The check: the GPU verifies what it signed (under the one key, or each item's; after
    // keygen the first ns items, whose keys it made again). With one key, every item's pk row
    // must be key 0's: the signing used key 0.
    if one {
        host = repeat(&pk_h[..2 * nb], n * 2 * nb);
        w.htod(pk, &host)?;
    }
    let checked = if op == SlhOp::Keygen { ns } else { n };
    verify(w, checked)?;
    let mut out = vec![0u8; checked * 4];
    w.dtoh(&mut out, ok)?;
    w.sync()?;
    let rejected = out.chunks_exact(4).filter(|x| *x != [1, 0, 0, 0]).count();
    Ok(Run { seconds, rejected })
}

/// Kernel-only ops/s of `op` on `n` items (clamped to 1..=`max`) on the first worker of `e`.
pub fn kernel_throughput(e: &DeviceEngine, k: &Kernels, op: SlhOp, n: usize) -> Result<f64, Error> {
    let mut w = e.workers[0].lock().unwrap_or_else(|e| e.into_inner());
    // Device memory stays a few GB at most: a signed item holds its signature and its d * 2^h'
    // WOTS+ keys, a verified one (signatures repeated, see `measure`) its signature alone.
    let max = if op == SlhOp::Verify {
        (1usize << 33) / (k.s.sig + 4096)
    } else {
        (1usize << 31) / (k.s.sig + k.s.q.d * k.s.leaves * k.s.n + 4096)
    };
    let n = n.clamp(1, max.max(1));
    w.plan(n, n);
    let r = measure(&mut w, k, op, n).map_err(device::device_error)?;
    if r.rejected > 0 {
        device::log(&format!(
            "slhdsa kernel_throughput: {} of {n} signatures failed the GPU's verification",
            r.rejected
        ));
        return Err(Error::Device);
    }
    Ok(n as f64 / r.seconds)
}

/// One device's hash ceilings, per second.
#[derive(Clone, Copy, Debug)]
pub struct Ceilings {
    pub sha256_compressions: f64,
    pub keccak_permutations: f64,
}

/// SHA-256 compressions and Keccak-f[1600] permutations per second on `e`'s device: chained
/// compressions (permutations) in every thread of a grid several times the device's size.
pub fn hash_ceilings(e: &DeviceEngine, k: &Kernels) -> Result<Ceilings, Error> {
    let mut w = e.workers[0].lock().unwrap_or_else(|e| e.into_inner());
    let run = |w: &mut Worker| -> Result<Ceilings, DriverError> {
        let threads = 1usize << 20;
        let iters = 256u32;
        let out32: Dev<u32> = w.dev("slh_b_ceil32", threads * 8)?;
        let out64: Dev<u64> = w.dev("slh_b_ceil64", threads * 4)?;
        let sha = time(w, |w| k.bench_sha256(w, out32, iters, threads))?;
        let kec = time(w, |w| k.bench_keccak(w, out64, iters, threads))?;
        let total = threads as f64 * iters as f64;
        Ok(Ceilings {
            sha256_compressions: total / sha,
            keccak_permutations: total / kec,
        })
    };
    run(&mut w).map_err(device::device_error)
}
