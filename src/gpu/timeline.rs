//! The GPU timeline, a measurement of `tuning` builds (`PQGPU_TIMELINE=FILE`): for every copy
//! and kernel a worker queues, when its stream reached it and when it finished, in
//! milliseconds from one origin event per device, appended to FILE after each batch under a
//! `# batch` line. `scripts/device/timeline.py` sums it up (how long the copy engines and the
//! SMs were busy, and when nothing ran). Two events around every operation: for measuring
//! where a pipeline loses time, never for figures.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Rows of settled operations, not yet written: `worker label bytes start end`.
static ROWS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// One worker's queued operations and the device's origin.
pub struct Marks {
    origin: Arc<CudaEvent>,
    worker: usize,
    queued: Vec<(&'static str, usize, CudaEvent, CudaEvent)>,
}

/// An event that keeps its time (cudarc's default event does not).
fn timed(ctx: &Arc<CudaContext>) -> Result<CudaEvent, DriverError> {
    ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
}

/// The origin of a device's timeline: an event recorded now and waited for.
pub fn origin(ctx: &Arc<CudaContext>) -> Result<Arc<CudaEvent>, DriverError> {
    let stream = ctx.default_stream();
    let ev = timed(ctx)?;
    ev.record(&stream)?;
    ev.synchronize()?;
    Ok(Arc::new(ev))
}

impl Marks {
    pub fn new(origin: Arc<CudaEvent>, worker: usize) -> Marks {
        Marks {
            origin,
            worker,
            queued: Vec::new(),
        }
    }

    /// Queues `op` (a copy of `bytes`, or a launch: 0) on `stream` between two events.
    pub fn around(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        (label, bytes): (&'static str, usize),
        op: impl FnOnce() -> Result<(), DriverError>,
    ) -> Result<(), DriverError> {
        let start = timed(ctx)?;
        start.record(stream)?;
        op()?;
        let end = timed(ctx)?;
        end.record(stream)?;
        self.queued.push((label, bytes, start, end));
        Ok(())
    }

    /// After the stream is synchronised: the queued operations' times become rows.
    pub fn settle(&mut self) -> Result<(), DriverError> {
        let mut rows = Vec::with_capacity(self.queued.len());
        for (label, bytes, start, end) in self.queued.drain(..) {
            let (s, e) = (
                self.origin.elapsed_ms(&start)?,
                self.origin.elapsed_ms(&end)?,
            );
            rows.push(format!("{} {label} {bytes} {s:.4} {e:.4}", self.worker));
        }
        ROWS.lock().unwrap_or_else(|e| e.into_inner()).extend(rows);
        Ok(())
    }
}

/// Appends the rows settled since the last call to `path`, under `# batch WHAT`.
pub fn flush(path: &Path, what: &str) {
    let rows = std::mem::take(&mut *ROWS.lock().unwrap_or_else(|e| e.into_inner()));
    let mut f = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) => return eprintln!("timeline {}: {e}", path.display()),
    };
    let mut text = format!("# batch {what}\n");
    for r in rows {
        text.push_str(&r);
        text.push('\n');
    }
    if let Err(e) = f.write_all(text.as_bytes()) {
        eprintln!("timeline {}: {e}", path.display());
    }
}
