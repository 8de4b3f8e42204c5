//! Attribute values as PKCS#11 lays them out (CK_BBOOL: one byte; CK_ULONG: the native
//! word), and templates read from the caller.

use crate::ck::*;
use std::collections::BTreeMap;

/// An object's attributes: type -> value bytes.
pub type Attrs = BTreeMap<CK_ATTRIBUTE_TYPE, Vec<u8>>;

pub fn ulong(v: CK_ULONG) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

pub fn bool_(v: bool) -> Vec<u8> {
    vec![v as u8]
}

/// A caller's template, copied: (type, value) in the caller's order.
pub type Template = Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>;

/// Copies a template from the caller.
///
/// # Safety
/// `p` points to `n` attributes whose value pointers hold `ulValueLen` bytes each (or `n` is 0).
pub unsafe fn read_template(p: *const CK_ATTRIBUTE, n: CK_ULONG) -> Rv<Template> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: the caller's promise.
    let attrs = unsafe { std::slice::from_raw_parts(p, n as usize) };
    attrs
        .iter()
        .map(|a| {
            let v = if a.ulValueLen == 0 {
                Vec::new()
            } else if a.pValue.is_null() {
                return Err(CKR_ATTRIBUTE_VALUE_INVALID);
            } else {
                // SAFETY: the caller's promise.
                unsafe { std::slice::from_raw_parts(a.pValue as *const u8, a.ulValueLen as usize) }
                    .to_vec()
            };
            Ok((a.type_, v))
        })
        .collect()
}

/// What a template says, checked: one value per type (a type given twice with different
/// values is inconsistent).
#[derive(Default, Debug)]
pub struct Given(pub Attrs);

impl Given {
    pub fn new(t: &Template) -> Rv<Given> {
        let mut m = Attrs::new();
        for (ty, v) in t {
            if let Some(old) = m.get(ty) {
                if old != v {
                    return Err(CKR_TEMPLATE_INCONSISTENT);
                }
            }
            m.insert(*ty, v.clone());
        }
        Ok(Given(m))
    }

    pub fn bool(&self, ty: CK_ATTRIBUTE_TYPE) -> Rv<Option<bool>> {
        match self.0.get(&ty) {
            None => Ok(None),
            Some(v) if v.len() == 1 && v[0] <= 1 => Ok(Some(v[0] == 1)),
            Some(_) => Err(CKR_ATTRIBUTE_VALUE_INVALID),
        }
    }

    pub fn ulong(&self, ty: CK_ATTRIBUTE_TYPE) -> Rv<Option<CK_ULONG>> {
        match self.0.get(&ty) {
            None => Ok(None),
            Some(v) => v
                .as_slice()
                .try_into()
                .map(|b| Some(CK_ULONG::from_ne_bytes(b)))
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID),
        }
    }

    pub fn bytes(&self, ty: CK_ATTRIBUTE_TYPE) -> Option<&[u8]> {
        self.0.get(&ty).map(|v| v.as_slice())
    }

    pub fn has(&self, ty: CK_ATTRIBUTE_TYPE) -> bool {
        self.0.contains_key(&ty)
    }
}

/// Reads a CK_BBOOL or CK_ULONG back out of stored attributes.
pub fn get_bool(a: &Attrs, ty: CK_ATTRIBUTE_TYPE) -> bool {
    a.get(&ty).is_some_and(|v| v.first() == Some(&1))
}

pub fn get_ulong(a: &Attrs, ty: CK_ATTRIBUTE_TYPE) -> Option<CK_ULONG> {
    a.get(&ty)
        .and_then(|v| v.as_slice().try_into().ok())
        .map(CK_ULONG::from_ne_bytes)
}

/// Whether stored attributes match a search template (every given value equal).
pub fn matches(a: &Attrs, t: &Template) -> bool {
    t.iter().all(|(ty, v)| a.get(ty) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_given_twice_with_different_values_is_inconsistent() {
        let t = vec![(CKA_TOKEN, bool_(true)), (CKA_TOKEN, bool_(false))];
        assert_eq!(Given::new(&t).unwrap_err(), CKR_TEMPLATE_INCONSISTENT);
        let t = vec![(CKA_TOKEN, bool_(true)), (CKA_TOKEN, bool_(true))];
        assert_eq!(Given::new(&t).unwrap().bool(CKA_TOKEN), Ok(Some(true)));
        let t = vec![(CKA_TOKEN, vec![2])];
        assert_eq!(
            Given::new(&t).unwrap().bool(CKA_TOKEN),
            Err(CKR_ATTRIBUTE_VALUE_INVALID)
        );
    }
}
