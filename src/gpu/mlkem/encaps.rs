//! ML-KEM.Encaps (FIPS 203 Algorithms 17, 20) for one chunk: the host checks lengths and finds
//! the distinct keys ([`keys`]); their rows go to the device straight from registered memory,
//! where the GPU checks each distinct key once (the modulus check, 7.2), hashes it and expands
//! its Â, then runs (K, r) = G(m || H(ek)) one thread per item and K-PKE.Encrypt one block per
//! item. The keys' verdicts come back ahead of the encapsulation, and the host reads them
//! while the kernels run, before any output row is queued. A chunk of one key (a server's key)
//! keeps that key's device state for the next chunk.

use super::kernels::Kernels;
use super::keys::{self, tag, Distinct};
use crate::backend::EncapsItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::mlkem::ParamSet;
use crate::{Error, Status};
use cudarc::driver::DriverError;
use rayon::prelude::*;

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
    let mut valid = Vec::with_capacity(items.len());
    let mut key_of = Vec::with_capacity(items.len());
    let mut m = zeroize::Zeroizing::new(Vec::with_capacity(items.len() * 32));
    let mut fresh = Vec::new();
    for (i, it) in items.iter().enumerate() {
        if it.pk.len() != s.ek || cts[i].len() != s.ct || sss[i].len() != 32 {
            st[i] = Err(Error::BadLength);
            if sss[i].len() == 32 {
                sss[i].fill(0);
            }
            continue;
        }
        match it.coins {
            Some(c) => m.extend_from_slice(c),
            None => {
                fresh.push(valid.len());
                m.extend_from_slice(&[0; 32]);
            }
        }
        key_of.push(it.pk);
        valid.push(i);
    }
    let n = valid.len();
    if n == 0 {
        return Ok(());
    }
    // When every item wants fresh coins (the server case) they are drawn on the GPU from one
    // key of OS randomness per chunk: no 32 bytes per item drawn, staged and copied here.
    let gpu_coins = match (fresh.len() == n).then(crate::rng::array32) {
        None => None,
        Some(Ok(key)) => Some(zeroize::Zeroizing::new(key)),
        Some(Err(_)) => {
            valid.iter().for_each(|&i| st[i] = Err(Error::Rng));
            return Ok(());
        }
    };
    if gpu_coins.is_none() && !fresh.is_empty() {
        let mut rnd = zeroize::Zeroizing::new(vec![0u8; fresh.len() * 32]);
        if crate::rng::fill_bulk(&mut rnd).is_err() {
            valid.iter().for_each(|&i| st[i] = Err(Error::Rng));
            return Ok(());
        }
        for (c, &j) in fresh.iter().enumerate() {
            m[32 * j..32 * j + 32].copy_from_slice(&rnd[32 * c..32 * c + 32]);
        }
    }
    let keys = Distinct::of(s.t_len(), key_of);
    let (idx, nkeys) = (&keys.idx, keys.keys.len());
    let one = (nkeys == 1).then(|| tag("encaps", p.name(), keys.keys[0]));
    let kept_key = |w: &mut Worker, name, len| -> Result<(Dev<u8>, bool), DriverError> {
        match &one {
            Some(t) => w.dev_kept(name, len, t),
            None => Ok((w.dev(name, len)?, false)),
        }
    };
    let (d_eks, a) = kept_key(w, "mlkem_enc_eks", nkeys * s.ek)?;
    let (d_hek, b) = kept_key(w, "mlkem_enc_hek", nkeys * 32)?;
    let (amat, c) = kept_key(w, "mlkem_enc_amat", nkeys * s.k * s.k * 512)?;
    let amat: Dev<u16> = amat.cast();
    let kept = a && b && c;

    let mut stage = w.take_host("mlkem_enc_in", n * 36 + nkeys * 4)?;
    let host = stage.bytes()?;
    let (h_m, rest) = host.split_at_mut(n * 32);
    let (h_idx, rest) = rest.split_at_mut(n * 4);
    let h_ok = &mut rest[..nkeys * 4];
    // A key not kept from the last chunk is checked (the modulus check, 7.2) and hashed on the
    // device; its verdict comes back marked, so the host reads it while the kernels below run
    // and queues the output rows behind them (a bad key's items write nothing).
    let _staged_keys = if kept {
        None
    } else {
        let d_ok: Dev<u32> = w.dev("mlkem_enc_ok", nkeys)?;
        let names = ("mlkem_enc_keys", "mlkem_ek_rows");
        let staged = keys::upload(w, &k.io, reg, &keys.keys, s.ek, d_eks, names)?;
        k.ek_prep(w, d_eks, nkeys, d_hek, d_ok)?;
        w.dtoh(h_ok, d_ok)?;
        w.mark()?;
        k.expand_a(w, d_eks.add(s.t_len()), s.ek, nkeys, amat)?;
        staged
    };

    let d_m = w.dev("mlkem_enc_m", n * 32)?;
    let d_ct = w.dev("mlkem_enc_ct", n * s.ct)?;
    let d_ss = w.dev("mlkem_enc_ss", n * 32)?;
    let h_m = match &gpu_coins {
        Some(key) => {
            let h_key = &mut h_m[..32];
            h_key.copy_from_slice(&key[..]);
            let d_key = w.dev("mlkem_coin_key", 32)?;
            w.htod(d_key, h_key)?;
            k.coins(w, d_key, d_m, n)?;
            h_key
        }
        None => {
            h_m.copy_from_slice(&m);
            w.htod(d_m, h_m)?;
            h_m
        }
    };
    // Every item a key of its own: they came in item order (item j uses key j).
    let d_idx = if keys.all_distinct() {
        Dev::null()
    } else {
        for (d, &x) in h_idx.chunks_exact_mut(4).zip(idx) {
            d.copy_from_slice(&x.to_le_bytes());
        }
        let d: Dev<u32> = w.dev("mlkem_enc_idx", n)?;
        w.htod(d, h_idx)?;
        d
    };
    k.encaps(w, d_m, d_idx, (d_eks, d_hek, amat), d_ct, d_ss, n)?;

    // Items whose key failed its check: nothing written but a zeroed shared secret.
    let mut live = vec![true; n];
    if !kept {
        w.end_phase(Phase::Staging);
        w.wait_mark()?;
        w.end_phase(Phase::GpuWait);
        let good: Vec<bool> = h_ok.chunks_exact(4).map(|x| x != [0; 4]).collect();
        for (j, &i) in valid.iter().enumerate() {
            if !good[idx[j] as usize] {
                st[i] = Err(Error::BadKey);
                sss[i].fill(0);
                live[j] = false;
            }
        }
        if let (Some(t), true) = (&one, good[0]) {
            for name in ["mlkem_enc_eks", "mlkem_enc_hek", "mlkem_enc_amat"] {
                w.keep(name, t);
            }
        }
    }

    // The ciphertexts go straight into the caller's registered rows (the scatter kernel skips
    // a failed item's row). The shared secrets do only by one DMA, when every item's row is
    // written and evenly spaced; otherwise they come back staged and the host writes the live
    // rows: the device never writes a shared-secret row beside a failed item's zeroed one.
    let ct_rows = Rows::registered(
        reg,
        s.ct,
        valid
            .iter()
            .zip(&live)
            .map(|(&i, &l)| l.then_some(&*cts[i])),
    );
    let ss_rows = Rows::registered(reg, 32, valid.iter().map(|&i| Some(&*sss[i])))
        .filter(|r| live.iter().all(|&l| l) && r.is_dma(&k.io));
    let (ct_staged, ss_staged) = (ct_rows.is_none(), ss_rows.is_none());
    let o_len = usize::from(ct_staged) * n * s.ct + usize::from(ss_staged) * n * 32;
    let mut out = w.take_host("mlkem_enc_out", o_len)?;
    let (o_ct, o_ss) = out.bytes()?[..o_len].split_at_mut(usize::from(ct_staged) * n * s.ct);
    match &ct_rows {
        Some(rows) => hostio::scatter(w, &k.io, d_ct, s.ct, rows, "mlkem_ct_rows")?,
        None => w.dtoh(o_ct, d_ct)?,
    }
    match &ss_rows {
        Some(rows) => hostio::scatter(w, &k.io, d_ss, 32, rows, "mlkem_ss_rows")?,
        None => w.dtoh(o_ss, d_ss)?,
    }
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    let mut pos = vec![u32::MAX; items.len()];
    for (j, (&i, &l)) in valid.iter().zip(&live).enumerate() {
        if l {
            pos[i] = j as u32;
        }
    }
    let (o_ct, o_k) = (&*o_ct, &*o_ss);
    cts.par_iter_mut()
        .zip(sss.par_iter_mut())
        .zip(st.par_iter_mut())
        .zip(pos.par_iter())
        .with_min_len(ROWS_PER_TASK)
        .filter(|(_, &j)| j != u32::MAX)
        .for_each(|(((ct, ss), status), &j)| {
            let j = j as usize;
            if ct_staged {
                ct.copy_from_slice(&o_ct[j * s.ct..(j + 1) * s.ct]);
            }
            if ss_staged {
                ss.copy_from_slice(&o_k[32 * j..32 * j + 32]);
            }
            *status = Ok(());
        });
    // The shared secrets are secret: do not leave them in the staging buffer.
    o_ss.fill(0);
    // The messages, or their key, are secret too.
    h_m.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
