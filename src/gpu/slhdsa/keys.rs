//! The distinct keys of a chunk and each item's index among them: the device receives each
//! distinct key once (its context, and for signing its top tree's leaves, are built once per
//! key). Items whose key slices share an address (a key handle's items) are recognised by
//! address without reading the key; other duplicates by content.

use std::collections::HashMap;

pub struct Distinct<'a> {
    by_addr: HashMap<(usize, usize), u32>,
    by_content: HashMap<&'a [u8], u32>,
    /// The distinct keys, in order of first sight.
    pub keys: Vec<&'a [u8]>,
}

impl<'a> Distinct<'a> {
    pub fn new() -> Self {
        Distinct {
            by_addr: HashMap::new(),
            by_content: HashMap::new(),
            keys: Vec::new(),
        }
    }

    /// The index of `key` among the distinct keys, adding it on first sight.
    pub fn index(&mut self, key: &'a [u8]) -> u32 {
        let addr = (key.as_ptr() as usize, key.len());
        if let Some(&i) = self.by_addr.get(&addr) {
            return i;
        }
        let next = self.keys.len() as u32;
        let i = *self.by_content.entry(key).or_insert(next);
        if i == next {
            self.keys.push(key);
        }
        self.by_addr.insert(addr, i);
        i
    }
}

/// What names a key's device state kept between chunks (a signing key's top-tree leaves): the
/// parameter set and the key, hashed (the key is secret; its digest is what the worker keeps).
pub fn tag(set: &str, key: &[u8]) -> [u8; 32] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(b"slh-dsa top leaves\0");
    h.update(set.as_bytes());
    h.update([0]);
    h.update(key);
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_recognised_by_address_and_by_content() {
        let (a, b) = (vec![1u8; 64], vec![2u8; 64]);
        let a_copy = a.clone();
        let mut d = Distinct::new();
        let got: Vec<u32> = [&a, &b, &a, &a_copy, &b]
            .iter()
            .map(|k| d.index(k))
            .collect();
        assert_eq!(got, [0, 1, 0, 0, 1]);
        assert_eq!(d.keys, [&a[..], &b[..]]);
    }

    #[test]
    fn tags_differ_by_set_and_key() {
        let k = [7u8; 64];
        assert_ne!(tag("SLH-DSA-SHA2-128f", &k), tag("SLH-DSA-SHA2-128s", &k));
        assert_ne!(
            tag("SLH-DSA-SHA2-128f", &k),
            tag("SLH-DSA-SHA2-128f", &[8u8; 64])
        );
        assert_eq!(tag("SLH-DSA-SHA2-128f", &k), tag("SLH-DSA-SHA2-128f", &k));
    }
}
