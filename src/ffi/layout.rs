//! Whether a batch's output buffers are pairwise apart, decided while its requests are checked.
//!
//! Callers lay outputs out as arrays: each kind of output (signatures; or ciphertexts and
//! shared secrets) in address order, the kinds in separate arrays. [`Runs`] follows that
//! shape item by item, so the usual batch needs no list of address ranges and no sort; any
//! other layout is left to the full check ([`super::batch::disjoint`]).

use super::guard::Out;

/// The output buffers of one checked request, by kind.
pub(crate) trait Outputs: Copy + Send {
    /// How many kinds of output a request has (at most 2).
    const KINDS: usize;
    /// Output `kind` (below `KINDS`).
    fn row(&self, kind: usize) -> Out;

    /// The address range `(address, length)` of output `kind`.
    fn span(&self, kind: usize) -> (usize, usize) {
        self.row(kind).span()
    }
}

impl Outputs for () {
    const KINDS: usize = 0;
    fn row(&self, _: usize) -> Out {
        unreachable!("a request without outputs")
    }
}

impl Outputs for Out {
    const KINDS: usize = 1;
    fn row(&self, _: usize) -> Out {
        *self
    }
}

impl Outputs for (Out, Out) {
    const KINDS: usize = 2;
    fn row(&self, kind: usize) -> Out {
        match kind {
            0 => self.0,
            _ => self.1,
        }
    }
}

/// One kind of output seen so far: where its first buffer starts, where its last ends, and
/// whether each buffer started at or after the end of the one before (empty buffers skipped).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Run {
    start: usize,
    end: usize,
    seen: bool,
    ordered: bool,
}

impl Run {
    fn push(&mut self, (at, len): (usize, usize)) {
        if len == 0 {
            return;
        }
        // A range that wraps the address space is never "ordered": the full check rejects it.
        let end = at.checked_add(len);
        match self.seen {
            false => {
                *self = Run {
                    start: at,
                    end: end.unwrap_or(usize::MAX),
                    seen: true,
                    ordered: end.is_some(),
                }
            }
            true => {
                self.ordered &= end.is_some() && self.end <= at;
                self.end = end.unwrap_or(usize::MAX);
            }
        }
    }

    /// This run followed by `next` (a later block of the same batch).
    fn then(self, next: Run) -> Run {
        match (self.seen, next.seen) {
            (false, _) => next,
            (_, false) => self,
            (true, true) => Run {
                start: self.start,
                end: next.end,
                seen: true,
                ordered: self.ordered && next.ordered && self.end <= next.start,
            },
        }
    }

    fn apart_from(&self, other: &Run) -> bool {
        !self.seen || !other.seen || self.end <= other.start || other.end <= self.start
    }
}

/// The layout of a batch's (or a block's) outputs, one run per kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Runs([Run; 2]);

impl Runs {
    pub(crate) fn push<O: Outputs>(&mut self, out: &O) {
        for kind in 0..O::KINDS {
            self.0[kind].push(out.span(kind));
        }
    }

    /// These outputs followed by `next`'s.
    pub(crate) fn then(self, next: Runs) -> Runs {
        Runs([self.0[0].then(next.0[0]), self.0[1].then(next.0[1])])
    }

    /// True when every buffer is known to be apart from every other: each kind in address
    /// order without overlap, and the kinds' extents apart. False means "not shown", not
    /// "overlapping".
    pub(crate) fn apart(&self) -> bool {
        let [a, b] = &self.0;
        (!a.seen || a.ordered) && (!b.seen || b.ordered) && a.apart_from(b)
    }
}

#[cfg(test)]
mod tests {
    use super::{Run, Runs};

    fn run(spans: &[(usize, usize)]) -> Run {
        let mut r = Run::default();
        spans.iter().for_each(|&s| r.push(s));
        r
    }

    #[test]
    fn runs_follow_arrays_and_nothing_else() {
        assert!(run(&[(0, 4), (4, 4), (8, 0), (20, 1)]).ordered);
        assert!(!run(&[(0, 5), (4, 4)]).ordered, "overlap");
        assert!(!run(&[(8, 4), (0, 4)]).ordered, "out of order");
        assert!(!run(&[(3, 1), (3, 1)]).ordered, "duplicate");
        assert!(!run(&[(usize::MAX, 2)]).ordered, "wraps");
        // Blocks joined in order keep the verdict of the whole.
        let (a, b) = (run(&[(0, 4), (4, 4)]), run(&[(8, 4)]));
        assert!(a.then(b).ordered);
        assert!(!b.then(a).ordered);
        assert!(!a.then(run(&[(7, 4)])).ordered);
        assert_eq!(Run::default().then(b), b);
        // Two kinds: apart only when their extents are.
        let two = |x: Run, y: Run| Runs([x, y]).apart();
        assert!(two(run(&[(0, 4), (4, 4)]), run(&[(8, 2), (10, 2)])));
        assert!(two(run(&[(8, 2), (10, 2)]), run(&[(0, 4), (4, 4)])));
        assert!(
            !two(run(&[(0, 4), (20, 4)]), run(&[(10, 2)])),
            "interleaved"
        );
        assert!(two(Run::default(), run(&[(0, 1)])));
    }
}
