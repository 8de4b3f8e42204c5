//! ML-DSA signing (FIPS 204 Alg. 2/4/7) on the GPU, with dynamic scheduling of the
//! rejection loop: each round gives every unfinished task one attempt, or several
//! consecutive attempts once few tasks remain (so otherwise idle units compute later
//! kappas); the smallest successful attempt wins, so the signature is exactly FIPS 204's.

use super::hostio::{self, Rows};
use super::hostmem::Ranges;
use super::message::Regions;
use super::module::Kernels;
use super::worker::{Arg::*, Worker};
use super::{blocks, Geometry, BLOCK_POLY, BLOCK_STREAM};
use crate::backend::SignItem;
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Attempts in flight per round at least: enough to fill the H200 when few tasks remain.
const MIN_ENTRIES: usize = 16384;
/// Most attempts one task gets in one round.
const MAX_SPEC: usize = 32;

/// Status codes written by `sign_decode` / `sign_schedule`.
const ST_OK: u32 = 0;
const ST_BADKEY: u32 = 1;
/// The task reached the attempt bound (`MAX_ATTEMPTS`, FIPS 204 Appendix C): `BadKey`.
const ST_GAVEUP: u32 = 2;

/// Signs `n` tasks whose secret keys (n * sk_len) and K || rnd || mu (n * 128) are on the
/// device; returns the device pointers of the signatures (n * sig_stride) and statuses.
pub fn sign_dev(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    n: usize,
    sk: u64,
    kin: u64,
) -> Result<(u64, u64), DriverError> {
    let (kk, l) = (g.k, g.l);
    let cap = n.max(MIN_ENTRIES);
    let rhopp = w.dev("sg_rhopp", n * 64)?;
    let a = w.dev("a_hat", n * kk * l * 1024)?;
    let s1h = w.dev("sg_s1h", n * l * 1024)?;
    let s2h = w.dev("sg_s2h", n * kk * 1024)?;
    let t0h = w.dev("sg_t0h", n * kk * 1024)?;
    let status = w.dev("sg_status", n * 4)?;
    let best = w.dev("sg_best", n * 4)?;
    let next = w.dev("sg_next", n * 4)?;
    let ctr = w.dev("sg_ctr", 16)?;
    let sig = w.dev("sg_sig", n * g.sig_stride)?;
    let et = w.dev("sg_ent_task", cap * 4)?;
    let ea = w.dev("sg_ent_att", cap * 4)?;
    let y = w.dev("sg_y", cap * l * 1024)?;
    let wv = w.dev("sg_w", cap * kk * 1024)?;
    let hbuf = w.dev("sg_hbuf", cap * g.hbuf_len)?;
    let ctilde = w.dev("sg_ctilde", cap * 64)?;
    let c = w.dev("sg_c", cap * 64)?; // SampleInBall masks (CM_WORDS u64)
    let ok = w.dev("sg_ok", cap)?;
    let slot = w.dev("sg_slot", cap * g.sig_stride)?;
    let (count, done, nbad) = (ctr, ctr + 4, ctr + 8);
    let nn = U(n as u32);

    w.zero(ctr, 16)?;
    w.launch(
        k,
        "sign_rhopp",
        blocks(n, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(kin), P(rhopp), nn],
    )?;
    let kl = n * kk * l;
    w.launch(
        k,
        "expand_a",
        blocks(kl, BLOCK_STREAM),
        BLOCK_STREAM,
        &[P(sk), U(g.sk_len as u32), P(a), nn],
    )?;
    let args = [
        P(sk),
        P(s1h),
        P(s2h),
        P(t0h),
        P(status),
        P(best),
        P(next),
        P(nbad),
        nn,
    ];
    w.launch(k, "sign_decode", n, BLOCK_POLY, &args)?;
    let mut host_ctr = w.take_host("sg_ctr", 16)?;
    let r = (|| {
        let hc = host_ctr.as_mut_slice()?;
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
            w.zero(ctr, 8)?;
            let args = [
                P(status),
                P(best),
                P(next),
                P(et),
                P(ea),
                P(count),
                P(done),
                U(spec as u32),
                nn,
            ];
            w.launch(
                k,
                "sign_schedule",
                blocks(n, BLOCK_STREAM),
                BLOCK_STREAM,
                &args,
            )?;
            if spec == 0 {
                break;
            }
            let args = [P(rhopp), P(et), P(ea), P(count), P(y)];
            w.launch(
                k,
                "expand_mask",
                blocks(m * l, BLOCK_STREAM),
                BLOCK_STREAM,
                &args,
            )?;
            let args = [P(a), P(kin), P(y), P(et), P(count), P(wv), P(hbuf)];
            w.launch(k, "sign_w", m, BLOCK_POLY, &args)?;
            let args = [P(hbuf), P(count), P(ctilde), P(c)];
            w.launch(
                k,
                "sign_challenge",
                blocks(m, BLOCK_STREAM),
                BLOCK_STREAM,
                &args,
            )?;
            let args = [
                P(s1h),
                P(s2h),
                P(t0h),
                P(y),
                P(wv),
                P(ctilde),
                P(c),
                P(et),
                P(ea),
                P(count),
                P(best),
                P(done),
                P(ok),
                P(slot),
            ];
            w.launch(k, "sign_z", m, BLOCK_POLY, &args)?;
            let args = [P(et), P(ea), P(count), P(best), P(ok), P(slot), P(sig)];
            w.launch(k, "sign_commit", m, BLOCK_POLY, &args)?;
            w.dtoh(&mut hc[..8], ctr)?;
            w.sync()?;
            pending -= read_u32(hc, 4) as usize;
        }
        Ok(())
    })();
    w.put_host("sg_ctr", host_ctr);
    r.map(|_| (sig, status))
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// One chunk end to end. Items that fail the host checks (lengths, message shape) get their
/// error without reaching the GPU. Secret keys in registered memory, evenly spaced (a caller's
/// key array), are copied to the device by one DMA, and signatures into registered rows are
/// written by the device, skipping the host staging copies; a failed item's signature row is
/// then zeroed.
#[allow(clippy::too_many_arguments)]
pub fn sign_chunk(
    w: &mut Worker,
    k: &Kernels,
    g: &Geometry,
    reg: &Ranges,
    items: &[SignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), DriverError> {
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
    // One key repeated (a server's signing key) is not evenly spaced: staging it on the host
    // reads one cached row, cheaper than a zero-copy gather over PCIe.
    let sk_rows = Rows::registered(reg, g.sk_len, idx.iter().map(|&i| Some(items[i].sk)))
        .filter(Rows::is_dma);
    let sig_rows = Rows::registered(reg, g.sig_len, idx.iter().map(|&i| Some(&*sigs[i])));
    let staged_sk = if sk_rows.is_some() { 0 } else { m * g.sk_len };
    let staged_sig = if sig_rows.is_some() {
        0
    } else {
        m * g.sig_stride
    };
    let regions = Regions::of(g.variant, idx.iter().map(|&i| &items[i].msg));
    let mut sk_stage = w.take_host("sg_sk_stage", staged_sk.max(8))?;
    let mut kin_stage = w.take_host("sg_kin_stage", m * 128 + regions.host_bytes())?;
    let mut out = w.take_host("sg_out", staged_sig + m * 4)?;
    w.lap(3);
    let r = (|| {
        let sk_h = &mut sk_stage.as_mut_slice()?[..staged_sk];
        let (kin_h, msg_h) = kin_stage.as_mut_slice()?.split_at_mut(m * 128);
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
            .for_each(|(kb, (&i, &at))| match items[i].rnd {
                Some(r) => kb[32..64].copy_from_slice(r),
                None => kb[32..64].copy_from_slice(&fresh[at..at + 32]),
            });
        let sk_d = w.dev("sg_sk_in", m * g.sk_len)?;
        let kin_d = w.dev("sg_kin", m * 128)?;
        match &sk_rows {
            Some(rows) => hostio::gather(w, k, rows, sk_d, g.sk_len, "sg_sk_rows")?,
            None => {
                sk_h.par_chunks_mut(g.sk_len)
                    .zip(idx.par_iter())
                    .for_each(|(skb, &i)| skb.copy_from_slice(items[i].sk));
                w.htod(sk_d, sk_h)?;
            }
        }
        w.htod(kin_d, kin_h)?;
        let msgs = regions.stage(w, idx.iter().map(|&i| &items[i].msg), msg_h)?;
        let args = [
            P(sk_d),
            P(msgs.arena),
            P(msgs.off),
            P(msgs.len),
            P(kin_d),
            U(m as u32),
        ];
        w.launch(k, "sign_mu", blocks(m, BLOCK_STREAM), BLOCK_STREAM, &args)?;
        w.lap(0);
        let (sig_d, status_d) = sign_dev(w, k, g, m, sk_d, kin_d)?;
        let o = out.as_mut_slice()?;
        let (o_sig, o_st) = o.split_at_mut(staged_sig);
        let o_st = &mut o_st[..m * 4];
        match &sig_rows {
            Some(rows) => hostio::scatter(w, k, sig_d, g.sig_stride, rows, "sg_sig_rows")?,
            None => w.dtoh(o_sig, sig_d)?,
        }
        w.dtoh(o_st, status_d)?;
        w.sync()?;
        w.lap(1);
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
        w.lap(2);
        Ok(())
    })();
    w.put_host("sg_sk_stage", sk_stage);
    w.put_host("sg_kin_stage", kin_stage);
    w.put_host("sg_out", out);
    r
}
