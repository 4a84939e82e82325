//! The kernel of one shifted run in ordered chunks (`ordered_copy.cu`).

use super::{function, Variant};
use crate::error::{driver, invalid, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::{CopyPlan, OrderedChunks};

/// Launches the ordered chunks `o` of `plan` between base addresses `dst` and `src`, with
/// the zeroed flags at `flags`: one 256-thread block a chunk, staged in `o.chunk` bytes
/// of shared memory.
pub(super) fn launch(
    plan: &CopyPlan,
    o: &OrderedChunks,
    dst: u64,
    src: u64,
    flags: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    const OP: &str = "strided copy kernel";
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let blocks = u32::try_from(o.chunks)
        .ok()
        .filter(|&b| b < i32::MAX as u32)
        .ok_or_else(|| invalid(OP, format!("{} ordered chunks exceed the grid", o.chunks)))?;
    let f = function(stream, plan.itemsize, Variant::Ordered)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        // At most GROUP_MAX_BYTES (32 KiB) and 16: within the default limit.
        shared_mem_bytes: super::staged_bytes(o.chunk as usize) as u32,
    };
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&o.bytes)
        .arg(&o.chunk)
        .arg(&o.chunks)
        .arg(&o.delta)
        .arg(&flags);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, long long x 4, unsigned
    // int*), passed in that order; the run's bytes lie inside the regions the caller
    // checked, the flags (a ticket and one a chunk) inside zeroed memory it checked; each
    // block waits only for chunks taken before its own (running or done), so the grid
    // always finishes, and no byte is written before it is read (`OrderedChunks::waits`).
    unsafe { launch.launch(cfg) }.map_err(driver(OP, "cuLaunchKernel"))?;
    Ok(())
}
