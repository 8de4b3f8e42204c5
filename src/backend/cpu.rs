//! The CPU backend: the reference implementations, spread over all cores with rayon.
//! A batch of one runs inline on the caller's thread, paying no thread-pool overhead.

use super::{Backend, BackendKind, DecapsItem, EncapsItem, SignItem, VerifyItem};
use crate::{ctru, mldsa, Error, Status};
use rayon::prelude::*;

/// Items handed to one rayon task at a time: big enough to amortise scheduling, small enough
/// to balance signing's variable retry count.
const MIN_CHUNK: usize = 4;

#[derive(Debug, Default)]
pub struct CpuBackend;

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend
    }
}

/// Runs `f(item)` for every item, writing its status; inline for one item, in parallel otherwise.
fn for_each<T: Send, F>(items: Vec<T>, statuses: &mut [Status], f: F)
where
    F: Fn(T) -> Status + Sync + Send,
{
    if items.len() <= 1 {
        for (it, st) in items.into_iter().zip(statuses.iter_mut()) {
            *st = f(it);
        }
        return;
    }
    items
        .into_par_iter()
        .zip(statuses.par_iter_mut())
        .with_min_len(MIN_CHUNK)
        .for_each(|(it, st)| *st = f(it));
}

/// One keygen item: its seed (or `None` for fresh randomness) and its pk and sk outputs.
type KeygenItem<'a> = (Option<&'a [u8]>, &'a mut [u8], &'a mut [u8]);

/// Splits `seeds` (n * seed_len bytes or none) and the contiguous outputs into per-item pieces.
fn keygen_items<'a>(
    n: usize,
    seeds: Option<&'a [u8]>,
    seed_len: usize,
    pks: &'a mut [u8],
    pk_len: usize,
    sks: &'a mut [u8],
    sk_len: usize,
) -> Result<Vec<KeygenItem<'a>>, Error> {
    if pks.len() != n * pk_len
        || sks.len() != n * sk_len
        || seeds.is_some_and(|s| s.len() != n * seed_len)
    {
        return Err(Error::BadLength);
    }
    let seeds: Vec<Option<&[u8]>> = match seeds {
        Some(s) => s.chunks_exact(seed_len).map(Some).collect(),
        None => vec![None; n],
    };
    Ok(seeds
        .into_iter()
        .zip(pks.chunks_exact_mut(pk_len))
        .zip(sks.chunks_exact_mut(sk_len))
        .map(|((s, p), k)| (s, p, k))
        .collect())
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn mldsa_keygen(
        &self,
        p: mldsa::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let n = statuses.len();
        match keygen_items(
            n,
            seeds,
            32,
            pks,
            p.public_key_len(),
            sks,
            p.secret_key_len(),
        ) {
            Err(e) => statuses.iter_mut().for_each(|s| *s = Err(e)),
            Ok(items) => for_each(items, statuses, |(seed, pk, sk)| match seed {
                Some(s) => mldsa::keygen_internal(p, s.try_into().expect("32-byte chunk"), pk, sk),
                None => mldsa::keygen(p, pk, sk),
            }),
        }
    }

    fn mldsa_sign(
        &self,
        p: mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let work: Vec<_> = items.iter().zip(sigs.iter_mut()).collect();
        for_each(work, statuses, |(it, sig)| {
            mldsa::sign(p, it.sk, &it.msg, it.rnd, sig)
        });
    }

    fn mldsa_verify(&self, p: mldsa::ParamSet, items: &[VerifyItem<'_>], statuses: &mut [Status]) {
        let work: Vec<_> = items.iter().collect();
        for_each(work, statuses, |it| {
            mldsa::verify(p, it.pk, &it.msg, it.sig)
        });
    }

    fn kem_keygen(
        &self,
        p: ctru::ParamSet,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let n = statuses.len();
        match keygen_items(
            n,
            seeds,
            64,
            pks,
            p.public_key_len(),
            sks,
            p.secret_key_len(),
        ) {
            Err(e) => statuses.iter_mut().for_each(|s| *s = Err(e)),
            Ok(items) => for_each(items, statuses, |(seed, pk, sk)| match seed {
                Some(s) => ctru::keygen_derand(p, s.try_into().expect("64-byte chunk"), pk, sk),
                None => ctru::keygen(p, pk, sk),
            }),
        }
    }

    fn kem_encaps(
        &self,
        p: ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let work: Vec<_> = items
            .iter()
            .zip(cts.iter_mut())
            .zip(sss.iter_mut())
            .collect();
        for_each(work, statuses, |((it, ct), ss)| match it.coins {
            Some(e) => ctru::encaps_derand(p, it.pk, e, ct, ss),
            None => ctru::encaps(p, it.pk, ct, ss),
        });
    }

    fn kem_decaps(
        &self,
        p: ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let work: Vec<_> = items.iter().zip(sss.iter_mut()).collect();
        for_each(work, statuses, |(it, ss)| ctru::decaps(p, it.sk, it.ct, ss));
    }
}
