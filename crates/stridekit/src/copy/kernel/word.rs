//! The word transpose (`word_transpose.cu`): 1- and 2-byte elements whose rows start
//! anywhere, moved as aligned 4-byte words realigned with funnel shifts and transposed
//! in registers.

use super::params::{pmax, MAXD, SMALLD};
use super::{function, AxesArgs, Variant};
use crate::error::Result;
use cudarc::driver::{CudaStream, LaunchConfig};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Whether a transpose of `itemsize`-byte elements in `word`-byte words runs the word
/// transpose: 1- and 2-byte elements that no wider word keeps aligned on both sides.
/// Measured with the kernel lab (BENCHMARKS.md), sector-exact: 5000 x 7001 bytes 0.55 of
/// the roofline against 0.32 (element tiles); a transposed `[1:, 1:]` slice into a dense
/// array 0.90 (bytes) and 0.92 (halfwords) against 0.34 and 0.59; 4097 x 3001 halfwords
/// 0.60 against 0.52. Where 4-byte words stay aligned, the 32 x 32 word tiles are faster.
pub(super) fn takes(itemsize: usize, word: usize) -> bool {
    matches!(itemsize, 1 | 2) && word == itemsize
}

/// Source rows (along `l`) of a tile of `itemsize`-byte elements, as the kernel's WT_TR.
fn tile_rows(itemsize: usize) -> u64 {
    if itemsize == 1 {
        128
    } else {
        64
    }
}

/// Launches the word transpose over axes `a` (source-contiguous) and `l` (destination-
/// contiguous): tiles of 128 source bytes by [`tile_rows`] rows, one a block, the grid
/// striding over batches past 65535. `Ok(false)`: the grid would not fit; run it another
/// way.
pub(super) fn launch(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    (dst, src): (u64, u64),
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    if pmax(plan.ndim().max(1)) == SMALLD {
        launch_with::<SMALLD>(plan, (a, l), (dst, src), src_bounds, stream)
    } else {
        launch_with::<MAXD>(plan, (a, l), (dst, src), src_bounds, stream)
    }
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    (dst, src): (u64, u64),
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let isz = plan.itemsize;
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let (ta, tl) = (na.div_ceil(128 / isz as u64), nl.div_ceil(tile_rows(isz)));
    if ta > 65535 || tl > i32::MAX as u64 {
        return Ok(false);
    }
    let batches = plan.volume as u64 / (na * nl);
    let args = AxesArgs::<D>::new(plan, (a, l), batches, (dst, src), Some((lo, hi)));
    let f = function(
        stream,
        isz,
        Variant::Word {
            ndim: plan.ndim().max(1),
        },
    )?;
    let cfg = LaunchConfig {
        grid_dim: (tl as u32, ta as u32, batches.clamp(1, 65535) as u32),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes (const unsigned char*, unsigned char*, Params, int, int,
    // long long, unsigned long long, unsigned long long), as `args` holds them; every
    // element the plan reaches lies inside memory the callers' views validated; whole
    // aligned chunks and words are read only inside [lo, hi), the source memory the plan
    // was checked against (the rest byte by byte); only the destination's elements are
    // written (a row's partial words in bytes or halves).
    unsafe { args.launch(stream, &f, cfg) }?;
    Ok(true)
}
