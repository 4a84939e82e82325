//! The elementwise kernel (`strided_copy.cu`): any plan.

use super::params::{pmax, Params, MAXD, SMALLD};
use super::{function, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Launches one thread per element of `plan` between base addresses `dst` and `src`.
pub(super) fn launch(plan: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    if pmax(plan.ndim().max(1)) == SMALLD {
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
    let nd = plan.ndim().max(1);
    let n = plan.volume as u64;
    let p = Params::<D>::new(plan);
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let wide = n > u32::MAX as u64 / 2;
    let variant = Variant::Generic { ndim: nd, wide };
    let f = function(stream, plan.itemsize, variant)?;
    let per_block = 256 * super::unroll(plan.itemsize) as u64;
    let resident = super::resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let blocks = n
        .div_ceil(per_block)
        .clamp(1, sm_count(stream)?.max(1) * resident) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params) and we pass two
    // 64-bit addresses and a Params by value; every offset the plan reaches lies inside
    // memory the callers' views validated.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(())
}
