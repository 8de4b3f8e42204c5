//! A directory-backed store: one file per record, written to a temporary file, synced,
//! renamed over the old one and the directory synced (so a crash at any point leaves either
//! the old file or the new one); a lock file taken with flock(2) (`File::lock`) orders readers
//! and writers of all processes; a generation file counts the changes.

use super::{Guard, Store};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct DirStore {
    dir: PathBuf,
}

const LOCK: &str = ".lock";
const GENERATION: &str = "generation";
const TMP: &str = ".tmp-";

struct FileGuard(#[allow(dead_code)] File);
impl Guard for FileGuard {}

/// Record names are the module's own (`token`, `obj-<hex>`): anything else is refused rather
/// than turned into a path.
fn check(name: &str) -> io::Result<()> {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad record name",
        ))
    }
}

impl DirStore {
    /// Opens (creating if need be) the directory; leftovers of interrupted writes are removed.
    pub fn open(dir: &Path) -> io::Result<DirStore> {
        fs::create_dir_all(dir)?;
        let s = DirStore {
            dir: dir.to_path_buf(),
        };
        let _g = s.lock(true)?;
        for e in fs::read_dir(dir)? {
            let e = e?;
            if e.file_name().to_string_lossy().starts_with(TMP) {
                let _ = fs::remove_file(e.path());
            }
        }
        Ok(s)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.dir)?.sync_all()
    }
}

impl Store for DirStore {
    fn lock(&self, exclusive: bool) -> io::Result<Box<dyn Guard>> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(self.path(LOCK))?;
        if exclusive {
            f.lock()?;
        } else {
            f.lock_shared()?;
        }
        Ok(Box::new(FileGuard(f)))
    }

    fn generation(&self) -> io::Result<u64> {
        Ok(match fs::read_to_string(self.path(GENERATION)) {
            Ok(s) => s.trim().parse().unwrap_or(0),
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e),
        })
    }

    fn bump(&self) -> io::Result<()> {
        let next = self.generation()?.wrapping_add(1);
        self.write_file(GENERATION, next.to_string().as_bytes())
    }

    fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        check(name)?;
        match fs::read(self.path(name)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        check(name)?;
        self.write_file(name, bytes)
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        check(name)?;
        match fs::remove_file(self.path(name)) {
            Ok(()) => self.sync_dir(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        let mut v = Vec::new();
        for e in fs::read_dir(&self.dir)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) && check(&name).is_ok() {
                v.push(name);
            }
        }
        v.sort();
        Ok(v)
    }
}

impl DirStore {
    /// temp file + fsync + rename + fsync of the directory.
    fn write_file(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp = self.path(&format!(
            "{TMP}{name}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let r = (|| {
            let mut f = OpenOptions::new().create_new(true).write(true).open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, self.path(name))?;
            self.sync_dir()
        })();
        if r.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_the_generation_moves() {
        let d = std::env::temp_dir().join(format!("pqgpu-p11-store-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        let s = DirStore::open(&d).unwrap();
        fs::write(d.join(".tmp-obj-1-0"), b"half").unwrap();
        let s2 = DirStore::open(&d).unwrap();
        assert!(!d.join(".tmp-obj-1-0").exists());
        let g0 = s.generation().unwrap();
        {
            let _g = s.lock(true).unwrap();
            s.write("obj-a1", b"one").unwrap();
            s.bump().unwrap();
        }
        assert_eq!(s2.generation().unwrap(), g0 + 1);
        assert_eq!(s2.read("obj-a1").unwrap().unwrap(), b"one");
        assert_eq!(s2.list("obj-").unwrap(), vec!["obj-a1".to_string()]);
        s.remove("obj-a1").unwrap();
        assert_eq!(s2.read("obj-a1").unwrap(), None);
        assert!(s.write("../x", b"").is_err());
        let _ = fs::remove_dir_all(&d);
    }
}
