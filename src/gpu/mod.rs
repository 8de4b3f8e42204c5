//! The CUDA backend. Until the engine lands, no GPU is reported usable.

use crate::backend::Backend;
use crate::Error;
use std::sync::Arc;

/// The process-wide GPU backend, created lazily on first use (never at library load, so a
/// server that forks after loading keeps working). `NoDevice` when no GPU is usable.
pub fn backend() -> Result<Arc<dyn Backend>, Error> {
    Err(Error::NoDevice)
}
