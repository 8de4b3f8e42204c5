//! Key encapsulation (PKCS#11 3.2: C_EncapsulateKey, C_DecapsulateKey) with CKM_ML_KEM. The
//! shared secret becomes a new CKK_GENERIC_SECRET key object made from the caller's template;
//! encapsulation and decapsulation run through the serving dispatcher with the key object's
//! pqgpu key handle, so concurrent sessions' operations merge into one backend batch.

use super::object::may_write;
use super::{guard, input, output, put};
use crate::attr::{read_template, Given};
use crate::ck::*;
use crate::mech::{self, mlkem};
use crate::object::{Object, Secret};
use crate::token::Login;
use crate::{engine, keys, module, Module};
use zeroize::Zeroizing;

/// The mechanism (checked to be CKM_ML_KEM without parameter).
///
/// # Safety
/// `mech` NULL or valid.
unsafe fn mechanism(mech: *const CK_MECHANISM) -> Rv {
    if mech.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise; read unaligned (caller memory).
    mlkem::check_mechanism(&unsafe { std::ptr::read_unaligned(mech) })
}

/// The ML-KEM key object `h` of class `class`, allowed `usage`; its set and key handle.
fn kem_key(
    m: &Module,
    h: CK_OBJECT_HANDLE,
    class: CK_OBJECT_CLASS,
    usage: CK_ATTRIBUTE_TYPE,
) -> Rv<(pqgpu::mlkem::ParamSet, pqgpu::serve::Key)> {
    let o = {
        let t = m.token_read();
        let o = t.get(h).cloned().ok_or(CKR_KEY_HANDLE_INVALID)?;
        if !t.visible(&o) {
            return Err(if t.login == Login::Public {
                CKR_USER_NOT_LOGGED_IN
            } else {
                CKR_KEY_HANDLE_INVALID
            });
        }
        o
    };
    if o.class() != class || o.key_type() != CKK_ML_KEM {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    }
    if !o.flag(usage) {
        return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
    }
    let pqgpu::Alg::MlKem(set) = mech::alg_of(&o)? else {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    };
    Ok((set, mech::handle_of(&o)?))
}

/// The secret key's attributes from the caller's template, checked that this session may
/// make such an object.
///
/// # Safety
/// `tpl` holds `n` attributes.
unsafe fn secret_attrs(
    m: &Module,
    rw: bool,
    tpl: *const CK_ATTRIBUTE,
    n: CK_ULONG,
) -> Rv<crate::attr::Attrs> {
    // SAFETY: the caller's promise.
    let t = unsafe { read_template(tpl, n) }?;
    let a = keys::secret(&Given::new(&t)?, CKM_ML_KEM, mlkem::SHARED_SECRET_LEN)?;
    let probe = Object::new(a.clone(), Secret::None);
    may_write(&m.token_read(), rw, probe.is_token(), probe.is_private())?;
    Ok(a)
}

/// Adds the secret key object holding `ss`.
fn add_secret(
    m: &Module,
    s: CK_SESSION_HANDLE,
    attrs: crate::attr::Attrs,
    ss: &[u8],
) -> Rv<CK_OBJECT_HANDLE> {
    let secret = vec![(CKA_VALUE, Zeroizing::new(ss.to_vec()))];
    let o = Object::new(attrs, Secret::Clear(Zeroizing::new(secret)));
    m.token_write().add(o, s)
}

/// Encapsulates with the public key `key`: the ciphertext by the length convention (NULL
/// `ct`: its length only, nothing made), and the shared secret as a new key object `*h`.
///
/// # Safety
/// Pointers as the specification defines them.
#[no_mangle]
pub unsafe extern "C" fn C_EncapsulateKey(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctlen: *mut CK_ULONG,
    h: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        // SAFETY: the caller's promise.
        unsafe { mechanism(mech) }?;
        let (set, handle) = kem_key(&m, key, CKO_PUBLIC_KEY, CKA_ENCAPSULATE)?;
        // SAFETY: the caller's promise.
        let attrs = unsafe { secret_attrs(&m, rw, tpl, n) }?;
        // SAFETY: the caller's promise: `ctlen` valid, `ct` NULL or holding `*ctlen` bytes.
        let Some(out) = (unsafe { output(ct, ctlen, set.ciphertext_len()) })? else {
            return Ok(());
        };
        if h.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let (c, ss) = engine::with(|e| mlkem::encapsulate(e, &handle, set))??;
        let made = add_secret(&m, s, attrs, &ss[..])?;
        out.copy_from_slice(&c);
        // SAFETY: checked non-NULL; the caller's promise.
        unsafe { put(h, made) }
    })
}

/// Decapsulates `ct` with the private key `key`; the shared secret (FIPS 203's implicit
/// rejection secret for a wrong ciphertext) as a new key object `*h`.
///
/// # Safety
/// Pointers as the specification defines them.
#[no_mangle]
pub unsafe extern "C" fn C_DecapsulateKey(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    tpl: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctlen: CK_ULONG,
    h: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        // SAFETY: the caller's promise.
        unsafe { mechanism(mech) }?;
        if h.is_null() || ct.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let (set, handle) = kem_key(&m, key, CKO_PRIVATE_KEY, CKA_DECAPSULATE)?;
        // SAFETY: the caller's promise.
        let attrs = unsafe { secret_attrs(&m, rw, tpl, n) }?;
        // SAFETY: the caller's promise: `ct` holds `ctlen` bytes.
        let c = unsafe { input(ct, ctlen) }?;
        let ss = engine::with(|e| mlkem::decapsulate(e, &handle, set, c))??;
        let made = add_secret(&m, s, attrs, &ss[..])?;
        // SAFETY: checked non-NULL; the caller's promise.
        unsafe { put(h, made) }
    })
}
