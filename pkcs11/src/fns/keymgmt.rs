//! Key management: key-pair generation, and the random number functions.

use super::{guard, input, put};
use crate::attr::{read_template, Given};
use crate::ck::*;
use crate::fns::object::{may_write, MLKEM_USES, SIGN_USES};
use crate::keys::{self, Origin};
use crate::mech::{mldsa, mlkem, slhdsa};
use crate::module;
use crate::object::{Object, Secret};
use zeroize::Zeroizing;

/// CKM_ML_DSA_KEY_PAIR_GEN, CKM_SLH_DSA_KEY_PAIR_GEN and CKM_ML_KEM_KEY_PAIR_GEN: the parameter set comes from the public template (the private
/// template may repeat it, not contradict it).
///
/// # Safety
/// `mech` valid; the templates hold their counts of attributes; `hpub`, `hpriv` valid.
#[no_mangle]
pub unsafe extern "C" fn C_GenerateKeyPair(
    s: CK_SESSION_HANDLE,
    mech: *mut CK_MECHANISM,
    pub_tpl: *mut CK_ATTRIBUTE,
    npub: CK_ULONG,
    priv_tpl: *mut CK_ATTRIBUTE,
    npriv: CK_ULONG,
    hpub: *mut CK_OBJECT_HANDLE,
    hpriv: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        let rw = m.sessions.rw(s)?;
        if mech.is_null() || hpub.is_null() || hpriv.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        // SAFETY: the caller's promise.
        let mech = unsafe { std::ptr::read_unaligned(mech) };
        let (key_type, uses) = match mech.mechanism {
            CKM_ML_DSA_KEY_PAIR_GEN => (CKK_ML_DSA, &SIGN_USES),
            CKM_SLH_DSA_KEY_PAIR_GEN => (CKK_SLH_DSA, &SIGN_USES),
            CKM_ML_KEM_KEY_PAIR_GEN => (CKK_ML_KEM, &MLKEM_USES),
            _ => return Err(CKR_MECHANISM_INVALID),
        };
        if !mech.pParameter.is_null() || mech.ulParameterLen != 0 {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        // SAFETY: the caller's promise.
        let (pt, st) = unsafe {
            (
                read_template(pub_tpl, npub)?,
                read_template(priv_tpl, npriv)?,
            )
        };
        let (gp, gs) = (Given::new(&pt)?, Given::new(&st)?);
        let ckp = gp
            .ulong(CKA_PARAMETER_SET)?
            .ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        // Checked before anything is made: an unknown set is CKR_PARAMETER_SET_NOT_SUPPORTED.
        match key_type {
            CKK_ML_KEM => {
                mlkem::set_of(ckp)?;
            }
            CKK_SLH_DSA => {
                slhdsa::set_of(ckp)?;
            }
            _ => {
                mldsa::set_of(ckp)?;
            }
        }
        let origin = Origin::Generated(mech.mechanism);
        let mut pa = keys::build(CKO_PUBLIC_KEY, key_type, ckp, uses, &gp, origin, &[])?;
        let sa = keys::build(CKO_PRIVATE_KEY, key_type, ckp, uses, &gs, origin, &[])?;
        {
            let t = m.token_read();
            let pub_obj = Object::new(pa.clone(), Secret::None);
            let priv_obj = Object::new(sa.clone(), Secret::None);
            may_write(&t, rw, pub_obj.is_token(), pub_obj.is_private())?;
            may_write(&t, rw, priv_obj.is_token(), priv_obj.is_private())?;
        }
        let (pk, secret) = match key_type {
            CKK_ML_KEM => {
                let (ek, dk) = mlkem::generate(mlkem::set_of(ckp)?)?;
                (ek, vec![(CKA_VALUE, dk)])
            }
            CKK_SLH_DSA => {
                let (pk, sk) = slhdsa::generate(slhdsa::set_of(ckp)?)?;
                (pk, vec![(CKA_VALUE, sk)])
            }
            _ => {
                let (pk, sk, seed) = mldsa::generate(mldsa::set_of(ckp)?)?;
                (pk, vec![(CKA_VALUE, sk), (CKA_SEED, seed)])
            }
        };
        pa.insert(CKA_VALUE, pk);
        let secret = Secret::Clear(Zeroizing::new(secret));
        let mut t = m.token_write();
        let hp = t.add(Object::new(pa, Secret::None), s)?;
        let hs = match t.add(Object::new(sa, secret), s) {
            Ok(h) => h,
            Err(e) => {
                let _ = t.destroy(hp);
                return Err(e);
            }
        };
        // SAFETY: checked non-NULL; the caller's promise.
        unsafe {
            put(hpub, hp)?;
            put(hpriv, hs)
        }
    })
}

/// # Safety
/// `p` holds `n` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn C_GenerateRandom(
    s: CK_SESSION_HANDLE,
    p: *mut CK_BYTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        if n == 0 {
            return Ok(());
        }
        if p.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        // SAFETY: the caller's promise.
        let out = unsafe { std::slice::from_raw_parts_mut(p, n as usize) };
        getrandom::getrandom(out).map_err(|_| CKR_FUNCTION_FAILED)
    })
}

/// The operating system's generator takes no seed from applications.
///
/// # Safety
/// `p` holds `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn C_SeedRandom(s: CK_SESSION_HANDLE, p: *mut CK_BYTE, n: CK_ULONG) -> CK_RV {
    guard(|| {
        let m = module()?;
        m.sessions.get(s)?;
        // SAFETY: the caller's promise.
        unsafe { input(p, n) }?;
        Err(CKR_RANDOM_SEED_NOT_SUPPORTED)
    })
}
