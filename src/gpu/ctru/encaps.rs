//! CTRU-Prime KEM.Encaps (spec 5.3, 5.6) for one chunk: the host checks lengths and decodes
//! each distinct public key once; the GPU derives m, (K, s) and r per thread, multiplies h r
//! on the chosen engine, then compresses, E8-encodes and packs the ciphertexts.

use super::kernels::{Kernels, MSG_STRIDE, TC_ITEMS};
use super::keys::{Interner, KEYINFO};
use super::product::{self, product, Engine, Groups, Kind, Operands};
use crate::backend::EncapsItem;
use crate::ctru::ParamSet;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

/// Host staging of one chunk's inputs: coins e, key indices, key rows.
struct Inputs {
    valid: Vec<usize>,
    e: zeroize::Zeroizing<Vec<u8>>,
    idx: Vec<u32>,
}

#[allow(clippy::too_many_arguments)]
pub fn encaps_chunk(
    w: &mut Worker,
    k: &Kernels,
    p: ParamSet,
    reg: &Ranges,
    items: &[EncapsItem<'_>],
    cts: &mut [&mut [u8]],
    sss: &mut [&mut [u8]],
    st: &mut [Status],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::Kem);
    let s = k.s;
    let mut keys = Interner::new();
    let mut inp = Inputs {
        valid: Vec::with_capacity(items.len()),
        e: zeroize::Zeroizing::new(Vec::with_capacity(items.len() * 32)),
        idx: Vec::with_capacity(items.len()),
    };
    let mut fresh = Vec::new();
    for (i, it) in items.iter().enumerate() {
        if it.pk.len() != s.pk || cts[i].len() != s.ct || sss[i].len() != 32 {
            st[i] = Err(Error::BadLength);
            continue;
        }
        let Some(key) = keys.public_key(p, &s, it.pk) else {
            st[i] = Err(Error::BadKey);
            continue;
        };
        match it.coins {
            Some(e) => inp.e.extend_from_slice(e),
            None => {
                fresh.push(inp.valid.len());
                inp.e.extend_from_slice(&[0; 32]);
            }
        }
        inp.valid.push(i);
        inp.idx.push(key);
    }
    let n = inp.valid.len();
    // When every item wants fresh coins (the server case) they are drawn on the GPU from one
    // key of OS randomness per chunk (`encaps_coins`): no 32 bytes per item drawn, staged and
    // copied on the host (drawing alone was about a sixth of a chunk's host time).
    let gpu_coins = match (n > 0 && fresh.len() == n).then(crate::rng::array32) {
        None => None,
        Some(Ok(key)) => Some(zeroize::Zeroizing::new(key)),
        Some(Err(_)) => {
            inp.valid.iter().for_each(|&i| st[i] = Err(Error::Rng));
            return Ok(());
        }
    };
    // Items whose fresh coins could not be drawn keep Err(Rng) and are not written back.
    let mut dropped = vec![false; n];
    if gpu_coins.is_none() && !fresh.is_empty() {
        let mut rnd = zeroize::Zeroizing::new(vec![0u8; fresh.len() * 32]);
        if crate::rng::fill_bulk(&mut rnd).is_err() {
            for &j in &fresh {
                st[inp.valid[j]] = Err(Error::Rng);
                dropped[j] = true;
            }
        }
        for (c, &j) in fresh.iter().enumerate() {
            inp.e[32 * j..32 * j + 32].copy_from_slice(&rnd[32 * c..32 * c + 32]);
        }
    }
    if n == 0 {
        return Ok(());
    }
    let table = &keys.table;
    let engine = product::choose(k.forced_engine, table.count, n);
    let groups = (engine == Engine::TensorCore && table.count > 1)
        .then(|| Groups::of(&inp.idx, table.count));
    let np = s.np;
    let pad = n.div_ceil(TC_ITEMS) * TC_ITEMS;

    let in_bytes = n * 36 + table.count * (KEYINFO + 2 * np);
    let mut stage = w.take_host("ctru_enc_in", in_bytes)?;
    let host = stage.bytes()?;
    let (h_e, rest) = host.split_at_mut(n * 32);
    let (h_idx, rest) = rest.split_at_mut(n * 4);
    let (h_info, rest) = rest.split_at_mut(table.count * KEYINFO);
    let h_kh = &mut rest[..table.count * 2 * np];
    // The coins, or the key the GPU draws them from.
    let h_e = match &gpu_coins {
        Some(key) => {
            h_e[..32].copy_from_slice(&key[..]);
            &mut h_e[..32]
        }
        None => {
            h_e.copy_from_slice(&inp.e);
            h_e
        }
    };
    for (d, &x) in h_idx.chunks_exact_mut(4).zip(&inp.idx) {
        d.copy_from_slice(&x.to_le_bytes());
    }
    h_info.copy_from_slice(&table.info);
    for (d, &x) in h_kh.chunks_exact_mut(2).zip(&table.h) {
        d.copy_from_slice(&x.to_le_bytes());
    }
    let d_e = w.dev("ctru_e", n * 32)?;
    let d_idx = w.dev("ctru_idx", n)?;
    let d_info = w.dev("ctru_info", table.count * KEYINFO)?;
    let d_kh = w.dev("ctru_kh", table.count * np)?;
    let msg = w.dev("ctru_msg", n * MSG_STRIDE)?;
    let kout = w.dev("ctru_k", n * 32)?;
    let rr: Dev<i8> = w.dev("ctru_r", pad * np)?;
    let sigma = w.dev("ctru_sigma", pad * np)?;
    let ct = w.dev("ctru_ct", n * s.ct_stride)?;
    match gpu_coins {
        Some(_) => {
            let d_key = w.dev("ctru_coin_key", 32)?;
            w.htod(d_key, h_e)?;
            k.encaps_coins(w, d_key, d_e, n)?;
        }
        None => w.htod(d_e, h_e)?,
    }
    w.htod(d_idx, h_idx)?;
    w.htod(d_info, h_info)?;
    w.htod(d_kh, h_kh)?;
    if pad > n {
        w.zero(rr.add(n * np), (pad - n) * np)?;
    }
    k.encaps_hash(w, d_e, false, d_info, d_idx, msg, kout, rr, n)?;
    let ops = Operands {
        keyvec: d_kh,
        key_idx: d_idx,
        lo: rr,
        hi: Dev::null(),
        out: sigma,
        n,
        pad,
        groups: groups.as_ref(),
        key_rows: Some(&table.h),
    };
    product(w, k, engine, Kind::Encrypt, &ops)?;
    k.encaps_finish(w, sigma, msg, ct, n)?;
    let live = |j: usize| !dropped[j];
    let ct_rows = Rows::registered(
        reg,
        s.ct,
        inp.valid
            .iter()
            .enumerate()
            .map(|(j, &i)| live(j).then_some(&*cts[i])),
    );
    let ss_rows = Rows::registered(
        reg,
        32,
        inp.valid
            .iter()
            .enumerate()
            .map(|(j, &i)| live(j).then_some(&*sss[i])),
    );
    if let (Some(ct_rows), Some(ss_rows)) = (&ct_rows, &ss_rows) {
        // Straight into the caller's registered rows: no host copy.
        hostio::scatter(w, &k.io, ct, s.ct_stride, ct_rows, "ctru_ct_rows")?;
        hostio::scatter(w, &k.io, kout, 32, ss_rows, "ctru_ss_rows")?;
        w.end_phase(Phase::Staging);
        w.sync()?;
        w.end_phase(Phase::GpuWait);
        for (j, &i) in inp.valid.iter().enumerate() {
            if live(j) {
                st[i] = Ok(());
            }
        }
    } else {
        // Staged only here: in registered memory the outputs need no pinned buffer.
        let mut out = w.take_host("ctru_enc_out", n * (s.ct_stride + 32))?;
        let (o_ct, out_k) = out.bytes()?.split_at_mut(n * s.ct_stride);
        let out_k = &mut out_k[..n * 32];
        w.dtoh(o_ct, ct)?;
        w.dtoh(out_k, kout)?;
        w.end_phase(Phase::Staging);
        w.sync()?;
        w.end_phase(Phase::GpuWait);
        let o_k = &*out_k;
        // Scatter to the callers' slices on all cores (this copy is a large share of the
        // host time at full speed).
        let mut pos = vec![u32::MAX; items.len()];
        for (j, &i) in inp.valid.iter().enumerate() {
            if live(j) {
                pos[i] = j as u32;
            }
        }
        let o_ct = &*o_ct;
        cts.par_iter_mut()
            .zip(sss.par_iter_mut())
            .zip(st.par_iter_mut())
            .zip(pos.par_iter())
            .with_min_len(ROWS_PER_TASK)
            .filter(|(_, &j)| j != u32::MAX)
            .for_each(|(((ct, ss), status), &j)| {
                let j = j as usize;
                ct.copy_from_slice(&o_ct[j * s.ct_stride..j * s.ct_stride + s.ct]);
                ss.copy_from_slice(&o_k[32 * j..32 * j + 32]);
                *status = Ok(());
            });
        // The shared secrets are secret: do not leave them in the staging buffer.
        out_k.fill(0);
    }
    // The coins, or their key, are secret too.
    h_e.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
