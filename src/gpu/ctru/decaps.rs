//! CTRU-Prime KEM.Decaps (spec 5.4, 5.6) for one chunk: the host checks lengths and parses
//! each distinct secret key once; the GPU unpacks c, multiplies c f mod q2, E8-decodes m',
//! re-derives (K', s', r'), re-encrypts (h r' on the same engine), hashes K-bar and selects
//! K' or K-bar after a constant-time comparison of the whole ciphertext.

use super::kernels::{Kernels, MSG_STRIDE, TC_ITEMS};
use super::keys::{Interner, KEYINFO};
use super::product::{self, product, Engine, Groups, Kind, Operands};
use crate::backend::DecapsItem;
use crate::ctru::ParamSet;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

pub fn decaps_chunk(
    w: &mut Worker,
    k: &Kernels,
    p: ParamSet,
    reg: &Ranges,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    st: &mut [Status],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::Kem);
    let s = k.s;
    let mut keys = Interner::new();
    let mut valid = Vec::with_capacity(items.len());
    let mut idx = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        if it.sk.len() != s.sk || it.ct.len() != s.ct || sss[i].len() != 32 {
            st[i] = Err(Error::BadLength);
            continue;
        }
        let Some(key) = keys.secret_key(p, &s, it.sk) else {
            st[i] = Err(Error::BadKey);
            continue;
        };
        valid.push(i);
        idx.push(key);
    }
    let n = valid.len();
    if n == 0 {
        return Ok(());
    }
    let table = &keys.table;
    let engine = product::choose(k.forced_engine, table.count, n);
    let groups =
        (engine == Engine::TensorCore && table.count > 1).then(|| Groups::of(&idx, table.count));
    let np = s.np;
    let pad = n.div_ceil(TC_ITEMS) * TC_ITEMS;
    let cs = s.ct_stride;

    let ct_rows = Rows::registered(reg, s.ct, valid.iter().map(|&i| Some(items[i].ct)));
    let ss_rows = Rows::registered(reg, 32, valid.iter().map(|&i| Some(&*sss[i])));
    let staged_cts = if ct_rows.is_some() { 0 } else { n * cs };
    let staged_ss = if ss_rows.is_some() { 0 } else { n * 32 };
    let in_bytes = staged_cts + n * 4 + table.count * (KEYINFO + 4 * np);
    let mut stage = w.take_host("ctru_dec_in", in_bytes)?;
    let mut out = w.take_host("ctru_dec_out", staged_ss)?;
    let host = stage.bytes()?;
    let (h_ct, rest) = host.split_at_mut(staged_cts);
    let (h_idx, rest) = rest.split_at_mut(n * 4);
    let (h_info, rest) = rest.split_at_mut(table.count * KEYINFO);
    let (h_kh, rest) = rest.split_at_mut(table.count * 2 * np);
    let h_kf = &mut rest[..table.count * 2 * np];
    for (d, &x) in h_idx.chunks_exact_mut(4).zip(&idx) {
        d.copy_from_slice(&x.to_le_bytes());
    }
    h_info.copy_from_slice(&table.info);
    for (d, &x) in h_kh.chunks_exact_mut(2).zip(&table.h) {
        d.copy_from_slice(&x.to_le_bytes());
    }
    for (d, &x) in h_kf.chunks_exact_mut(2).zip(&table.f) {
        d.copy_from_slice(&x.to_le_bytes());
    }
    let d_ct = w.dev("ctru_ct", n * cs)?;
    let d_idx = w.dev("ctru_idx", n)?;
    let d_info = w.dev("ctru_info", table.count * KEYINFO)?;
    let d_kh = w.dev("ctru_kh", table.count * np)?;
    let d_kf = w.dev("ctru_kf", table.count * np)?;
    let lo: Dev<i8> = w.dev("ctru_lo", pad * np)?;
    let hi: Dev<i8> = w.dev("ctru_hi", pad * np)?;
    let v = w.dev("ctru_v", pad * np)?;
    let msg = w.dev("ctru_msg", n * MSG_STRIDE)?;
    let kprime = w.dev("ctru_k", n * 32)?;
    let kbar = w.dev("ctru_kbar", n * 32)?;
    let rr: Dev<i8> = w.dev("ctru_r", pad * np)?;
    let sigma = w.dev("ctru_sigma", pad * np)?;
    let ss = w.dev("ctru_ss", n * 32)?;
    match &ct_rows {
        Some(rows) => {
            // The kernels compare whole words: the row padding must be zero.
            w.zero(d_ct, n * cs)?;
            hostio::gather(w, &k.io, rows, d_ct, cs, "ctru_ct_rows")?;
        }
        None => {
            // Gather on all cores (a large share of the host time at full speed).
            h_ct.par_chunks_mut(cs)
                .zip(valid.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(row, &i)| {
                    row[..s.ct].copy_from_slice(items[i].ct);
                    row[s.ct..].fill(0);
                });
            w.htod(d_ct, h_ct)?;
        }
    }
    w.htod(d_idx, h_idx)?;
    w.htod(d_info, h_info)?;
    w.htod(d_kh, h_kh)?;
    w.htod(d_kf, h_kf)?;
    let tail = (pad - n) * np;
    if tail > 0 {
        for buf in [lo, hi, rr] {
            w.zero(buf.add(n * np), tail)?;
        }
    }
    k.decaps_unpack(w, d_ct, lo, hi, n)?;
    let mut ops = Operands {
        keyvec: d_kf,
        key_idx: d_idx,
        lo,
        hi,
        out: v,
        n,
        pad,
        groups: groups.as_ref(),
        key_rows: Some(&table.f),
    };
    product(w, k, engine, Kind::Decrypt, &ops)?;
    k.decaps_decode(w, v, msg, n)?;
    k.encaps_hash(w, Dev::null(), true, d_info, d_idx, msg, kprime, rr, n)?;
    ops.keyvec = d_kh;
    ops.key_rows = Some(&table.h);
    ops.lo = rr;
    ops.hi = Dev::null();
    ops.out = sigma;
    product(w, k, engine, Kind::Encrypt, &ops)?;
    k.decaps_kbar(w, d_ct, d_info, d_idx, kbar, n)?;
    k.decaps_finish(w, sigma, msg, d_ct, kprime, kbar, ss, n)?;
    let o = &mut out.bytes()?[..staged_ss];
    match &ss_rows {
        Some(rows) => hostio::scatter(w, &k.io, ss, 32, rows, "ctru_ss_rows")?,
        None => w.dtoh(o, ss)?,
    }
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    for (j, &i) in valid.iter().enumerate() {
        if ss_rows.is_none() {
            sss[i].copy_from_slice(&o[32 * j..32 * j + 32]);
        }
        st[i] = Ok(());
    }
    // Shared secrets and f are secret: do not leave them in the staging buffers.
    o.fill(0);
    h_kf.fill(0);
    h_info.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
