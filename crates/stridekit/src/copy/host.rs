//! Strided copies done by the CPU: whole plans, or ranges of a plan's elements spread
//! over the rayon thread pool.

use crate::error::Result;
use crate::memory::Region;
use rayon::prelude::*;
use std::ops::Range;
use stridekit_layout::CopyPlan;

/// Which way a range copy moves bytes between a plan's two sides.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Direction {
    /// From the plan's source addresses to its destination addresses.
    Forward,
    /// From the plan's destination addresses back to its source addresses.
    Backward,
}

/// Elements one rayon task copies at least (in bytes: 256 KiB), so that tasks outweigh
/// their scheduling.
const TASK_BYTES: usize = 256 << 10;

/// Copies the elements whose index in the plan's order (row-major over `plan.shape`) lies
/// in `range`, split over the rayon pool.
///
/// # Safety
/// For every element in `range`, both byte offsets (plan offsets times the itemsize,
/// added to `dst` and `src`) lie in host memory valid for the call, the side written is
/// written by nothing else meanwhile and is unique (the plan's destination for `Forward`;
/// for `Backward`, its source), and the two sides do not overlap.
pub(crate) unsafe fn copy_range_parallel(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    range: Range<usize>,
    dir: Direction,
) {
    let per_task = (TASK_BYTES / plan.itemsize.max(1)).max(1);
    let tasks = range.len().div_ceil(per_task);
    (0..tasks).into_par_iter().for_each(|t| {
        let a = range.start + t * per_task;
        let b = (a + per_task).min(range.end);
        // SAFETY: `a..b` lies in `range`; the caller's promise covers it.
        unsafe { copy_range(plan, dst, src, a..b, dir) };
    });
}

/// [`copy_range_parallel`] on the calling thread.
///
/// # Safety
/// As for [`copy_range_parallel`].
pub(crate) unsafe fn copy_range(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    range: Range<usize>,
    dir: Direction,
) {
    if range.is_empty() || plan.volume == 0 {
        return;
    }
    let isz = plan.itemsize as i64;
    let nd = plan.ndim();
    let (from, to) = match dir {
        Direction::Forward => (src, dst),
        Direction::Backward => (dst, src),
    };
    // Byte offsets of element `range.start` on both sides.
    let mut idx = smallvec::SmallVec::<[i64; 8]>::from_elem(0, nd);
    let (mut d, mut s) = (plan.dst_offset * isz, plan.src_offset * isz);
    let mut rem = range.start as i64;
    for k in (0..nd).rev() {
        idx[k] = rem % plan.shape[k];
        rem /= plan.shape[k];
        d += idx[k] * plan.dst_strides[k] * isz;
        s += idx[k] * plan.src_strides[k] * isz;
    }
    if nd == 0 {
        let (f, t) = if dir == Direction::Forward {
            (s, d)
        } else {
            (d, s)
        };
        element(to, t, from, f, plan.itemsize);
        return;
    }
    let inner = nd - 1;
    let (ds_in, ss_in) = (plan.dst_strides[inner] * isz, plan.src_strides[inner] * isz);
    let run = ds_in == isz && ss_in == isz;
    let mut left = range.len() as i64;
    while left > 0 {
        // The rest of the current inner row, or what is left of the range.
        let n = (plan.shape[inner] - idx[inner]).min(left);
        let (f, t) = if dir == Direction::Forward {
            (s, d)
        } else {
            (d, s)
        };
        let (fs, ts) = if dir == Direction::Forward {
            (ss_in, ds_in)
        } else {
            (ds_in, ss_in)
        };
        if run {
            element(to, t, from, f, (n * isz) as usize);
        } else {
            for i in 0..n {
                element(to, t + i * ts, from, f + i * fs, plan.itemsize);
            }
        }
        left -= n;
        // Step the odometer by n along the inner axis, carrying into the outer ones.
        idx[inner] += n;
        d += n * ds_in;
        s += n * ss_in;
        let mut ax = inner;
        while idx[ax] == plan.shape[ax] && ax > 0 {
            d -= plan.dst_strides[ax] * isz * plan.shape[ax];
            s -= plan.src_strides[ax] * isz * plan.shape[ax];
            idx[ax] = 0;
            ax -= 1;
            idx[ax] += 1;
            d += plan.dst_strides[ax] * isz;
            s += plan.src_strides[ax] * isz;
        }
    }
}

/// Copies every element of `plan` from `src` to `dst` (the plan's offsets count from
/// each region's base), on the calling thread. Checked first: both regions are host
/// memory, the destination is writable, every byte the plan reaches lies inside its
/// region, and the two spans do not overlap.
pub(crate) fn copy(
    op: &'static str,
    plan: &CopyPlan,
    dst: Region<'_>,
    src: Region<'_>,
) -> Result<()> {
    if plan.volume == 0 {
        return Ok(());
    }
    check_host_plan(op, plan, &dst, &src)?;
    // SAFETY: checked above: both sides are host memory the regions keep valid, every
    // offset lies inside, the destination is writable (exclusively borrowed) and unique
    // (CopyPlan refuses overlapping destinations), and the spans are disjoint.
    unsafe {
        copy_range(
            plan,
            dst.base(),
            src.base(),
            0..plan.volume,
            Direction::Forward,
        )
    };
    Ok(())
}

/// The checks [`copy`] makes, for callers that then copy ranges of `plan` themselves.
pub(crate) fn check_host_plan(
    op: &'static str,
    plan: &CopyPlan,
    dst: &Region<'_>,
    src: &Region<'_>,
) -> Result<()> {
    dst.check_host(op)?;
    src.check_host(op)?;
    dst.check_writable(op)?;
    let (d, s) = plan.byte_bounds()?;
    dst.check(op, "destination elements", d.clone())?;
    src.check(op, "source elements", s.clone())?;
    let (d0, d1) = (
        dst.base() as i128 + d.start as i128,
        dst.base() as i128 + d.end as i128,
    );
    let (s0, s1) = (
        src.base() as i128 + s.start as i128,
        src.base() as i128 + s.end as i128,
    );
    if d0 < s1 && s0 < d1 {
        return Err(crate::error::invalid(
            op,
            "the source and destination spans overlap; the host copy needs disjoint memory",
        ));
    }
    Ok(())
}

fn element(dst: u64, d: i64, src: u64, s: i64, bytes: usize) {
    // SAFETY: `copy_range`'s contract: both offsets lie within valid, non-overlapping
    // host spans.
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.wrapping_add_signed(s) as *const u8,
            dst.wrapping_add_signed(d) as *mut u8,
            bytes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{copy, copy_range, copy_range_parallel, Direction};
    use crate::memory::Region;
    use stridekit_layout::{CopyPlan, Order, StridedLayout};

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn a_plan_reaching_outside_its_memory_is_refused() {
        let l = StridedLayout::dense(&[4, 4], 4, Order::C).unwrap();
        let plan = CopyPlan::new(&l, &l.permuted(&[1, 0]).unwrap()).unwrap();
        let src = vec![7u8; 64];
        let mut short = vec![0u8; 60];
        let e = copy(
            "test",
            &plan,
            Region::of_host_mut(&mut short),
            Region::of_host(&src),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("reach bytes 0..64 of a 60-byte region"), "{e}");
        let mut dst = vec![0u8; 64];
        let e = copy("test", &plan, Region::of_host(&dst), Region::of_host(&src)).unwrap_err();
        assert!(e.to_string().contains("borrowed read-only"), "{e}");
        copy(
            "test",
            &plan,
            Region::of_host_mut(&mut dst),
            Region::of_host(&src),
        )
        .unwrap();
    }

    #[test]
    fn ranges_in_any_pieces_equal_the_whole_copy_both_ways() {
        let src_l = StridedLayout::dense(&[7, 5, 6], 2, Order::C)
            .unwrap()
            .permuted(&[2, 0, 1])
            .unwrap();
        let dst_l = StridedLayout::dense(&[6, 7, 5], 2, Order::C).unwrap();
        let plan = CopyPlan::new(&dst_l, &src_l).unwrap();
        let src = bytes(7 * 5 * 6 * 2, 3);
        let mut whole = vec![0u8; src.len()];
        copy(
            "test",
            &plan,
            Region::of_host_mut(&mut whole),
            Region::of_host(&src),
        )
        .unwrap();
        for cut in [1usize, 4, 5, 13, 35, 209, 210] {
            let mut pieces = vec![0u8; src.len()];
            let mut a = 0;
            while a < plan.volume {
                let b = (a + cut).min(plan.volume);
                // SAFETY: both vectors hold every offset of the plan; distinct allocations.
                unsafe {
                    copy_range(
                        &plan,
                        pieces.as_mut_ptr() as u64,
                        src.as_ptr() as u64,
                        a..b,
                        Direction::Forward,
                    )
                };
                a = b;
            }
            assert_eq!(pieces, whole, "pieces of {cut}");
        }
        // Backward: from the destination side back into a fresh source side.
        let mut back = vec![0u8; src.len()];
        // SAFETY: as above; `back` is the side written.
        unsafe {
            copy_range_parallel(
                &plan,
                whole.as_ptr() as u64,
                back.as_mut_ptr() as u64,
                0..plan.volume,
                Direction::Backward,
            )
        };
        assert_eq!(back, src);
    }
}
