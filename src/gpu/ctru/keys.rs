//! Per-chunk key tables: the distinct public (encaps) or secret (decaps) keys of a chunk,
//! decoded once on the host, and each item's index into the table. Items whose key slices share
//! an address (the server case, and a few keys cycled over a batch) are recognised by address
//! without reading the key; other duplicates by content.

use super::kernels::Sizes;
pub use super::kernels::KEYINFO;
use crate::ctru::params::PK_PREFIX_LEN;
use crate::ctru::{encode, pack, ParamSet};
use std::collections::HashMap;

/// The decoded keys of one chunk, laid out as the kernels read them.
pub struct KeyTable {
    /// One KEYINFO row per key.
    pub info: Vec<u8>,
    /// h as i16 rows of NP (zero padded).
    pub h: Vec<i16>,
    /// f as i16 rows of NP (decaps only).
    pub f: Vec<i16>,
    pub count: usize,
}

/// Looks keys up by the address of the previous slice, then by any address seen, then by
/// content. Hashing a 1-2 KB key per item capped a batch cycling through 4 keys at a third
/// of the one-key rate on the H200 (measured); an address costs 16 bytes.
pub struct Interner<'a> {
    last: Option<(*const u8, usize, Option<u32>)>,
    by_addr: HashMap<(usize, usize), Option<u32>>,
    seen: HashMap<&'a [u8], Option<u32>>,
    pub table: KeyTable,
}

impl<'a> Interner<'a> {
    pub fn new() -> Self {
        Interner {
            last: None,
            by_addr: HashMap::new(),
            seen: HashMap::new(),
            table: KeyTable {
                info: Vec::new(),
                h: Vec::new(),
                f: Vec::new(),
                count: 0,
            },
        }
    }

    /// The table index of `key`, adding it with `decode` on first sight; `None` when the key
    /// does not decode.
    fn intern(&mut self, key: &'a [u8], decode: impl FnOnce(&mut KeyTable) -> bool) -> Option<u32> {
        if let Some((ptr, len, idx)) = self.last {
            if ptr == key.as_ptr() && len == key.len() {
                return idx;
            }
        }
        let addr = (key.as_ptr() as usize, key.len());
        let idx = match self.by_addr.get(&addr).or_else(|| self.seen.get(key)) {
            Some(&idx) => idx,
            None => {
                let next = self.table.count as u32;
                let idx = decode(&mut self.table).then_some(next);
                if idx.is_some() {
                    self.table.count += 1;
                }
                self.seen.insert(key, idx);
                idx
            }
        };
        self.by_addr.insert(addr, idx);
        self.last = Some((key.as_ptr(), key.len(), idx));
        idx
    }

    /// A public key (encaps); `None` when it is not a canonical encoding.
    pub fn public_key(&mut self, p: ParamSet, s: &Sizes, pk: &'a [u8]) -> Option<u32> {
        self.intern(pk, |t| {
            let Some(h) = encode::decode_pk(pk, s.n, p.q()) else {
                return false;
            };
            push_row(&mut t.h, &h, s.np);
            push_info(&mut t.info, pk, &[0; 32]);
            true
        })
    }

    /// A secret key sk_pke || pk || z (decaps); `None` when f or pk is malformed.
    pub fn secret_key(&mut self, p: ParamSet, s: &Sizes, sk: &'a [u8]) -> Option<u32> {
        self.intern(sk, |t| {
            let (sk_pke, rest) = sk.split_at(p.sk_pke_len());
            let (pk, z) = rest.split_at(s.pk);
            let (Some(f), Some(h)) = (pack::unpack_f(p, sk_pke), encode::decode_pk(pk, s.n, p.q()))
            else {
                return false;
            };
            push_row(&mut t.h, &h, s.np);
            push_row(&mut t.f, &f, s.np);
            push_info(&mut t.info, pk, z);
            true
        })
    }
}

fn push_row(dst: &mut Vec<i16>, coeffs: &[i32], np: usize) {
    dst.extend(coeffs.iter().map(|&c| c as i16));
    dst.resize(dst.len() + np - coeffs.len(), 0);
}

fn push_info(dst: &mut Vec<u8>, pk: &[u8], z: &[u8]) {
    let start = dst.len();
    dst.resize(start + KEYINFO, 0);
    dst[start..start + PK_PREFIX_LEN].copy_from_slice(&pk[..PK_PREFIX_LEN]);
    dst[start + 64..start + 96].copy_from_slice(z);
}

impl Drop for KeyTable {
    fn drop(&mut self) {
        // f and z are secret.
        zeroize::Zeroize::zeroize(&mut self.f);
        zeroize::Zeroize::zeroize(&mut self.info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pk(p: ParamSet, seed: u8) -> Vec<u8> {
        let mut pk = vec![0; p.public_key_len()];
        let mut sk = vec![0; p.secret_key_len()];
        crate::ctru::keygen_derand(p, &[seed; 64], &mut pk, &mut sk).expect("keygen");
        pk
    }

    #[test]
    fn keys_are_interned_by_address_and_by_content() {
        let p = ParamSet::Ctru653;
        let s = Sizes::of(p);
        let (a, b) = (pk(p, 1), pk(p, 2));
        let a_copy = a.clone();
        let bad = vec![0xFF; a.len()];
        let mut keys = Interner::new();
        // Cycled keys (the address cache), a copy of a key elsewhere (content), a bad key.
        let order = [&a, &b, &a, &b, &a_copy, &bad, &b, &bad];
        let got: Vec<Option<u32>> = order.iter().map(|k| keys.public_key(p, &s, k)).collect();
        assert_eq!(
            got,
            [
                Some(0),
                Some(1),
                Some(0),
                Some(1),
                Some(0),
                None,
                Some(1),
                None
            ]
        );
        assert_eq!(keys.table.count, 2);
        assert_eq!(keys.table.h.len(), 2 * s.np);
    }
}
