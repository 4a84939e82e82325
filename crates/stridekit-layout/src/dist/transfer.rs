//! `Transfer` and `redistribution`: the boxes that move when a split changes.

use super::err;
use super::Split;
use crate::dims::Dims;
use crate::error::Result;
use crate::layout::StridedLayout;
use crate::slice::SliceArg;

/// A box of a tensor that moves from one rank's part to another's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The sending rank (in the old split).
    pub from: usize,
    /// The receiving rank (in the new split).
    pub to: usize,
    /// The box's first position in global coordinates.
    pub start: Dims,
    /// The box's extents.
    pub shape: Dims,
}

impl Transfer {
    /// The number of elements that move.
    pub fn volume(&self) -> usize {
        self.shape.iter().map(|&e| e.max(0) as usize).product()
    }

    /// The box as a view of a rank's part: `local` is the part's layout (its shape is the
    /// part's, its strides anything), `origin` where the part begins in global
    /// coordinates ([`Split::origin`]). Fails when the box is not inside the part.
    pub fn in_local(&self, local: &StridedLayout, origin: &[i64]) -> Result<StridedLayout> {
        let n = self.shape.len();
        if local.ndim() != n || origin.len() != n {
            return Err(err(format!(
                "the box has {n} axes, the part {} and its origin {}",
                local.ndim(),
                origin.len()
            )));
        }
        let mut args = Vec::with_capacity(n);
        let axes = self
            .start
            .iter()
            .zip(&self.shape)
            .zip(origin)
            .zip(local.shape());
        for (k, (((&start, &ext), &o), &have)) in axes.enumerate() {
            let lo = start - o;
            let hi = lo + ext;
            if lo < 0 || hi > have {
                return Err(err(format!(
                    "the box's positions {start}..{} of axis {k} are not inside the part ({have} positions from {o})",
                    start + ext
                )));
            }
            args.push(SliceArg::Range {
                start: Some(lo),
                stop: Some(hi),
                step: 1,
            });
        }
        local.sliced(&args)
    }
}

/// What moves when a tensor of global `shape` goes from split `from` to split `to`: one
/// transfer per (sender, receiver) pair whose parts share at least one element, senders
/// in order, receivers in order within each. Every element is in exactly one transfer.
pub fn redistribution(shape: &[i64], from: &Split, to: &Split) -> Result<Vec<Transfer>> {
    from.check(shape)?;
    to.check(shape)?;
    let mut out = Vec::new();
    for s in 0..from.ranks {
        let (a0, al) = from.range(shape[from.axis], s);
        for d in 0..to.ranks {
            let (b0, bl) = to.range(shape[to.axis], d);
            let mut start: Dims = shape.iter().map(|_| 0).collect();
            let mut ext: Dims = shape.iter().copied().collect();
            if from.axis == to.axis {
                let lo = a0.max(b0);
                let hi = (a0 + al).min(b0 + bl);
                start[from.axis] = lo;
                ext[from.axis] = (hi - lo).max(0);
            } else {
                start[from.axis] = a0;
                ext[from.axis] = al;
                start[to.axis] = b0;
                ext[to.axis] = bl;
            }
            let t = Transfer {
                from: s,
                to: d,
                start,
                shape: ext,
            };
            if t.volume() > 0 {
                out.push(t);
            }
        }
    }
    Ok(out)
}
