//! The kernel of a short pattern repeated into one contiguous destination
//! (`repeat_pattern.cu`, [`CopyPlan::repeated_pattern`]).

use super::params::Params;
use super::{function, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Blocks of the repeat kernel an SM runs at once (256 threads each; the pattern and its
/// 32 bytes of slack, at most 8 KiB + 48, in shared memory).
const BLOCKS_PER_SM: u64 = 8;

/// Launches the repeat kernel for `plan`, whose first `outer` axes the source broadcasts,
/// between base addresses `dst` and `src`; `false` (nothing launched) where the pattern's
/// plan does not fit the kernel's fields.
pub(super) fn launch(
    plan: &CopyPlan,
    outer: usize,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let Some(pattern) = pattern_plan(plan, outer) else {
        return Ok(false);
    };
    let (Ok(nin), Ok(pe), Ok(pb), Ok(total)) = (
        i32::try_from(pattern.ndim()),
        i32::try_from(pattern.volume),
        i32::try_from(pattern.volume * plan.itemsize),
        i64::try_from(plan.volume * plan.itemsize),
    ) else {
        return Ok(false);
    };
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let params = Params::<{ super::params::SMALLD }>::new(&pattern);
    let chunks = (dst0 % 16 + total as u64).div_ceil(16);
    let blocks = chunks
        .div_ceil(256)
        .min(sm_count(stream)?.max(1) * BLOCKS_PER_SM)
        .max(1) as u32;
    let shared = shared_bytes(pb as usize, plan.itemsize);
    let f = function(stream, plan.itemsize, Variant::Repeat)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        // At most 8 KiB + 48 (`REPEAT_PATTERN_MAX_BYTES`): within the default limit.
        shared_mem_bytes: shared as u32,
    };
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&params)
        .arg(&nin)
        .arg(&pe)
        .arg(&pb)
        .arg(&total);
    // SAFETY: the kernel's parameters are (const ELEM*, unsigned char*, Params, int, int,
    // int, long long), passed in that order. It reads the pattern's elements, which are
    // the plan's source elements (its leading axes have stride 0), inside the memory the
    // callers' views validated; it writes exactly the `total` bytes from `dst0`, the
    // plan's destination (one dense run: `repeated_pattern`); its shared memory holds
    // the pattern repeated to `pb + 32` bytes (whole elements), rounded up to 16.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}

/// The pattern's own plan: the axes after the first `outer` (the source's strides; the
/// destination's are those of a dense run); `None` past the kernel's eight axes.
fn pattern_plan(plan: &CopyPlan, outer: usize) -> Option<CopyPlan> {
    let inner = plan.ndim().checked_sub(outer)?;
    if inner > super::params::SMALLD {
        return None;
    }
    let shape: stridekit_layout::Dims = plan.shape[outer..].iter().copied().collect();
    Some(CopyPlan {
        volume: shape.iter().product::<i64>() as usize,
        src_strides: plan.src_strides[outer..].iter().copied().collect(),
        dst_strides: plan.dst_strides[outer..].iter().copied().collect(),
        shape,
        src_offset: 0,
        dst_offset: 0,
        itemsize: plan.itemsize,
    })
}

/// Shared memory the kernel takes for a pattern of `pb` bytes: the pattern repeated to
/// `pb + 32` bytes in whole elements, rounded up to 16.
fn shared_bytes(pb: usize, itemsize: usize) -> usize {
    ((pb + 32).div_ceil(itemsize) * itemsize).next_multiple_of(16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridekit_layout::{Order, StridedLayout};

    #[test]
    fn the_pattern_plan_keeps_the_axes_after_the_broadcast_ones() {
        let row = StridedLayout::with_offset(&[1000, 25, 3], &[0, 3, 0], 2, 7).unwrap();
        let out = StridedLayout::dense(&[1000, 25, 3], 2, Order::C).unwrap();
        let plan = CopyPlan::new(&out, &row).unwrap();
        let outer = plan.repeated_pattern().unwrap();
        let p = pattern_plan(&plan, outer).unwrap();
        assert_eq!(p.volume, 75);
        assert_eq!(
            (&p.shape[..], &p.src_strides[..]),
            (&[25i64, 3][..], &[3i64, 0][..])
        );
        // 150 bytes of pattern and 32 of slack, in halfwords, to 16 bytes.
        assert_eq!(shared_bytes(150, 2), 192);
        assert_eq!(shared_bytes(3, 1), 48);
        assert_eq!(shared_bytes(8192, 16), 8224);
    }

    /// A pattern over more axes than the kernel's parameter block holds is not launched
    /// (the elementwise kernel takes the copy).
    #[test]
    fn patterns_past_eight_axes_fall_back() {
        let n = 10;
        let shape: stridekit_layout::Dims = std::iter::once(50)
            .chain(std::iter::repeat_n(2, n - 1))
            .collect();
        let mut src_strides = stridekit_layout::Dims::new();
        let mut dst_strides = stridekit_layout::Dims::new();
        let mut dense = 1i64;
        for k in (0..n).rev() {
            dst_strides.insert(0, dense);
            src_strides.insert(0, if k == 0 { 0 } else { 3 * dense });
            dense *= shape[k];
        }
        let plan = CopyPlan {
            volume: dense as usize,
            shape,
            src_strides,
            dst_strides,
            src_offset: 0,
            dst_offset: 0,
            itemsize: 1,
        };
        assert_eq!(plan.repeated_pattern(), Some(1));
        assert!(pattern_plan(&plan, 1).is_none());
        assert!(pattern_plan(&plan, 2).is_some_and(|p| p.ndim() == 8 && p.volume == 256));
    }
}
