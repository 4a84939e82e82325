//! The two-axis transposes: `packed_transpose.cu` for 1- and 2-byte elements,
//! `tiled_transpose.cu` for wider ones.

use super::params::{pmax, Params, MAXD, SMALLD};
use super::{function, resident_blocks, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
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
    let p = Params::<D>::new(plan);
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let tile = 32 * (word / plan.itemsize) as u64;
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let (ta, tl) = (na.div_ceil(tile), nl.div_ceil(tile));
    if ta > 65535 || tl > i32::MAX as u64 {
        return Ok(false);
    }
    let f = function(stream, plan.itemsize, Variant::Transpose { ndim: nd, word })?;
    let batches = (plan.volume as u64 / (na * nl)) as i64;
    let cfg = LaunchConfig {
        grid_dim: (tl as u32, ta as u32, batches.clamp(1, 65535) as u32),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let (a32, l32) = (a as i32, l as i32);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&p)
        .arg(&a32)
        .arg(&l32)
        .arg(&batches);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params, int, int,
    // long long), passed in that order; every offset the plan reaches lies inside
    // memory the callers' views validated; word accesses wider than an element are
    // aligned (the schedule took the word from CopyPlan::transpose_word).
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}

/// Whether a transpose of `itemsize`-byte elements in `word`-byte words runs the packed
/// kernel: bytes that the 32 x 32 tiles would move one at a time (rows that start at
/// any byte). Measured (BENCHMARKS.md): 4097x3001 bytes 0.29 against 0.27, 5000x7001
/// 0.36 against 0.31; where 4-byte words stay aligned, and for halfwords, the tiles
/// are faster.
pub(super) fn packs(itemsize: usize, word: usize) -> bool {
    itemsize == 1 && word == 1
}

/// Launches the packed transpose over axes `a` (source-contiguous) and `l`
/// (destination-contiguous): tiles of 64 source bytes by 128 rows, a persistent grid of
/// the blocks that fit at once (one wave), any alignment of either side.
/// `src_bounds` is the source memory, where whole aligned chunks may be read.
pub(super) fn launch_packed(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    if pmax(plan.ndim().max(1)) == SMALLD {
        launch_packed_with::<SMALLD>(plan, (a, l), dst, src, src_bounds, stream)
    } else {
        launch_packed_with::<MAXD>(plan, (a, l), dst, src, src_bounds, stream)
    }
}

fn launch_packed_with<const D: usize>(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    const TAB: u64 = 64;
    const TL: u64 = 128;
    let nd = plan.ndim().max(1);
    let isz = plan.itemsize as u64;
    let p = Params::<D>::new(plan);
    let src0 = src.wrapping_add_signed(plan.src_offset * isz as i64);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz as i64);
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let batches = plan.volume as u64 / (na * nl);
    let tiles = na
        .div_ceil(TAB / isz)
        .checked_mul(nl.div_ceil(TL))
        .and_then(|t| t.checked_mul(batches));
    let Some(tiles) = tiles else {
        return Ok(false);
    };
    let variant = Variant::Packed { ndim: nd };
    let f = function(stream, plan.itemsize, variant)?;
    let resident = resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let grid = tiles.min(sm_count(stream)? * resident).max(1);
    let (a32, l32, batches) = (a as i32, l as i32, batches as i64);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&p)
        .arg(&a32)
        .arg(&l32)
        .arg(&batches)
        .arg(&lo)
        .arg(&hi);
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters are (const unsigned char*, unsigned char*, Params,
    // int, int, long long, unsigned long long, unsigned long long), passed in that
    // order; every element the plan reaches lies inside memory the callers' views
    // validated, and whole 16-byte chunks are read only inside [lo, hi), the source
    // memory the plan was checked against.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}

/// Launches the transpose with one short side over axes `a` (source-contiguous) and `l`
/// (destination-contiguous), as [`CopyPlan::channel_transpose_axes`] chose them:
/// deinterleaving when `a` holds the channels, else interleaving; tiles of up to 4 KiB
/// per channel, a persistent grid of the blocks that fit.
pub(super) fn launch_channels(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    if pmax(plan.ndim().max(1)) != SMALLD {
        return Ok(false);
    }
    let nd = plan.ndim().max(1);
    let isz = plan.itemsize as u64;
    let p = Params::<SMALLD>::new(plan);
    let src0 = src.wrapping_add_signed(plan.src_offset * isz as i64);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz as i64);
    // Deinterleaving when the source's unit-stride axis holds the channels.
    let deinterleave = plan.shape[a] <= 16 && plan.src_strides[l] * (isz as i64) <= 8;
    let (ch, pixels) = if deinterleave {
        (plan.shape[a] as u64, plan.shape[l] as u64)
    } else {
        (plan.shape[l] as u64, plan.shape[a] as u64)
    };
    let batches = plan.volume as u64 / (ch * pixels);
    // Bytes per plane of a tile, as the kernels' RUN.
    let run = if ch <= 4 { 4096 } else { 16384 / ch / 16 * 16 };
    let Some(tiles) = pixels.div_ceil(run / isz).checked_mul(batches) else {
        return Ok(false);
    };
    let variant = if deinterleave {
        Variant::Channels {
            ndim: nd,
            ch: ch as usize,
            sl: plan.src_strides[l] as usize,
        }
    } else {
        Variant::Interleave {
            ndim: nd,
            ch: ch as usize,
        }
    };
    let f = function(stream, plan.itemsize, variant)?;
    let resident = resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let grid = tiles.min(sm_count(stream)? * resident).max(1);
    let (a32, l32, batches) = (a as i32, l as i32, batches as i64);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&p)
        .arg(&a32)
        .arg(&l32)
        .arg(&batches)
        .arg(&lo)
        .arg(&hi);
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters are (const unsigned char*, unsigned char*, Params,
    // int, int, long long, unsigned long long, unsigned long long), passed in that
    // order; every element the plan reaches lies inside memory the callers' views
    // validated; whole 16-byte chunks are read only inside [lo, hi), the source memory
    // the plan was checked against; writes cover the destination's elements only.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}

/// Launches the channel reversal over axes `pixels` and `channels`, as
/// [`CopyPlan::reversed_channel_axes`] chose them: tiles of up to 4 KiB per channel, a
/// persistent grid of the blocks that fit.
pub(super) fn launch_reverse(
    plan: &CopyPlan,
    (px_axis, ch_axis): (usize, usize),
    dst: u64,
    src: u64,
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    if pmax(plan.ndim().max(1)) != SMALLD {
        return Ok(false);
    }
    let nd = plan.ndim().max(1);
    let isz = plan.itemsize as u64;
    let p = Params::<SMALLD>::new(plan);
    let src0 = src.wrapping_add_signed(plan.src_offset * isz as i64);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz as i64);
    let (ch, pixels) = (plan.shape[ch_axis] as u64, plan.shape[px_axis] as u64);
    let batches = plan.volume as u64 / (ch * pixels);
    // Bytes per channel of a tile, as the kernel's RUN.
    let run = if ch <= 4 { 4096 } else { 16384 / ch / 16 * 16 };
    let Some(tiles) = pixels.div_ceil(run / isz).checked_mul(batches) else {
        return Ok(false);
    };
    let variant = Variant::Reverse {
        ndim: nd,
        ch: ch as usize,
    };
    let f = function(stream, plan.itemsize, variant)?;
    let resident = resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let grid = tiles.min(sm_count(stream)? * resident).max(1);
    let (p32, c32, batches) = (px_axis as i32, ch_axis as i32, batches as i64);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&src0)
        .arg(&dst0)
        .arg(&p)
        .arg(&p32)
        .arg(&c32)
        .arg(&batches)
        .arg(&lo)
        .arg(&hi);
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters are (const unsigned char*, unsigned char*, Params,
    // int, int, long long, unsigned long long, unsigned long long), passed in that
    // order; every element the plan reaches lies inside memory the callers' views
    // validated (a tile's source run is its pixels' elements, lowest first); whole
    // 16-byte chunks are read only inside [lo, hi), the source memory the plan was
    // checked against; writes cover the destination's elements only (dense pixels).
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}

/// Launches the transpose of a batch of small matrices, as
/// [`CopyPlan::small_matrix_axes`] chose its axes `a` and `l`: whole matrices a tile
/// (8 KiB), a persistent grid of the blocks that fit.
pub(super) fn launch_small_matrices(
    plan: &CopyPlan,
    (a, l): (usize, usize),
    dst: u64,
    src: u64,
    (lo, hi): (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    let isz = plan.itemsize as u64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz as i64);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz as i64);
    let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
    let batches = plan.volume as u64 / (na * nl);
    let per_tile = (8192 / (na * nl * isz)).max(1);
    let tiles = batches.div_ceil(per_tile);
    let variant = Variant::SmallMatrices {
        na: na as usize,
        nl: nl as usize,
    };
    let f = function(stream, plan.itemsize, variant)?;
    let resident = resident_blocks(stream, &f, plan.itemsize, variant, 0)?;
    let grid = tiles.min(sm_count(stream)? * resident).max(1);
    let batches = batches as i64;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&batches).arg(&lo).arg(&hi);
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters are (const unsigned char*, unsigned char*, long
    // long, unsigned long long, unsigned long long), passed in that order; both sides
    // are one dense run of `batches` matrices (the plan's axes say so) inside memory the
    // callers' views validated; whole 16-byte chunks are read only inside [lo, hi), the
    // source memory the plan was checked against.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(true)
}
