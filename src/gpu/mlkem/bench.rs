//! Kernel-only throughput: keys, messages and ciphertexts made resident on the device first
//! (by the kernels themselves), then the operation timed with CUDA events (median of three runs
//! after a warm-up). The decapsulated shared secrets must equal the encapsulated ones, or the
//! figure is refused.

use super::kernels::Kernels;
use crate::gpu::device;
use crate::gpu::engine::DeviceEngine;
use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use crate::Error;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::DriverError;

/// What to time. `Encaps` and `Decaps` have a key per item (each key checked and its Â
/// expanded in the timed run, as a chunk of distinct keys does); the `OneKey` forms share one
/// key whose device state is already made (a server's key kept between chunks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KemOp {
    Keygen,
    Encaps,
    Decaps,
    EncapsOneKey,
    DecapsOneKey,
}

/// Items measured at most (device memory for Â per item stays a few GB).
const MAX_RESIDENT: usize = 1 << 17;

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
    /// Items whose decapsulated secret differs from the encapsulated one.
    mismatched: usize,
}

fn measure(w: &mut Worker, k: &Kernels, op: KemOp, n: usize) -> Result<Run, DriverError> {
    let s = k.s;
    let one = matches!(op, KemOp::EncapsOneKey | KemOp::DecapsOneKey);
    let nkeys = if one { 1 } else { n };
    let seeds = w.dev("mlkem_b_seeds", n * 64)?;
    let rs = w.dev("mlkem_b_rs", n * 64)?;
    let ek = w.dev("mlkem_b_ek", n * s.ek)?;
    let dk = w.dev("mlkem_b_dk", n * s.dk)?;
    let msgs = w.dev("mlkem_b_m", n * 32)?;
    let hek = w.dev("mlkem_b_hek", n * 32)?;
    let ok: Dev<u32> = w.dev("mlkem_b_ok", n)?;
    let amat: Dev<u16> = w.dev("mlkem_b_amat", nkeys * s.k * s.k * 256)?;
    let ct = w.dev("mlkem_b_ct", n * s.ct)?;
    let ss = w.dev("mlkem_b_ss", n * 32)?;
    let ss2 = w.dev("mlkem_b_ss2", n * 32)?;
    let idx: Dev<u32> = w.dev("mlkem_b_idx", n)?;
    let mut stage = w.take_host("mlkem_b_stage", n * 64)?;
    let host = &mut stage.bytes()?[..n * 64];
    host.copy_from_slice(&filler(n * 64, 0x203));
    w.htod(seeds, host)?;
    w.zero(idx, n)?;
    let idx = if one { idx } else { Dev::null() };
    let key_gen = |w: &mut Worker| k.keygen(w, seeds, rs, (ek, dk), n);
    let ek_state = |w: &mut Worker| -> Result<(), DriverError> {
        k.ek_prep(w, ek, nkeys, hek, ok)?;
        k.expand_a(w, ek.add(s.t_len()), s.ek, nkeys, amat)
    };
    let dk_state = |w: &mut Worker| -> Result<(), DriverError> {
        k.dk_prep(w, dk, nkeys, ok)?;
        k.expand_a(w, dk.add(2 * s.t_len()), s.dk, nkeys, amat)
    };
    let enc = |w: &mut Worker| k.encaps(w, msgs, idx, (ek, hek, amat), ct, ss, n);
    // As a chunk runs it: the verdicts read on the device unless the key is kept (one key).
    let verdicts = if one { Dev::null() } else { ok };
    let dec = |w: &mut Worker| k.decaps(w, ct, idx, (dk, amat, verdicts), ss2, n);
    // Inputs: keys, messages (GPU-drawn), ciphertexts.
    key_gen(w)?;
    let coin_key = filler(32, 0x5EED);
    let d_key = w.dev("mlkem_b_coin_key", 32)?;
    w.htod(d_key, &coin_key)?;
    k.coins(w, d_key, msgs, n)?;
    ek_state(w)?;
    enc(w)?;
    w.sync()?;
    let seconds = match op {
        KemOp::Keygen => time(w, key_gen)?,
        KemOp::Encaps => time(w, |w| {
            ek_state(w)?;
            enc(w)
        })?,
        KemOp::EncapsOneKey => time(w, enc)?,
        KemOp::Decaps => time(w, |w| {
            dk_state(w)?;
            dec(w)
        })?,
        KemOp::DecapsOneKey => {
            dk_state(w)?;
            time(w, dec)?
        }
    };
    // The check: decapsulate what was encapsulated (under the one key, or each item's).
    dk_state(w)?;
    dec(w)?;
    let mut out = vec![0u8; 2 * n * 32];
    let (a, b) = out.split_at_mut(n * 32);
    w.dtoh(a, ss)?;
    w.dtoh(b, ss2)?;
    w.sync()?;
    let mismatched = a
        .chunks_exact(32)
        .zip(b.chunks_exact(32))
        .filter(|(x, y)| x != y)
        .count();
    host.fill(0);
    Ok(Run {
        seconds,
        mismatched,
    })
}

/// Kernel-only ops/s of `op` on `n` items (clamped to 1..=131072) on the first worker of `e`.
pub fn kernel_throughput(e: &DeviceEngine, k: &Kernels, op: KemOp, n: usize) -> Result<f64, Error> {
    let mut w = e.workers[0].lock().unwrap_or_else(|e| e.into_inner());
    let n = n.clamp(1, MAX_RESIDENT);
    w.plan(n, n);
    let r = measure(&mut w, k, op, n).map_err(device::device_error)?;
    if r.mismatched > 0 {
        device::log(&format!(
            "mlkem kernel_throughput: {} of {n} decapsulations differ from their encapsulation",
            r.mismatched
        ));
        return Err(Error::Device);
    }
    Ok(n as f64 / r.seconds)
}
