//! What the KEM families (CTRU-Prime, ML-KEM) share on the GPU: a batch cut into chunks that
//! the devices' workers run side by side, each chunk one of the family's chunk pipelines, and a
//! chunk that no device could finish redone on the CPU (drawing its own seeds when the caller
//! gave none).

use crate::backend::{DecapsItem, EncapsItem};
use crate::gpu::config::GpuConfig;
use crate::gpu::engine::Bound;
use crate::gpu::hostmem::{self, Ranges};
use crate::gpu::scheduler::{chunk_sizes, cut, cut_mut, keygen_chunks, run_chunks, KeyLens};
use crate::gpu::worker::Worker;
use crate::Status;
use cudarc::driver::DriverError;

/// How a family cuts a batch: items per chunk, whether the chunk sizes ramp
/// (`scheduler::chunk_sizes`), and chunks in flight per GPU.
#[derive(Clone, Copy)]
pub struct Cut {
    pub chunk: usize,
    pub ramp: bool,
    pub workers: usize,
}

/// A keygen chunk's seeds: the caller's rows, or a fresh key of OS randomness that the chunk
/// expands into its seeds (ChaCha20 stream 0, on the GPU or the host).
#[derive(Clone, Copy)]
pub enum Seeds<'a> {
    Given(&'a [u8]),
    Drawn(&'a [u8; 32]),
}

type KeygenChunk<K> =
    fn(&mut Worker, &K, &Ranges, usize, Seeds<'_>, &mut [u8], &mut [u8]) -> Result<(), DriverError>;
type EncapsChunk<K, P> = fn(
    &mut Worker,
    &K,
    P,
    &Ranges,
    &[EncapsItem<'_>],
    &mut [&mut [u8]],
    &mut [&mut [u8]],
    &mut [Status],
) -> Result<(), DriverError>;
type DecapsChunk<K, P> = fn(
    &mut Worker,
    &K,
    P,
    &Ranges,
    &[DecapsItem<'_>],
    &mut [&mut [u8]],
    &mut [Status],
) -> Result<(), DriverError>;

type CpuKeygen<P> = fn(P, Option<&[u8]>, &mut [u8], &mut [u8], &mut [Status]);
type CpuEncaps<P> = fn(P, &[EncapsItem<'_>], &mut [&mut [u8]], &mut [&mut [u8]], &mut [Status]);
type CpuDecaps<P> = fn(P, &[DecapsItem<'_>], &mut [&mut [u8]], &mut [Status]);

/// One KEM family: with kernels `K` of parameter set `P`, how it cuts a batch (`keygen`: a
/// key-generation batch), its key lengths, its chunk pipelines on a worker's stream, and the
/// CPU backend's operations that stand in for a chunk no device could finish.
pub struct Family<K, P> {
    pub cut: fn(&GpuConfig, bool) -> Cut,
    pub lens: fn(P) -> KeyLens,
    pub keygen: KeygenChunk<K>,
    pub encaps: EncapsChunk<K, P>,
    pub decaps: DecapsChunk<K, P>,
    pub cpu_keygen: CpuKeygen<P>,
    pub cpu_encaps: CpuEncaps<P>,
    pub cpu_decaps: CpuDecaps<P>,
}

// Each operation takes the batch's arrays one by one, as the `Backend` operations do.
#[allow(clippy::too_many_arguments)]
impl<K: Sync, P: Copy + Send + Sync> Family<K, P> {
    /// KeyGen of `statuses.len()` items over the devices in `units`; `seeds` (a row per item)
    /// `None`: each chunk draws its own.
    pub fn keygen(
        &self,
        units: &[Bound<'_, K>],
        cfg: &GpuConfig,
        p: P,
        seeds: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        statuses: &mut [Status],
    ) {
        let len = (self.lens)(p);
        let c = (self.cut)(cfg, true);
        let sizes = chunk_sizes(statuses.len(), c.chunk, c.ramp);
        // Checks the arrays' lengths (every status BadLength and no chunk if one is wrong).
        let chunks = keygen_chunks(&sizes, len, seeds, pks, sks, statuses);
        let reg = hostmem::snapshot();
        run_chunks(
            units,
            c.workers,
            &sizes,
            chunks,
            |u, w, c| {
                // Seeds not given come from a key of OS randomness per chunk, expanded by the
                // chunk (one draw for the whole batch kept the GPU waiting for all of it).
                let key;
                let seeds = match c.seeds {
                    Some(x) => Seeds::Given(x),
                    None => match crate::rng::array32() {
                        Ok(k) => {
                            key = zeroize::Zeroizing::new(k);
                            Seeds::Drawn(&key)
                        }
                        Err(e) => {
                            c.statuses.iter_mut().for_each(|x| *x = Err(e));
                            return Ok(());
                        }
                    },
                };
                let n = c.statuses.len();
                (self.keygen)(w, u.kernels, &reg, n, seeds, c.pks, c.sks)
                    .map_err(|e| format!("{e:?}"))?;
                c.statuses.iter_mut().for_each(|x| *x = Ok(()));
                Ok(())
            },
            |c| (self.cpu_keygen)(p, c.seeds, c.pks, c.sks, c.statuses),
        )
    }

    /// Encapsulation of every item over the devices in `units`.
    pub fn encaps(
        &self,
        units: &[Bound<'_, K>],
        cfg: &GpuConfig,
        p: P,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let c = (self.cut)(cfg, false);
        let sizes = chunk_sizes(items.len(), c.chunk, c.ramp);
        let reg = hostmem::snapshot();
        let chunks: Vec<_> = cut(items, &sizes, 1)
            .into_iter()
            .zip(cut_mut(cts, &sizes, 1))
            .zip(cut_mut(sss, &sizes, 1))
            .zip(cut_mut(statuses, &sizes, 1))
            .collect();
        run_chunks(
            units,
            c.workers,
            &sizes,
            chunks,
            |u, w, (((it, ct), ss), st)| {
                (self.encaps)(w, u.kernels, p, &reg, it, ct, ss, st).map_err(|e| format!("{e:?}"))
            },
            |(((it, ct), ss), st)| (self.cpu_encaps)(p, it, ct, ss, st),
        )
    }

    /// Decapsulation of every item over the devices in `units`.
    pub fn decaps(
        &self,
        units: &[Bound<'_, K>],
        cfg: &GpuConfig,
        p: P,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        statuses: &mut [Status],
    ) {
        let c = (self.cut)(cfg, false);
        let sizes = chunk_sizes(items.len(), c.chunk, c.ramp);
        let reg = hostmem::snapshot();
        let chunks: Vec<_> = cut(items, &sizes, 1)
            .into_iter()
            .zip(cut_mut(sss, &sizes, 1))
            .zip(cut_mut(statuses, &sizes, 1))
            .collect();
        run_chunks(
            units,
            c.workers,
            &sizes,
            chunks,
            |u, w, ((it, ss), st)| {
                (self.decaps)(w, u.kernels, p, &reg, it, ss, st).map_err(|e| format!("{e:?}"))
            },
            |((it, ss), st)| (self.cpu_decaps)(p, it, ss, st),
        )
    }
}
