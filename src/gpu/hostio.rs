//! One chunk's per-item rows moved between the device and registered caller memory (see
//! `hostmem`), with no host staging copy: one strided DMA on a copy engine when the rows are
//! evenly spaced (a caller's array of keys or signatures), else the gather/scatter kernels of
//! `kernels/hostio.cuh` following a table of row addresses.

use super::hostmem::Ranges;
use super::launch::{blocks, kernel_table, Dev};
use super::nvrtc::Module;
use super::worker::{par_copy, par_move_secret, End, Phase, Worker};
use cudarc::driver::DriverError;

/// Threads per block of the gather/scatter kernels (one warp per row).
const BLOCK: u32 = 256;

kernel_table! {
    /// The row kernels of `kernels/hostio.cuh` (in both families' modules).
    struct RowKernels { gather_rows, scatter_rows }
}

/// A module's row kernels, and whether even rows go through them too (tuning: measures one
/// path against the other).
pub struct HostIo {
    k: RowKernels,
    force_kernel: bool,
}

impl HostIo {
    pub fn resolve(module: &Module, force_kernel: bool) -> Result<HostIo, String> {
        Ok(HostIo {
            k: RowKernels::resolve(module)?,
            force_kernel,
        })
    }

    /// Every kernel name, for the compile tests.
    #[cfg(test)]
    pub const NAMES: &'static [&'static str] = RowKernels::NAMES;

    /// `gather_rows(src, len, dst, stride, n)`: row i of `dst` (at i * stride) <- `len` bytes
    /// at host address `src[i]` (0: skip). One warp per row.
    fn gather_rows(
        &self,
        w: &mut Worker,
        src: Dev<u64>,
        len: u32,
        dst: Dev<u8>,
        stride: u32,
        n: u32,
    ) -> Result<(), DriverError> {
        let grid = blocks(n as usize * 32, BLOCK);
        let args = [src.into(), len.into(), dst.into(), stride.into(), n.into()];
        w.launch(&self.k.gather_rows, grid, BLOCK, &args)
    }

    /// `scatter_rows(src, stride, len, dst, n)`: `len` bytes of row i of `src` (at i * stride)
    /// -> host address `dst[i]` (0: skip). One warp per row.
    fn scatter_rows(
        &self,
        w: &mut Worker,
        src: Dev<u8>,
        stride: u32,
        len: u32,
        dst: Dev<u64>,
        n: u32,
    ) -> Result<(), DriverError> {
        let grid = blocks(n as usize * 32, BLOCK);
        let args = [src.into(), stride.into(), len.into(), dst.into(), n.into()];
        w.launch(&self.k.scatter_rows, grid, BLOCK, &args)
    }
}

/// The host addresses of a chunk's rows of `len` bytes; address 0 marks a row to skip.
pub struct Rows {
    addrs: Vec<u64>,
    len: usize,
    /// The rows' pitch when they are evenly spaced inside one driver registration (one DMA
    /// can move them all).
    dma_pitch: Option<usize>,
}

impl Rows {
    /// The rows' addresses, or `None` when any present row is not entirely in registered memory.
    pub fn registered<'a>(
        reg: &Ranges,
        len: usize,
        rows: impl Iterator<Item = Option<&'a [u8]>>,
    ) -> Option<Rows> {
        let addrs = rows
            .map(|r| match r {
                None => Some(0),
                Some(r) => (r.len() == len).then_some(r.as_ptr() as u64),
            })
            .collect::<Option<Vec<u64>>>()?;
        let mut rows = Rows {
            addrs,
            len,
            dma_pitch: None,
        };
        // Evenly spaced rows are covered when their span is: one registry lookup instead of
        // one per row (per-row lookups were a visible share of a chunk's host time).
        let span = rows
            .even_pitch()
            .map(|pitch| (pitch, (rows.addrs.len() - 1) * pitch + len));
        let first = rows.addrs.first().map_or(0, |&a| a as usize);
        let covered = match span {
            Some((_, span)) if reg.covers_range(first, span) => true,
            _ => rows
                .addrs
                .iter()
                .all(|&a| a == 0 || reg.covers_range(a as usize, len)),
        };
        if !covered {
            return None;
        }
        rows.dma_pitch = span
            .filter(|&(_, span)| reg.pieces(first, span).len() == 1)
            .map(|(pitch, _)| pitch);
        Some(rows)
    }

    /// Rows at device addresses (0: skip), moved by the gather/scatter kernels.
    pub fn device(addrs: Vec<u64>, len: usize) -> Rows {
        Rows {
            addrs,
            len,
            dma_pitch: None,
        }
    }

    /// Whether one strided DMA moves these rows (evenly spaced in one registration).
    pub fn is_dma(&self, io: &HostIo) -> bool {
        self.dma_pitch.is_some() && !io.force_kernel
    }

    /// The pitch when every row is present and row i starts at row 0 + i * pitch.
    fn even_pitch(&self) -> Option<usize> {
        let first = *self.addrs.first()?;
        let pitch = match self.addrs.get(1) {
            Some(&a) => a.checked_sub(first)? as usize,
            None => self.len,
        };
        let even = self
            .addrs
            .iter()
            .enumerate()
            .all(|(i, &a)| a != 0 && a == first + (i * pitch) as u64);
        (even && pitch >= self.len).then_some(pitch)
    }

    /// Uploads the address table into the worker's buffer `table` (pinned staging, then device).
    fn upload(&self, w: &mut Worker, table: &'static str) -> Result<Dev<u64>, DriverError> {
        let bytes = self.addrs.len() * 8;
        // The pinned buffer goes back to the pool before the queued copy has read it; a second
        // upload under the same name before the next `sync` waits for the stream first.
        w.staging(table)?;
        let mut stage = w.take_host(table, bytes)?;
        let h = &mut stage.bytes()?[..bytes];
        for (d, a) in h.chunks_exact_mut(8).zip(&self.addrs) {
            d.copy_from_slice(&a.to_le_bytes());
        }
        let d = w.dev(table, self.addrs.len())?;
        w.htod(d, h)?;
        Ok(d)
    }
}

/// Row i of the device buffer `dst` (at i * stride) <- row i of `rows`; `table` names the
/// worker buffer for the address table.
pub fn gather(
    w: &mut Worker,
    io: &HostIo,
    rows: &Rows,
    dst: Dev<u8>,
    stride: usize,
    table: &'static str,
) -> Result<(), DriverError> {
    let n = rows.addrs.len();
    match rows.dma_pitch.filter(|_| !io.force_kernel) {
        Some(pitch) => w.copy_rows(
            End::Host(rows.addrs[0], pitch),
            End::Device(dst.addr(), stride),
            rows.len,
            n,
        ),
        None => {
            let t = rows.upload(w, table)?;
            io.gather_rows(w, t, rows.len as u32, dst, stride as u32, n as u32)
        }
    }
}

/// Row i of `rows` <- the first `rows.len` bytes of row i of the device buffer `src` (at
/// i * stride); rows with address 0 are left alone. Written by the worker's next `sync`.
pub fn scatter(
    w: &mut Worker,
    io: &HostIo,
    src: Dev<u8>,
    stride: usize,
    rows: &Rows,
    table: &'static str,
) -> Result<(), DriverError> {
    let n = rows.addrs.len();
    match rows.dma_pitch.filter(|_| !io.force_kernel) {
        Some(pitch) => w.copy_rows(
            End::Device(src.addr(), stride),
            End::Host(rows.addrs[0], pitch),
            rows.len,
            n,
        ),
        None => {
            let t = rows.upload(w, table)?;
            io.scatter_rows(w, src, stride as u32, rows.len as u32, t, n as u32)
        }
    }
}

/// A chunk's key rows (packed on the device at `pk`, `sk`) into the caller's arrays `pks`,
/// `sks`, waiting for the stream: by DMA straight into them when both lie in registered
/// memory (one copy per driver registration they span), else through the worker's pinned
/// buffer `stage` and a copy on all cores, the secret keys wiped from the buffer as they go.
pub fn keys_out(
    w: &mut Worker,
    reg: &Ranges,
    stage: &'static str,
    (pk, pks): (Dev<u8>, &mut [u8]),
    (sk, sks): (Dev<u8>, &mut [u8]),
) -> Result<(), DriverError> {
    if reg.covers(pks) && reg.covers(sks) {
        for (dst, src) in [(pks, pk), (sks, sk)] {
            let base = dst.as_ptr() as usize;
            for (at, len) in reg.pieces(base, dst.len()) {
                w.dtoh(&mut dst[at - base..at - base + len], src.add(at - base))?;
            }
        }
        w.end_phase(Phase::Staging);
        w.sync()?;
        w.end_phase(Phase::GpuWait);
        return Ok(());
    }
    let (np, ns) = (pks.len(), sks.len());
    let mut out = w.take_host(stage, np + ns)?;
    let o = &mut out.bytes()?[..np + ns];
    let (opk, osk) = o.split_at_mut(np);
    w.dtoh(opk, pk)?;
    w.dtoh(osk, sk)?;
    w.end_phase(Phase::Staging);
    w.sync()?;
    w.end_phase(Phase::GpuWait);
    rayon::join(|| par_copy(pks, opk), || par_move_secret(sks, osk));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(addrs: &[u64], len: usize) -> Rows {
        Rows {
            addrs: addrs.to_vec(),
            len,
            dma_pitch: None,
        }
    }

    #[test]
    fn registered_rows_need_every_row_covered_and_one_region_for_a_dma() {
        let mem = vec![0u8; 1 << 14];
        let base = mem.as_ptr() as usize;
        // One caller buffer over the first 8 KiB in two driver regions; nothing after it.
        let reg = Ranges::with(
            vec![(base, base + 8192)],
            vec![(base, base + 4096), (base + 4096, base + 8192)],
        );
        let rows_at = |offs: &[usize]| {
            offs.iter()
                .map(|&o| Some(&mem[o..o + 100]))
                .collect::<Vec<_>>()
        };
        let even =
            Rows::registered(&reg, 100, rows_at(&[0, 100, 200]).into_iter()).expect("covered");
        assert_eq!(even.dma_pitch, Some(100));
        let across =
            Rows::registered(&reg, 100, rows_at(&[4000, 4100]).into_iter()).expect("covered");
        assert_eq!(
            across.dma_pitch, None,
            "a DMA may not span two registrations"
        );
        let shuffled =
            Rows::registered(&reg, 100, rows_at(&[700, 0, 300]).into_iter()).expect("covered");
        assert_eq!(shuffled.dma_pitch, None);
        assert!(
            Rows::registered(&reg, 100, rows_at(&[0, 8100]).into_iter()).is_none(),
            "a row past the buffer"
        );
        assert!(
            Rows::registered(&reg, 100, rows_at(&[8192, 8292]).into_iter()).is_none(),
            "rows outside"
        );
        assert!(
            Rows::registered(&reg, 99, rows_at(&[0]).into_iter()).is_none(),
            "wrong row length"
        );
        let skipped =
            Rows::registered(&reg, 100, [Some(&mem[..100]), None].into_iter()).expect("covered");
        assert_eq!(skipped.addrs[1], 0);
    }

    #[test]
    fn even_pitch_needs_every_row_evenly_spaced_and_wide_enough() {
        assert_eq!(rows(&[1000, 1010, 1020], 10).even_pitch(), Some(10));
        assert_eq!(rows(&[1000, 1016, 1032], 10).even_pitch(), Some(16));
        assert_eq!(rows(&[1000], 10).even_pitch(), Some(10));
        assert_eq!(rows(&[1000, 1010, 1021], 10).even_pitch(), None);
        assert_eq!(rows(&[1000, 1005, 1010], 10).even_pitch(), None); // overlapping rows
        assert_eq!(rows(&[1000, 1000, 1000], 10).even_pitch(), None); // one shared row
        assert_eq!(rows(&[1000, 0, 1020], 10).even_pitch(), None); // a skipped row
        assert_eq!(rows(&[1020, 1010, 1000], 10).even_pitch(), None); // descending
        assert_eq!(rows(&[], 10).even_pitch(), None);
    }
}
