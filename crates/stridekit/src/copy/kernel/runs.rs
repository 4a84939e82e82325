//! The kernels that move tiles as runs of 16-byte aligned chunks, whatever the alignment
//! of either side: the channel kernels (deinterleave, interleave, reversed channels),
//! shifted rows and batches of small matrices. They share one launch:
//! a persistent grid of the blocks that fit at once, and one parameter list.

use super::params::{pmax, MAXD, SMALLD};
use super::{function, resident_blocks, sm_count, AxesArgs, Variant};
use crate::error::Result;
use cudarc::driver::{CudaStream, LaunchConfig};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Bytes per channel (or per plane) of a channel kernel's tile, as the kernels' RUN.
fn channel_run(ch: u64) -> u64 {
    if ch == 1 {
        8192
    } else if ch <= 4 {
        4096
    } else {
        16384 / ch / 16 * 16
    }
}

/// Bytes per plane of a tile of the deinterleaving kernel (`channel_transpose.cu`'s RUN)
/// for `ch` channels of `isz`-byte elements out of pixels `slb` bytes apart: the channel
/// run, halved where the tile's source span and its planes would not fit the 48 KiB of
/// static shared memory a block may declare.
fn deinterleave_run(ch: u64, isz: u64, slb: u64) -> u64 {
    let run = channel_run(ch);
    if run / isz * slb + 32 + ch * (run + 4) <= 48 * 1024 {
        run
    } else {
        run / 2
    }
}

/// Bytes of a row of the reversed-rows kernel's tile (`row_reverse.cu`'s RUN).
const ROW_REVERSE_RUN: u64 = 32768;

/// One launch of a run kernel: which, over how many tiles (`None`: more than a count
/// holds), the plan's two axes and its batches.
struct Tiles {
    variant: Variant,
    count: Option<u64>,
    axes: (usize, usize),
    batches: u64,
}

/// Launches `t` over `plan` between base addresses `dst` and `src` (the source's memory
/// spans `src_bounds`). `Ok(false)`: the tile count is outside what the kernels take.
fn launch_tiles(
    plan: &CopyPlan,
    t: Tiles,
    (dst, src): (u64, u64),
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let Some(count) = t.count else {
        return Ok(false);
    };
    if pmax(plan.ndim().max(1)) == SMALLD {
        launch_with::<SMALLD>(plan, &t, count, (dst, src), src_bounds, stream)
    } else {
        launch_with::<MAXD>(plan, &t, count, (dst, src), src_bounds, stream)
    }
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    t: &Tiles,
    tiles: u64,
    (dst, src): (u64, u64),
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let variant = t.variant;
    let args = AxesArgs::<D>::new(plan, t.axes, t.batches, (dst, src), Some((lo, hi)));
    let f = function(stream, plan.itemsize, variant)?;
    let resident = resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let grid = tiles.min(sm_count(stream)? * resident).max(1);
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: every kernel of this module takes (const unsigned char*, unsigned char*,
    // Params, int, int, long long, unsigned long long, unsigned long long), as `args`
    // holds them; every element the plan reaches lies inside memory the callers' views
    // validated; whole 16-byte chunks are read only inside [lo, hi), the source memory
    // the plan was checked against; writes cover the destination's elements only (the
    // schedule gives these kernels only destinations whose runs hold no gaps, or writes
    // their rows' partial chunks byte by byte).
    unsafe { args.launch(stream, &f, cfg) }?;
    Ok(true)
}

/// The transpose with one short side over axes `a` (source-contiguous) and `l`
/// (destination-contiguous), as [`CopyPlan::channel_transpose_axes`] chose them:
/// deinterleaving when `a` holds the channels, else interleaving.
pub(super) fn channels(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let ndim = plan.ndim().max(1);
    let isz = plan.itemsize as u64;
    let deinterleave = plan.channel_deinterleaves((a, l));
    let (ch, pixels) = if deinterleave {
        (plan.shape[a] as u64, plan.shape[l] as u64)
    } else {
        (plan.shape[l] as u64, plan.shape[a] as u64)
    };
    let batches = plan.volume as u64 / (ch * pixels);
    if plan.channel_groups_aligned((a, l), dst, src) {
        let words = Variant::ChannelWords {
            ndim,
            ch: ch as usize,
            split: deinterleave,
            sl: if deinterleave {
                plan.src_strides[l] as usize
            } else {
                ch as usize
            },
        };
        let group = (words, (a, l), (pixels, batches));
        let launched = if pmax(ndim) == SMALLD {
            launch_groups::<SMALLD>(plan, group, (dst, src), src_bounds, stream)?
        } else {
            launch_groups::<MAXD>(plan, group, (dst, src), src_bounds, stream)?
        };
        if launched {
            return Ok(true);
        }
    }
    if ch < 2 {
        // A picked channel the group kernel cannot take: the elementwise kernel.
        return Ok(false);
    }
    let run = if deinterleave {
        deinterleave_run(ch, isz, plan.src_strides[l] as u64 * isz)
    } else {
        channel_run(ch)
    };
    let count = pixels.div_ceil(run / isz).checked_mul(batches);
    let variant = if deinterleave {
        Variant::Channels {
            ndim,
            ch: ch as usize,
            sl: plan.src_strides[l] as usize,
        }
    } else {
        Variant::Interleave {
            ndim,
            ch: ch as usize,
        }
    };
    let t = Tiles {
        variant,
        count,
        axes: (a, l),
        batches,
    };
    launch_tiles(plan, t, (dst, src), src_bounds, stream)
}

/// Warps a block of the small-matrix warp kernel, `small_words.cu` (its `SW_WARPS`; the
/// launch's 256 threads).
const SMALL_WORDS_WARPS: u64 = 8;
/// Threads a block of the aligned-group channel kernel, `channel_words.cu` (its
/// `CW_THREADS`, the size of its staging slices).
const GROUP_THREADS: u64 = 256;
/// Blocks a grid's y and z dimensions hold each.
const GRID_YZ: u64 = 65535;

/// Launches the aligned-group channel kernel: a thread per 16-byte group of every plane,
/// a row of blocks per batch. `Ok(false)`: the grid cannot hold the batches.
fn launch_groups<const D: usize>(
    plan: &CopyPlan,
    (variant, axes, (pixels, batches)): (Variant, (usize, usize), (u64, u64)),
    (dst, src): (u64, u64),
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let groups = pixels.div_ceil(16 / plan.itemsize as u64);
    // Short batches take as few whole warps as their groups need.
    let threads = groups.next_multiple_of(32).clamp(32, GROUP_THREADS);
    let y = batches.clamp(1, GRID_YZ);
    let (x, z) = (groups.div_ceil(threads), batches.div_ceil(y));
    let (Ok(x), Ok(y), Ok(z)) = (u32::try_from(x), u32::try_from(y), u32::try_from(z)) else {
        return Ok(false);
    };
    if x > i32::MAX as u32 || u64::from(z) > GRID_YZ {
        return Ok(false);
    }
    let cfg = LaunchConfig {
        grid_dim: (x, y, z),
        block_dim: (threads as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = function(stream, plan.itemsize, variant)?;
    let args = AxesArgs::<D>::new(plan, axes, batches, (dst, src), Some((lo, hi)));
    // SAFETY: `channel_words` takes (const unsigned char*, unsigned char*, Params, int, int,
    // long long, unsigned long long, unsigned long long), as `args` holds them; each
    // thread reads and writes the elements of its 16-byte groups (every group aligned:
    // `CopyPlan::channel_groups_aligned`), inside memory the callers' views validated; a
    // group that also reads its pixels' gaps (pixels wider than their channels) does so
    // only inside [lo, hi), the source memory, and writes its planes' elements only; a
    // batch's last partial group goes element by element; blocks past the last batch
    // return at once.
    unsafe { args.launch(stream, &f, cfg) }?;
    Ok(true)
}

/// Channels reversed within each pixel, over the axes
/// [`CopyPlan::reversed_channel_axes`] chose.
pub(super) fn reversed(
    plan: &CopyPlan,
    (pixels, channels): (usize, usize),
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let isz = plan.itemsize as u64;
    let (ch, px) = (plan.shape[channels] as u64, plan.shape[pixels] as u64);
    let batches = plan.volume as u64 / (ch * px);
    let t = Tiles {
        variant: Variant::Reverse {
            ndim: plan.ndim().max(1),
            ch: ch as usize,
        },
        count: px.div_ceil(channel_run(ch) / isz).checked_mul(batches),
        axes: (pixels, channels),
        batches,
    };
    launch_tiles(plan, t, (dst, src), src_bounds, stream)
}

/// Rows contiguous on both sides, in bytes ([`CopyPlan::shifted_rows`]): the reversed-
/// channel kernel with one channel of bytes, tiles of 8 KiB of a row.
pub(super) fn rows(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let variant = Variant::Reverse {
        ndim: plan.ndim(),
        ch: 1,
    };
    launch_rows(
        plan,
        (variant, channel_run(1)),
        (dst, src),
        src_bounds,
        stream,
    )
}

/// Rows read backwards ([`CopyPlan::reversed_rows`]): tiles of 32 KiB of a row, a thread
/// per aligned 16-byte destination chunk.
pub(super) fn reversed_rows(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let variant = Variant::RowReverse { ndim: plan.ndim() };
    let per_tile = ROW_REVERSE_RUN / plan.itemsize as u64;
    launch_rows(plan, (variant, per_tile), (dst, src), src_bounds, stream)
}

/// Launches `variant` over the rows of `plan` (its last axis; the others are batches) in
/// tiles of `per_tile` elements of a row; `false` (nothing launched) for a plan without
/// axes.
fn launch_rows(
    plan: &CopyPlan,
    (variant, per_tile): (Variant, u64),
    ptrs: (u64, u64),
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let Some(last) = plan.ndim().checked_sub(1) else {
        return Ok(false);
    };
    let row = plan.shape[last] as u64;
    let batches = plan.volume as u64 / row.max(1);
    let t = Tiles {
        variant,
        count: row.div_ceil(per_tile).checked_mul(batches),
        axes: (last, last),
        batches,
    };
    launch_tiles(plan, t, ptrs, src_bounds, stream)
}

/// A batch of small matrices transposed, over the axes [`CopyPlan::small_matrix_axes`]
/// chose: whole matrices a tile (8 KiB) for 1- and 2-byte elements, a warp's run of
/// whole matrices (512 elements) for 4-byte ones.
pub(super) fn small_matrices(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let isz = plan.itemsize as u64;
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let batches = plan.volume as u64 / (na * nl);
    let (na_, nl_) = (na as usize, nl as usize);
    // 4-byte elements: a warp per run of whole matrices (512 elements).
    let (variant, count) = if isz == 4 {
        let per_run = (512 / (na * nl)).max(1);
        let runs = batches.div_ceil(per_run);
        (
            Variant::SmallWords { na: na_, nl: nl_ },
            runs.div_ceil(SMALL_WORDS_WARPS),
        )
    } else {
        let per_tile = (8192 / (na * nl * isz)).max(1);
        let v = Variant::SmallMatrices { na: na_, nl: nl_ };
        (v, batches.div_ceil(per_tile))
    };
    let t = Tiles {
        variant,
        count: Some(count),
        axes: (a, l),
        batches,
    };
    launch_tiles(plan, t, (dst, src), src_bounds, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every deinterleaving tile fits 48 KiB of shared memory (source span, its slack,
    /// the planes and their pitch words); only four byte channels out of 8-byte pixels
    /// need the halved run (at the full run they took 49,200 bytes and ptxas refused the
    /// kernel, so such a copy failed to load its kernel).
    #[test]
    fn deinterleaving_tiles_fit_shared_memory() {
        for isz in [1u64, 2] {
            for ch in 2..=16u64 {
                for slb in (ch * isz)..=8 {
                    let run = deinterleave_run(ch, isz, slb);
                    let shared = run / isz * slb + 32 + ch * (run + 4);
                    assert!(shared <= 48 * 1024, "{ch} x {isz} B, {slb} B: {shared}");
                    let halved = (isz, ch, slb) == (1, 4, 8);
                    assert_eq!(
                        run == channel_run(ch) / 2,
                        halved,
                        "{ch} x {isz} B, {slb} B"
                    );
                }
            }
        }
    }
}
