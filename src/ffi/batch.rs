//! Batch plumbing of the C ABI: which requests passed their own checks (and where each came
//! from), and the no-overlap check that makes caller output rows safe to hand out as slices.

use super::guard::Out;
use super::layout::{Outputs, Runs};
use super::recycle::{give, take, Pooled};
use super::share;
use crate::{Error, Status};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::Mutex;

/// Batches from this size check their requests on all cores (65,536 checks take a few tenths
/// of a millisecond on one core: a tenth of the GPU time of a batch of CTRU-Prime
/// encapsulations).
const PARALLEL_FROM: usize = 4096;

/// The requests checked as one piece of shared work (`share::run`): a few microseconds.
const BLOCK: usize = 1024;

/// The requests of a batch that passed their checks, in request order: `items[k]` (inputs)
/// and, per kind of output, `rows[kind][k]` (outputs, not yet known to be apart). The others
/// keep their own error in `rejected`; in the common case of none, nothing else is kept per
/// item.
pub(crate) struct Accepted<T, O> {
    items: Vec<T>,
    /// The first `O::KINDS` lists are used.
    rows: [Vec<Raw>; 2],
    rejected: Vec<(usize, Error)>,
    /// The accepted outputs' layout, followed while they were checked.
    runs: Runs,
    kind: std::marker::PhantomData<O>,
}

/// Accepted requests whose outputs are known to be pairwise apart: `rows[kind][k]` is the
/// slice the backend writes item k's output of that kind into.
pub(crate) struct Checked<T> {
    pub items: Vec<T>,
    pub rows: [Vec<&'static mut [u8]>; 2],
    rejected: Vec<(usize, Error)>,
}

/// An output buffer before the no-overlap check: a raw slice pointer, so that no `&mut` exists
/// before the buffers are known to be apart. `*mut [u8]` has the layout of `&mut [u8]`
/// (pointers and references share one layout), so once the check has passed the list becomes
/// the backend's list of slices as it is, without a pass over the items.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct Raw(*mut [u8]);

// SAFETY: an address and a length that the caller keeps valid until the job completes; the
// job writes through them only after the no-overlap check, from the one thread running it.
unsafe impl Send for Raw {}

impl Raw {
    fn of(out: Out) -> Raw {
        Raw(out.raw())
    }

    fn span(self) -> (usize, usize) {
        (self.0.cast::<u8>() as usize, self.0.len())
    }
}

/// An empty list of raw rows, in the memory of an earlier batch's list of slices.
fn raw_list() -> Vec<Raw> {
    let mut v = ManuallyDrop::new(take::<&'static mut [u8]>());
    // SAFETY: the allocation and capacity of a `Vec<&mut [u8]>`, whose elements have the size
    // and alignment of `Raw`'s; it holds no elements (`take` gives empty lists).
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<Raw>(), 0, v.capacity()) }
}

/// The rows as the backend's slices, in the same memory.
///
/// # Safety
/// As [`Out::slice`] for every row, for as long as the slices are used: each is writable for
/// its length and none overlaps another.
unsafe fn slices(v: Vec<Raw>) -> Vec<&'static mut [u8]> {
    let mut v = ManuallyDrop::new(v);
    // SAFETY: `Raw` is a `*mut [u8]`, which has the layout of `&mut [u8]`; every element is
    // non-NULL (`Out::new`) and, by the caller's promise, a valid, unaliased writable slice.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast(), v.len(), v.capacity()) }
}

/// A C request array read from several threads.
struct Requests<'a, R>(&'a [R]);

// SAFETY: a request is a plain C struct of addresses and lengths; the readers only read the
// struct (what its pointers point to is used under the submit call's own contract).
unsafe impl<R> Sync for Requests<'_, R> {}

impl<R> Requests<'_, R> {
    fn block(&self, b: usize) -> &[R] {
        &self.0[b * BLOCK..self.0.len().min((b + 1) * BLOCK)]
    }
}

impl<T: Pooled, O: Outputs> Accepted<T, O> {
    /// Checks every request with `check` (which must be pure: a request may be checked
    /// twice), following the outputs' layout on the way. A large batch whose requests are all
    /// good (the usual case) is checked once, on all cores; otherwise one by one. The lists
    /// reuse earlier batches' memory.
    pub(crate) fn check<R>(
        reqs: &[R],
        check: impl Fn(&R) -> Result<(T, O), Error> + Sync + Send,
    ) -> Self {
        let mut items = take();
        let mut rows = std::array::from_fn(|kind| match kind < O::KINDS {
            true => raw_list(),
            false => Vec::new(),
        });
        let accepted = |items, rows, runs, rejected| Accepted {
            items,
            rows,
            rejected,
            runs,
            kind: std::marker::PhantomData,
        };
        if reqs.len() >= PARALLEL_FROM {
            if let Some(runs) = all_good(reqs, &check, &mut items, &mut rows) {
                return accepted(items, rows, runs, Vec::new());
            }
        }
        let (mut rejected, mut runs) = (Vec::new(), Runs::default());
        for (i, r) in reqs.iter().enumerate() {
            match check(r) {
                Ok((item, out)) => {
                    runs.push(&out);
                    items.push(item);
                    for (kind, list) in rows.iter_mut().enumerate().take(O::KINDS) {
                        list.push(Raw::of(out.row(kind)));
                    }
                }
                Err(e) => rejected.push((i, e)),
            }
        }
        accepted(items, rows, runs, rejected)
    }

    /// The accepted requests with their outputs as the backend's slices; `InvalidArgument`
    /// unless those outputs are pairwise apart (`&mut` slices must never alias). Usually
    /// already known from the check.
    ///
    /// # Safety
    /// Every accepted output buffer is writable for its length for as long as the returned
    /// rows are used (a job's: until it merges its statuses, before it completes).
    pub(crate) unsafe fn outputs_apart(self) -> Result<Checked<T>, Error> {
        if !self.runs.apart() {
            disjoint(
                (0..O::KINDS)
                    .map(|kind| spans(self.rows[kind].iter().map(|r| r.span())))
                    .collect(),
            )?;
        }
        let Accepted {
            items,
            rows,
            rejected,
            ..
        } = self;
        // SAFETY: writable (the caller's promise) and pairwise apart (checked above).
        let rows = rows.map(|r| unsafe { slices(r) });
        Ok(Checked {
            items,
            rows,
            rejected,
        })
    }
}

impl<T: Pooled> Accepted<T, ()> {
    /// The accepted requests of a batch without outputs.
    pub(crate) fn without_outputs(self) -> Checked<T> {
        Checked {
            items: self.items,
            rows: Default::default(),
            rejected: self.rejected,
        }
    }
}

impl<T: Pooled> Checked<T> {
    /// Every request's status in request order: the backend's (`ran`, one per accepted item)
    /// merged with the rejected requests' own errors. The lists go back to their pools.
    pub(crate) fn merge(self, ran: Vec<Status>) -> Vec<Status> {
        give(self.items);
        self.rows.into_iter().for_each(give);
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

/// One block's places in the lists: its item slots, and its row slots of each kind.
type Slots<'a, T> = (&'a mut [MaybeUninit<T>], [&'a mut [MaybeUninit<Raw>]; 2]);

/// Checks all requests block by block, on this thread and on the pool's threads as they wake
/// (`share::run`), each block writing its items and output rows straight into their places
/// in `items` and `rows`. `Some(layout)` when every request passed (the lists then hold them
/// all); `None` when one failed (the lists are left empty and the caller checks one by one,
/// giving each failure its own status).
fn all_good<R, T: Send, O: Outputs>(
    reqs: &[R],
    check: &(impl Fn(&R) -> Result<(T, O), Error> + Sync),
    items: &mut Vec<T>,
    rows: &mut [Vec<Raw>; 2],
) -> Option<Runs> {
    let n = reqs.len();
    items.reserve(n);
    let [a, b] = rows;
    let mut row_blocks = [(a, 0), (b, 1)].map(|(list, kind)| {
        let used = if kind < O::KINDS { n } else { 0 };
        list.reserve(used);
        list.spare_capacity_mut()[..used].chunks_mut(BLOCK)
    });
    // Per block: its item slots and its row slots of each kind (none for unused kinds).
    let blocks: Vec<Slots<'_, T>> = items.spare_capacity_mut()[..n]
        .chunks_mut(BLOCK)
        .map(|slots| {
            (
                slots,
                row_blocks.each_mut().map(|r| r.next().unwrap_or_default()),
            )
        })
        .collect();
    let shared = Requests(reqs);
    // Each block's slots, taken by whichever thread checks the block; its layout once done.
    let blocks: Vec<Mutex<Option<Slots<'_, T>>>> =
        blocks.into_iter().map(|b| Mutex::new(Some(b))).collect();
    let done: Vec<Mutex<Option<Runs>>> = blocks.iter().map(|_| Mutex::new(None)).collect();
    let check_block = |b: usize| {
        let slots = blocks[b].lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some((item_slots, mut row_slots)) = slots else {
            return;
        };
        let mut runs = Runs::default();
        for (j, r) in shared.block(b).iter().enumerate() {
            let Ok((item, out)) = check(r) else {
                return;
            };
            runs.push(&out);
            item_slots[j].write(item);
            for (kind, slots) in row_slots.iter_mut().enumerate().take(O::KINDS) {
                slots[j].write(Raw::of(out.row(kind)));
            }
        }
        *done[b].lock().unwrap_or_else(|e| e.into_inner()) = Some(runs);
    };
    share::run(blocks.len(), &check_block);
    let runs = done
        .into_iter()
        .map(|d| d.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect::<Option<Vec<Runs>>>()?;
    // SAFETY: every block recorded its layout, so each of the first n slots of the item list
    // and of each used row list was written above (a block writes all its slots, in order,
    // before it records its layout).
    unsafe {
        items.set_len(n);
        for list in rows.iter_mut().take(O::KINDS) {
            list.set_len(n);
        }
    }
    Some(runs.into_iter().fold(Runs::default(), Runs::then))
}

/// A list for `n` statuses, all `Panic` until the backend reports.
pub(crate) fn pending(n: usize) -> Vec<Status> {
    let mut v = take();
    v.resize(n, Err(Error::Panic));
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
        let acc = Accepted::check(&reqs, |r| *r).without_outputs();
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
        let all = Accepted::check(&[Ok(((), ())); 2], |r| *r).without_outputs();
        assert_eq!(all.merge(vec![Ok(()), Ok(())]), [Ok(()), Ok(())]);
        // A large batch, checked on all cores, with and without a rejected request.
        for reject in [None, Some(5000)] {
            let reqs: Vec<_> = (0..9000)
                .map(|i| match Some(i) == reject {
                    true => bad(Error::NullPointer),
                    false => Ok(((), ())),
                })
                .collect();
            let acc = Accepted::check(&reqs, |r| *r).without_outputs();
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
    /// (checked on all cores, block by block) and small ones. Accepted outputs reach the
    /// backend as the rows of their own requests, in order, each kind in its own list.
    #[test]
    fn outputs_apart_in_every_layout() {
        use crate::ffi::guard::Out;
        // Real memory: accepted rows become slices.
        let mut buf = vec![0u8; 3 << 20];
        let base = buf.as_mut_ptr() as usize;
        let sig = 100usize;
        for n in [10usize, 9000] {
            let place = |at: &dyn Fn(usize) -> usize| -> Result<(), Error> {
                let reqs: Vec<usize> = (0..n).map(|i| base + at(i)).collect();
                let acc = Accepted::check(&reqs, |&a| Ok(((), Out::new(a as *mut u8, sig)?)));
                // SAFETY: every row lies in `buf`, which outlives the rows.
                let acc = unsafe { acc.outputs_apart() }?;
                let rows = &acc.rows[0];
                assert_eq!(rows.len(), n);
                assert!(rows
                    .iter()
                    .zip(&reqs)
                    .all(|(r, &a)| r.as_ptr() as usize == a && r.len() == sig));
                acc.merge(vec![Ok(()); n]);
                Ok(())
            };
            let bad = Err(Error::InvalidArgument);
            assert_eq!(place(&|i| i * sig), Ok(()), "array, n={n}");
            assert_eq!(place(&|i| (n - 1 - i) * sig), Ok(()), "reversed");
            assert_eq!(place(&|i| i * (sig - 1)), bad, "rows overlap");
            assert_eq!(place(&|i| (i % (n - 1)) * sig), bad, "a row twice");
            assert_eq!(
                place(&|i| i * sig + (i == n / 2) as usize),
                bad,
                "one row off"
            );
        }
        // Two kinds: separate arrays, interleaved rows, and one array inside the other; a
        // rejected request in a large batch (then checked one by one).
        let n = 9000;
        let pair = |ct: &dyn Fn(usize) -> usize, ss: &dyn Fn(usize) -> usize| {
            let reqs: Vec<(usize, usize)> = (0..n).map(|i| (base + ct(i), base + ss(i))).collect();
            let rejected = reqs[4321].0;
            let acc = Accepted::check(&reqs, |&(c, s)| match c == rejected {
                true => Err(Error::NullPointer),
                false => Ok((
                    (),
                    (Out::new(c as *mut u8, 64)?, Out::new(s as *mut u8, 32)?),
                )),
            });
            // SAFETY: every row lies in `buf`, which outlives the rows.
            let acc = unsafe { acc.outputs_apart() }?;
            let accepted: Vec<_> = reqs
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != 4321)
                .collect();
            assert_eq!(acc.rows[0].len(), n - 1);
            for (kind, len) in [(0, 64), (1, 32)] {
                assert!(acc.rows[kind]
                    .iter()
                    .zip(&accepted)
                    .all(|(r, (_, &(c, s)))| {
                        r.as_ptr() as usize == [c, s][kind] && r.len() == len
                    }));
            }
            let merged = acc.merge(vec![Ok(()); n - 1]);
            assert_eq!(merged[4321], Err(Error::NullPointer));
            Ok(())
        };
        assert_eq!(pair(&|i| i * 64, &|i| (1 << 20) + i * 32), Ok(()));
        assert_eq!(pair(&|i| i * 96, &|i| i * 96 + 64), Ok(()));
        assert_eq!(
            pair(&|i| i * 64, &|i| 64 * 100 + i * 32),
            Err(Error::InvalidArgument)
        );
        drop(buf);
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
