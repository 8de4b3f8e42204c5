//! ML-DSA signing (FIPS 204 Alg. 2/4/7) on the GPU, with dynamic scheduling of the
//! rejection loop: each round gives every unfinished task one attempt, or several
//! consecutive attempts once few tasks remain (so otherwise idle units compute later
//! kappas); the smallest successful attempt wins, so the signature is exactly FIPS 204's.

use super::kernels::{Kernels, CM_WORDS};
use super::keys::{DeviceKeys, KeyIndex};
use super::message::Regions;
use crate::backend::SignItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Most attempts one task gets in one round.
const MAX_SPEC: usize = 32;

/// Status codes written by `sign_decode` / `sign_schedule`.
const ST_OK: u32 = 0;
const ST_BADKEY: u32 = 1;
/// The task reached the attempt bound (`MAX_ATTEMPTS`, FIPS 204 Appendix C): `BadKey`.
const ST_GAVEUP: u32 = 2;

/// Signs `n` tasks on the device: the distinct secret keys (`sks`: rows of sk_len, and each
/// task's index) and K || rnd || mu (n * 128). Each key is decoded and expanded once. Each
/// round runs at least `fill` attempts (speculating when few tasks remain).
/// Returns the signatures (n * sig_stride bytes) and statuses on the device.
pub fn sign_dev(
    w: &mut Worker,
    k: &Kernels,
    n: usize,
    sks: DeviceKeys,
    kin: Dev<u8>,
    fill: usize,
) -> Result<(Dev<u8>, Dev<u32>), DriverError> {
    let g = &k.g;
    let (keys, sk, kidx) = (sks.count, sks.rows, sks.idx);
    let (kk, l) = (g.k, g.l);
    let cap = n.max(fill);
    let rhopp = w.dev("sg_rhopp", n * 64)?;
    let a = w.dev("a_hat", keys * kk * l * 256)?;
    let s1h = w.dev("sg_s1h", keys * l * 256)?;
    let s2h = w.dev("sg_s2h", keys * kk * 256)?;
    let t0h = w.dev("sg_t0h", keys * kk * 256)?;
    let kbad = w.dev("sg_kbad", keys)?;
    let status = w.dev("sg_status", n)?;
    let best = w.dev("sg_best", n)?;
    let next = w.dev("sg_next", n)?;
    // The counters: entries this round, tasks done this round, bad keys, padding.
    let ctr: Dev<u32> = w.dev("sg_ctr", 4)?;
    let sig = w.dev("sg_sig", n * g.sig_stride)?;
    let et = w.dev("sg_ent_task", cap)?;
    let ea = w.dev("sg_ent_att", cap)?;
    let y = w.dev("sg_y", cap * l * 256)?;
    let wv = w.dev("sg_w", cap * kk * 256)?;
    let hbuf = w.dev("sg_hbuf", cap * g.hbuf_len)?;
    let ctilde = w.dev("sg_ctilde", cap * 64)?;
    let c = w.dev("sg_c", cap * CM_WORDS)?; // SampleInBall masks
    let ok = w.dev("sg_ok", cap)?;
    let slot = w.dev("sg_slot", cap * g.sig_stride)?;
    let (count, done, nbad) = (ctr, ctr.add(1), ctr.add(2));

    w.zero(ctr, 4)?;
    k.sign_rhopp(w, kin, rhopp, n)?;
    k.expand_a(w, sk, g.sk_len, a, keys)?;
    k.sign_decode(w, sk, s1h, s2h, t0h, kbad, keys)?;
    k.sign_init(w, kbad, kidx, status, best, next, nbad, n)?;
    let mut host_ctr = w.take_host("sg_ctr", 16)?;
    let hc = host_ctr.bytes()?;
    w.dtoh(&mut hc[..16], ctr)?;
    w.sync()?;
    let mut pending = n - read_u32(hc, 8) as usize;
    // Every round moves each pending task at least one attempt on, and `sign_schedule`
    // retires tasks at the bound, so all are done within bound + 1 rounds. Past that (a
    // kernel fault) one round with spec 0 retires whatever is left as gave-up: the loop
    // ends whatever the device reports.
    let max_rounds = crate::mldsa::max_sign_attempts(l) as usize + 1;
    let mut rounds = 0;
    while pending > 0 {
        rounds += 1;
        let spec = if rounds > max_rounds {
            0
        } else {
            (cap / pending).clamp(1, MAX_SPEC)
        };
        let m = pending * spec;
        w.zero(ctr, 2)?;
        k.sign_schedule(w, status, best, next, et, ea, count, done, spec as u32, n)?;
        if spec == 0 {
            break;
        }
        k.expand_mask(w, m, rhopp, et, ea, count, y)?;
        k.sign_w(w, m, a, kidx, kin, y, et, count, wv, hbuf)?;
        k.sign_challenge(w, m, hbuf, count, ctilde, c)?;
        k.sign_z(
            w, m, kidx, s1h, s2h, t0h, y, wv, ctilde, c, et, ea, count, best, done, ok, slot,
        )?;
        k.sign_commit(w, m, et, ea, count, best, ok, slot, sig)?;
        w.dtoh(&mut hc[..8], ctr)?;
        w.sync()?;
        pending -= read_u32(hc, 4) as usize;
    }
    Ok((sig, status))
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// One chunk end to end. Items that fail the host checks (lengths, message shape) get their
/// error without reaching the GPU. Items sharing a key slice (a key handle) send and expand
/// it once. Distinct secret keys in registered memory, evenly spaced (a caller's key array),
/// are copied to the device by one DMA, and signatures into registered rows are written by the
/// device, skipping the host staging copies; a failed item's signature row is then zeroed.
pub fn sign_chunk(
    w: &mut Worker,
    k: &Kernels,
    fill: usize,
    reg: &Ranges,
    items: &[SignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), DriverError> {
    let g = &k.g;
    let mut idx = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        statuses[i] = if it.sk.len() != g.sk_len || sigs[i].len() != g.sig_len {
            Err(Error::BadLength)
        } else {
            g.variant.message(&it.msg).map(drop)
        };
        if statuses[i].is_ok() {
            idx.push(i);
        }
    }
    let m = idx.len();
    if m == 0 {
        return Ok(());
    }
    let ki = KeyIndex::of(idx.iter().map(|&i| items[i].sk));
    let nk = ki.keys.len();
    // Shared keys are staged on the host (a few rows); a caller's array of distinct keys
    // goes by DMA when registered and evenly spaced.
    let sk_rows = if ki.all_distinct() {
        Rows::registered(reg, g.sk_len, ki.keys.iter().map(|&s| Some(s)))
            .filter(|r| r.is_dma(&k.io))
    } else {
        None
    };
    let sig_rows = Rows::registered(reg, g.sig_len, idx.iter().map(|&i| Some(&*sigs[i])));
    let staged_sk = if sk_rows.is_some() { 0 } else { nk * g.sk_len };
    let staged_sig = if sig_rows.is_some() {
        0
    } else {
        m * g.sig_stride
    };
    let regions = Regions::of(g.variant, idx.iter().map(|&i| &items[i].msg));
    let mut sk_stage = w.take_host("sg_sk_stage", staged_sk.max(8))?;
    let mut kin_stage = w.take_host("sg_kin_stage", m * 132 + regions.host_bytes())?;
    let mut out = w.take_host("sg_out", staged_sig + m * 4)?;
    w.start_chunk(ChunkOp::MlDsaSign);
    let sk_h = &mut sk_stage.bytes()?[..staged_sk];
    let (kin_h, rest) = kin_stage.bytes()?.split_at_mut(m * 128);
    let (kidx_h, msg_h) = rest.split_at_mut(m * 4);
    for (d, s) in kidx_h.chunks_exact_mut(4).zip(ki.idx_bytes()) {
        d.copy_from_slice(&s);
    }
    // Hedged items draw their rnd in one OS call for the chunk (one syscall per item
    // cost more than the rest of the host work).
    let hedged = idx.iter().filter(|&&i| items[i].rnd.is_none()).count();
    let mut fresh = zeroize::Zeroizing::new(vec![0u8; hedged * 32]);
    let rng_ok = crate::rng::fill_bulk(&mut fresh).is_ok();
    let mut fresh_at = Vec::with_capacity(m);
    let mut next = 0;
    for &i in &idx {
        fresh_at.push(next);
        if items[i].rnd.is_none() {
            next += 32;
        }
    }
    // kin = K || rnd || mu per item: the host writes rnd; `sign_mu` takes K and tr from
    // the device's copy of sk and hashes mu (computing mu on the host held the chunk's
    // GPU work back by the staging time).
    kin_h
        .par_chunks_mut(128)
        .zip(idx.par_iter().zip(fresh_at.par_iter()))
        // 32-byte copies: sixteen times the rows of a kilobyte-row task.
        .with_min_len(ROWS_PER_TASK * 16)
        .for_each(|(kb, (&i, &at))| match items[i].rnd {
            Some(r) => kb[32..64].copy_from_slice(r),
            None => kb[32..64].copy_from_slice(&fresh[at..at + 32]),
        });
    let sk_d = w.dev("sg_sk_in", nk * g.sk_len)?;
    let kin_d = w.dev("sg_kin", m * 128)?;
    let kidx_d = w.dev("sg_kidx", m)?;
    match &sk_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, sk_d, g.sk_len, "sg_sk_rows")?,
        None => {
            sk_h.par_chunks_mut(g.sk_len)
                .zip(ki.keys.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(skb, key)| skb.copy_from_slice(key));
            w.htod(sk_d, sk_h)?;
        }
    }
    w.htod(kin_d, kin_h)?;
    w.htod(kidx_d, kidx_h)?;
    let msgs = regions.stage(w, idx.iter().map(|&i| &items[i].msg), msg_h)?;
    k.sign_mu(w, sk_d, kidx_d, msgs.arena, msgs.off, msgs.len, kin_d, m)?;
    w.end_phase(Phase::Staging);
    let sks = DeviceKeys {
        count: nk,
        rows: sk_d,
        idx: kidx_d,
    };
    let (sig_d, status_d) = sign_dev(w, k, m, sks, kin_d, fill)?;
    let o = out.bytes()?;
    let (o_sig, o_st) = o.split_at_mut(staged_sig);
    let o_st = &mut o_st[..m * 4];
    match &sig_rows {
        Some(rows) => hostio::scatter(w, &k.io, sig_d, g.sig_stride, rows, "sg_sig_rows")?,
        None => w.dtoh(o_sig, sig_d)?,
    }
    w.dtoh(o_st, status_d)?;
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    // Secrets do not stay in the staging buffers.
    sk_h.par_chunks_mut(1 << 16).for_each(|c| c.fill(0));
    kin_h.fill(0);
    let mut pos = vec![usize::MAX; items.len()];
    for (j, &i) in idx.iter().enumerate() {
        pos[i] = j;
    }
    let (o_sig, o_st) = (&*o_sig, &*o_st);
    let direct = sig_rows.is_some();
    sigs.par_iter_mut()
        .zip(statuses.par_iter_mut())
        .zip(pos.par_iter())
        .with_min_len(ROWS_PER_TASK)
        .filter(|(_, &j)| j != usize::MAX)
        .for_each(|((sig, st), &j)| {
            *st = match read_u32(o_st, 4 * j) {
                _ if !rng_ok && items[idx[j]].rnd.is_none() => Err(Error::Rng),
                ST_OK => Ok(()),
                ST_BADKEY | ST_GAVEUP => Err(Error::BadKey),
                _ => Err(Error::Device),
            };
            match (&*st, direct) {
                (Ok(()), false) => {
                    let at = j * g.sig_stride;
                    sig.copy_from_slice(&o_sig[at..at + g.sig_len]);
                }
                // The device wrote this row; nothing of a failed attempt stays there.
                (Err(_), true) => sig.fill(0),
                _ => {}
            }
        });
    w.end_phase(Phase::Unpacking);
    Ok(())
}
