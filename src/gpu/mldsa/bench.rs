//! Kernel-only throughput: inputs made resident on the device first, then the operation timed
//! with CUDA events (median of three runs after a warm-up).

use super::kernels::Kernels;
use super::keys::DeviceKeys;
use super::message::Regions;
use super::{keygen, sign, verify, Op};
use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use crate::mldsa::{Message, ParamSet};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::DriverError;
use std::collections::HashMap;

/// Median seconds of `f` over three runs after one warm-up (which also sizes the buffers).
fn time<F>(w: &mut Worker, mut f: F) -> Result<f64, DriverError>
where
    F: FnMut(&mut Worker) -> Result<(), DriverError>,
{
    f(w)?;
    w.sync()?;
    if w.profile.is_some() {
        w.profile = Some(HashMap::new());
    }
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
    if let Some(prof) = w.profile.take() {
        let mut rows: Vec<_> = prof.into_iter().collect();
        rows.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0));
        for (name, (ms, count)) in rows {
            eprintln!(
                "profile {name:16} {:9.3} ms per run, {count} launches",
                ms / times.len() as f64
            );
        }
        w.profile = Some(HashMap::new());
    }
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

/// Copies `data` into the device buffer `name` through the worker's pinned staging buffer.
/// (Not straight from the pageable Vec: a heap block may share its first page with a buffer
/// the caller registered, and the driver rejects a DMA that runs past a registration.)
fn upload(w: &mut Worker, name: &'static str, data: &[u8]) -> Result<Dev<u8>, DriverError> {
    let d = w.dev(name, data.len())?;
    let mut h = w.take_host("bn_stage", data.len())?;
    let s = &mut h.bytes()?[..data.len()];
    s.copy_from_slice(data);
    w.htod(d, s)?;
    w.sync()?;
    Ok(d)
}

/// Copies `out.len()` bytes from device address `src` into `out`, through pinned staging.
fn download<T>(w: &mut Worker, src: Dev<T>, out: &mut [u8]) -> Result<(), DriverError> {
    let mut h = w.take_host("bn_stage", out.len())?;
    let s = &mut h.bytes()?[..out.len()];
    w.dtoh(s, src)?;
    w.sync()?;
    out.copy_from_slice(s);
    Ok(())
}

/// A kernel-only figure: ops/s, and how many of the benchmark's own signatures failed to verify
/// (always 0 for keygen and sign; any other count makes the figure worthless).
pub struct Measured {
    pub ops_per_s: f64,
    pub unverified: usize,
}

pub fn throughput(
    w: &mut Worker,
    k: &Kernels,
    p: ParamSet,
    op: Op,
    n: usize,
) -> Result<Measured, DriverError> {
    let done = |secs: f64, unverified| Measured {
        ops_per_s: n as f64 / secs,
        unverified,
    };
    let g = k.g;
    let seeds = filler(n * 32, 1);
    let xi = upload(w, "bn_xi", &seeds)?;
    if op == Op::Keygen {
        let secs = time(w, |w| keygen::keygen_dev(w, k, n, xi).map(|_| ()))?;
        return Ok(done(secs, 0));
    }
    let (pk, sk) = keygen::keygen_dev(w, k, n, xi)?;
    let mut sk_h = vec![0u8; n * g.sk_len];
    download(w, sk, &mut sk_h)?;
    // 32-byte messages, pure ML-DSA with an empty context (round 3: the message alone),
    // deterministic signing.
    let msgs = filler(n * 32, 2);
    let msgs: Vec<Message> = msgs
        .chunks(32)
        .map(|m| Message::Pure { ctx: &[], msg: m })
        .collect();
    let mut kin_h = vec![0u8; n * 128];
    for (i, kb) in kin_h.chunks_mut(128).enumerate() {
        let s = &sk_h[i * g.sk_len..(i + 1) * g.sk_len];
        kb[..32].copy_from_slice(&s[32..64]);
        let m = g.variant.message(&msgs[i]).expect("a pure message");
        kb[64..].copy_from_slice(&m.mu(&s[64..64 + p.tr_len()]));
    }
    let kin = upload(w, "bn_kin", &kin_h)?;
    // Every item has its own key.
    let ident: Vec<u8> = (0..n as u32).flat_map(u32::to_le_bytes).collect();
    let idx = upload(w, "bn_kidx", &ident)?.cast::<u32>();
    let (sks, pks) = (
        DeviceKeys {
            count: n,
            rows: sk,
            idx,
        },
        DeviceKeys {
            count: n,
            rows: pk,
            idx,
        },
    );
    if op == Op::Sign {
        let secs = time(w, |w| {
            sign::sign_dev(w, k, n, sks, kin, crate::gpu::config::SIGN_FILL).map(|_| ())
        })?;
        return Ok(done(secs, 0));
    }
    let (sig, _) = sign::sign_dev(w, k, n, sks, kin, crate::gpu::config::SIGN_FILL)?;
    // The message regions as verification stages them (the kernels rewrite only tr).
    let regions = Regions::of(g.variant, msgs.iter());
    let mut staged = vec![0u8; regions.host_bytes()];
    let d = regions.stage(w, msgs.iter(), &mut staged)?;
    w.sync()?;
    let mut res = Dev::null();
    let secs = time(w, |w| {
        res = verify::verify_dev(w, k, n, pks, sig, &d)?;
        Ok(())
    })?;
    // A cheap guard: the benchmark's own signatures must all verify.
    let mut out = vec![0u8; n * 4];
    download(w, res, &mut out)?;
    let bad = out.chunks(4).filter(|c| *c != [0, 0, 0, 0]).count();
    Ok(done(secs, bad))
}
