//! Batch plumbing of the C ABI: which requests passed their own checks (and where each came
//! from), and the no-overlap check that makes caller output rows safe to hand out as slices.

use super::guard::Out;
use super::recycle::{give, take, Pooled};
use crate::backend::in_pool;
use crate::{Error, Status};
use rayon::prelude::*;

/// Batches from this size check their requests on all cores (65,536 checks take a few
/// milliseconds on one core: more than a GPU needs for the batch's encapsulations).
const PARALLEL_CHECKS_FROM: usize = 4096;

/// The requests of a batch that passed their checks, in request order: `items[k]` (inputs)
/// and `outs[k]` (outputs). The others keep their own error in `rejected`; in the common
/// case of none, nothing else is kept per item.
pub(crate) struct Accepted<T, O> {
    pub items: Vec<T>,
    pub outs: Vec<O>,
    rejected: Vec<(usize, Error)>,
}

/// A C request array read from several threads.
struct Requests<'a, R>(&'a [R]);

// SAFETY: a request is a plain C struct of addresses and lengths; the checks only read the
// struct (what its pointers point to is read under the submit call's own contract).
unsafe impl<R> Sync for Requests<'_, R> {}

impl<R> Requests<'_, R> {
    fn get(&self, i: usize) -> &R {
        &self.0[i]
    }
}

impl<T: Pooled, O: Pooled> Accepted<T, O> {
    /// Checks every request with `check`: on all cores for a large batch whose requests are
    /// all good (the usual case: a first pass only asks whether they are), one by one
    /// otherwise. The lists reuse earlier batches' memory.
    pub(crate) fn check<R>(
        reqs: &[R],
        check: impl Fn(&R) -> Result<(T, O), Error> + Sync + Send,
    ) -> Self {
        let n = reqs.len();
        let (mut items, mut outs) = (take(), take());
        let shared = Requests(reqs);
        // On this process's pool: never one inherited across fork().
        let parallel = n >= PARALLEL_CHECKS_FROM
            && in_pool(|| (0..n).into_par_iter().all(|i| check(shared.get(i)).is_ok()));
        if parallel {
            in_pool(|| {
                (0..n)
                    .into_par_iter()
                    .map(|i| match check(shared.get(i)) {
                        Ok(checked) => checked,
                        // The requests are read-only and the checks pure: the first pass decided.
                        Err(_) => unreachable!("a request that passed its check failed it"),
                    })
                    .unzip_into_vecs(&mut items, &mut outs)
            });
            return Accepted {
                items,
                outs,
                rejected: Vec::new(),
            };
        }
        let mut rejected = Vec::new();
        for (i, r) in reqs.iter().enumerate() {
            match check(r) {
                Ok((item, out)) => {
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
        }
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
pub(crate) unsafe fn rows(outs: impl Iterator<Item = Out>) -> Vec<&'static mut [u8]> {
    let mut v = take();
    // SAFETY: forwarded from the caller.
    v.extend(outs.map(|o| unsafe { o.slice() }));
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
