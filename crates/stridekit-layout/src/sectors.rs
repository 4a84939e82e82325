//! The 32-byte source sectors that consecutive destination-order elements of a plan read:
//! how scattered one warp's reads are, for the planners that weigh it.

use crate::plan::CopyPlan;
use smallvec::SmallVec;

/// The most sectors [`source_sectors`] counts before it stops.
pub(crate) const MAX_COUNTED_SECTORS: usize = 120;

/// The distinct 32-byte sectors that elements `first .. first + count` of `p` (in
/// destination order, the last axis fastest) read from a source whose element 0 sits at
/// byte address `base`: `Some(n)` with `n <= budget`, or `None` once they pass `budget`
/// (clamped to [`MAX_COUNTED_SECTORS`]). Elements past the plan's volume are not read.
///
/// Element offsets stay within the source's span (under 2^62 bytes for a plan whose
/// layouts were checked), so addresses taken modulo 2^64 keep distinct sectors distinct.
pub(crate) fn source_sectors(
    p: &CopyPlan,
    base: u64,
    first: usize,
    count: usize,
    budget: usize,
) -> Option<usize> {
    let budget = budget.min(MAX_COUNTED_SECTORS);
    let nd = p.ndim();
    let bytes = p.itemsize as u64;
    let base = base.wrapping_add((p.src_offset as u64).wrapping_mul(bytes));
    // Distinct sector numbers (under 2^59, so u64::MAX marks a free slot), in an
    // open-addressed table more than twice the most it holds.
    let mut seen = [u64::MAX; 256];
    let mut touched = 0usize;
    let mut first_sight = |sector: u64| {
        let mut slot = (sector.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize;
        while seen[slot] != u64::MAX {
            if seen[slot] == sector {
                return 0;
            }
            slot = (slot + 1) % seen.len();
        }
        seen[slot] = sector;
        1
    };
    // The first element's index, then the next ones by stepping it (one division per
    // axis, not per element).
    let mut rem = first as u64;
    let mut idx: SmallVec<[i64; 8]> = SmallVec::from_elem(0, nd);
    let mut off = 0i64;
    for k in (0..nd).rev() {
        let n = p.shape[k] as u64;
        idx[k] = (rem % n) as i64;
        off += idx[k] * p.src_strides[k];
        rem /= n;
    }
    for _ in first..first.saturating_add(count).min(p.volume) {
        let at = base.wrapping_add((off as u64).wrapping_mul(bytes));
        touched += first_sight(at >> 5);
        touched += first_sight(at.wrapping_add(bytes - 1) >> 5);
        // The count only grows: past the budget, the answer is known.
        if touched > budget {
            return None;
        }
        for k in (0..nd).rev() {
            idx[k] += 1;
            off += p.src_strides[k];
            if idx[k] < p.shape[k] {
                break;
            }
            off -= p.src_strides[k] * p.shape[k];
            idx[k] = 0;
        }
    }
    Some(touched)
}

#[cfg(test)]
mod tests {
    use super::source_sectors;
    use crate::{CopyPlan, Order, StridedLayout};

    #[test]
    fn counts_sectors_of_dense_strided_and_scattered_reads() {
        let plan = |src_strides: &[i64]| {
            let shape = [64, 64];
            let dst = StridedLayout::dense(&shape, 1, Order::C).unwrap();
            let src = StridedLayout::with_offset(&shape, src_strides, 1, 0).unwrap();
            CopyPlan::new(&dst, &src).unwrap()
        };
        // 128 contiguous bytes: 4 sectors; every fourth byte: 16; a sector each: 128,
        // past any budget.
        assert_eq!(source_sectors(&plan(&[64, 1]), 0, 0, 128, 100), Some(4));
        assert_eq!(source_sectors(&plan(&[256, 4]), 0, 0, 128, 100), Some(16));
        assert_eq!(source_sectors(&plan(&[64, 4096]), 0, 0, 128, 100), None);
        // Shifted by 16 bytes, 64 contiguous bytes straddle 3 sectors.
        assert_eq!(source_sectors(&plan(&[64, 1]), 16, 0, 64, 100), Some(3));
        // Past the volume nothing is read.
        assert_eq!(source_sectors(&plan(&[64, 1]), 0, 4064, 128, 100), Some(1));
    }
}
