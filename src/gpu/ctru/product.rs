//! The two ring-product engines (spec sections 4.1 and 9.2) and which one a chunk uses.
//!
//! * `CudaCore` (`mul_cc`): exact schoolbook product, one block per item, any mix of keys.
//! * `TensorCore` (`mul_tc`): the key's n x n multiplication matrix in int8 digits times the
//!   items' vectors as matrix columns, int8 `mma.sync` with int32 accumulation. One shared key
//!   (the server case): the matrix is expanded once and every item is a column, no padding.
//!   Several keys (down to one item per key, the per-instance mode): the items are regrouped
//!   by key into blocks padded to `TC_ITEMS` columns, and each key's matrix is expanded and
//!   multiplied in turn.

use super::kernels::{Kernels, TC_ITEMS};
use crate::gpu::hostio::{self, Rows};
use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use cudarc::driver::DriverError;

/// Which engine multiplies.
pub use crate::gpu::config::ProductEngine as Engine;

/// The engine for a chunk of `items` items with `keys` distinct keys: Tensor Cores when the
/// keys have on average a whole `TC_ITEMS` block of items each (each key costs one n x n
/// matrix expansion and at least one padded block), CUDA cores otherwise. Measured on the
/// H200: one item per key, Tensor Cores reach 0.4x the CUDA cores; see BENCHMARKS.md.
/// `forced` (`PQGPU_CTRU_ENGINE=cc|tc`, `tuning` builds) overrides the choice.
pub fn choose(forced: Option<Engine>, keys: usize, items: usize) -> Engine {
    if let Some(e) = forced {
        return e;
    }
    if keys == 1 || items >= keys * TC_ITEMS {
        Engine::TensorCore
    } else {
        Engine::CudaCore
    }
}

/// A chunk's items regrouped by key for the Tensor-Core engine: row j of the padded layout
/// holds item `perm[j]` (`u32::MAX`: a zero padding row); key g owns rows
/// `start[g]..start[g + 1]`, a multiple of `TC_ITEMS`.
pub struct Groups {
    perm: Vec<u32>,
    start: Vec<usize>,
}

impl Groups {
    /// Groups items by their key index `idx[i]` (< `keys`).
    pub fn of(idx: &[u32], keys: usize) -> Groups {
        let mut count = vec![0usize; keys];
        for &k in idx {
            count[k as usize] += 1;
        }
        let mut start = Vec::with_capacity(keys + 1);
        let mut at = 0;
        for c in &count {
            start.push(at);
            at += c.div_ceil(TC_ITEMS) * TC_ITEMS;
        }
        start.push(at);
        let mut perm = vec![u32::MAX; at];
        let mut fill = start.clone();
        for (i, &k) in idx.iter().enumerate() {
            perm[fill[k as usize]] = i as u32;
            fill[k as usize] += 1;
        }
        Groups { perm, start }
    }

    fn rows(&self) -> usize {
        self.perm.len()
    }

    /// Device addresses of each padded row's item row in `base` (0 for padding rows).
    fn item_rows(&self, base: u64, row_bytes: usize) -> Rows {
        let addrs = self
            .perm
            .iter()
            .map(|&i| match i {
                u32::MAX => 0,
                i => base + (i as usize * row_bytes) as u64,
            })
            .collect();
        Rows::device(addrs, row_bytes)
    }
}

/// What is multiplied: `Encrypt` is h r mod q (key h: two int8 digits of the centered matrix;
/// item r: one digit), `Decrypt` is c f mod q2 (key f: one digit; item c = 128 hi + lo).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Encrypt,
    Decrypt,
}

/// Device operands of one product over `n` items (item rows padded to `pad` for the TC engine,
/// the rows past `n` zeroed by the caller).
pub struct Operands<'a> {
    /// Key vectors (i16 rows of NP).
    pub keyvec: Dev<i16>,
    /// Per-item key index, or null for item i -> key i.
    pub key_idx: Dev<u32>,
    /// Item digits (i8 rows of NP); `hi` is null for one-digit items.
    pub lo: Dev<i8>,
    pub hi: Dev<i8>,
    /// Output: u16 rows of NP, reduced.
    pub out: Dev<u16>,
    pub n: usize,
    pub pad: usize,
    /// The items grouped by key: required by the Tensor-Core engine for more than one key.
    pub groups: Option<&'a Groups>,
    /// The host copy of `keyvec`, when there is one (its first row is the one key of an
    /// ungrouped product): a worker that expanded the same key last time reuses its matrix.
    pub key_rows: Option<&'a [i16]>,
}

pub fn product(
    w: &mut Worker,
    k: &Kernels,
    engine: Engine,
    kind: Kind,
    o: &Operands,
) -> Result<(), DriverError> {
    match engine {
        Engine::CudaCore => {
            let mod_q2 = kind == Kind::Decrypt;
            k.mul_cc(w, o.keyvec, o.key_idx, o.lo, o.hi, o.out, mod_q2, o.n)
        }
        Engine::TensorCore => match o.groups {
            None => {
                let np = k.s.np;
                let tag = o
                    .key_rows
                    .filter(|r| r.len() >= np)
                    .map(|r| matrix_tag(k, kind, &r[..np]));
                product_tc(
                    w,
                    k,
                    kind,
                    (o.keyvec, 0, tag.as_ref()),
                    o.lo,
                    o.hi,
                    o.out,
                    o.pad,
                )
            }
            Some(g) => product_tc_grouped(w, k, kind, o, g),
        },
    }
}

/// What names a key's expanded matrix: the parameter set, the product kind and the key row,
/// hashed (the row of a decapsulation key is secret; its digest is what the worker keeps).
fn matrix_tag(k: &Kernels, kind: Kind, key: &[i16]) -> [u8; 32] {
    use sha3::{Digest, Sha3_256};
    let mut h = Sha3_256::new();
    h.update((k.s.n as u32).to_le_bytes());
    h.update([kind as u8]);
    for c in key {
        h.update(c.to_le_bytes());
    }
    h.finalize().into()
}

/// One key's matrix (`key`: row `.1` of the key vectors at `.0`; `.2`, its tag when the matrix
/// may be kept between chunks) times `pad` item columns at `lo`/`hi` into `out`.
#[allow(clippy::too_many_arguments)]
fn product_tc(
    w: &mut Worker,
    k: &Kernels,
    kind: Kind,
    (keyvec, key, tag): (Dev<i16>, u32, Option<&[u8; 32]>),
    lo: Dev<i8>,
    hi: Dev<i8>,
    out: Dev<u16>,
    pad: usize,
) -> Result<(), DriverError> {
    let np = k.s.np;
    let digits = if kind == Kind::Encrypt { 2 } else { 1 };
    // Each kind its own matrix buffers: decapsulation multiplies by f and then by h, and the
    // serving case keeps both from chunk to chunk.
    let (hi_name, lo_name) = match kind {
        Kind::Encrypt => ("ctru_mh_hi", "ctru_mh_lo"),
        Kind::Decrypt => ("ctru_mf_hi", "ctru_mf_lo"),
    };
    let (m_hi, m_lo, kept) = match tag {
        Some(t) => {
            let (m_hi, hi_kept) = w.dev_kept(hi_name, np * np, t)?;
            let (m_lo, lo_kept) = w.dev_kept(lo_name, np * np, t)?;
            (m_hi, m_lo, hi_kept && lo_kept)
        }
        None => (w.dev(hi_name, np * np)?, w.dev(lo_name, np * np)?, false),
    };
    if !kept {
        k.expand_key(w, keyvec, key, digits, m_hi, m_lo)?;
        if let Some(t) = tag {
            w.keep(hi_name, t);
            w.keep(lo_name, t);
        }
    }
    let (x_lo, x_hi, two_key) = match kind {
        Kind::Encrypt => (lo, lo, true),
        Kind::Decrypt => (lo, hi, false),
    };
    k.mul_tc(w, x_lo, x_hi, m_lo, m_hi, two_key, out, pad)
}

/// Several keys: the item rows are gathered into key-ordered blocks (zero padded), each key's
/// block is multiplied by its own matrix, and the products are scattered back to item order.
fn product_tc_grouped(
    w: &mut Worker,
    k: &Kernels,
    kind: Kind,
    o: &Operands,
    g: &Groups,
) -> Result<(), DriverError> {
    let np = k.s.np;
    let rows = g.rows();
    let g_lo: Dev<i8> = w.dev("ctru_g_lo", rows * np)?;
    w.zero(g_lo, rows * np)?;
    // Address tables are staged in pinned buffers named per product kind: decaps runs a
    // Decrypt and an Encrypt product in one chunk, and a table must not be rewritten before
    // the worker's `sync` (its copy to the device is still queued).
    let names = match kind {
        Kind::Decrypt => ["ctru_gd_lo_rows", "ctru_gd_hi_rows", "ctru_gd_out_rows"],
        Kind::Encrypt => ["ctru_ge_lo_rows", "ctru_ge_hi_rows", "ctru_ge_out_rows"],
    };
    let lo_rows = g.item_rows(o.lo.addr(), np);
    hostio::gather(w, &k.io, &lo_rows, g_lo.cast(), np, names[0])?;
    let g_hi = match kind {
        Kind::Encrypt => g_lo,
        Kind::Decrypt => {
            let g_hi: Dev<i8> = w.dev("ctru_g_hi", rows * np)?;
            w.zero(g_hi, rows * np)?;
            let hi_rows = g.item_rows(o.hi.addr(), np);
            hostio::gather(w, &k.io, &hi_rows, g_hi.cast(), np, names[1])?;
            g_hi
        }
    };
    let g_out: Dev<u16> = w.dev("ctru_g_out", rows * np)?;
    for key in 0..g.start.len() - 1 {
        let (from, to) = (g.start[key], g.start[key + 1]);
        product_tc(
            w,
            k,
            kind,
            (o.keyvec, key as u32, None),
            g_lo.add(from * np),
            g_hi.add(from * np),
            g_out.add(from * np),
            to - from,
        )?;
    }
    let out_rows = g.item_rows(o.out.addr(), 2 * np);
    hostio::scatter(w, &k.io, g_out.cast(), 2 * np, &out_rows, names[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_hold_each_key_s_items_in_order_in_padded_blocks() {
        let idx = [2, 0, 2, 1, 0, 2];
        let g = Groups::of(&idx, 3);
        assert_eq!(g.start, vec![0, TC_ITEMS, 2 * TC_ITEMS, 3 * TC_ITEMS]);
        assert_eq!(g.perm[..3], [1, 4, u32::MAX]);
        assert_eq!(g.perm[TC_ITEMS..TC_ITEMS + 2], [3, u32::MAX]);
        assert_eq!(g.perm[2 * TC_ITEMS..2 * TC_ITEMS + 4], [0, 2, 5, u32::MAX]);
        // Every item exactly once, everything else padding.
        let mut seen: Vec<u32> = g.perm.iter().copied().filter(|&i| i != u32::MAX).collect();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2, 3, 4, 5]);
        let big = Groups::of(&vec![0; TC_ITEMS + 1], 1);
        assert_eq!(big.rows(), 2 * TC_ITEMS);
    }

    #[test]
    fn few_keys_with_many_items_each_use_tensor_cores() {
        assert_eq!(choose(None, 1, 1), Engine::TensorCore);
        assert_eq!(choose(None, 3, 3 * TC_ITEMS), Engine::TensorCore);
        assert_eq!(choose(None, 3, 3 * TC_ITEMS - 1), Engine::CudaCore);
        assert_eq!(choose(None, 100, 100), Engine::CudaCore);
        let cc = Some(Engine::CudaCore);
        assert_eq!(choose(cc, 1, 1), Engine::CudaCore);
    }
}
