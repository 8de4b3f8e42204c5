//! Key objects from templates: which attributes a template may give, which it must, which
//! contradict each other, and the values the token fills in. Shared by key-pair generation
//! and C_CreateObject, for every key family.

use crate::attr::{self, Attrs, Given};
use crate::ck::*;

/// How the key came to be: generated on the token (with this mechanism) or imported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Generated(CK_MECHANISM_TYPE),
    Imported,
}

/// Attributes every key object may be given.
const COMMON: [CK_ATTRIBUTE_TYPE; 14] = [
    CKA_CLASS,
    CKA_TOKEN,
    CKA_PRIVATE,
    CKA_MODIFIABLE,
    CKA_LABEL,
    CKA_COPYABLE,
    CKA_DESTROYABLE,
    CKA_KEY_TYPE,
    CKA_ID,
    CKA_START_DATE,
    CKA_END_DATE,
    CKA_DERIVE,
    CKA_SUBJECT,
    CKA_PARAMETER_SET,
];

/// Capabilities a key of this module never has: asking for them contradicts the key type.
const NEVER: [CK_ATTRIBUTE_TYPE; 7] = [
    CKA_ENCRYPT,
    CKA_DECRYPT,
    CKA_WRAP,
    CKA_UNWRAP,
    CKA_SIGN_RECOVER,
    CKA_VERIFY_RECOVER,
    CKA_DERIVE,
];

/// Attributes the token alone sets.
const READ_ONLY: [CK_ATTRIBUTE_TYPE; 5] = [
    CKA_LOCAL,
    CKA_KEY_GEN_MECHANISM,
    CKA_ALWAYS_SENSITIVE,
    CKA_NEVER_EXTRACTABLE,
    CKA_ALWAYS_AUTHENTICATE,
];

/// What a family says about its keys' capabilities: for the public key (e.g. CKA_VERIFY) and
/// for the private key (e.g. CKA_SIGN).
pub struct Uses {
    pub public: CK_ATTRIBUTE_TYPE,
    pub private: CK_ATTRIBUTE_TYPE,
}

/// Builds a key object's clear attributes from a template. `values`: the attributes the
/// family may take from the template (CKA_VALUE, CKA_SEED on import).
pub fn build(
    class: CK_OBJECT_CLASS,
    key_type: CK_KEY_TYPE,
    set: CK_ULONG,
    uses: &Uses,
    g: &Given,
    origin: Origin,
    values: &[CK_ATTRIBUTE_TYPE],
) -> Rv<Attrs> {
    let public = class == CKO_PUBLIC_KEY;
    let own: &[CK_ATTRIBUTE_TYPE] = if public {
        &[CKA_VERIFY, CKA_TRUSTED, CKA_ENCAPSULATE]
    } else {
        &[
            CKA_SIGN,
            CKA_SENSITIVE,
            CKA_EXTRACTABLE,
            CKA_WRAP_WITH_TRUSTED,
            CKA_DECAPSULATE,
        ]
    };
    for ty in g.0.keys() {
        if READ_ONLY.contains(ty) {
            return Err(CKR_ATTRIBUTE_READ_ONLY);
        }
        if NEVER.contains(ty) {
            if g.bool(*ty)? == Some(true) {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
            continue;
        }
        if matches!(*ty, CKA_VALUE | CKA_SEED) && !values.contains(ty) {
            return Err(CKR_TEMPLATE_INCONSISTENT);
        }
        if !COMMON.contains(ty) && !own.contains(ty) && !values.contains(ty) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
    }
    if g.ulong(CKA_CLASS)?.is_some_and(|c| c != class) {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    if g.ulong(CKA_KEY_TYPE)?.is_some_and(|k| k != key_type) {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    if g.ulong(CKA_PARAMETER_SET)?.is_some_and(|p| p != set) {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    // (A capability of the other half of the pair, e.g. CKA_SIGN for a public key, is not an
    // attribute of this class: CKR_ATTRIBUTE_TYPE_INVALID above.)
    let mine = if public { uses.public } else { uses.private };
    // The class's other capability (e.g. CKA_ENCAPSULATE for an ML-DSA public key) is false.
    for ty in [CKA_VERIFY, CKA_ENCAPSULATE, CKA_SIGN, CKA_DECAPSULATE] {
        if own.contains(&ty) && ty != mine && g.bool(ty)? == Some(true) {
            return Err(CKR_TEMPLATE_INCONSISTENT);
        }
    }
    let b = |ty, default| -> Rv<Vec<u8>> { Ok(attr::bool_(g.bool(ty)?.unwrap_or(default))) };
    let mut a = Attrs::new();
    a.insert(CKA_CLASS, attr::ulong(class));
    a.insert(CKA_KEY_TYPE, attr::ulong(key_type));
    a.insert(CKA_PARAMETER_SET, attr::ulong(set));
    a.insert(CKA_TOKEN, b(CKA_TOKEN, false)?);
    a.insert(CKA_PRIVATE, b(CKA_PRIVATE, !public)?);
    a.insert(CKA_MODIFIABLE, b(CKA_MODIFIABLE, true)?);
    a.insert(CKA_COPYABLE, attr::bool_(false));
    if g.bool(CKA_COPYABLE)? == Some(true) {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    a.insert(CKA_DESTROYABLE, b(CKA_DESTROYABLE, true)?);
    for ty in [CKA_LABEL, CKA_ID, CKA_SUBJECT, CKA_START_DATE, CKA_END_DATE] {
        a.insert(ty, g.bytes(ty).unwrap_or_default().to_vec());
    }
    for ty in NEVER {
        a.insert(ty, attr::bool_(false));
    }
    for ty in [CKA_VERIFY, CKA_ENCAPSULATE, CKA_SIGN, CKA_DECAPSULATE] {
        if own.contains(&ty) {
            a.insert(ty, attr::bool_(false));
        }
    }
    a.insert(mine, b(mine, true)?);
    let (local, mech) = match origin {
        Origin::Generated(m) => (true, m),
        Origin::Imported => (false, CK_UNAVAILABLE_INFORMATION),
    };
    a.insert(CKA_LOCAL, attr::bool_(local));
    a.insert(CKA_KEY_GEN_MECHANISM, attr::ulong(mech));
    if public {
        a.insert(CKA_TRUSTED, b(CKA_TRUSTED, false)?);
    } else {
        if g.bool(CKA_PRIVATE)? == Some(false) {
            // A private key is only ever readable under the user's login.
            return Err(CKR_TEMPLATE_INCONSISTENT);
        }
        let sensitive = g.bool(CKA_SENSITIVE)?.unwrap_or(true);
        let extractable = g.bool(CKA_EXTRACTABLE)?.unwrap_or(false);
        a.insert(CKA_SENSITIVE, attr::bool_(sensitive));
        a.insert(CKA_EXTRACTABLE, attr::bool_(extractable));
        let generated = matches!(origin, Origin::Generated(_));
        a.insert(CKA_ALWAYS_SENSITIVE, attr::bool_(generated && sensitive));
        a.insert(
            CKA_NEVER_EXTRACTABLE,
            attr::bool_(generated && !extractable),
        );
        a.insert(CKA_WRAP_WITH_TRUSTED, b(CKA_WRAP_WITH_TRUSTED, false)?);
        a.insert(CKA_ALWAYS_AUTHENTICATE, attr::bool_(false));
    }
    Ok(a)
}

/// Capabilities a secret key made by this module never has (its only use is to be read, or
/// handed to another token): asking for them contradicts the key.
const SECRET_NEVER: [CK_ATTRIBUTE_TYPE; 11] = [
    CKA_ENCRYPT,
    CKA_DECRYPT,
    CKA_WRAP,
    CKA_UNWRAP,
    CKA_SIGN,
    CKA_VERIFY,
    CKA_DERIVE,
    CKA_ENCAPSULATE,
    CKA_DECAPSULATE,
    CKA_TRUSTED,
    CKA_WRAP_WITH_TRUSTED,
];

/// The clear attributes of a CKK_GENERIC_SECRET key of `len` bytes made by `mechanism` (a
/// KEM's shared secret), from the caller's template: CKA_VALUE is the token's to set.
pub fn secret(g: &Given, mechanism: CK_MECHANISM_TYPE, len: usize) -> Rv<Attrs> {
    for ty in g.0.keys() {
        if READ_ONLY.contains(ty) || *ty == CKA_VALUE {
            return Err(CKR_ATTRIBUTE_READ_ONLY);
        }
        if SECRET_NEVER.contains(ty) {
            if g.bool(*ty)? == Some(true) {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
            continue;
        }
        let allowed = (COMMON.contains(ty) && *ty != CKA_PARAMETER_SET)
            || matches!(*ty, CKA_SENSITIVE | CKA_EXTRACTABLE | CKA_VALUE_LEN);
        if !allowed {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
    }
    if g.ulong(CKA_CLASS)?.is_some_and(|c| c != CKO_SECRET_KEY) {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    if g.ulong(CKA_KEY_TYPE)?
        .is_some_and(|k| k != CKK_GENERIC_SECRET)
    {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    if g.ulong(CKA_VALUE_LEN)?
        .is_some_and(|n| n != len as CK_ULONG)
    {
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    if g.bool(CKA_COPYABLE)? == Some(true) || g.bool(CKA_PRIVATE)? == Some(false) {
        // Like a private key, a secret is only ever readable under the user's login.
        return Err(CKR_TEMPLATE_INCONSISTENT);
    }
    let b = |ty, default| -> Rv<Vec<u8>> { Ok(attr::bool_(g.bool(ty)?.unwrap_or(default))) };
    let mut a = Attrs::new();
    a.insert(CKA_CLASS, attr::ulong(CKO_SECRET_KEY));
    a.insert(CKA_KEY_TYPE, attr::ulong(CKK_GENERIC_SECRET));
    a.insert(CKA_VALUE_LEN, attr::ulong(len as CK_ULONG));
    a.insert(CKA_TOKEN, b(CKA_TOKEN, false)?);
    a.insert(CKA_PRIVATE, attr::bool_(true));
    a.insert(CKA_MODIFIABLE, b(CKA_MODIFIABLE, true)?);
    a.insert(CKA_COPYABLE, attr::bool_(false));
    a.insert(CKA_DESTROYABLE, b(CKA_DESTROYABLE, true)?);
    for ty in [CKA_LABEL, CKA_ID, CKA_SUBJECT, CKA_START_DATE, CKA_END_DATE] {
        a.insert(ty, g.bytes(ty).unwrap_or_default().to_vec());
    }
    for ty in SECRET_NEVER {
        a.insert(ty, attr::bool_(false));
    }
    let sensitive = g.bool(CKA_SENSITIVE)?.unwrap_or(true);
    let extractable = g.bool(CKA_EXTRACTABLE)?.unwrap_or(false);
    a.insert(CKA_SENSITIVE, attr::bool_(sensitive));
    a.insert(CKA_EXTRACTABLE, attr::bool_(extractable));
    a.insert(CKA_ALWAYS_SENSITIVE, attr::bool_(sensitive));
    a.insert(CKA_NEVER_EXTRACTABLE, attr::bool_(!extractable));
    a.insert(CKA_LOCAL, attr::bool_(false));
    a.insert(CKA_KEY_GEN_MECHANISM, attr::ulong(mechanism));
    a.insert(CKA_ALWAYS_AUTHENTICATE, attr::bool_(false));
    Ok(a)
}
