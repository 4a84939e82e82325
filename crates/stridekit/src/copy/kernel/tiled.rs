//! The multi-axis tile kernel (`tile_copy.cu`).

use super::params::TileParams;
use super::{function, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::{CopyPlan, TilePlan};

/// Launches `t` between base addresses `dst` and `src`: a persistent grid of 256-thread
/// blocks looping over the tiles.
pub(super) fn launch(t: &TilePlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    let Some(p) = TileParams::new(t) else {
        // Outside the kernel's 32-bit fields: elementwise over the tile's own plan.
        return super::generic::launch(&as_plan(t), dst, src, stream);
    };
    if t.tiles() == 0 {
        return Ok(());
    }
    let isz = t.itemsize as i64;
    let src0 = src.wrapping_add_signed(t.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(t.dst_offset * isz);
    let variant = tile_kernel(t);
    let f = function(stream, t.itemsize, variant)?;
    let shared = t.shared_bytes();
    let per_sm = super::resident_blocks(stream, &f, t.itemsize, variant, shared)?;
    let blocks = t.tiles().min(sm_count(stream)?.max(1) * per_sm) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: shared as u32,
    };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, TileParams), passed in that
    // order; every tile offset lies inside memory the callers' views validated (the
    // tiles partition the plan's elements); words are aligned (the planner checked every
    // word's address); dynamic shared memory is the size `TilePlan::shared_bytes` that the
    // kernel carves up.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(())
}

/// The kernel tiles of `t` run where the tile kernel's fields hold them.
fn tile_kernel(t: &TilePlan) -> Variant {
    Variant::Tiled {
        read: t.read_word * t.itemsize,
        write: t.write_word * t.itemsize,
    }
}

/// The kernel `launch` runs for `t` on a GPU of `sms` SMs (for compiling it ahead): the
/// tile kernel, or the elementwise one where `t` does not fit its fields.
pub(super) fn kernel_of(t: &TilePlan, sms: u64) -> Variant {
    match TileParams::new(t) {
        Some(_) => tile_kernel(t),
        None => super::generic::kernel_of(&as_plan(t), sms),
    }
}

/// The copy a tile plan performs, as a plain plan: grid axes, then tile axes, slowest
/// first (the destination's fastest axis last, as the elementwise kernel wants it).
fn as_plan(t: &TilePlan) -> CopyPlan {
    let axes = t
        .counts
        .iter()
        .zip(&t.src_steps)
        .zip(&t.dst_steps)
        .rev()
        .chain(
            t.extents
                .iter()
                .zip(&t.src_strides)
                .zip(&t.dst_strides)
                .rev(),
        );
    let (mut shape, mut src_strides, mut dst_strides) = (
        stridekit_layout::Dims::new(),
        stridekit_layout::Dims::new(),
        stridekit_layout::Dims::new(),
    );
    for ((&n, &s), &d) in axes {
        shape.push(n);
        src_strides.push(s);
        dst_strides.push(d);
    }
    CopyPlan {
        volume: shape.iter().product::<i64>() as usize,
        shape,
        src_strides,
        dst_strides,
        src_offset: t.src_offset,
        dst_offset: t.dst_offset,
        itemsize: t.itemsize,
    }
}
