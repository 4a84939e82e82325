//! The multi-axis tile kernel (`tile_copy.cu`).

use super::params::TileParams;
use super::{function, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stridekit_layout::{CopyPlan, TilePlan};

/// Launches `t` between base addresses `dst` and `src` (whose memory spans `src_bounds`):
/// a persistent grid of 256-thread blocks looping over the tiles, on the image tile
/// kernel where it takes them (`image.rs`).
pub(super) fn launch(
    t: &TilePlan,
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<()> {
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
    if super::image::launch(t, &p, (dst0, src0), src_bounds, stream)? {
        return Ok(());
    }
    let variant = tile_kernel(t);
    let f = function(stream, t.itemsize, variant)?;
    let shared = t.shared_bytes();
    let resident = super::resident_blocks(stream, &f, t.itemsize, variant, shared)?;
    let blocks = t
        .tiles()
        .min(sm_count(stream)?.max(1) * blocks_per_sm(t, resident, tile_blocks_per_sm()))
        as u32;
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

/// Blocks an SM for two kinds of tile, where more fit:
/// - one-element byte reads (the kernel's predicate-free path: at 64 registers four fit):
///   three, the occupancy those tiles had before that path. H200, the random set's eight
///   such cases, two rounds each: 1.01-1.10x, none slower (cases 63, 80, 88, 158, 162
///   1.07-1.10x); halfwords at three blocks stayed within 2% of four, so they keep what
///   fits;
/// - bytes and halfwords read in 4-byte words and written in words of another size (32
///   registers, so eight fit): the random set's two such cases 1.13x and 1.19x at three
///   (90, 78), and twenty cases of five other seeds that nobody tuned for geomean 1.10x,
///   every one faster (1.02-1.26x); at four less. On case 78 Nsight Compute shows the same
///   DRAM bytes and L2 hits either way in 15% less time: fewer tiles in flight at once
///   (BENCHMARKS.md). With 4-byte writes as well the same cap ran 0.92-1.06x (seven cases,
///   geomean 1.00x), and reads in 8- and 16-byte words lost up to 10% at three: those keep
///   what fits.
const FEW_BLOCKS_PER_SM: u64 = 3;

static TILE_BLOCKS_PER_SM: AtomicUsize = AtomicUsize::new(0);

/// Sets the most blocks an SM the multi-axis tile kernel's persistent grid takes, for
/// measuring what occupancy suits a layout: 0 (the default) is the engine's own rule
/// (every block that fits, three for one-element byte reads and for bytes and halfwords
/// read in 4-byte words and written in others), and a limit above what fits
/// takes what fits. For every thread of the process, from its next copy on; either way
/// each copy is exact.
///
/// ```
/// stridekit::set_tile_blocks_per_sm(6);
/// assert_eq!(stridekit::tile_blocks_per_sm(), 6);
/// stridekit::set_tile_blocks_per_sm(0);
/// ```
pub fn set_tile_blocks_per_sm(limit: usize) {
    TILE_BLOCKS_PER_SM.store(limit, Ordering::Relaxed);
}

/// The limit [`set_tile_blocks_per_sm`] sets (0: the engine's own rule).
pub fn tile_blocks_per_sm() -> usize {
    TILE_BLOCKS_PER_SM.load(Ordering::Relaxed)
}

/// The persistent grid's blocks an SM for `t`, of the `resident` that fit, under `limit`
/// ([`set_tile_blocks_per_sm`]; 0: the engine's rule).
fn blocks_per_sm(t: &TilePlan, resident: u64, limit: usize) -> u64 {
    if limit > 0 {
        resident.min(limit as u64)
    } else if wants_few_blocks(t) {
        resident.min(FEW_BLOCKS_PER_SM)
    } else {
        resident
    }
}

/// The tiles that run [`FEW_BLOCKS_PER_SM`] where more fit: one-element byte reads, and
/// bytes and halfwords read in 4-byte words and written in words of another size.
fn wants_few_blocks(t: &TilePlan) -> bool {
    let (read, write) = (t.read_word * t.itemsize, t.write_word * t.itemsize);
    (t.itemsize == 1 && t.read_word == 1)
        || (t.itemsize <= 2 && t.read_word > 1 && read == 4 && write != 4)
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

/// The tile of the first step of `src` copied into `dst`, planned with tiles at any size
/// (the tests' way to get the planner's tile of a layout).
#[cfg(test)]
pub(super) fn first_tiled_step(
    dst: &stridekit_layout::StridedLayout,
    src: &stridekit_layout::StridedLayout,
) -> TilePlan {
    let steps = CopyPlan::new(dst, src)
        .unwrap()
        .schedule_with_small_copy(0, 0, 0);
    match &steps[0] {
        stridekit_layout::CopyStep::Tiled(t) => (**t).clone(),
        other => panic!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridekit_layout::{CopyStep, Order, StridedLayout};

    fn tiles(isz: usize) -> TilePlan {
        // A 6-D permute whose fast axes are odd: one-element reads.
        let src = StridedLayout::dense(&[17, 9, 13, 11, 7, 5], isz, Order::C)
            .unwrap()
            .permuted(&[5, 3, 1, 4, 2, 0])
            .unwrap();
        let dst = StridedLayout::dense(src.shape(), isz, Order::C).unwrap();
        first_tiled_step(&dst, &src)
    }

    /// One-element byte reads keep three blocks an SM where four fit; halfword and wider
    /// tiles keep every block that fits.
    #[test]
    fn one_element_byte_tiles_keep_three_blocks_an_sm() {
        let bytes = tiles(1);
        assert_eq!(bytes.read_word, 1);
        assert_eq!(blocks_per_sm(&bytes, 4, 0), 3);
        assert_eq!(blocks_per_sm(&bytes, 2, 0), 2);
        let halfwords = tiles(2);
        assert_eq!(halfwords.read_word, 1);
        assert_eq!(blocks_per_sm(&halfwords, 4, 0), 4);
        assert_eq!(blocks_per_sm(&tiles(8), 5, 0), 5);
    }

    /// The first tile of the copy from `src` to `dst` (shape, strides, offset each).
    fn first_tile(isz: usize, shape: &[i64], src: (&[i64], i64), dst: (&[i64], i64)) -> TilePlan {
        let src = StridedLayout::with_offset(shape, src.0, isz, src.1).unwrap();
        let dst = StridedLayout::with_offset(shape, dst.0, isz, dst.1).unwrap();
        let steps =
            CopyPlan::new(&dst, &src)
                .unwrap()
                .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        match &steps[0] {
            CopyStep::Tiled(t) => (**t).clone(),
            other => panic!("{other:?}"),
        }
    }

    /// Bytes and halfwords read in 4-byte words and written in 1- or 2-byte words keep
    /// three blocks an SM where eight fit (the random set's cases 90 and 78); written in
    /// 4-byte words too (case 89), or read in 8-byte words (case 145), they keep what
    /// fits.
    #[test]
    fn small_elements_read_in_4_byte_words_keep_three_blocks_an_sm() {
        let bytes = first_tile(
            1,
            &[3, 4482, 2, 3, 57, 19],
            (&[-8964, -2, -1, 3092580, 53784, -18555480], 334025531),
            (&[-27360, 82080, 120, -20, 240, -1], 54778),
        );
        let halfwords = first_tile(
            2,
            &[63, 15, 58385],
            (&[116770, 14946560, 1], 0),
            (&[-2, 7356762, -126], 7356508),
        );
        for t in [&bytes, &halfwords] {
            assert_eq!(t.read_word * t.itemsize, 4, "{t:?}");
            assert_eq!(blocks_per_sm(t, 8, 0), 3);
            assert_eq!(blocks_per_sm(t, 2, 0), 2);
        }
        let same_words = first_tile(
            2,
            &[33, 3, 2, 13, 914, 21],
            (&[84, 2772, 1, 7617456, 8316, 2], 0),
            (&[914, -255920, 63980, 767760, 1, -9980880], 200129440),
        );
        assert_eq!(
            (
                same_words.read_word * same_words.itemsize,
                same_words.write_word * same_words.itemsize
            ),
            (4, 4),
            "{same_words:?}"
        );
        assert_eq!(blocks_per_sm(&same_words, 8, 0), 8);
        let wider = first_tile(
            2,
            &[2038920, 3, 3, 1, 3],
            (&[3, 18350280, -1, -55050840, 6116760], 2),
            (&[3, 1, -36700596, -1, -6116766], 85634724),
        );
        assert_eq!(wider.read_word * wider.itemsize, 8, "{wider:?}");
        assert_eq!(blocks_per_sm(&wider, 6, 0), 6);
    }

    /// A limit replaces the rule, bytes' included, and never takes more than fit.
    #[test]
    fn a_set_limit_caps_the_blocks_an_sm_for_every_tile() {
        let bytes = tiles(1);
        assert_eq!(blocks_per_sm(&bytes, 4, 4), 4);
        assert_eq!(blocks_per_sm(&bytes, 8, 6), 6);
        assert_eq!(blocks_per_sm(&tiles(2), 8, 6), 6);
        assert_eq!(blocks_per_sm(&tiles(8), 5, 6), 5);
        assert_eq!(blocks_per_sm(&tiles(4), 5, 1), 1);
    }
}
