//! ML-KEM.Decaps (FIPS 203 Algorithms 18, 21) for one chunk: the host checks lengths and finds
//! the distinct keys ([`keys`]); their rows and the ciphertexts go to the device straight from
//! registered memory, where the GPU checks each distinct key once (the hash check, 7.3) and
//! expands its Â, then decrypts, re-encrypts, hashes K-bar and selects K' or K-bar after a
//! constant-time comparison of the whole ciphertext (implicit rejection): the polynomial work
//! one block per item, the hashes one thread per item.
//! An item whose key fails its check gets a zeroed shared secret from the device itself, so the
//! shared secrets go back without a wait for the keys' verdicts, which come back with them. A
//! chunk of one key (a server's key) keeps that key's device state for the next chunk.

use super::kernels::Kernels;
use super::keys::{self, tag, Distinct};
use crate::backend::DecapsItem;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio::{self, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{Phase, Worker, ROWS_PER_TASK};
use crate::mlkem::ParamSet;
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
    let mut valid = Vec::with_capacity(items.len());
    let mut key_of = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        if it.sk.len() != s.dk || it.ct.len() != s.ct || sss[i].len() != 32 {
            st[i] = Err(Error::BadLength);
            if sss[i].len() == 32 {
                sss[i].fill(0);
            }
            continue;
        }
        key_of.push(it.sk);
        valid.push(i);
    }
    let n = valid.len();
    if n == 0 {
        return Ok(());
    }
    let keys = Distinct::of(s.dk - 64, key_of);
    let (idx, nkeys) = (&keys.idx, keys.keys.len());
    let one = (nkeys == 1).then(|| tag("decaps", p.name(), keys.keys[0]));
    let kept_key = |w: &mut Worker, name, len| -> Result<(Dev<u8>, bool), DriverError> {
        match &one {
            Some(t) => w.dev_kept(name, len, t),
            None => Ok((w.dev(name, len)?, false)),
        }
    };
    let (d_dks, a) = kept_key(w, "mlkem_dec_dks", nkeys * s.dk)?;
    let (amat, b) = kept_key(w, "mlkem_dec_amat", nkeys * s.k * s.k * 512)?;
    let amat: Dev<u16> = amat.cast();
    let kept = a && b;
    let ct_rows = Rows::registered(reg, s.ct, valid.iter().map(|&i| Some(items[i].ct)));
    let staged_cts = if ct_rows.is_some() { 0 } else { n * s.ct };
    let mut stage = w.take_host("mlkem_dec_in", staged_cts + n * 4 + nkeys * 4)?;
    let host = stage.bytes()?;
    let (h_ct, rest) = host.split_at_mut(staged_cts);
    let (h_idx, rest) = rest.split_at_mut(n * 4);
    let h_ok = &mut rest[..nkeys * 4];
    // The ciphertexts first: their copy runs beside the keys' check and expansion.
    let d_ct = w.dev("mlkem_dec_ct", n * s.ct)?;
    let d_ss = w.dev("mlkem_dec_ss", n * 32)?;
    match &ct_rows {
        Some(rows) => hostio::gather(w, &k.io, rows, d_ct, s.ct, "mlkem_ct_rows")?,
        None => {
            // Gather on all cores (a large share of the host time at full speed).
            h_ct.par_chunks_mut(s.ct)
                .zip(valid.par_iter())
                .with_min_len(ROWS_PER_TASK)
                .for_each(|(row, &i)| row.copy_from_slice(items[i].ct));
            w.htod(d_ct, h_ct)?;
        }
    }
    // A key not kept from the last chunk is checked on the device (the hash check, 7.3); the
    // decapsulation reads its verdict there, and the host with the results.
    let (mut staged_keys, d_ok) = if kept {
        (None, Dev::null())
    } else {
        let d_ok: Dev<u32> = w.dev("mlkem_dec_ok", nkeys)?;
        let names = ("mlkem_dec_keys", "mlkem_dk_rows");
        let staged = keys::upload(w, &k.io, reg, &keys.keys, s.dk, d_dks, names)?;
        k.dk_prep(w, d_dks, nkeys, d_ok)?;
        w.dtoh(h_ok, d_ok)?;
        k.expand_a(w, d_dks.add(2 * s.t_len()), s.dk, nkeys, amat)?;
        (staged, d_ok)
    };
    // Every item a key of its own: they came in item order (item j uses key j).
    let d_idx = if keys.all_distinct() {
        Dev::null()
    } else {
        for (d, &x) in h_idx.chunks_exact_mut(4).zip(idx) {
            d.copy_from_slice(&x.to_le_bytes());
        }
        let d: Dev<u32> = w.dev("mlkem_dec_idx", n)?;
        w.htod(d, h_idx)?;
        d
    };
    k.decaps(w, d_ct, d_idx, (d_dks, amat, d_ok), d_ss, n)?;

    // Straight into the caller's rows by one DMA when they are evenly spaced (a failed key's
    // items get the device's zeroed rows); otherwise staged, the host writing the live rows.
    let ss_rows = Rows::registered(reg, 32, valid.iter().map(|&i| Some(&*sss[i])))
        .filter(|r| r.is_dma(&k.io));
    let mut out = w.take_host("mlkem_dec_out", if ss_rows.is_some() { 0 } else { n * 32 })?;
    let o = &mut out.bytes()?[..if ss_rows.is_some() { 0 } else { n * 32 }];
    match &ss_rows {
        Some(rows) => hostio::scatter(w, &k.io, d_ss, 32, rows, "mlkem_ss_rows")?,
        None => w.dtoh(o, d_ss)?,
    }
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    // The keys are secret: do not leave them in the staging buffer.
    if let Some(buf) = &mut staged_keys {
        buf.bytes()?.fill(0);
    }
    let good: Vec<bool> = if kept {
        vec![true; nkeys]
    } else {
        h_ok.chunks_exact(4).map(|x| x != [0; 4]).collect()
    };
    // A server's key that passed: its rows and Â stay for its next chunk.
    if let Some(t) = one.as_ref().filter(|_| !kept && good[0]) {
        w.keep("mlkem_dec_dks", t);
        w.keep("mlkem_dec_amat", t);
    }
    for (j, &i) in valid.iter().enumerate() {
        if !good[idx[j] as usize] {
            st[i] = Err(Error::BadKey);
            sss[i].fill(0);
            continue;
        }
        if ss_rows.is_none() {
            sss[i].copy_from_slice(&o[32 * j..32 * j + 32]);
        }
        st[i] = Ok(());
    }
    // Shared secrets are secret: do not leave them in the staging buffer.
    o.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
