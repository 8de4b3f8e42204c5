//! The mechanisms the token offers: one file per family; this table answers
//! `C_GetMechanismList` and `C_GetMechanismInfo`.

pub mod mldsa;
pub mod mlkem;
pub mod sign;
pub mod slhdsa;

use crate::ck::*;

/// (mechanism, min key size, max key size, flags).
pub fn table() -> Vec<(CK_MECHANISM_TYPE, CK_ULONG, CK_ULONG, CK_FLAGS)> {
    let mut v = Vec::new();
    let (lo, hi) = mldsa::key_size_range();
    v.push((CKM_ML_DSA_KEY_PAIR_GEN, lo, hi, CKF_GENERATE_KEY_PAIR));
    for m in mldsa::SIGN_MECHANISMS {
        v.push((m, lo, hi, CKF_SIGN | CKF_VERIFY));
    }
    let (lo, hi) = slhdsa::key_size_range();
    v.push((CKM_SLH_DSA_KEY_PAIR_GEN, lo, hi, CKF_GENERATE_KEY_PAIR));
    for m in slhdsa::SIGN_MECHANISMS {
        v.push((m, lo, hi, CKF_SIGN | CKF_VERIFY));
    }
    let (lo, hi) = mlkem::key_size_range();
    v.push((CKM_ML_KEM_KEY_PAIR_GEN, lo, hi, CKF_GENERATE_KEY_PAIR));
    v.push((CKM_ML_KEM, lo, hi, CKF_ENCAPSULATE | CKF_DECAPSULATE));
    v
}

pub fn info(m: CK_MECHANISM_TYPE) -> Option<CK_MECHANISM_INFO> {
    table()
        .into_iter()
        .find(|e| e.0 == m)
        .map(|(_, lo, hi, flags)| CK_MECHANISM_INFO {
            ulMinKeySize: lo,
            ulMaxKeySize: hi,
            flags,
        })
}

use crate::object::Object;
use pqgpu::serve::{Key, KeyKind};
use pqgpu::Alg;

/// The pqgpu algorithm of a key object (its key type and parameter set).
pub fn alg_of(o: &Object) -> Rv<Alg> {
    let set =
        crate::attr::get_ulong(&o.attrs, CKA_PARAMETER_SET).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    match o.key_type() {
        CKK_ML_DSA => Ok(Alg::MlDsa(mldsa::set_of(set)?)),
        CKK_SLH_DSA => Ok(Alg::SlhDsa(slhdsa::set_of(set)?)),
        CKK_ML_KEM => Ok(Alg::MlKem(mlkem::set_of(set)?)),
        _ => Err(CKR_KEY_TYPE_INCONSISTENT),
    }
}

/// The object's pqgpu key handle: decoded, checked and expanded on first use, then kept with
/// the object. A private key whose secret is still sealed (no user logged in) has none.
pub fn handle_of(o: &Object) -> Rv<Key> {
    if let Some(r) = o.handle.get() {
        return r.clone();
    }
    let alg = alg_of(o)?;
    let (kind, bytes) = match o.class() {
        CKO_PUBLIC_KEY => (
            KeyKind::Public,
            o.attrs.get(&CKA_VALUE).map(|v| v.as_slice()),
        ),
        CKO_PRIVATE_KEY => (KeyKind::Secret, o.secret_value(CKA_VALUE)),
        _ => return Err(CKR_KEY_TYPE_INCONSISTENT),
    };
    let bytes = bytes.ok_or(CKR_USER_NOT_LOGGED_IN)?;
    let made = Key::new(alg, kind, bytes).map_err(|_| CKR_KEY_TYPE_INCONSISTENT);
    o.handle.get_or_init(|| made).clone()
}
