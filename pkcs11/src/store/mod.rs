//! Token storage: named records (the token's own record and one per token object) behind a
//! trait, so that the token logic does not know where they live. [`dir::DirStore`] keeps them
//! as files in a directory.
//!
//! Every record write is atomic (a crash mid-write leaves the old record or the new one, never
//! a mix) and bumps the store's generation, so that a process sees when another changed the
//! token and reloads. Readers and writers take the store's lock (shared or exclusive), which
//! holds across processes: two processes opening the same token see consistent objects.

pub mod dir;

use std::io;

/// Held while reading or writing; released when dropped.
pub trait Guard {}

pub trait Store: Send + Sync {
    /// Takes the store's lock, exclusive for writers.
    fn lock(&self, exclusive: bool) -> io::Result<Box<dyn Guard>>;
    /// A number that changes whenever a record is written or removed (read under the lock).
    fn generation(&self) -> io::Result<u64>;
    /// Advances the generation (under the exclusive lock, after a change).
    fn bump(&self) -> io::Result<()>;
    fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>>;
    /// Replaces (or creates) a record atomically and durably.
    fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Removes a record durably (no error if absent).
    fn remove(&self, name: &str) -> io::Result<()>;
    /// The names of the records that start with `prefix`.
    fn list(&self, prefix: &str) -> io::Result<Vec<String>>;
}
