//! Caller memory registered with the CUDA driver: page-locked, and mapped into every GPU's
//! address space. Batches whose buffers lie in registered memory skip the host staging copies:
//! the copy engines DMA straight from and into the caller's buffers, and rows scattered over
//! the caller's memory are gathered by a kernel reading them over PCIe (`kernels/hostio.cuh`).
//!
//! The registry is process-wide (like the driver's own registration). Batches hold its read
//! lock while they run, so an unregister waits for the batches that may be using the memory.

use crate::Error;
use cudarc::driver::{sys, CudaContext};
use std::sync::{Arc, RwLock, RwLockReadGuard};

/// The registry: the callers' byte ranges, and the page-aligned regions registered with the
/// driver to cover them. Two buffers may share a page (small heap allocations often do), and
/// the driver refuses to register a page twice, so a new buffer registers only the pages no
/// region covers yet, and a region is unregistered when no buffer uses it any more.
#[derive(Default)]
pub struct Ranges {
    /// Callers' ranges `[start, end)`, sorted by start and disjoint.
    buffers: Vec<(usize, usize)>,
    /// Driver registrations `[start, end)` (page-aligned), sorted by start and disjoint.
    regions: Vec<(usize, usize)>,
}

static REGISTERED: RwLock<Ranges> = RwLock::new(Ranges {
    buffers: Vec::new(),
    regions: Vec::new(),
});

/// The host page size: the driver pins whole pages.
fn page() -> usize {
    static PAGE: once_cell::sync::Lazy<usize> = once_cell::sync::Lazy::new(|| {
        // SAFETY: sysconf only reads a system constant.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
    });
    *PAGE
}

impl Ranges {
    /// A registry with the given caller buffers and driver regions (for other modules' tests).
    #[cfg(test)]
    pub fn with(buffers: Vec<(usize, usize)>, regions: Vec<(usize, usize)>) -> Ranges {
        Ranges { buffers, regions }
    }

    /// Whether every byte of `buf` is registered.
    pub fn covers(&self, buf: &[u8]) -> bool {
        self.covers_range(buf.as_ptr() as usize, buf.len())
    }

    /// Whether `[start, start + len)` lies entirely in registered caller buffers.
    pub fn covers_range(&self, start: usize, len: usize) -> bool {
        let end = start + len;
        // From the last buffer starting at or before `start`, through buffers that follow
        // each other without a gap (one caller buffer may be registered in parts).
        let i = self.buffers.partition_point(|&(s, _)| s <= start);
        if i == 0 {
            return false;
        }
        let mut reach = self.buffers[i - 1].1;
        for &(s, e) in &self.buffers[i..] {
            if reach >= end || s != reach {
                break;
            }
            reach = e;
        }
        reach >= end
    }

    /// `[start, start + len)` cut at the boundaries of the driver's registrations: one DMA
    /// may not span two of them (the driver refuses it), and buffers that share a page with
    /// an earlier one span several.
    pub fn pieces(&self, start: usize, len: usize) -> Vec<(usize, usize)> {
        let end = start + len;
        self.regions
            .iter()
            .filter(|&&(s, e)| s < end && start < e)
            .map(|&(s, e)| (s.max(start), e.min(end) - s.max(start)))
            .collect()
    }

    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.buffers.iter().any(|&(s, e)| s < end && start < e)
    }

    /// The page-aligned pieces of `[start, end)` that no driver region covers yet.
    fn uncovered_pages(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let page = page();
        let (mut at, end) = (start / page * page, end.div_ceil(page) * page);
        let mut gaps = Vec::new();
        for &(s, e) in &self.regions {
            if e <= at || s >= end {
                continue;
            }
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(e);
        }
        if at < end {
            gaps.push((at, end));
        }
        gaps
    }

    /// The driver regions no buffer touches any more.
    fn unused_regions(&self) -> Vec<(usize, usize)> {
        self.regions
            .iter()
            .copied()
            .filter(|&(s, e)| !self.buffers.iter().any(|&(bs, be)| bs.max(s) < be.min(e)))
            .collect()
    }
}

fn insert_sorted(v: &mut Vec<(usize, usize)>, r: (usize, usize)) {
    let at = v.partition_point(|&(s, _)| s < r.0);
    v.insert(at, r);
}

/// The registry for the duration of a batch (see the module comment).
pub fn snapshot() -> RwLockReadGuard<'static, Ranges> {
    REGISTERED.read().unwrap_or_else(|e| e.into_inner())
}

fn driver_error(what: &str, r: sys::CUresult) -> (Error, String) {
    let e = if r == sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        || r == sys::CUresult::CUDA_ERROR_INVALID_VALUE
    {
        Error::InvalidArgument
    } else {
        Error::Device
    };
    (e, format!("{what}: {r:?}"))
}

/// Page-locks `len` bytes at `ptr` and maps them for every device (`ctx` is any of the
/// backend's contexts; the registration is portable across contexts).
pub fn register(ctx: &Arc<CudaContext>, ptr: *const u8, len: usize) -> Result<(), (Error, String)> {
    if ptr.is_null() {
        return Err((Error::NullPointer, "NULL buffer".into()));
    }
    if len == 0 {
        return Err((Error::InvalidArgument, "empty buffer".into()));
    }
    let (start, end) = (ptr as usize, ptr as usize + len);
    let mut reg = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if reg.overlaps(start, end) {
        return Err((
            Error::InvalidArgument,
            "overlaps a registered buffer".into(),
        ));
    }
    ctx.bind_to_thread()
        .map_err(|e| (Error::Device, format!("binding the context: {e:?}")))?;
    let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
    let gaps = reg.uncovered_pages(start, end);
    for (i, &(s, e)) in gaps.iter().enumerate() {
        // SAFETY: the pages hold (part of) the caller's live allocation, which it promises to
        // keep allocated until it unregisters; registering only pins and maps them.
        let r = unsafe { sys::cuMemHostRegister_v2(s as *mut _, e - s, flags) };
        if r != sys::CUresult::CUDA_SUCCESS {
            for &(s, _) in &gaps[..i] {
                // SAFETY: registered just above, used by no buffer yet.
                unsafe { sys::cuMemHostUnregister(s as *mut _) };
            }
            return Err(driver_error("cuMemHostRegister", r));
        }
    }
    for g in gaps {
        insert_sorted(&mut reg.regions, g);
    }
    insert_sorted(&mut reg.buffers, (start, end));
    Ok(())
}

/// Undoes [`register`] for the buffer that starts at `ptr`, once no batch is running.
pub fn unregister(ctx: &Arc<CudaContext>, ptr: *const u8) -> Result<(), (Error, String)> {
    if ptr.is_null() {
        return Err((Error::NullPointer, "NULL buffer".into()));
    }
    let mut reg = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    let Some(at) = reg.buffers.iter().position(|&(s, _)| s == ptr as usize) else {
        return Err((Error::InvalidArgument, "not a registered buffer".into()));
    };
    ctx.bind_to_thread()
        .map_err(|e| (Error::Device, format!("binding the context: {e:?}")))?;
    reg.buffers.remove(at);
    let mut failed = None;
    for (s, e) in reg.unused_regions() {
        // SAFETY: `s` starts a region this module registered and no registered buffer touches
        // any more; the write lock guarantees no batch is using it through the device mapping.
        let r = unsafe { sys::cuMemHostUnregister(s as *mut _) };
        if r == sys::CUresult::CUDA_SUCCESS {
            reg.regions.retain(|&x| x != (s, e));
        } else {
            failed.get_or_insert(r);
        }
    }
    match failed {
        None => Ok(()),
        Some(r) => Err(driver_error("cuMemHostUnregister", r)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_only_whole_buffers_inside_one_range() {
        let r = Ranges {
            buffers: vec![(100, 200), (300, 400)],
            regions: vec![(0, 4096)],
        };
        assert!(r.covers_range(100, 100));
        assert!(r.covers_range(150, 10));
        assert!(r.covers_range(300, 1));
        assert!(!r.covers_range(99, 2));
        assert!(!r.covers_range(190, 20));
        assert!(!r.covers_range(250, 10));
        assert!(!r.covers_range(399, 2));
        assert!(!r.covers_range(10, 1));
        let joined = Ranges {
            buffers: vec![(100, 200), (200, 300), (310, 400)],
            regions: vec![],
        };
        assert!(joined.covers_range(150, 150));
        assert!(!joined.covers_range(150, 170));
        assert!(r.overlaps(150, 350) && !r.overlaps(200, 300));
    }

    #[test]
    fn pieces_split_at_registration_boundaries() {
        let r = Ranges {
            buffers: vec![],
            regions: vec![(0, 4096), (4096, 12288), (12288, 20480)],
        };
        assert_eq!(r.pieces(100, 50), vec![(100, 50)]);
        assert_eq!(r.pieces(4000, 200), vec![(4000, 96), (4096, 104)]);
        assert_eq!(
            r.pieces(4000, 10000),
            vec![(4000, 96), (4096, 8192), (12288, 1712)]
        );
    }

    #[test]
    fn shared_pages_are_registered_once_and_released_with_their_last_buffer() {
        if page() != 4096 {
            println!("SKIPPED: the figures below assume 4 KiB pages");
            return;
        }
        let mut r = Ranges::default();
        // A buffer in pages 1..3, then one sharing page 2 and reaching page 4.
        assert_eq!(r.uncovered_pages(4100, 12000), vec![(4096, 12288)]);
        r.regions.push((4096, 12288));
        r.buffers.push((4100, 12000));
        assert_eq!(r.uncovered_pages(12000, 17000), vec![(12288, 20480)]);
        r.regions.push((12288, 20480));
        r.buffers.push((12000, 17000));
        // One between two regions with a gap in the middle.
        assert_eq!(
            r.uncovered_pages(100, 30000),
            vec![(0, 4096), (20480, 32768)]
        );
        assert!(r.unused_regions().is_empty());
        r.buffers.remove(0);
        // Page 2 (the first region) is still used by the second buffer.
        assert!(r.unused_regions().is_empty());
        r.buffers.remove(0);
        assert_eq!(r.unused_regions(), vec![(4096, 12288), (12288, 20480)]);
    }
}
