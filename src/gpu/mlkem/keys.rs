//! The distinct keys of a chunk and each item's index among them: the device receives, checks
//! and expands every distinct key once. Items whose key slices share an address (a key
//! handle's items, one server key in every request) are recognised by address without reading
//! the key; other duplicates by content.

use std::collections::HashMap;

pub struct Distinct<'a> {
    last: Option<(*const u8, usize, u32)>,
    by_addr: HashMap<(usize, usize), u32>,
    by_content: HashMap<&'a [u8], u32>,
    /// The distinct keys, in order of first sight.
    pub keys: Vec<&'a [u8]>,
}

impl<'a> Distinct<'a> {
    pub fn new() -> Self {
        Distinct {
            last: None,
            by_addr: HashMap::new(),
            by_content: HashMap::new(),
            keys: Vec::new(),
        }
    }

    /// The index of `key` among the distinct keys, adding it on first sight.
    pub fn index(&mut self, key: &'a [u8]) -> u32 {
        if let Some((ptr, len, idx)) = self.last {
            if ptr == key.as_ptr() && len == key.len() {
                return idx;
            }
        }
        let addr = (key.as_ptr() as usize, key.len());
        let idx = match self.by_addr.get(&addr) {
            Some(&i) => i,
            None => {
                let next = self.keys.len() as u32;
                let i = *self.by_content.entry(key).or_insert(next);
                if i == next {
                    self.keys.push(key);
                }
                self.by_addr.insert(addr, i);
                i
            }
        };
        self.last = Some((key.as_ptr(), key.len(), idx));
        idx
    }
}

/// What names a key's device state kept between chunks (its rows and expanded matrix): the
/// operation, the parameter set and the key, hashed (a decapsulation key is secret; its digest
/// is what the worker keeps).
pub fn tag(what: &str, set: &str, key: &[u8]) -> [u8; 32] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update(what.as_bytes());
    h.update([0]);
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
        let order = [&a, &b, &a, &b, &a_copy, &b];
        let got: Vec<u32> = order.iter().map(|k| d.index(k)).collect();
        assert_eq!(got, [0, 1, 0, 1, 0, 1]);
        assert_eq!(d.keys.len(), 2);
        assert_eq!(d.keys[0], &a[..]);
        assert_eq!(d.keys[1], &b[..]);
    }

    #[test]
    fn tags_differ_by_operation_set_and_key() {
        let k = [7u8; 32];
        let t = tag("encaps", "ML-KEM-768", &k);
        assert_ne!(t, tag("decaps", "ML-KEM-768", &k));
        assert_ne!(t, tag("encaps", "ML-KEM-512", &k));
        assert_ne!(t, tag("encaps", "ML-KEM-768", &[8u8; 32]));
        assert_eq!(t, tag("encaps", "ML-KEM-768", &k));
    }
}
