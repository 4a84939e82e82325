//! `Split`: a block split of a tensor along one axis over some ranks.

use super::err;
use crate::dims::Dims;
use crate::error::Result;

/// A block split of a tensor along one axis over some ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// The axis the parts are cut along.
    pub axis: usize,
    /// How many ranks hold parts (at least 1).
    pub ranks: usize,
}

impl Split {
    /// A split along `axis` over `ranks` ranks.
    pub fn new(axis: usize, ranks: usize) -> Result<Self> {
        if ranks == 0 {
            return Err(err("a split needs at least one rank"));
        }
        Ok(Split { axis, ranks })
    }

    pub(super) fn check(&self, shape: &[i64]) -> Result<()> {
        if self.axis >= shape.len() {
            return Err(err(format!(
                "axis {} is out of range for a {}-d tensor",
                self.axis,
                shape.len()
            )));
        }
        if let Some(&e) = shape.iter().find(|&&e| e < 0) {
            return Err(err(format!("extent {e} is negative")));
        }
        Ok(())
    }

    /// The positions `(start, len)` that `rank` holds of an axis of `extent` positions.
    pub fn range(&self, extent: i64, rank: usize) -> (i64, i64) {
        let ranks = self.ranks.max(1) as i64;
        let chunk = (extent + ranks - 1) / ranks;
        let start = (chunk.saturating_mul(rank as i64)).min(extent);
        let end = (start + chunk).min(extent);
        (start, end - start)
    }

    /// Where `rank`'s part begins in global coordinates.
    pub fn origin(&self, shape: &[i64], rank: usize) -> Result<Dims> {
        self.check(shape)?;
        let mut o: Dims = shape.iter().map(|_| 0).collect();
        o[self.axis] = self.range(shape[self.axis], rank).0;
        Ok(o)
    }

    /// The shape of `rank`'s part.
    pub fn local_shape(&self, shape: &[i64], rank: usize) -> Result<Dims> {
        self.check(shape)?;
        if rank >= self.ranks {
            return Err(err(format!(
                "rank {rank} is out of range for a split over {} ranks",
                self.ranks
            )));
        }
        let mut s: Dims = shape.iter().copied().collect();
        s[self.axis] = self.range(shape[self.axis], rank).1;
        Ok(s)
    }
}
