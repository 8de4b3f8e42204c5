//! Objects: attributes in the clear (everything but secret values), the secret values of a
//! private key (in memory while the token is open, sealed on disk), and the pqgpu key handle
//! made from them once, on first use.

use crate::attr::{self, Attrs};
use crate::ck::*;
use crate::seal::{self, DataKey};
use std::sync::{Arc, OnceLock};
use zeroize::Zeroizing;

/// The attributes whose values are secret in a private key: never stored in the clear, never
/// in its `attrs` (a public key's CKA_VALUE is public).
pub const SECRET_ATTRS: [CK_ATTRIBUTE_TYPE; 2] = [CKA_VALUE, CKA_SEED];

/// A private key's secret values.
pub enum Secret {
    /// Public objects.
    None,
    /// In memory: (type, value) pairs.
    Clear(Zeroizing<Vec<(CK_ATTRIBUTE_TYPE, Zeroizing<Vec<u8>>)>>),
    /// Loaded from disk while the token's data key is not at hand (no user logged in).
    Sealed(Vec<u8>),
}

pub struct Object {
    /// The store record of a token object (`obj-<hex>`); empty for session objects.
    pub id: String,
    /// The session that owns a session object.
    pub session: Option<CK_SESSION_HANDLE>,
    pub attrs: Attrs,
    pub secret: Secret,
    /// The record as stored (token objects): a reload keeps this object if it is unchanged.
    pub raw: Vec<u8>,
    /// The pqgpu key handle, made once.
    pub handle: OnceLock<Result<pqgpu::serve::Key, CK_RV>>,
}

impl Object {
    pub fn new(attrs: Attrs, secret: Secret) -> Object {
        Object {
            id: String::new(),
            session: None,
            attrs,
            secret,
            raw: Vec::new(),
            handle: OnceLock::new(),
        }
    }

    pub fn class(&self) -> CK_OBJECT_CLASS {
        attr::get_ulong(&self.attrs, CKA_CLASS).unwrap_or(CK_UNAVAILABLE_INFORMATION)
    }

    pub fn key_type(&self) -> CK_KEY_TYPE {
        attr::get_ulong(&self.attrs, CKA_KEY_TYPE).unwrap_or(CK_UNAVAILABLE_INFORMATION)
    }

    pub fn flag(&self, ty: CK_ATTRIBUTE_TYPE) -> bool {
        attr::get_bool(&self.attrs, ty)
    }

    /// A private or secret key: its CKA_VALUE (and CKA_SEED) are secret.
    pub fn holds_secret(&self) -> bool {
        matches!(self.class(), CKO_PRIVATE_KEY | CKO_SECRET_KEY)
    }

    pub fn is_token(&self) -> bool {
        self.flag(CKA_TOKEN)
    }

    pub fn is_private(&self) -> bool {
        self.flag(CKA_PRIVATE)
    }

    /// A secret value in the clear, if the object holds it so.
    pub fn secret_value(&self, ty: CK_ATTRIBUTE_TYPE) -> Option<&[u8]> {
        match &self.secret {
            Secret::Clear(v) => v.iter().find(|(t, _)| *t == ty).map(|(_, v)| &v[..]),
            _ => None,
        }
    }

    /// This object with its secret opened under `dk` (a sealed one), else unchanged.
    pub fn opened(self: &Arc<Self>, dk: &DataKey) -> Rv<Arc<Object>> {
        let Secret::Sealed(s) = &self.secret else {
            return Ok(self.clone());
        };
        let plain = seal::open(dk, self.id.as_bytes(), s).map_err(|_| CKR_GENERAL_ERROR)?;
        let secret = decode_secret(&plain).ok_or(CKR_GENERAL_ERROR)?;
        Ok(Arc::new(Object {
            id: self.id.clone(),
            session: self.session,
            attrs: self.attrs.clone(),
            secret: Secret::Clear(secret),
            raw: self.raw.clone(),
            handle: OnceLock::new(),
        }))
    }

    /// The record stored for a token object: its attributes in the clear and its secret
    /// values sealed under the token's data key (bound to the object's id).
    pub fn record(&self, dk: Option<&DataKey>) -> Rv<Vec<u8>> {
        let mut attrs = serde_json::Map::new();
        for (t, v) in &self.attrs {
            attrs.insert(t.to_string(), hex::encode(v).into());
        }
        let mut rec = serde_json::Map::new();
        rec.insert("attrs".into(), attrs.into());
        match &self.secret {
            Secret::None => {}
            Secret::Sealed(s) => {
                rec.insert("sealed".into(), hex::encode(s).into());
            }
            Secret::Clear(v) => {
                let dk = dk.ok_or(CKR_USER_NOT_LOGGED_IN)?;
                let plain = encode_secret(v);
                let s =
                    seal::seal(dk, self.id.as_bytes(), &plain).map_err(|_| CKR_GENERAL_ERROR)?;
                rec.insert("sealed".into(), hex::encode(s).into());
            }
        }
        serde_json::to_vec(&serde_json::Value::Object(rec)).map_err(|_| CKR_GENERAL_ERROR)
    }

    /// Reads a record back (`None`: not a record this module wrote).
    pub fn from_record(id: &str, raw: &[u8]) -> Option<Object> {
        let v: serde_json::Value = serde_json::from_slice(raw).ok()?;
        let mut attrs = Attrs::new();
        for (t, val) in v.get("attrs")?.as_object()? {
            let t: CK_ATTRIBUTE_TYPE = t.parse().ok()?;
            attrs.insert(t, hex::decode(val.as_str()?).ok()?);
        }
        let private = matches!(
            attr::get_ulong(&attrs, CKA_CLASS),
            Some(CKO_PRIVATE_KEY | CKO_SECRET_KEY)
        );
        if private && SECRET_ATTRS.iter().any(|t| attrs.contains_key(t)) {
            return None; // a private key's secret is only ever stored sealed
        }
        let secret = match v.get("sealed") {
            Some(s) => Secret::Sealed(hex::decode(s.as_str()?).ok()?),
            None => Secret::None,
        };
        Some(Object {
            id: id.to_string(),
            session: None,
            attrs,
            secret,
            raw: raw.to_vec(),
            handle: OnceLock::new(),
        })
    }
}

fn encode_secret(v: &[(CK_ATTRIBUTE_TYPE, Zeroizing<Vec<u8>>)]) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::new());
    for (t, val) in v {
        // CK_ULONG is 32 bits on some targets: the record always holds 64.
        #[allow(clippy::unnecessary_cast)]
        out.extend_from_slice(&(*t as u64).to_le_bytes());
        out.extend_from_slice(&(val.len() as u32).to_le_bytes());
        out.extend_from_slice(val);
    }
    out
}

type SecretList = Zeroizing<Vec<(CK_ATTRIBUTE_TYPE, Zeroizing<Vec<u8>>)>>;

fn decode_secret(mut b: &[u8]) -> Option<SecretList> {
    let mut out = Zeroizing::new(Vec::new());
    while !b.is_empty() {
        let t = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let n = u32::from_le_bytes(b.get(8..12)?.try_into().ok()?) as usize;
        let v = b.get(12..12 + n)?;
        out.push((t as CK_ATTRIBUTE_TYPE, Zeroizing::new(v.to_vec())));
        b = &b[12 + n..];
    }
    Some(out)
}

/// A fresh record id.
pub fn new_id() -> Rv<String> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).map_err(|_| CKR_GENERAL_ERROR)?;
    Ok(format!("obj-{}", hex::encode(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_no_secret_in_the_clear_and_opens_with_the_data_key() {
        let dk = seal::new_data_key().unwrap();
        let mut attrs = Attrs::new();
        attrs.insert(CKA_CLASS, attr::ulong(CKO_PRIVATE_KEY));
        let secret_bytes = vec![0x5au8; 64];
        let mut o = Object::new(
            attrs,
            Secret::Clear(Zeroizing::new(vec![(
                CKA_VALUE,
                Zeroizing::new(secret_bytes.clone()),
            )])),
        );
        o.id = new_id().unwrap();
        let rec = o.record(Some(&dk)).unwrap();
        let hex_secret = hex::encode(&secret_bytes);
        assert!(!String::from_utf8_lossy(&rec).contains(&hex_secret));
        assert!(!rec.windows(64).any(|w| w == &secret_bytes[..]));
        let back = Arc::new(Object::from_record(&o.id, &rec).unwrap());
        assert!(matches!(back.secret, Secret::Sealed(_)));
        let opened = back.opened(&dk).unwrap();
        assert_eq!(opened.secret_value(CKA_VALUE).unwrap(), &secret_bytes[..]);
        assert_eq!(opened.class(), CKO_PRIVATE_KEY);
        let other = seal::new_data_key().unwrap();
        assert!(back.opened(&other).is_err());
    }
}
