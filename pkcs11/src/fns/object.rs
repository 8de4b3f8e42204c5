//! Object management: import (C_CreateObject), destruction, attributes and search.

use super::{guard, put};
use crate::attr::{read_template, Given};
use crate::ck::*;
use crate::keys::{self, Origin, Uses};
use crate::mech::{mldsa, mlkem, slhdsa};
use crate::module;
use crate::object::{Object, Secret, SECRET_ATTRS};
use crate::token::{Login, Token};
use std::sync::Arc;
use zeroize::Zeroizing;

/// The usage flags of signature keys (ML-DSA, SLH-DSA).
pub const SIGN_USES: Uses = Uses {
    public: CKA_VERIFY,
    private: CKA_SIGN,
};

pub const MLKEM_USES: Uses = Uses {
    public: CKA_ENCAPSULATE,
    private: CKA_DECAPSULATE,
};

/// May this session create, change or destroy an object with these flags?
pub fn may_write(t: &Token, rw: bool, token_obj: bool, private_obj: bool) -> Rv {
    if token_obj && !rw {
        return Err(CKR_SESSION_READ_ONLY);
    }
    if private_obj && t.login != Login::User {
        return Err(CKR_USER_NOT_LOGGED_IN);
    }
    Ok(())
}

/// A visible object by handle.
pub fn visible(t: &Token, h: CK_OBJECT_HANDLE) -> Rv<Arc<Object>> {
    match t.get(h) {
        Some(o) if t.visible(o) => Ok(o.clone()),
        _ => Err(CKR_OBJECT_HANDLE_INVALID),
    }
}

/// # Safety
/// `tpl` holds `n` attributes; `ph` valid.
#[no_mangle]
pub unsafe extern "C" fn C_CreateObject(
    s: CK_SESSION_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ph: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        // SAFETY: the caller's promise.
        let t = unsafe { read_template(tpl, n) }?;
        let g = Given::new(&t)?;
        if ph.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let class = g.ulong(CKA_CLASS)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        let key_type = g.ulong(CKA_KEY_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        if !matches!(key_type, CKK_ML_DSA | CKK_SLH_DSA | CKK_ML_KEM)
            || !matches!(class, CKO_PUBLIC_KEY | CKO_PRIVATE_KEY)
        {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
        let ckp = g.ulong(CKA_PARAMETER_SET)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        let obj = match key_type {
            CKK_ML_KEM => import_mlkem(&m, &g, class, ckp)?,
            CKK_SLH_DSA => import_slhdsa(&m, &g, class, ckp)?,
            _ => import_mldsa(&m, &g, class, ckp)?,
        };
        let mut tok = m.token_write();
        may_write(&tok, rw, obj.is_token(), obj.is_private())?;
        let h = tok.add(obj, s)?;
        // SAFETY: checked non-NULL; the caller's promise.
        unsafe { put(ph, h) }
    })
}

/// An ML-DSA key from C_CreateObject: a public key's CKA_VALUE is checked; a private key
/// gives CKA_VALUE (checked) and/or CKA_SEED (the key is regenerated from it).
fn import_mldsa(m: &crate::Module, g: &Given, class: CK_OBJECT_CLASS, ckp: CK_ULONG) -> Rv<Object> {
    let set = mldsa::set_of(ckp)?;
    if class == CKO_PUBLIC_KEY {
        let value = g.bytes(CKA_VALUE).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        mldsa::check_public(set, value)?;
        let mut a = keys::build(
            class,
            CKK_ML_DSA,
            ckp,
            &SIGN_USES,
            g,
            Origin::Imported,
            &[CKA_VALUE],
        )?;
        a.insert(CKA_VALUE, value.to_vec());
        return Ok(Object::new(a, Secret::None));
    }
    if !m.token_read().import_private_keys {
        return Err(CKR_ACTION_PROHIBITED);
    }
    let a = keys::build(
        class,
        CKK_ML_DSA,
        ckp,
        &SIGN_USES,
        g,
        Origin::Imported,
        &[CKA_VALUE, CKA_SEED],
    )?;
    let (sk, seed) = mldsa::import_private(set, g.bytes(CKA_VALUE), g.bytes(CKA_SEED))?;
    let mut secret = vec![(CKA_VALUE, sk)];
    if let Some(seed) = seed {
        secret.push((CKA_SEED, seed));
    }
    Ok(Object::new(a, Secret::Clear(Zeroizing::new(secret))))
}

/// An SLH-DSA key from C_CreateObject, in FIPS 205's encoding (CKA_VALUE): a private key's
/// PK.root must be the root its seeds give, else CKR_ATTRIBUTE_VALUE_INVALID.
fn import_slhdsa(
    m: &crate::Module,
    g: &Given,
    class: CK_OBJECT_CLASS,
    ckp: CK_ULONG,
) -> Rv<Object> {
    let set = slhdsa::set_of(ckp)?;
    let private = class == CKO_PRIVATE_KEY;
    if private && !m.token_read().import_private_keys {
        return Err(CKR_ACTION_PROHIBITED);
    }
    let a = keys::build(
        class,
        CKK_SLH_DSA,
        ckp,
        &SIGN_USES,
        g,
        Origin::Imported,
        &[CKA_VALUE],
    )?;
    let value = g.bytes(CKA_VALUE).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
    if private {
        slhdsa::check(set, pqgpu::serve::KeyKind::Secret, value)?;
        let secret = vec![(CKA_VALUE, Zeroizing::new(value.to_vec()))];
        return Ok(Object::new(a, Secret::Clear(Zeroizing::new(secret))));
    }
    slhdsa::check(set, pqgpu::serve::KeyKind::Public, value)?;
    let mut a = a;
    a.insert(CKA_VALUE, value.to_vec());
    Ok(Object::new(a, Secret::None))
}

/// An ML-KEM key from C_CreateObject, in FIPS 203's encoding: ek passes the modulus check
/// (§7.2), dk the hash check (§7.3), else CKR_ATTRIBUTE_VALUE_INVALID.
fn import_mlkem(m: &crate::Module, g: &Given, class: CK_OBJECT_CLASS, ckp: CK_ULONG) -> Rv<Object> {
    let set = mlkem::set_of(ckp)?;
    let private = class == CKO_PRIVATE_KEY;
    if private && !m.token_read().import_private_keys {
        return Err(CKR_ACTION_PROHIBITED);
    }
    let a = keys::build(
        class,
        CKK_ML_KEM,
        ckp,
        &MLKEM_USES,
        g,
        Origin::Imported,
        &[CKA_VALUE],
    )?;
    let value = g.bytes(CKA_VALUE).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
    if private {
        mlkem::check_private(set, value)?;
        let secret = vec![(CKA_VALUE, Zeroizing::new(value.to_vec()))];
        Ok(Object::new(a, Secret::Clear(Zeroizing::new(secret))))
    } else {
        mlkem::check_public(set, value)?;
        let mut a = a;
        a.insert(CKA_VALUE, value.to_vec());
        Ok(Object::new(a, Secret::None))
    }
}

#[no_mangle]
pub extern "C" fn C_DestroyObject(s: CK_SESSION_HANDLE, h: CK_OBJECT_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        let mut t = m.token_write();
        let o = visible(&t, h)?;
        may_write(&t, rw, o.is_token(), o.is_private())?;
        if !o.flag(CKA_DESTROYABLE) {
            return Err(CKR_ACTION_PROHIBITED);
        }
        t.destroy(h)
    })
}

/// # Safety
/// `size` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GetObjectSize(
    s: CK_SESSION_HANDLE,
    h: CK_OBJECT_HANDLE,
    size: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        visible(&m.token_read(), h)?;
        // SAFETY: the caller's promise.
        unsafe { put(size, CK_UNAVAILABLE_INFORMATION) }
    })
}

/// Every attribute asked for is answered (value, length, or CK_UNAVAILABLE_INFORMATION); the
/// result is the last problem met, as the specification has it.
///
/// # Safety
/// `tpl` holds `n` attributes whose non-NULL value pointers hold `ulValueLen` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_GetAttributeValue(
    s: CK_SESSION_HANDLE,
    h: CK_OBJECT_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        if tpl.is_null() && n > 0 {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let o = visible(&m.token_read(), h)?;
        let mut result = Ok(());
        for i in 0..n as usize {
            // SAFETY: the caller's promise: `n` attributes.
            let a = unsafe { &mut *tpl.add(i) };
            let value: Result<&[u8], CK_RV> = if SECRET_ATTRS.contains(&a.type_) && o.holds_secret()
            {
                if o.flag(CKA_SENSITIVE) || !o.flag(CKA_EXTRACTABLE) {
                    Err(CKR_ATTRIBUTE_SENSITIVE)
                } else {
                    o.secret_value(a.type_).ok_or(CKR_ATTRIBUTE_TYPE_INVALID)
                }
            } else {
                o.attrs
                    .get(&a.type_)
                    .map(|v| v.as_slice())
                    .ok_or(CKR_ATTRIBUTE_TYPE_INVALID)
            };
            match value {
                Err(e) => {
                    a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
                    result = Err(e);
                }
                Ok(v) if a.pValue.is_null() => a.ulValueLen = v.len() as CK_ULONG,
                Ok(v) if (a.ulValueLen as usize) < v.len() => {
                    a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
                    result = Err(CKR_BUFFER_TOO_SMALL);
                }
                Ok(v) => {
                    // SAFETY: the caller's buffer holds ulValueLen >= v.len() bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(v.as_ptr(), a.pValue as *mut u8, v.len())
                    };
                    a.ulValueLen = v.len() as CK_ULONG;
                }
            }
        }
        result
    })
}

/// Label, id, subject and dates may change; CKA_SENSITIVE only to true and CKA_EXTRACTABLE
/// only to false; nothing else.
///
/// # Safety
/// `tpl` holds `n` attributes.
#[no_mangle]
pub unsafe extern "C" fn C_SetAttributeValue(
    s: CK_SESSION_HANDLE,
    h: CK_OBJECT_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        // SAFETY: the caller's promise.
        let t = unsafe { read_template(tpl, n) }?;
        let g = Given::new(&t)?;
        let mut tok = m.token_write();
        let o = visible(&tok, h)?;
        may_write(&tok, rw, o.is_token(), o.is_private())?;
        if !o.flag(CKA_MODIFIABLE) {
            return Err(CKR_ACTION_PROHIBITED);
        }
        let mut attrs = o.attrs.clone();
        for (ty, v) in &g.0 {
            match *ty {
                CKA_LABEL | CKA_ID | CKA_SUBJECT | CKA_START_DATE | CKA_END_DATE => {
                    attrs.insert(*ty, v.clone());
                }
                CKA_SENSITIVE if o.holds_secret() => {
                    if g.bool(*ty)? != Some(true) && o.flag(CKA_SENSITIVE) {
                        return Err(CKR_ATTRIBUTE_READ_ONLY);
                    }
                    attrs.insert(*ty, v.clone());
                }
                CKA_EXTRACTABLE if o.holds_secret() => {
                    if g.bool(*ty)? != Some(false) && !o.flag(CKA_EXTRACTABLE) {
                        return Err(CKR_ATTRIBUTE_READ_ONLY);
                    }
                    attrs.insert(*ty, v.clone());
                }
                ty if o.attrs.contains_key(&ty) || SECRET_ATTRS.contains(&ty) => {
                    return Err(CKR_ATTRIBUTE_READ_ONLY)
                }
                _ => return Err(CKR_ATTRIBUTE_TYPE_INVALID),
            }
        }
        let secret = match &o.secret {
            Secret::None => Secret::None,
            Secret::Sealed(b) => Secret::Sealed(b.clone()),
            Secret::Clear(v) => Secret::Clear(Zeroizing::new(
                v.iter().map(|(t, x)| (*t, x.clone())).collect(),
            )),
        };
        let mut new = Object::new(attrs, secret);
        new.id = o.id.clone();
        new.session = o.session;
        tok.replace(h, new)
    })
}

/// # Safety
/// `tpl` holds `n` attributes.
#[no_mangle]
pub unsafe extern "C" fn C_FindObjectsInit(
    s: CK_SESSION_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        // SAFETY: the caller's promise.
        let t = unsafe { read_template(tpl, n) }?;
        let session = m.sessions.get(s)?;
        let mut ses = session.lock().unwrap_or_else(|e| e.into_inner());
        if ses.find.is_some() {
            return Err(CKR_OPERATION_ACTIVE);
        }
        let found = {
            let mut tok = m.token_write();
            tok.refresh()?;
            tok.find(&t)
        };
        let mut found = found;
        found.reverse();
        ses.find = Some(found);
        Ok(())
    })
}

/// # Safety
/// `p` holds `max` handles; `count` valid.
#[no_mangle]
pub unsafe extern "C" fn C_FindObjects(
    s: CK_SESSION_HANDLE,
    p: *mut CK_OBJECT_HANDLE,
    max: CK_ULONG,
    count: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        if count.is_null() || (p.is_null() && max > 0) {
            return Err(CKR_ARGUMENTS_BAD);
        }
        m.sessions.with(s, |ses| {
            let left = ses.find.as_mut().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
            let mut k = 0;
            while k < max as usize {
                let Some(h) = left.pop() else { break };
                // SAFETY: k < max handles.
                unsafe { p.add(k).write_unaligned(h) };
                k += 1;
            }
            // SAFETY: checked non-NULL.
            unsafe { *count = k as CK_ULONG };
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "C" fn C_FindObjectsFinal(s: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.with(s, |ses| {
            ses.find.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
            Ok(())
        })
    })
}
