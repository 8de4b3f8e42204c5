//! KeyGen's f^-1 for a whole chunk by Montgomery's batch inversion over a binary product tree
//! (issue 6). R_q = Z_q[x]/(x^n - x - 1) is a field and every f = 2f' + 1 is nonzero, so the
//! m inverses cost one divstep inversion (of the product of all f, one warp) and 3 (m - 1)
//! full products in R_q, instead of m warp-long inversions:
//!
//! * up: level l + 1 holds the products of the pairs of level l (`tree_up`, one launch per
//!   level, one block per parent); an odd last node is carried up by a copy;
//! * the root (level L) is inverted by `tree_invert`;
//! * down: inv(left) = inv(parent) * right, inv(right) = inv(parent) * left (`tree_down`, one
//!   block per child); a carried node takes its parent's inverse.
//!
//! The tree's shape depends only on m (public), and the kernels only on that shape, so each
//! key stays constant time. The inverse is unique: f^-1 is bit-identical to the per-key path,
//! which `PQGPU_CTRU_INVERT=perkey` keeps selectable for measurements (`tuning` builds).

use super::kernels::Kernels;
use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use cudarc::driver::DriverError;

/// Nodes per level, leaves first: m, ceil(m / 2), ..., 1.
fn level_sizes(m: usize) -> Vec<usize> {
    let mut sizes = vec![m];
    while let Some(&last) = sizes.last().filter(|&&x| x > 1) {
        sizes.push(last.div_ceil(2));
    }
    sizes
}

/// First row of each level in the node buffer (levels stored one after the other).
fn level_offsets(sizes: &[usize]) -> Vec<usize> {
    sizes
        .iter()
        .scan(0, |row, &len| {
            let first = *row;
            *row += len;
            Some(first)
        })
        .collect()
}

/// finv (i16 rows of NP, residues in [0, q)) = the inverses of the `m` i8 rows `f`, all on
/// the device.
pub fn invert(
    w: &mut Worker,
    k: &Kernels,
    f: Dev<i8>,
    finv: Dev<i16>,
    m: usize,
) -> Result<(), DriverError> {
    let np = k.s.np;
    let sizes = level_sizes(m);
    let off = level_offsets(&sizes);
    let top = sizes.len() - 1;
    let rows = off[top] + 1;
    // Nodes of every level; inverses of levels >= 1 (level 0's are finv itself).
    let nodes: Dev<u16> = w.dev("ctru_kg_tree", rows * np)?;
    let invs: Dev<u16> = w.dev("ctru_kg_tree_inv", (rows - m).max(1) * np)?;
    let node = |l: usize| nodes.add(off[l] * np);
    let inv = |l: usize| match l {
        0 => finv.cast(),
        _ => invs.add((off[l] - m) * np),
    };
    k.tree_leaves(w, f, node(0), m)?;
    for l in 0..top {
        k.tree_up(w, sizes[l + 1], node(l), node(l + 1), sizes[l])?;
    }
    k.tree_invert(w, node(top), inv(top).cast())?;
    for l in (0..top).rev() {
        k.tree_down(w, inv(l + 1), node(l), inv(l), sizes[l])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_to_one_root() {
        assert_eq!(level_sizes(1), [1]);
        assert_eq!(level_sizes(2), [2, 1]);
        assert_eq!(level_sizes(5), [5, 3, 2, 1]);
        assert_eq!(level_sizes(13), [13, 7, 4, 2, 1]);
        assert_eq!(level_offsets(&level_sizes(13)), [0, 13, 20, 24, 26]);
        // m - 1 products up (one per pair), 2 (m - 1) down: every node but the root has one
        // sibling product or is a copy.
        for m in 1..300 {
            let sizes = level_sizes(m);
            let up: usize = sizes.iter().map(|x| x / 2).sum();
            assert_eq!(up, m - 1, "m = {m}");
            assert!(sizes.len() - 1 <= (m as f64).log2().ceil() as usize);
        }
    }
}
