//! The kernel of overlapping views in independent groups (`group_copy.cu`).

use super::params::{pmax, Params, MAXD, SMALLD};
use super::{function, resident_blocks, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Launches the grouped copy of `plan` (whose groups [`CopyPlan::overlap_groups`] allowed)
/// between base addresses `dst` and `src`: a persistent grid of 256-thread blocks, a
/// group at a time each, staged in `last extent x itemsize` bytes of shared memory.
pub(super) fn launch(plan: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    if pmax(plan.ndim()) == SMALLD {
        launch_with::<SMALLD>(plan, dst, src, stream)
    } else {
        launch_with::<MAXD>(plan, dst, src, stream)
    }
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let nd = plan.ndim();
    let Some(&n) = plan.shape.last() else {
        return Ok(());
    };
    if n <= 0 {
        return Ok(());
    }
    let groups = plan.volume as u64 / n as u64;
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let variant = Variant::Groups { ndim: nd };
    let f = function(stream, plan.itemsize, variant)?;
    // At most GROUP_MAX_BYTES (32 KiB) and 16: within the default limit on dynamic shared
    // memory.
    let shared = super::staged_bytes(n as usize * plan.itemsize);
    let per_sm = resident_blocks(stream, &f, plan.itemsize, variant, shared)?;
    let blocks = groups.min(sm_count(stream)?.max(1) * per_sm).max(1) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: shared as u32,
    };
    let p = Params::<D>::new(plan);
    let groups = groups as i64;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p).arg(&groups);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params, long long), passed
    // in that order; every offset the plan reaches lies inside the regions the caller
    // checked; the groups never share a byte (`overlap_groups`), and each block reads its
    // group whole before writing it, so no element is overwritten before it is read; the
    // dynamic shared memory holds one group.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(())
}
