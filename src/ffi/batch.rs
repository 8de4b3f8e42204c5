//! Batch plumbing of the C ABI: which requests passed their own checks (and where each came
//! from), and the no-overlap check that makes caller output rows safe to hand out as slices.

use super::guard::Out;
use super::layout::{Outputs, Runs};
use super::recycle::{give, take, Pooled};
use crate::backend::in_pool;
use crate::{Error, Status};
use rayon::prelude::*;

/// Batches from this size check their requests on all cores, in blocks of this size (65,536
/// checks take a few tenths of a millisecond on one core: a tenth of the GPU time of a batch
/// of CTRU-Prime encapsulations).
const BLOCK: usize = 4096;

/// The requests of a batch that passed their checks, in request order: `items[k]` (inputs)
/// and `outs[k]` (outputs). The others keep their own error in `rejected`; in the common
/// case of none, nothing else is kept per item.
pub(crate) struct Accepted<T, O> {
    pub items: Vec<T>,
    pub outs: Vec<O>,
    rejected: Vec<(usize, Error)>,
    /// The accepted outputs' layout, followed while they were checked.
    runs: Runs,
}

/// A C request array (or the outputs checked from one) read from several threads.
struct Requests<'a, R>(&'a [R]);

// SAFETY: a request is a plain C struct of addresses and lengths (an output an address and a
// length); the readers only read the struct (what its pointers point to is used under the
// submit call's own contract).
unsafe impl<R> Sync for Requests<'_, R> {}

impl<R> Requests<'_, R> {
    fn at(&self, i: usize) -> &R {
        &self.0[i]
    }

    fn block(&self, b: usize) -> &[R] {
        &self.0[b * BLOCK..self.0.len().min((b + 1) * BLOCK)]
    }
}

impl<T: Pooled, O: Pooled + Outputs> Accepted<T, O> {
    /// Checks every request with `check` (which must be pure: a request may be checked
    /// twice), following the outputs' layout on the way. A large batch whose requests are all
    /// good (the usual case) is checked once, on all cores; otherwise one by one. The lists
    /// reuse earlier batches' memory.
    pub(crate) fn check<R>(
        reqs: &[R],
        check: impl Fn(&R) -> Result<(T, O), Error> + Sync + Send,
    ) -> Self {
        let (mut items, mut outs) = (take(), take());
        if reqs.len() >= BLOCK {
            if let Some(runs) = all_good(reqs, &check, &mut items, &mut outs) {
                return Accepted {
                    items,
                    outs,
                    rejected: Vec::new(),
                    runs,
                };
            }
        }
        let (mut rejected, mut runs) = (Vec::new(), Runs::default());
        for (i, r) in reqs.iter().enumerate() {
            match check(r) {
                Ok((item, out)) => {
                    runs.push(&out);
                    items.push(item);
                    outs.push(out);
                }
                Err(e) => rejected.push((i, e)),
            }
        }
        Accepted {
            items,
            outs,
            rejected,
            runs,
        }
    }

    /// `InvalidArgument` unless the accepted requests' outputs are pairwise apart: they become
    /// `&mut` slices, which must never alias. Usually already known from the check.
    pub(crate) fn outputs_apart(&self) -> Result<(), Error> {
        if self.runs.apart() {
            return Ok(());
        }
        disjoint(
            (0..O::KINDS)
                .map(|kind| spans(self.outs.iter().map(|o| o.span(kind))))
                .collect(),
        )
    }

    /// Every request's status in request order: the backend's (`ran`, one per accepted item)
    /// merged with the rejected requests' own errors. The lists go back to their pools.
    pub(crate) fn merge(self, ran: Vec<Status>) -> Vec<Status> {
        give(self.items);
        give(self.outs);
        if self.rejected.is_empty() {
            return ran;
        }
        let n = ran.len() + self.rejected.len();
        let mut merged = take();
        let mut backend = ran.iter().copied();
        let mut rejected = self.rejected.into_iter().peekable();
        merged.extend((0..n).map(|i| match rejected.next_if(|&(at, _)| at == i) {
            Some((_, e)) => Err(e),
            None => backend.next().unwrap_or(Err(Error::Panic)),
        }));
        give(ran);
        merged
    }
}

/// Checks all requests block by block on all cores, each block writing its items and outputs
/// straight into their places in `items` and `outs`. `Some(layout)` when every request
/// passed (the lists then hold them all); `None` as soon as one fails (the lists are left
/// empty and the caller checks one by one, giving each failure its own status).
fn all_good<R, T: Send, O: Outputs>(
    reqs: &[R],
    check: &(impl Fn(&R) -> Result<(T, O), Error> + Sync),
    items: &mut Vec<T>,
    outs: &mut Vec<O>,
) -> Option<Runs> {
    let n = reqs.len();
    items.reserve(n);
    outs.reserve(n);
    let shared = Requests(reqs);
    let blocks = (
        &mut items.spare_capacity_mut()[..n],
        &mut outs.spare_capacity_mut()[..n],
    );
    // On this process's pool: never one inherited across fork().
    let runs = in_pool(|| {
        let (item_slots, out_slots) = blocks;
        item_slots
            .par_chunks_mut(BLOCK)
            .zip(out_slots.par_chunks_mut(BLOCK))
            .enumerate()
            .map(|(b, (item_slots, out_slots))| {
                let mut runs = Runs::default();
                let slots = item_slots.iter_mut().zip(out_slots.iter_mut());
                for (r, (item_slot, out_slot)) in shared.block(b).iter().zip(slots) {
                    let (item, out) = check(r).ok()?;
                    runs.push(&out);
                    item_slot.write(item);
                    out_slot.write(out);
                }
                Some(runs)
            })
            .collect::<Option<Vec<Runs>>>()
    })?;
    // SAFETY: every block returned `Some`, so each of the first n slots of both lists was
    // written above (a block writes all its slots, in order, before it returns `Some`).
    unsafe {
        items.set_len(n);
        outs.set_len(n);
    }
    Some(runs.into_iter().fold(Runs::default(), Runs::then))
}

/// A list for `n` statuses, all `Panic` until the backend reports.
pub(crate) fn pending(n: usize) -> Vec<Status> {
    let mut v = take();
    v.resize(n, Err(Error::Panic));
    v
}

/// Output buffers as the slices the backend writes, in a recycled list (give it back when the
/// backend is done).
///
/// # Safety
/// As [`Out::slice`] for every buffer, for as long as the list is used: each is writable for
/// its length and none overlaps another (checked with [`disjoint`]).
pub(crate) unsafe fn rows<O>(
    outs: &[O],
    pick: impl Fn(&O) -> Out + Sync + Send,
) -> Vec<&'static mut [u8]> {
    let mut v = take();
    // SAFETY: forwarded from the caller.
    let slice = |o: &O| unsafe { pick(o).slice() };
    if outs.len() < BLOCK {
        v.extend(outs.iter().map(slice));
    } else {
        // A GPU batch's list is megabytes, written before the backend starts: on all cores.
        let (shared, n) = (&Requests(outs), outs.len());
        in_pool(|| v.par_extend((0..n).into_par_iter().map(|i| slice(shared.at(i)))));
    }
    v
}

/// The address ranges of one kind of output, in a recycled list.
pub(crate) fn spans(ranges: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut v = take();
    v.extend(ranges);
    v
}

/// `InvalidArgument` unless the byte ranges `(address, length)` of all groups are pairwise
/// disjoint: output buffers become `&mut` slices, which must never alias. A group is one kind
/// of output (the signatures, the ciphertexts, the shared secrets): each is sorted only if it
/// is not already in address order (a caller's arrays are), then the groups are merged, so
/// the usual case is linear.
pub(crate) fn disjoint(mut groups: Vec<Vec<(usize, usize)>>) -> Result<(), Error> {
    if let Some(apart) = separate_arrays(&mut groups) {
        groups.into_iter().for_each(give);
        return match apart {
            true => Ok(()),
            false => Err(Error::InvalidArgument),
        };
    }
    let mut merged: Vec<(usize, usize)> = take();
    for mut g in groups {
        g.retain(|&(_, len)| len > 0);
        if !g.windows(2).all(|w| w[0] <= w[1]) {
            g.sort_unstable();
        }
        merged = merge_sorted(merged, g);
    }
    let apart = merged
        .windows(2)
        .all(|w| w[0].0.checked_add(w[0].1).is_some_and(|end| end <= w[1].0));
    give(merged);
    match apart {
        true => Ok(()),
        false => Err(Error::InvalidArgument),
    }
}

/// The usual layout, decided without merging: every group in address order, its rows apart,
/// and the groups' spans apart (separate arrays). `Some(false)` for rows that overlap within a
/// group; `None` when the layout is another one (the caller merges).
fn separate_arrays(groups: &mut [Vec<(usize, usize)>]) -> Option<bool> {
    let mut bounds = Vec::with_capacity(groups.len());
    for g in groups.iter_mut() {
        g.retain(|&(_, len)| len > 0);
        let (Some(first), Some(last)) = (g.first(), g.last()) else {
            continue;
        };
        if !g.windows(2).all(|w| w[0].0 <= w[1].0) {
            return None;
        }
        if !g
            .windows(2)
            .all(|w| w[0].0.checked_add(w[0].1).is_some_and(|end| end <= w[1].0))
        {
            return Some(false);
        }
        bounds.push((first.0, last.0.checked_add(last.1)?));
    }
    bounds.sort_unstable();
    bounds.windows(2).all(|w| w[0].1 <= w[1].0).then_some(true)
}

/// Merges two address-ordered lists into one.
fn merge_sorted(a: Vec<(usize, usize)>, b: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if a.is_empty() {
        give(a);
        return b;
    }
    let mut out = take();
    out.reserve(a.len() + b.len());
    let (mut x, mut y) = (a.iter().peekable(), b.iter().peekable());
    loop {
        let take_x = match (x.peek(), y.peek()) {
            (Some(p), Some(q)) => p <= q,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_x { x.next() } else { y.next() });
    }
    give(a);
    give(b);
    out
}

#[cfg(test)]
mod tests {
    use super::{disjoint, Accepted};
    use crate::Error;

    #[test]
    fn merged_statuses_keep_request_order() {
        let bad = |e| Err::<((), ()), Error>(e);
        let reqs = [
            Ok(((), ())),
            bad(Error::NullPointer),
            Ok(((), ())),
            bad(Error::BadLength),
        ];
        let acc = Accepted::check(&reqs, |r| *r);
        assert_eq!(acc.items.len(), 2);
        let merged = acc.merge(vec![Ok(()), Err(Error::BadKey)]);
        assert_eq!(
            merged,
            [
                Ok(()),
                Err(Error::NullPointer),
                Err(Error::BadKey),
                Err(Error::BadLength)
            ]
        );
        let all = Accepted::check(&[Ok(((), ())); 2], |r| *r);
        assert_eq!(all.merge(vec![Ok(()), Ok(())]), [Ok(()), Ok(())]);
        // A large batch, checked on all cores, with and without a rejected request.
        for reject in [None, Some(5000)] {
            let reqs: Vec<_> = (0..9000)
                .map(|i| match Some(i) == reject {
                    true => bad(Error::NullPointer),
                    false => Ok(((), ())),
                })
                .collect();
            let acc = Accepted::check(&reqs, |r| *r);
            assert_eq!(acc.items.len(), 9000 - usize::from(reject.is_some()));
            let n = acc.items.len();
            let merged = acc.merge(vec![Ok(()); n]);
            assert_eq!(merged.len(), 9000);
            assert!(merged
                .iter()
                .enumerate()
                .all(|(i, s)| s.is_ok() != (Some(i) == reject)));
        }
    }

    /// Outputs laid out as arrays pass on the check's own verdict; any other layout gets the
    /// full check, which accepts what is apart and rejects what overlaps, in large batches
    /// (checked on all cores, block by block) and small ones.
    #[test]
    fn outputs_apart_in_every_layout() {
        use crate::ffi::guard::Out;
        let sig = 100usize;
        for n in [10usize, 9000] {
            let place = |at: &dyn Fn(usize) -> usize| -> Result<(), Error> {
                let reqs: Vec<usize> = (0..n).map(at).collect();
                let acc = Accepted::check(&reqs, |&a| Ok(((), Out::new(a as *mut u8, sig)?)));
                let r = acc.outputs_apart();
                acc.merge(vec![Ok(()); n]);
                r
            };
            let bad = Err(Error::InvalidArgument);
            assert_eq!(place(&|i| 4096 + i * sig), Ok(()), "array, n={n}");
            assert_eq!(place(&|i| 4096 + (n - 1 - i) * sig), Ok(()), "reversed");
            assert_eq!(place(&|i| 4096 + i * (sig - 1)), bad, "rows overlap");
            assert_eq!(place(&|i| 4096 + (i % (n - 1)) * sig), bad, "a row twice");
            assert_eq!(
                place(&|i| 4096 + i * sig + (i == n / 2) as usize),
                bad,
                "one row off"
            );
        }
        // Two kinds: separate arrays, interleaved rows, and one array inside the other.
        let n = 9000;
        let pair = |ct: &dyn Fn(usize) -> usize, ss: &dyn Fn(usize) -> usize| {
            let reqs: Vec<(usize, usize)> = (0..n).map(|i| (ct(i), ss(i))).collect();
            let acc = Accepted::check(&reqs, |&(c, s)| {
                Ok((
                    (),
                    (Out::new(c as *mut u8, 64)?, Out::new(s as *mut u8, 32)?),
                ))
            });
            let r = acc.outputs_apart();
            acc.merge(vec![Ok(()); n]);
            r
        };
        assert_eq!(
            pair(&|i| (1 << 20) + i * 64, &|i| (1 << 24) + i * 32),
            Ok(())
        );
        assert_eq!(pair(&|i| 4096 + i * 96, &|i| 4096 + i * 96 + 64), Ok(()));
        assert_eq!(
            pair(&|i| 4096 + i * 64, &|i| 4096 + 64 * 100 + i * 32),
            Err(Error::InvalidArgument)
        );
    }

    #[test]
    fn overlapping_ranges_are_rejected_in_any_order() {
        let one = |g: Vec<(usize, usize)>| disjoint(vec![g]);
        let bad = Err(Error::InvalidArgument);
        assert_eq!(disjoint(vec![]), Ok(()));
        assert_eq!(one(vec![(0, 4), (4, 4), (8, 1)]), Ok(()));
        assert_eq!(one(vec![(8, 1), (0, 4), (4, 4)]), Ok(()));
        assert_eq!(one(vec![(0, 5), (4, 4)]), bad);
        assert_eq!(one(vec![(9, 2), (0, 4), (10, 1)]), bad);
        assert_eq!(one(vec![(3, 1), (3, 1)]), bad);
        // Empty outputs overlap nothing.
        assert_eq!(one(vec![(3, 0), (3, 1)]), Ok(()));
        // Across groups: interleaved rows of two arrays, and a row of one inside the other.
        let cts = vec![(0, 10), (20, 10)];
        assert_eq!(disjoint(vec![cts.clone(), vec![(10, 10), (30, 5)]]), Ok(()));
        assert_eq!(disjoint(vec![cts, vec![(10, 10), (25, 1)]]), bad);
    }
}
