//! Session management: open, close, information, login and logout. Login is the token's
//! (shared by every session of the application), as the specification has it.

use super::{guard, input, put};
use crate::ck::*;
use crate::token::Login;
use crate::{module, SLOT_ID};

/// # Safety
/// `ph` valid.
#[no_mangle]
pub unsafe extern "C" fn C_OpenSession(
    id: CK_SLOT_ID,
    flags: CK_FLAGS,
    _app: *mut std::ffi::c_void,
    _notify: CK_NOTIFY,
    ph: *mut CK_SESSION_HANDLE,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        if id != SLOT_ID {
            return Err(CKR_SLOT_ID_INVALID);
        }
        if flags & CKF_SERIAL_SESSION == 0 {
            return Err(CKR_SESSION_PARALLEL_NOT_SUPPORTED);
        }
        if ph.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let rw = flags & CKF_RW_SESSION != 0;
        {
            let mut t = m.token_write();
            t.refresh()?;
            if !t.initialized() {
                return Err(CKR_TOKEN_NOT_RECOGNIZED);
            }
            if !rw && t.login == Login::So {
                return Err(CKR_SESSION_READ_WRITE_SO_EXISTS);
            }
        }
        let h = m.sessions.open(rw);
        // SAFETY: checked non-NULL; the caller's promise.
        unsafe { put(ph, h) }
    })
}

fn close(m: &crate::Module, s: CK_SESSION_HANDLE) -> Rv {
    m.sessions.close(s)?;
    let mut t = m.token_write();
    t.drop_session_objects(s);
    if m.sessions.counts().0 == 0 {
        t.logout();
    }
    Ok(())
}

#[no_mangle]
pub extern "C" fn C_CloseSession(s: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        close(&m, s)
    })
}

#[no_mangle]
pub extern "C" fn C_CloseAllSessions(id: CK_SLOT_ID) -> CK_RV {
    guard(|| {
        let m = module()?;
        if id != SLOT_ID {
            return Err(CKR_SLOT_ID_INVALID);
        }
        let closed = m.sessions.close_all();
        let mut t = m.token_write();
        for s in closed {
            t.drop_session_objects(s);
        }
        t.logout();
        Ok(())
    })
}

/// # Safety
/// `info` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetSessionInfo(
    s: CK_SESSION_HANDLE,
    info: *mut CK_SESSION_INFO,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        let login = m.token_read().login;
        let state = match (login, rw) {
            (Login::Public, false) => CKS_RO_PUBLIC_SESSION,
            (Login::Public, true) => CKS_RW_PUBLIC_SESSION,
            (Login::User, false) => CKS_RO_USER_FUNCTIONS,
            (Login::User, true) => CKS_RW_USER_FUNCTIONS,
            (Login::So, _) => CKS_RW_SO_FUNCTIONS,
        };
        let i = CK_SESSION_INFO {
            slotID: SLOT_ID,
            state,
            flags: CKF_SERIAL_SESSION | if rw { CKF_RW_SESSION } else { 0 },
            ulDeviceError: 0,
        };
        // SAFETY: the caller's promise.
        unsafe { put(info, i) }
    })
}

/// # Safety
/// `pin` holds `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_Login(
    s: CK_SESSION_HANDLE,
    user: CK_USER_TYPE,
    pin: *mut CK_UTF8CHAR,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        // SAFETY: the caller's promise.
        let pin = unsafe { input(pin, n) }?;
        let who = match user {
            CKU_USER => Login::User,
            CKU_SO => Login::So,
            CKU_CONTEXT_SPECIFIC => return Err(CKR_OPERATION_NOT_INITIALIZED),
            _ => return Err(CKR_USER_TYPE_INVALID),
        };
        let mut t = m.token_write();
        match (t.login, who) {
            (Login::Public, _) => {}
            (a, b) if a == b => return Err(CKR_USER_ALREADY_LOGGED_IN),
            _ => return Err(CKR_USER_ANOTHER_ALREADY_LOGGED_IN),
        }
        if who == Login::So && m.sessions.counts().1 < m.sessions.counts().0 {
            return Err(CKR_SESSION_READ_ONLY_EXISTS);
        }
        t.login(who, pin)
    })
}

#[no_mangle]
pub extern "C" fn C_Logout(s: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        let mut t = m.token_write();
        if t.login == Login::Public {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        t.logout();
        Ok(())
    })
}
