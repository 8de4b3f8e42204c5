//! Batch plumbing of the C ABI: which requests passed their own checks (and where each came
//! from), and the no-overlap check that makes caller output rows safe to hand out as slices.

use crate::{Error, Status};

/// The requests of a batch that passed their checks: item k (inputs `items[k]`, outputs
/// `outs[k]`) is request `index[k]`. Rejected requests keep their own error; the others start
/// as `Panic` until the backend's statuses are merged in.
pub(crate) struct Accepted<T, O> {
    pub items: Vec<T>,
    pub outs: Vec<O>,
    index: Vec<usize>,
    statuses: Vec<Status>,
}

impl<T, O> Accepted<T, O> {
    pub(crate) fn from_results(results: impl IntoIterator<Item = Result<(T, O), Error>>) -> Self {
        let results = results.into_iter();
        let n = results.size_hint().0;
        let mut acc = Accepted {
            items: Vec::with_capacity(n),
            outs: Vec::with_capacity(n),
            index: Vec::with_capacity(n),
            statuses: Vec::with_capacity(n),
        };
        for (i, r) in results.enumerate() {
            match r {
                Ok((item, out)) => {
                    acc.items.push(item);
                    acc.outs.push(out);
                    acc.index.push(i);
                    acc.statuses.push(Err(Error::Panic));
                }
                Err(e) => acc.statuses.push(Err(e)),
            }
        }
        acc
    }

    /// Puts the backend's statuses (one per accepted item) back in request order.
    pub(crate) fn merge(mut self, ran: &[Status]) -> Vec<Status> {
        for (&i, &st) in self.index.iter().zip(ran) {
            self.statuses[i] = st;
        }
        self.statuses
    }
}

/// `InvalidArgument` unless the byte ranges `(address, length)` are pairwise disjoint: output
/// buffers become `&mut` slices, which must never alias. Linear for ranges in address order
/// (a caller's arrays), a sort otherwise.
pub(crate) fn disjoint(mut spans: Vec<(usize, usize)>) -> Result<(), Error> {
    spans.retain(|&(_, len)| len > 0);
    let ordered = |s: &[(usize, usize)]| {
        s.windows(2)
            .all(|w| w[0].0.checked_add(w[0].1).is_some_and(|end| end <= w[1].0))
    };
    if ordered(&spans) {
        return Ok(());
    }
    spans.sort_unstable();
    if ordered(&spans) {
        Ok(())
    } else {
        Err(Error::InvalidArgument)
    }
}

#[cfg(test)]
mod tests {
    use super::disjoint;
    use crate::Error;

    #[test]
    fn overlapping_ranges_are_rejected_in_any_order() {
        assert_eq!(disjoint(vec![]), Ok(()));
        assert_eq!(disjoint(vec![(0, 4), (4, 4), (8, 1)]), Ok(()));
        assert_eq!(disjoint(vec![(8, 1), (0, 4), (4, 4)]), Ok(()));
        assert_eq!(disjoint(vec![(0, 5), (4, 4)]), Err(Error::InvalidArgument));
        assert_eq!(disjoint(vec![(9, 2), (0, 4), (10, 1)]), Err(Error::InvalidArgument));
        assert_eq!(disjoint(vec![(3, 1), (3, 1)]), Err(Error::InvalidArgument));
        // Empty outputs overlap nothing.
        assert_eq!(disjoint(vec![(3, 0), (3, 1)]), Ok(()));
    }
}
