//! CTRU-Prime KEM.Decaps (spec 5.4, 5.6) for one chunk: the host checks lengths and parses
//! each distinct secret key once; the GPU unpacks c, multiplies c f mod q2, E8-decodes m',
//! re-derives (K', s', r'), re-encrypts (h r' on the same engine), hashes K-bar and selects
//! K' or K-bar after a constant-time comparison of the whole ciphertext.

use super::keys::{Interner, KEYINFO};
use super::module::CtruKernels;
use super::product::{self, product, Engine, Groups, Kind, Operands, TC_ITEMS};
use super::{Sizes, MSG_STRIDE};
use crate::backend::DecapsItem;
use crate::ctru::ParamSet;
use crate::gpu::hostio::{self, Launch, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::worker::{Arg::*, Worker};
use crate::gpu::{blocks, BLOCK_STREAM};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

pub fn decaps_chunk(
    w: &mut Worker,
    k: &CtruKernels,
    p: ParamSet,
    reg: &Ranges,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    st: &mut [Status],
) -> Result<(), DriverError> {
    w.lap(3); // host phases: staging, GPU wait, unpacking (PQGPU_HOST_PROFILE)
    let s = Sizes::of(p);
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
    let engine = product::choose(table.count, n);
    let groups =
        (engine == Engine::TensorCore && table.count > 1).then(|| Groups::of(&idx, table.count));
    let np = s.np;
    let pad = n.div_ceil(TC_ITEMS) * TC_ITEMS;
    let cs = s.ct_stride;

    let ct_rows = Rows::registered(reg, s.ct, valid.iter().map(|&i| Some(items[i].ct)));
    let ss_rows = Rows::registered(reg, 32, valid.iter().map(|&i| Some(&*sss[i])));
    let staged_cts = if ct_rows.is_some() { 0 } else { n * cs };
    let in_bytes = staged_cts + n * 4 + table.count * (KEYINFO + 4 * np);
    let mut stage = w.take_host("ctru_dec_in", in_bytes)?;
    let mut out = w.take_host("ctru_dec_out", n * 32)?;
    let r = (|| {
        let host = stage.as_mut_slice()?;
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
        let d_idx = w.dev("ctru_idx", n * 4)?;
        let d_info = w.dev("ctru_info", table.count * KEYINFO)?;
        let d_kh = w.dev("ctru_kh", table.count * 2 * np)?;
        let d_kf = w.dev("ctru_kf", table.count * 2 * np)?;
        let lo = w.dev("ctru_lo", pad * np)?;
        let hi = w.dev("ctru_hi", pad * np)?;
        let v = w.dev("ctru_v", pad * np * 2)?;
        let msg = w.dev("ctru_msg", n * MSG_STRIDE)?;
        let kprime = w.dev("ctru_k", n * 32)?;
        let kbar = w.dev("ctru_kbar", n * 32)?;
        let rr = w.dev("ctru_r", pad * np)?;
        let sigma = w.dev("ctru_sigma", pad * np * 2)?;
        let ss = w.dev("ctru_ss", n * 32)?;
        match &ct_rows {
            Some(rows) => {
                // The kernels compare whole words: the row padding must be zero.
                w.zero(d_ct, n * cs)?;
                hostio::gather(w, k, rows, d_ct, cs, "ctru_ct_rows")?;
            }
            None => {
                // Gather on all cores (a large share of the host time at full speed).
                h_ct.par_chunks_mut(cs)
                    .zip(valid.par_iter())
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
                w.zero(buf + (n * np) as u64, tail)?;
            }
        }
        let nn = U(n as u32);
        let grid = blocks(n, BLOCK_STREAM);
        k.launch(
            w,
            "decaps_unpack",
            grid,
            BLOCK_STREAM,
            &[P(d_ct), P(lo), P(hi), nn],
        )?;
        let mut ops = Operands {
            keyvec: d_kf,
            key_idx: d_idx,
            lo,
            hi,
            out: v,
            n,
            pad,
            groups: groups.as_ref(),
        };
        product(w, k, &s, engine, Kind::Decrypt, &ops)?;
        k.launch(w, "decaps_decode", grid, BLOCK_STREAM, &[P(v), P(msg), nn])?;
        let args = [
            P(0),
            U(1),
            P(d_info),
            P(d_idx),
            P(msg),
            P(kprime),
            P(rr),
            nn,
        ];
        k.launch(w, "encaps_hash", grid, BLOCK_STREAM, &args)?;
        ops.keyvec = d_kh;
        ops.lo = rr;
        ops.hi = 0;
        ops.out = sigma;
        product(w, k, &s, engine, Kind::Encrypt, &ops)?;
        let args = [P(d_ct), P(d_info), P(d_idx), P(kbar), nn];
        k.launch(w, "decaps_kbar", grid, BLOCK_STREAM, &args)?;
        let args = [P(sigma), P(msg), P(d_ct), P(kprime), P(kbar), P(ss), nn];
        k.launch(w, "decaps_finish", grid, BLOCK_STREAM, &args)?;
        let o = &mut out.as_mut_slice()?[..n * 32];
        match &ss_rows {
            Some(rows) => hostio::scatter(w, k, ss, 32, rows, "ctru_ss_rows")?,
            None => w.dtoh(o, ss)?,
        }
        w.lap(0);
        w.sync()?;
        w.lap(1);
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
        w.lap(2);
        Ok(())
    })();
    w.put_host("ctru_dec_in", stage);
    w.put_host("ctru_dec_out", out);
    r
}
