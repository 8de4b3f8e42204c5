//! The distinct keys of a chunk, each item's index among them, and their rows' way to the
//! device: the device receives, checks and expands every distinct key once.
//!
//! Keys at ascending, disjoint addresses (a caller's array, a key per item) are distinct
//! without a look at them: equal keys there cost only device work. Otherwise items whose key
//! slices share an address (a key handle's items, one server key in every request) are
//! recognised by address, and other duplicates by a 32-byte fingerprint that every key pair
//! draws at random and publishes (rho in ek, H(ek) in dk), confirmed by comparing the whole
//! key. Hashing every 1-3 KB key by content took more host time per chunk than the GPU spent
//! on the chunk.

use crate::gpu::hostio::{self, HostIo, Rows};
use crate::gpu::hostmem::Ranges;
use crate::gpu::launch::Dev;
use crate::gpu::worker::{HostBuf, Worker, ROWS_PER_TASK};
use cudarc::driver::DriverError;
use rayon::prelude::*;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

pub struct Distinct<'a> {
    /// The distinct keys, in order of first sight.
    pub keys: Vec<&'a [u8]>,
    /// Per item, its key's position in `keys`.
    pub idx: Vec<u32>,
}

impl<'a> Distinct<'a> {
    /// Indexes the items' keys, all of one length, whose 32-byte fingerprints start at
    /// `print_at`.
    pub fn of(print_at: usize, items: Vec<&'a [u8]>) -> Distinct<'a> {
        let n = items.len();
        let mut end = 0usize;
        let ascending = items.iter().all(|k| {
            let start = k.as_ptr() as usize;
            let ok = start >= end;
            end = start + k.len().max(1);
            ok
        });
        if ascending {
            return Distinct {
                keys: items,
                idx: (0..n as u32).collect(),
            };
        }
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut idx = Vec::with_capacity(n);
        let mut by_print: HashMap<[u8; 32], u32> = HashMap::with_capacity(n);
        let mut last: Option<(*const u8, u32)> = None;
        for key in items {
            let i = match last {
                Some((ptr, i)) if ptr == key.as_ptr() => i,
                _ => {
                    let next = keys.len() as u32;
                    let print = key[print_at..print_at + 32].try_into().expect("32 bytes");
                    let i = match by_print.entry(print) {
                        Entry::Vacant(e) => *e.insert(next),
                        Entry::Occupied(e) => {
                            let first = keys[*e.get() as usize];
                            if first.as_ptr() == key.as_ptr() || same(first, key) {
                                *e.get()
                            } else {
                                // Another key under a fingerprint already seen (a malformed
                                // or crafted key): an entry of its own each time.
                                next
                            }
                        }
                    };
                    if i == next {
                        keys.push(key);
                    }
                    i
                }
            };
            last = Some((key.as_ptr(), i));
            idx.push(i);
        }
        Distinct { keys, idx }
    }

    /// Whether every item has its own key (then item j uses key j).
    pub fn all_distinct(&self) -> bool {
        self.keys.len() == self.idx.len()
    }
}

/// Whether two keys of one length are equal, reading every byte (a decapsulation key is
/// secret: the time must not tell where two keys differ).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The distinct keys' rows (`len` bytes each) into the device rows at `dst`: straight from
/// the caller's registered memory (one DMA for keys in an array, else the gather kernel
/// following their addresses under the worker buffer `table`), else copied on all cores into
/// the worker's pinned buffer `stage`, which is returned: it must outlive the next `sync`, and
/// the caller wipes secret rows from it then.
pub fn upload(
    w: &mut Worker,
    io: &HostIo,
    reg: &Ranges,
    keys: &[&[u8]],
    len: usize,
    dst: Dev<u8>,
    (stage, table): (&'static str, &'static str),
) -> Result<Option<HostBuf>, DriverError> {
    if let Some(rows) = Rows::registered(reg, len, keys.iter().map(|&k| Some(k))) {
        hostio::gather(w, io, &rows, dst, len, table)?;
        return Ok(None);
    }
    let mut buf = w.take_host(stage, keys.len() * len)?;
    let h = &mut buf.bytes()?[..keys.len() * len];
    h.par_chunks_mut(len)
        .zip(keys.par_iter())
        .with_min_len(ROWS_PER_TASK)
        .for_each(|(row, key)| row.copy_from_slice(key));
    w.htod(dst, h)?;
    Ok(Some(buf))
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

    /// A 64-byte key whose fingerprint (bytes 16..48) is `print` and whose other bytes are `rest`.
    fn key(print: u8, rest: u8) -> Vec<u8> {
        let mut k = vec![rest; 64];
        k[16..48].fill(print);
        k
    }

    fn of<'a>(keys: &[&'a Vec<u8>]) -> Distinct<'a> {
        Distinct::of(16, keys.iter().map(|k| &k[..]).collect())
    }

    #[test]
    fn keys_are_recognised_by_address_and_by_content() {
        let (a, b) = (key(1, 1), key(2, 2));
        let a_copy = a.clone();
        let d = of(&[&a, &b, &a, &b, &a_copy, &b]);
        assert_eq!(d.idx, [0, 1, 0, 1, 0, 1]);
        assert_eq!(d.keys.len(), 2);
        assert_eq!(d.keys[0], &a[..]);
        assert_eq!(d.keys[1], &b[..]);
        assert!(!d.all_distinct());
    }

    #[test]
    fn keys_sharing_a_fingerprint_stay_distinct_unless_equal() {
        // Same fingerprint, other bytes differ (one byte outside it, or all): distinct keys.
        let a = key(9, 1);
        let mut b = a.clone();
        b[63] ^= 1;
        let c = key(9, 3);
        let order = [&a, &b, &c, &a, &b, &c, &c];
        let d = of(&order);
        assert_eq!(d.idx[..4], [0, 1, 2, 0]);
        assert_eq!(d.idx[5], d.idx[6], "the previous item's address");
        for (i, &k) in d.idx.iter().enumerate() {
            assert_eq!(d.keys[k as usize], &order[i][..], "item {i}");
        }
    }

    #[test]
    fn one_key_at_one_address_is_one_entry() {
        let a = key(5, 5);
        let d = of(&vec![&a; 1000]);
        assert_eq!(d.keys.len(), 1);
        assert!(d.idx.iter().all(|&i| i == 0));
    }

    #[test]
    fn an_array_of_keys_is_distinct_without_a_look() {
        // Equal contents at ascending addresses: still a key per item (in order).
        let arr = key(4, 4).repeat(3);
        let d = Distinct::of(16, arr.chunks(64).collect());
        assert!(d.all_distinct());
        assert_eq!(d.idx, [0, 1, 2]);
        // Descending: by content.
        let d = Distinct::of(16, arr.chunks(64).rev().collect());
        assert_eq!(d.idx, [0, 0, 0]);
        assert_eq!(d.keys[0].as_ptr(), arr[128..].as_ptr());
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
