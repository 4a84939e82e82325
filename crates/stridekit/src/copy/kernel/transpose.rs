//! The two-axis tiled transpose (`tiled_transpose.cu`).

use super::params::{pmax, MAXD, SMALLD};
use super::{function, AxesArgs, Variant};
use crate::error::Result;
use cudarc::driver::{CudaStream, LaunchConfig};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Launches 32 x 32 tiles of `word`-byte words over axes `a` (source-contiguous) and
/// `l` (destination-contiguous), as the schedule chose them. `Ok(false)`: the grid
/// would not fit; run it another way.
pub(super) fn launch(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    word: usize,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    if pmax(plan.ndim().max(1)) == SMALLD {
        launch_with::<SMALLD>(plan, (a, l), word, dst, src, stream)
    } else {
        launch_with::<MAXD>(plan, (a, l), word, dst, src, stream)
    }
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    word: usize,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let nd = plan.ndim().max(1);
    let tile = 32 * (word / plan.itemsize) as u64;
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let (ta, tl) = (na.div_ceil(tile), nl.div_ceil(tile));
    if ta > 65535 || tl > i32::MAX as u64 {
        return Ok(false);
    }
    let f = function(stream, plan.itemsize, Variant::Transpose { ndim: nd, word })?;
    let batches = plan.volume as u64 / (na * nl);
    let args = AxesArgs::<D>::new(plan, (a, l), batches, (dst, src), None);
    let cfg = LaunchConfig {
        grid_dim: (tl as u32, ta as u32, batches.clamp(1, 65535) as u32),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params, int, int,
    // long long), as `args` holds them; every offset the plan reaches lies inside memory
    // the callers' views validated; word accesses wider than an element are aligned (the
    // schedule took the word from CopyPlan::transpose_word).
    unsafe { args.launch(stream, &f, cfg) }?;
    Ok(true)
}
