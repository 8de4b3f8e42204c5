//! The distinct keys of one chunk and each item's index into them. Items that share a key (a
//! key handle, or a server's one key in every request) share its expansion on the device
//! (A-hat, the NTTs of s1, s2 and t0, tr), so such a batch expands the key once, not per item.

use crate::gpu::launch::Dev;
use std::collections::HashMap;

/// A chunk's distinct keys on the device (`count` rows) and each item's index into them.
#[derive(Clone, Copy)]
pub struct DeviceKeys {
    pub count: usize,
    pub rows: Dev<u8>,
    pub idx: Dev<u32>,
}

pub struct KeyIndex<'a> {
    /// The distinct keys, in order of first use.
    pub keys: Vec<&'a [u8]>,
    /// Per item, its key's position in `keys`.
    pub idx: Vec<u32>,
}

impl<'a> KeyIndex<'a> {
    /// Indexes the items' keys. Two keys are the same when their slices are (same address and
    /// length): contents are not compared, as hashing 1-5 KB per item would cost more than the
    /// expansion it saves. Rows at increasing addresses (a caller's key array) are known to be
    /// distinct without a lookup.
    pub fn of(keys: impl ExactSizeIterator<Item = &'a [u8]> + Clone) -> KeyIndex<'a> {
        let n = keys.len();
        let mut prev_end = 0usize;
        let ascending = keys.clone().all(|k| {
            let start = k.as_ptr() as usize;
            let ok = start >= prev_end;
            prev_end = start + k.len().max(1);
            ok
        });
        if ascending {
            return KeyIndex {
                keys: keys.collect(),
                idx: (0..n as u32).collect(),
            };
        }
        let mut keys_out = Vec::new();
        let mut idx = Vec::with_capacity(n);
        let mut by_slice: HashMap<(usize, usize), u32> = HashMap::new();
        let mut last: Option<((usize, usize), u32)> = None;
        for key in keys {
            let id = (key.as_ptr() as usize, key.len());
            let i = match last {
                Some((l, i)) if l == id => i,
                _ => *by_slice.entry(id).or_insert_with(|| {
                    keys_out.push(key);
                    (keys_out.len() - 1) as u32
                }),
            };
            last = Some((id, i));
            idx.push(i);
        }
        KeyIndex {
            keys: keys_out,
            idx,
        }
    }

    /// Whether every item has its own key (then `idx` is 0, 1, 2, ...).
    pub fn all_distinct(&self) -> bool {
        self.keys.len() == self.idx.len()
    }

    /// `idx` as the kernels' little-endian u32 array.
    pub fn idx_bytes(&self) -> impl Iterator<Item = [u8; 4]> + '_ {
        self.idx.iter().map(|i| i.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_slices_share_an_index_and_rows_stay_distinct() {
        let a = [1u8; 8];
        let b = [1u8; 8]; // same bytes, other address: another key
        let rows = [7u8; 24];
        let one = KeyIndex::of([&a[..], &a, &b, &a, &b].into_iter());
        assert_eq!(one.keys.len(), 2);
        assert_eq!(one.idx, [0, 0, 1, 0, 1]);
        assert!(std::ptr::eq(one.keys[1].as_ptr(), b.as_ptr()));
        let arr = KeyIndex::of(rows.chunks(8));
        assert!(arr.all_distinct());
        assert_eq!(arr.idx, [0, 1, 2]);
        // Rows in descending order are distinct too (the lookup path).
        let rev = KeyIndex::of(rows.chunks(8).rev());
        assert!(rev.all_distinct());
        assert_eq!(rev.keys[0].as_ptr(), rows[16..].as_ptr());
        // Overlapping slices of one buffer are not the same key.
        let ov = KeyIndex::of([&rows[0..8], &rows[4..12], &rows[0..8]].into_iter());
        assert_eq!(ov.idx, [0, 1, 0]);
    }
}
