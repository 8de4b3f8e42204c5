//! Sessions: read-only or read-write, each with at most one search, one signing and one
//! verification under way. The table is shared by all threads; each session has its own lock,
//! so sessions used by different threads never wait for each other.

use crate::ck::*;
use crate::mech::sign;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

#[derive(Default)]
pub struct Session {
    pub rw: bool,
    pub find: Option<Vec<CK_OBJECT_HANDLE>>,
    pub sign: Option<sign::Op>,
    pub verify: Option<sign::Op>,
    /// Message-based operations (C_MessageSignInit, C_MessageVerifyInit).
    pub msg_sign: Option<sign::Op>,
    pub msg_verify: Option<sign::Op>,
}

/// (read-write?, the session)
type Entry = (bool, Arc<Mutex<Session>>);

#[derive(Default)]
pub struct Sessions {
    /// (read-write?, session): the flag is kept outside the session's lock so that counting
    /// sessions never waits for one that is busy.
    table: RwLock<HashMap<CK_SESSION_HANDLE, Entry>>,
    next: AtomicU64,
}

impl Sessions {
    pub fn open(&self, rw: bool) -> CK_SESSION_HANDLE {
        let h = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let s = Session {
            rw,
            ..Session::default()
        };
        self.table
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(h, (rw, Arc::new(Mutex::new(s))));
        h
    }

    pub fn get(&self, h: CK_SESSION_HANDLE) -> Rv<Arc<Mutex<Session>>> {
        self.table
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&h)
            .map(|(_, s)| s.clone())
            .ok_or(CKR_SESSION_HANDLE_INVALID)
    }

    /// Whether the session is read-write.
    pub fn rw(&self, h: CK_SESSION_HANDLE) -> Rv<bool> {
        self.table
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&h)
            .map(|(rw, _)| *rw)
            .ok_or(CKR_SESSION_HANDLE_INVALID)
    }

    /// Runs `f` on the session, locked.
    pub fn with<R>(&self, h: CK_SESSION_HANDLE, f: impl FnOnce(&mut Session) -> Rv<R>) -> Rv<R> {
        let s = self.get(h)?;
        let mut g = s.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// Removes a session; `Err` if there is none.
    pub fn close(&self, h: CK_SESSION_HANDLE) -> Rv {
        self.table
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&h)
            .map(|_| ())
            .ok_or(CKR_SESSION_HANDLE_INVALID)
    }

    pub fn close_all(&self) -> Vec<CK_SESSION_HANDLE> {
        let mut t = self.table.write().unwrap_or_else(|e| e.into_inner());
        t.drain().map(|(h, _)| h).collect()
    }

    /// (all sessions, read-write sessions)
    pub fn counts(&self) -> (usize, usize) {
        let t = self.table.read().unwrap_or_else(|e| e.into_inner());
        let rw = t.values().filter(|(rw, _)| *rw).count();
        (t.len(), rw)
    }
}
