//! A worker: one CUDA stream with its own memory pool of reused device buffers and pinned
//! host staging buffers. Batches are cut into chunks that workers run side by side, so one
//! chunk's copies and host work overlap another's kernels.

use super::config::{ChunkOp, OpSet};
use super::launch::{Arg, Dev, Kernel};
use super::scheduler::Turn;
use super::timeline::Marks;
use cudarc::driver::result::{memcpy_dtoh_async, memcpy_htod_async, memset_d8_async};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A worker's pinned host buffers not lent out, by name.
type HostPool = Arc<Mutex<HashMap<&'static str, PinnedHostSlice<u8>>>>;

pub struct Worker {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    dev: HashMap<&'static str, CudaSlice<u8>>,
    /// What a buffer of `dev` holds when it is a function of a tag alone (see
    /// [`Worker::dev_kept`]): the tag's SHA3-256 digest, so no key is kept here.
    kept: HashMap<&'static str, [u8; 32]>,
    host: HostPool,
    /// With profiling on (`tuning` builds): milliseconds and launches per kernel (each launch is
    /// then synchronised, so only for measuring where the time goes).
    pub profile: Option<HashMap<&'static str, (f64, usize)>>,
    /// Host-side seconds of this worker's chunks per [`Phase`] (printed with the host profile).
    pub phases: [f64; 3],
    clock: std::time::Instant,
    /// Pinned buffers handed to queued copies since the last `sync` (see [`Worker::staging`]).
    staged_since_sync: Vec<&'static str>,
    /// The batch's largest chunk over the running chunk's size (see [`Worker::plan`]).
    room: f64,
    /// The operations whose chunks wait asleep (`GpuConfig::sleep`), whether the running
    /// chunk's does, and the events a chunk waits on: blocking-sync when asleep, spinning
    /// otherwise (made on first use).
    sleep: OpSet,
    asleep: bool,
    wake: Option<CudaEvent>,
    spin: Option<CudaEvent>,
    /// With the timeline on (`tuning` builds): this stream's queued copies and launches.
    marks: RefCell<Option<Marks>>,
    /// The running chunk's turn to queue its inputs, until its first kernel (and whether it
    /// has waited for it).
    turn: RefCell<Option<(Turn, bool)>>,
}

/// The host phases of a chunk, for the host profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Checking items and staging inputs, until the last copy or launch is queued.
    Staging = 0,
    /// Waiting for the stream.
    GpuWait = 1,
    /// Unpacking results into the caller's buffers.
    Unpacking = 2,
}

/// A pinned host staging buffer lent by a worker's pool; it goes back to the pool when dropped
/// (whatever way the chunk ends). Pinned memory is cached (not write-combined) so the host can
/// read it.
pub struct HostBuf {
    name: &'static str,
    buf: Option<PinnedHostSlice<u8>>,
    pool: HostPool,
}

impl HostBuf {
    /// The whole buffer (at least the bytes asked for).
    pub fn bytes(&mut self) -> Result<&mut [u8], DriverError> {
        self.buf.as_mut().expect("held until drop").as_mut_slice()
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.pool
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(self.name, b);
        }
    }
}

/// Rows (signatures, ciphertexts: kilobytes each) one rayon task copies at least: finer
/// splits cost more in the pool's scheduling than the copies, with several batches in flight,
/// and a chunk of fewer than twice this runs on its own thread: a call into the pool from
/// outside it wakes a pool thread and puts this one to sleep, which cost small serving chunks
/// more than their copies (H200, 64 against 256: `openssl speed -multi 4` under MPS signing
/// 0.99-1.02 M against 1.08 M/s, verifying 1.57-1.67 M against 2.23-2.27 M/s).
pub const ROWS_PER_TASK: usize = 256;

/// Copies between large host buffers on all cores (one core's memcpy would bound the
/// end-to-end rate of keygen and sign), with streaming stores into the destination.
pub fn par_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(1 << 18)
        .zip(src.par_chunks(1 << 18))
        .for_each(|(d, s)| crate::simd::stream::copy(d, s));
}

/// Moves secret bytes out of a staging buffer on all cores, wiping each piece of `src` right
/// after its copy, while the piece is still in the core's cache: one pass over the staging
/// memory instead of a copy pass and then a wipe pass (pageable keygen is bound by the host's
/// memory traffic: 264 MB of secret keys per ML-DSA-65 batch of 65,536).
pub fn par_move_secret(dst: &mut [u8], src: &mut [u8]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(1 << 16)
        .zip(src.par_chunks_mut(1 << 16))
        .for_each(|(d, s)| {
            crate::simd::stream::copy(d, s);
            s.fill(0);
        });
}

/// One end of a strided copy: an address and its row pitch.
pub enum End {
    Host(u64, usize),
    Device(u64, usize),
}

impl End {
    /// Memory type, host address, device address (the one of the other kind is 0; the driver
    /// reads the field that matches the type) and pitch.
    fn parts(self) -> (sys::CUmemorytype, u64, u64, usize) {
        match self {
            End::Host(a, pitch) => (sys::CUmemorytype::CU_MEMORYTYPE_HOST, a, 0, pitch),
            End::Device(a, pitch) => (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, 0, a, pitch),
        }
    }
}

/// A 2D copy descriptor of `rows` rows of `width` bytes, endpoints left to the caller.
fn copy_2d(width: usize, rows: usize) -> sys::CUDA_MEMCPY2D {
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        srcPitch: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        dstHost: std::ptr::null_mut(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        dstPitch: 0,
        WidthInBytes: width,
        Height: rows,
    }
}

/// Rounds a size up to 256 bytes (the alignment the kernels' u64 loads and L2 lines like).
fn round_up(n: usize) -> usize {
    n.div_ceil(256).max(1) * 256
}

impl Worker {
    /// A worker on a new stream of `ctx`; `profile` times every launch (tuning only); chunks
    /// of the operations in `sleep` wait for the GPU asleep.
    pub fn new(ctx: &Arc<CudaContext>, profile: bool, sleep: OpSet) -> Result<Worker, DriverError> {
        Ok(Worker {
            ctx: ctx.clone(),
            stream: ctx.new_stream()?,
            dev: HashMap::new(),
            kept: HashMap::new(),
            host: Default::default(),
            profile: profile.then(HashMap::new),
            phases: [0.0; 3],
            clock: std::time::Instant::now(),
            staged_since_sync: Vec::new(),
            room: 1.0,
            sleep,
            asleep: false,
            wake: None,
            spin: None,
            marks: RefCell::new(None),
            turn: RefCell::new(None),
        })
    }

    /// The next chunk's turn to queue its inputs: its first host-to-device copy waits for it,
    /// its first kernel (or wait for the GPU) passes it on.
    pub fn set_turn(&mut self, turn: Turn) {
        *self.turn.get_mut() = Some((turn, false));
    }

    /// Before an input copy: waits for the chunk's turn (once).
    fn take_turn(&self) {
        if let Some((t, waited)) = self.turn.borrow_mut().as_mut() {
            if !*waited {
                t.wait();
                *waited = true;
            }
        }
    }

    /// The chunk's inputs are queued: the next chunk's turn.
    fn pass_turn(&mut self) {
        if let Some((t, _)) = self.turn.get_mut().take() {
            t.release();
        }
    }

    /// Puts this worker's copies and launches on the timeline (see `timeline`) as `id`.
    pub fn trace(&mut self, origin: Arc<CudaEvent>, id: usize) {
        *self.marks.get_mut() = Some(Marks::new(origin, id));
    }

    /// Queues `op` on the stream (between two timeline events when the timeline is on;
    /// `what`: its label and the bytes a copy moves).
    fn queue(
        &self,
        what: (&'static str, usize),
        op: impl FnOnce() -> Result<(), DriverError>,
    ) -> Result<(), DriverError> {
        match self.marks.borrow_mut().as_mut() {
            Some(m) => m.around(&self.ctx, &self.stream, what, op),
            None => op(),
        }
    }

    /// Says that the next chunk has `items` items and the largest of its batch `largest`:
    /// a pinned staging buffer that grows during the chunk grows to fit the largest (its
    /// length scaled by `largest / items`). A ramped batch starts with chunks an eighth of the
    /// largest, so otherwise a worker's staging would grow over several batches, and each
    /// growth pins fresh pages and frees the old ones, which waits for the whole device
    /// (H200: the first batches after a warm-up ran CTRU-Prime encapsulation at 2-9x the
    /// steady time). Device buffers grow as before: their reallocation waits only for this
    /// worker's stream, and some (signing's attempt buffers) do not scale with the items.
    pub fn plan(&mut self, items: usize, largest: usize) {
        self.room = largest.max(items) as f64 / items.max(1) as f64;
    }

    /// The device buffer `name` holding at least `len` elements of `T` (reused; grown with
    /// headroom).
    pub fn dev<T>(&mut self, name: &'static str, len: usize) -> Result<Dev<T>, DriverError> {
        // The caller may overwrite it: whatever it was kept for is gone.
        self.kept.remove(name);
        self.buffer(name, len)
    }

    /// The device buffer `name` as [`Worker::dev`], for contents that are a function of `tag`
    /// alone (a key's expanded matrix), and whether it still holds them: `true` when the last
    /// [`Worker::keep`] of `name` had the same tag and nothing has used the buffer since. The
    /// worker's stream orders the reuse after the launch that filled it.
    pub fn dev_kept<T>(
        &mut self,
        name: &'static str,
        len: usize,
        tag: &[u8; 32],
    ) -> Result<(Dev<T>, bool), DriverError> {
        // A reallocated buffer has already lost its tag (`buffer`).
        let d = self.buffer(name, len)?;
        let held = self.kept.get(name) == Some(tag);
        if !held {
            self.kept.remove(name);
        }
        Ok((d, held))
    }

    /// Records that the buffer `name` now holds (or, once the queued launches run, will hold)
    /// the contents of `tag` (see [`Worker::dev_kept`]).
    pub fn keep(&mut self, name: &'static str, tag: &[u8; 32]) {
        self.kept.insert(name, *tag);
    }

    fn buffer<T>(&mut self, name: &'static str, len: usize) -> Result<Dev<T>, DriverError> {
        let need = round_up(len * std::mem::size_of::<T>());
        let ok = self.dev.get(name).is_some_and(|b| b.len() >= need);
        if !ok {
            self.dev.remove(name);
            self.kept.remove(name);
            self.stream.synchronize()?;
            // SAFETY: every kernel writes what it later reads; no buffer is read uninitialised
            // except where a memset precedes it.
            let b = unsafe { self.stream.alloc::<u8>(round_up(need + need / 4)) }?;
            self.dev.insert(name, b);
        }
        let (ptr, _) = self.dev[name].device_ptr(&self.stream);
        Ok(Dev::at(ptr))
    }

    /// Lends the pinned host buffer `name` (at least `bytes` bytes, the running chunk's data:
    /// grown for the planned chunks, see [`Worker::plan`]) from the pool; it returns when the
    /// [`HostBuf`] is dropped.
    pub fn take_host(&mut self, name: &'static str, bytes: usize) -> Result<HostBuf, DriverError> {
        let pooled = self
            .host
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
            .filter(|b| b.len() >= bytes);
        let buf = match pooled {
            Some(b) => b,
            None => {
                let planned = (bytes as f64 * self.room) as usize;
                // SAFETY: the contents are unset; callers write before the copies read them.
                unsafe {
                    self.ctx
                        .alloc_pinned_with_flags::<u8>(round_up(planned + planned / 4), 0)
                }?
            }
        };
        Ok(HostBuf {
            name,
            buf: Some(buf),
            pool: self.host.clone(),
        })
    }

    /// Asynchronous host-to-device copy. The source must stay untouched until `sync`.
    pub fn htod<T>(&self, dst: Dev<T>, src: &[u8]) -> Result<(), DriverError> {
        self.take_turn();
        // SAFETY: dst was sized by `dev` for this copy; src is pinned (or the copy is staged
        // by the driver) and the caller keeps it alive and unmodified until `sync`.
        self.queue(("htod", src.len()), || unsafe {
            memcpy_htod_async(dst.addr(), src, self.stream.cu_stream())
        })
    }

    /// Asynchronous device-to-host copy; `dst` is valid after `sync`.
    pub fn dtoh<T>(&self, dst: &mut [u8], src: Dev<T>) -> Result<(), DriverError> {
        // SAFETY: src holds at least dst.len() bytes (sized by `dev`); dst outlives the copy
        // because the caller synchronises before touching it.
        self.queue(("dtoh", dst.len()), || unsafe {
            memcpy_dtoh_async(dst, src.addr(), self.stream.cu_stream())
        })
    }
    /// Asynchronous strided copy of `rows` rows of `width` bytes between a host end and a
    /// device end. Host rows must be registered memory, untouched until `sync` (which is when
    /// host rows being written are complete).
    pub fn copy_rows(
        &self,
        src: End,
        dst: End,
        width: usize,
        rows: usize,
    ) -> Result<(), DriverError> {
        let label = match dst {
            End::Host(..) => "rows_dtoh",
            End::Device(..) => {
                self.take_turn();
                "rows_htod"
            }
        };
        let mut c = copy_2d(width, rows);
        let (kind, host, device, pitch) = src.parts();
        (c.srcMemoryType, c.srcHost, c.srcDevice, c.srcPitch) =
            (kind, host as *const _, device, pitch);
        let (kind, host, device, pitch) = dst.parts();
        (c.dstMemoryType, c.dstHost, c.dstDevice, c.dstPitch) =
            (kind, host as *mut _, device, pitch);
        // SAFETY: the device side holds rows * pitch bytes (sized by `dev`); the host side lies
        // in one live registration the caller keeps untouched until `sync`.
        self.queue((label, width * rows), || {
            unsafe { sys::cuMemcpy2DAsync_v2(&c, self.stream.cu_stream()) }.result()
        })
    }

    /// Zeroes `len` elements at `dst`.
    pub fn zero<T>(&self, dst: Dev<T>, len: usize) -> Result<(), DriverError> {
        // SAFETY: dst holds at least `len` elements (sized by `dev`).
        unsafe {
            memset_d8_async(
                dst.addr(),
                0,
                len * std::mem::size_of::<T>(),
                self.stream.cu_stream(),
            )
        }
    }

    /// The event the running chunk waits on (see `sleep`), made on first use.
    fn wait_event(&mut self) -> Result<&CudaEvent, DriverError> {
        let (slot, flags) = match self.asleep {
            // (cudarc's flags are an enum, so timing stays on: without it the record would be
            // a little cheaper.)
            true => (&mut self.wake, CUevent_flags::CU_EVENT_BLOCKING_SYNC),
            false => (&mut self.spin, CUevent_flags::CU_EVENT_DEFAULT),
        };
        if slot.is_none() {
            *slot = Some(self.ctx.new_event(Some(flags))?);
        }
        Ok(slot.as_ref().expect("made above"))
    }

    /// Marks the work queued so far, for [`Worker::wait_mark`]: a chunk that needs an early
    /// result (its keys' verdicts) waits for that alone while the stream runs on.
    pub fn mark(&mut self) -> Result<(), DriverError> {
        let stream = self.stream.clone();
        self.wait_event()?.record(&stream)
    }

    /// Waits until the work queued before the last [`Worker::mark`] is done (copies to the
    /// host then complete); later work keeps running.
    pub fn wait_mark(&mut self) -> Result<(), DriverError> {
        self.pass_turn();
        self.wait_event()?.synchronize()
    }

    /// Waits until the stream's queued work is done: spinning in the driver (its default
    /// with fewer contexts than cores), or for a chunk whose operation sleeps, asleep on an
    /// event created for blocking synchronisation (the thread gives its core up meanwhile).
    pub fn sync(&mut self) -> Result<(), DriverError> {
        self.pass_turn();
        if self.asleep {
            let stream = self.stream.clone();
            let wake = self.wait_event()?;
            wake.record(&stream)?;
            wake.synchronize()?;
        } else {
            self.stream.synchronize()?;
        }
        if let Some(m) = self.marks.get_mut() {
            m.settle()?;
        }
        self.staged_since_sync.clear();
        Ok(())
    }

    /// Marks the pinned buffer `name` as read by a copy still queued on the stream; when it
    /// already is, waits for the stream first, so a buffer is never rewritten under a queued
    /// copy even if one chunk stages twice under the same name.
    pub fn staging(&mut self, name: &'static str) -> Result<(), DriverError> {
        if self.staged_since_sync.contains(&name) {
            self.sync()?;
        }
        self.staged_since_sync.push(name);
        Ok(())
    }

    /// Starts a chunk of `op`: its waits sleep if the configuration says so for `op`; its
    /// host phases are timed from here.
    pub fn start_chunk(&mut self, op: ChunkOp) {
        self.asleep = self.sleep.has(op);
        self.clock = std::time::Instant::now();
    }

    /// Ends host phase `p` and starts the next.
    pub fn end_phase(&mut self, p: Phase) {
        let now = std::time::Instant::now();
        self.phases[p as usize] += (now - self.clock).as_secs_f64();
        self.clock = now;
    }

    /// Launches kernel `k` on this worker's stream: `grid` blocks of `block` threads, `args` in
    /// the kernel's order (only the typed launchers of `gpu/*/kernels.rs` call this). With
    /// profiling on, each launch is timed with events (synchronising; for measuring only).
    pub fn launch(
        &mut self,
        k: &Kernel,
        grid: usize,
        block: u32,
        args: &[Arg],
    ) -> Result<(), DriverError> {
        if grid == 0 {
            return Ok(());
        }
        let timing = match self.profile {
            Some(_) => {
                let ev = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                ev.record(&self.stream)?;
                Some(ev)
            }
            None => None,
        };
        let mut b = self.stream.launch_builder(&k.f);
        for a in args {
            match a {
                Arg::P(p) => b.arg(p),
                Arg::U(u) => b.arg(u),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the typed launcher passes the kernel's parameters in its C order (pointers
        // as u64, scalars as u32); every pointer is a live device buffer of this worker (or 0
        // where the kernel documents a null meaning, or a registered host address for the
        // hostio kernels), sized by the caller for the kernel's indexing.
        self.queue((k.name, 0), || unsafe { b.launch(cfg) }.map(drop))?;
        self.pass_turn();
        if let (Some(start), Some(prof)) = (timing, self.profile.as_mut()) {
            let end = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            end.record(&self.stream)?;
            end.synchronize()?;
            let e = prof.entry(k.name).or_default();
            e.0 += start.elapsed_ms(&end)? as f64;
            e.1 += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_secrets_copies_every_byte_and_wipes_the_source() {
        // Not a multiple of the piece size, so the last piece is short.
        let n = 3 * (1 << 16) + 1234;
        let orig: Vec<u8> = (0..n).map(|i| (i * 7 + i / 251) as u8 | 1).collect();
        let mut src = orig.clone();
        let mut dst = vec![0u8; n];
        par_move_secret(&mut dst, &mut src);
        assert_eq!(dst, orig);
        assert!(src.iter().all(|&b| b == 0));
    }
}
