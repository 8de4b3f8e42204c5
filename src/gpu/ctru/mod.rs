//! CTRU-Prime keygen, encaps and decaps on the GPU (issue 6), bit-identical to `crate::ctru`.
//!
//! * [`module`]: NVRTC compile of `kernels/ctru.cu` per parameter set, PTX cache, launches.
//! * [`keys`]: the distinct keys of a chunk, decoded on the host once.
//! * [`product`]: the two ring-product engines and the choice between them.
//! * [`tree`]: KeyGen's f^-1 for a whole chunk by batch inversion over a product tree.
//! * [`keygen`], [`encaps`], [`decaps`]: one chunk end to end on a worker's stream.
//!
//! Hashing, sampling, compression, E8 coding, packing, the FO comparison and the key
//! selection all run on the GPU; the host only validates lengths, decodes each distinct key
//! once and copies. A chunk that fails on the GPU is redone on the CPU.
//!
//! Engines: a chunk whose items share one key (the server case) multiplies on the Tensor
//! Cores (int8 `mma.sync` against the key's expanded matrix); any other chunk, and every
//! keygen product, on the CUDA cores (exact schoolbook, one block per item). On the H200
//! (batch 65,536, end to end, CTRU-Prime-653/761/1277) the Tensor-Core path gave encaps
//! 11.5/10.9/6.4 M/s and decaps 11.3/8.9/4.9 M/s against 5.1/4.3/1.9 and 3.2/2.6/1.1 M/s on
//! the CUDA cores; keygen (warp-per-key divstep inversion) 452/320/92 k/s.

mod decaps;
mod encaps;
mod keygen;
mod keys;
mod module;
mod product;
mod tree;

use super::engine::DeviceEngine;
use super::hostmem;
use super::scheduler::run_chunks;
use super::{device, GpuBackend};
use crate::backend::{cpu_backend, DecapsItem, EncapsItem};
use crate::ctru::ParamSet;
use crate::Status;
pub(super) use module::CtruKernels;

/// Items per chunk; `PQGPU_CTRU_CHUNK` overrides it for tuning. Measured on the H200 (batch
/// 65,536, registered buffers): 8192 beat 4096 and 16384 for every operation and set (761
/// encaps 17.4 M/s against 15.7 and 15.4; keygen 1.90 M against 1.65 and 1.68).
const KEM_CHUNK: usize = 8192;

fn chunk() -> usize {
    crate::settings::get().ctru_chunk.unwrap_or(KEM_CHUNK)
}

/// Bytes per message row on the device (`MSG_STRIDE` in the kernels; MSGBYTES <= 79).
const MSG_STRIDE: usize = 128;

/// Sizes shared with the kernels. NP: n + 1 rounded up to 32 (the MMA k-step; the inversion
/// keeps n + 1 coefficients); ct rows are padded to 16 bytes for word access.
pub struct Sizes {
    n: usize,
    np: usize,
    pk: usize,
    sk: usize,
    ct: usize,
    ct_stride: usize,
}

impl Sizes {
    fn of(p: ParamSet) -> Sizes {
        Sizes {
            n: p.n(),
            np: (p.n() + 1).div_ceil(32) * 32,
            pk: p.public_key_len(),
            sk: p.secret_key_len(),
            ct: p.ciphertext_len(),
            ct_stride: p.ciphertext_len().div_ceil(16) * 16,
        }
    }
}

fn set_index(p: ParamSet) -> usize {
    match p {
        ParamSet::Ctru653 => 0,
        ParamSet::Ctru761 => 1,
        ParamSet::Ctru1277 => 2,
    }
}

/// `engine`'s CTRU-Prime kernels for `p`, compiled on first use on that device.
fn kernels(engine: &DeviceEngine, p: ParamSet) -> Result<&CtruKernels, String> {
    let r = engine.ctru.get_or_init(|| {
        let ctx = engine.ctx.clone();
        let [a, m, c] = ParamSet::ALL;
        // Compile the three sets in parallel (a cache hit makes this a file read).
        let (ka, (km, kc)) = rayon::join(
            || module::load(&ctx, a),
            || rayon::join(|| module::load(&ctx, m), || module::load(&ctx, c)),
        );
        Ok([ka?, km?, kc?])
    });
    r.as_ref().map(|k| &k[set_index(p)]).map_err(Clone::clone)
}

/// Whether the first device can run `p` (kernels compiled); else the whole call goes to the
/// CPU, once logged.
fn usable(b: &GpuBackend, p: ParamSet) -> bool {
    match kernels(&b.engines[0], p) {
        Ok(_) => true,
        Err(why) => {
            device::log(&format!(
                "CTRU-Prime GPU kernels unavailable ({why}); using the CPU"
            ));
            false
        }
    }
}

pub(super) fn kem_keygen(
    b: &GpuBackend,
    p: ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) {
    if !usable(b, p) {
        return cpu_backend().kem_keygen(p, seeds, pks, sks, statuses);
    }
    let n = statuses.len();
    let s = Sizes::of(p);
    if pks.len() != n * s.pk || sks.len() != n * s.sk || seeds.is_some_and(|x| x.len() != n * 64) {
        statuses
            .iter_mut()
            .for_each(|x| *x = Err(crate::Error::BadLength));
        return;
    }
    let fresh;
    let seeds = match seeds {
        Some(x) => x,
        None => {
            let mut v = zeroize::Zeroizing::new(vec![0u8; n * 64]);
            if crate::rng::fill_bulk(&mut v).is_err() {
                statuses
                    .iter_mut()
                    .for_each(|x| *x = Err(crate::Error::Rng));
                return;
            }
            fresh = v;
            &fresh[..]
        }
    };
    let chunk = chunk();
    let chunks: Vec<_> = seeds
        .chunks(chunk * 64)
        .zip(pks.chunks_mut(chunk * s.pk))
        .zip(sks.chunks_mut(chunk * s.sk))
        .zip(statuses.chunks_mut(chunk))
        .collect();
    b.profiled("ctru keygen", || {
        run_chunks(
            &b.engines,
            b.kem_workers,
            chunks,
            |e, w, (((sd, pk), sk), st)| {
                let k = kernels(e, p)?;
                keygen::keygen_chunk(w, k, &s, sd, pk, sk).map_err(|e| format!("{e:?}"))?;
                st.iter_mut().for_each(|x| *x = Ok(()));
                Ok(())
            },
            |(((sd, pk), sk), st)| cpu_backend().kem_keygen(p, Some(sd), pk, sk, st),
        )
    });
    print_profile(b, "ctru keygen");
}

pub(super) fn kem_encaps(
    b: &GpuBackend,
    p: ParamSet,
    items: &[EncapsItem<'_>],
    cts: &mut [&mut [u8]],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    if !usable(b, p) {
        return cpu_backend().kem_encaps(p, items, cts, sss, statuses);
    }
    let chunk = chunk();
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = items
        .chunks(chunk)
        .zip(cts.chunks_mut(chunk))
        .zip(sss.chunks_mut(chunk))
        .zip(statuses.chunks_mut(chunk))
        .collect();
    b.profiled("ctru encaps", || {
        run_chunks(
            &b.engines,
            b.kem_workers,
            chunks,
            |e, w, (((it, ct), ss), st)| {
                let k = kernels(e, p)?;
                encaps::encaps_chunk(w, k, p, &reg, it, ct, ss, st).map_err(|e| format!("{e:?}"))
            },
            |(((it, ct), ss), st)| cpu_backend().kem_encaps(p, it, ct, ss, st),
        )
    });
    print_profile(b, "ctru encaps");
}

pub(super) fn kem_decaps(
    b: &GpuBackend,
    p: ParamSet,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) {
    if !usable(b, p) {
        return cpu_backend().kem_decaps(p, items, sss, statuses);
    }
    let chunk = chunk();
    let reg = hostmem::snapshot();
    let chunks: Vec<_> = items
        .chunks(chunk)
        .zip(sss.chunks_mut(chunk))
        .zip(statuses.chunks_mut(chunk))
        .collect();
    b.profiled("ctru decaps", || {
        run_chunks(
            &b.engines,
            b.kem_workers,
            chunks,
            |e, w, ((it, ss), st)| {
                let k = kernels(e, p)?;
                decaps::decaps_chunk(w, k, p, &reg, it, ss, st).map_err(|e| format!("{e:?}"))
            },
            |((it, ss), st)| cpu_backend().kem_decaps(p, it, ss, st),
        )
    });
    print_profile(b, "ctru decaps");
}

/// With `PQGPU_PROFILE`: prints and clears the per-kernel times the workers collected.
fn print_profile(b: &GpuBackend, what: &str) {
    let mut sum: std::collections::BTreeMap<&str, (f64, usize)> = Default::default();
    for wk in b.engines.iter().flat_map(|e| &e.workers) {
        let mut w = wk.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(prof) = w.profile.as_mut() {
            for (name, (ms, count)) in prof.drain() {
                let e = sum.entry(name).or_default();
                e.0 += ms;
                e.1 += count;
            }
        }
    }
    for (name, (ms, count)) in sum {
        eprintln!("profile {what}: {name:14} {ms:9.3} ms summed over workers, {count} launches");
    }
}
#[cfg(test)]
pub(super) fn module_sources() -> [(&'static str, &'static str); 3] {
    module::SOURCES
}
#[cfg(test)]
pub(super) fn module_defines(p: ParamSet) -> Vec<String> {
    module::defines(p)
}
