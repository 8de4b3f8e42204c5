//! Batch plumbing of the C ABI: which requests passed their own checks (and where each came
//! from), and the no-overlap check that makes caller output rows safe to hand out as slices.

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

impl<T: Send, O: Send> Accepted<T, O> {
    /// Checks every request with `check`: in parallel for a large batch whose requests are
    /// all good (the usual case), one by one otherwise.
    pub(crate) fn check<R>(
        reqs: &[R],
        check: impl Fn(&R) -> Result<(T, O), Error> + Sync + Send,
    ) -> Self {
        if reqs.len() >= PARALLEL_CHECKS_FROM {
            let shared = Requests(reqs);
            let all: Result<(Vec<T>, Vec<O>), Error> = (0..reqs.len())
                .into_par_iter()
                .map(|i| check(shared.get(i)))
                .collect();
            if let Ok((items, outs)) = all {
                return Accepted {
                    items,
                    outs,
                    rejected: Vec::new(),
                };
            }
        }
        Accepted::from_results(reqs.iter().map(check))
    }
}

impl<T, O> Accepted<T, O> {
    pub(crate) fn from_results(results: impl IntoIterator<Item = Result<(T, O), Error>>) -> Self {
        let results = results.into_iter();
        let n = results.size_hint().0;
        let mut acc = Accepted {
            items: Vec::with_capacity(n),
            outs: Vec::with_capacity(n),
            rejected: Vec::new(),
        };
        for (i, r) in results.enumerate() {
            match r {
                Ok((item, out)) => {
                    acc.items.push(item);
                    acc.outs.push(out);
                }
                Err(e) => acc.rejected.push((i, e)),
            }
        }
        acc
    }

    /// Every request's status in request order: the backend's (`ran`, one per accepted item)
    /// merged with the rejected requests' own errors.
    pub(crate) fn merge(self, ran: Vec<Status>) -> Vec<Status> {
        if self.rejected.is_empty() {
            return ran;
        }
        let n = ran.len() + self.rejected.len();
        let mut ran = ran.into_iter();
        let mut rejected = self.rejected.into_iter().peekable();
        (0..n)
            .map(|i| match rejected.next_if(|&(at, _)| at == i) {
                Some((_, e)) => Err(e),
                None => ran.next().unwrap_or(Err(Error::Panic)),
            })
            .collect()
    }
}

/// `InvalidArgument` unless the byte ranges `(address, length)` of all groups are pairwise
/// disjoint: output buffers become `&mut` slices, which must never alias. A group is one kind
/// of output (the signatures, the ciphertexts, the shared secrets): each is sorted only if it
/// is not already in address order (a caller's arrays are), then the groups are merged, so
/// the usual case is linear.
pub(crate) fn disjoint(groups: Vec<Vec<(usize, usize)>>) -> Result<(), Error> {
    let mut merged: Vec<(usize, usize)> = Vec::new();
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
    match apart {
        true => Ok(()),
        false => Err(Error::InvalidArgument),
    }
}

/// Merges two address-ordered lists into one.
fn merge_sorted(a: Vec<(usize, usize)>, b: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if a.is_empty() {
        return b;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x <= y,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
}

#[cfg(test)]
mod tests {
    use super::{disjoint, Accepted};
    use crate::Error;

    #[test]
    fn merged_statuses_keep_request_order() {
        let results = [
            Ok((1, ())),
            Err(Error::NullPointer),
            Ok((2, ())),
            Err(Error::BadLength),
        ];
        let acc = Accepted::from_results(results);
        assert_eq!(acc.items, [1, 2]);
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
        let all = Accepted::from_results([Ok((1, ())), Ok((2, ()))]);
        assert_eq!(all.merge(vec![Ok(()), Ok(())]), [Ok(()), Ok(())]);
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
