//! The device-side strided copy: a [`CopyPlan`]'s schedule (its class table lives in the
//! layout crate, [`stridekit_layout::CopyStep`]) run as memcpys and CUDA C++ kernels,
//! compiled by NVRTC once per variant, cached in memory and on disk. Each thread keeps
//! the schedules of the copies it makes, so a copy made again is not planned again
//! (`schedules`).
//!
//! | step | kernel (`copy/kernels/`) |
//! | --- | --- |
//! | `Memcpy` | `cuMemcpyAsync` |
//! | `Elementwise` | bytes contiguous in the destination and read forwards or backwards: `element_runs.cu`, 4 bytes of the last axis a thread, one index decomposition and one aligned store per group (gathered groups only past [`small_copy_elements`]); others: `strided_copy.cu`, one thread per element; both keep several loads in flight, fewer where that leaves an SM without a block |
//! | `Transpose` | `tiled_transpose.cu`, 32 x 32 word tiles over two axes; 1- and 2-byte elements that no 4-byte word keeps aligned: `word_transpose.cu` (aligned 4-byte words at any start, realigned with funnel shifts across lanes, blocks transposed in registers) |
//! | `Tiled` | `tile_copy.cu`: tiles over several axes, tables in shared memory, words; byte tiles of long destination runs that it would write a byte at a time: `image_tile.cu` (aligned words in and out through a shared-memory image of the source runs, its plan in a device table made once per tile shape) |
//! | (overlapping views) | `group_copy.cu`: independent groups of the last axis ([`CopyPlan::overlap_groups`]), each read whole into shared memory before it is written; one shifted run: `ordered_copy.cu`, chunks in a safe order, each written once the chunks it overwrites are read ([`CopyPlan::ordered_chunks`]) |
//! | `SmallMatrices` | 1- and 2-byte elements: `small_matrices.cu`, whole matrices a tile, one run in and out, compile-time extents; 4-byte ones: `small_words.cu`, a warp per run of whole matrices in its own slice of shared memory, no block barrier |
//! | `ReversedChannels` | `channel_reverse.cu`: pixels in and out as runs of aligned chunks, channels reversed in registers |
//! | `Repeat` | `repeat_pattern.cu`: the pattern gathered into shared memory once per block, the destination written in aligned 16-byte chunks realigned from five shared-memory words |
//! | `ReversedRows` | `row_reverse.cu`: a thread per aligned 16-byte destination chunk, its mirror image read as two aligned chunks, realigned and reversed in registers |
//! | `Rows` | `channel_reverse.cu` with one channel of bytes: each row in and out as runs of aligned chunks, realigned in shared memory |
//! | `Channels` | 2 to 4 channels (or one picked out of pixels 2 to 4 elements apart) whose planes and batches all start on 16 bytes: `channel_words.cu` (16 bytes of every plane a thread, regrouped in registers, no block barrier); others: `channel_transpose.cu` (deinterleaving: pixels in, planes out) and `channel_interleave.cu` (planes in, pixels out), over the aligned-chunk runs of `channel_runs.cu` |

mod ahead;
pub(crate) mod catalogue;
mod fallback;
mod generic;
mod groups;
mod image;
pub use image::{image_tile_launches, image_tiles, set_image_tiles};
mod ordered;
mod params;
mod repeat;
mod runs;
mod schedules;
pub use generic::{elementwise_kernel, ElementwiseKernel};
pub use schedules::{set_small_copy_elements, small_copy_elements};
mod tiled;
pub use tiled::{set_tile_blocks_per_sm, tile_blocks_per_sm};
mod transpose;
mod word;

use crate::error::{driver, Error, Result};
use crate::memory::{copy_bytes_unchecked, Region};
use crate::runtime::{FunctionKey, Runtime};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use params::Params;
use std::sync::Arc;
use stridekit_layout::{CopyPlan, CopyStep};

/// Declarations every copy kernel shares; `Params` mirrors the Rust struct in `params.rs`.
const PRELUDE: &str = include_str!("../kernels/prelude.cu");
/// `TileParams` and `tile_base`, shared by the tile kernels.
const TILE_PARAMS: &str = include_str!("../kernels/tile_params.cu");
/// The channel kernels, each after the runs they share.
const CHANNEL_TRANSPOSE: &str = concat!(
    include_str!("../kernels/channel_runs.cu"),
    include_str!("../kernels/channel_transpose.cu")
);
const CHANNEL_INTERLEAVE: &str = concat!(
    include_str!("../kernels/channel_runs.cu"),
    include_str!("../kernels/channel_interleave.cu")
);
const CHANNEL_REVERSE: &str = concat!(
    include_str!("../kernels/channel_runs.cu"),
    include_str!("../kernels/channel_reverse.cu")
);
const ROW_REVERSE: &str = concat!(
    include_str!("../kernels/channel_runs.cu"),
    include_str!("../kernels/row_reverse.cu")
);
/// The overlap kernels, after the staged byte runs they share.
const GROUP_COPY: &str = concat!(
    include_str!("../kernels/staged_runs.cu"),
    include_str!("../kernels/group_copy.cu")
);
const ORDERED_COPY: &str = concat!(
    include_str!("../kernels/staged_runs.cu"),
    include_str!("../kernels/ordered_copy.cu")
);
const SMALL_MATRICES: &str = concat!(
    include_str!("../kernels/channel_runs.cu"),
    include_str!("../kernels/small_matrices.cu")
);

/// Which copy kernel, and its compile-time shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Variant {
    /// One thread per element, any layout; rank, 64-bit indexing, 32-bit element offsets
    /// (`narrow`: both sides' offsets fit them), and elements a thread keeps in flight.
    Generic {
        ndim: usize,
        wide: bool,
        narrow: bool,
        unr: usize,
    },
    /// Groups of `vec` destination bytes of a row a thread (`ElementRuns`): a row of
    /// contiguous source bytes (read backwards when `reversed`) where `gathered` is 0,
    /// else each byte gathered along the row's `gathered` axes.
    Runs {
        ndim: usize,
        wide: bool,
        reversed: bool,
        narrow: bool,
        gathered: usize,
        vec: usize,
    },
    /// 32 x 32 tiles of words of this many bytes (the itemsize: plain elements).
    Transpose { ndim: usize, word: usize },
    /// The word transpose of 1- or 2-byte elements (any alignment).
    Word { ndim: usize },
    /// A deinterleaving transpose of `ch` channels, source pixels `sl` elements apart.
    Channels { ndim: usize, ch: usize, sl: usize },
    /// An interleaving transpose of `ch` channels.
    Interleave { ndim: usize, ch: usize },
    /// A channel transpose of `ch` (1 to 4) channels in aligned 16-byte groups, the
    /// interleaved pixels `sl` elements apart: deinterleaving when `split`, else
    /// interleaving (dense pixels: `sl` is `ch`).
    ChannelWords {
        ndim: usize,
        ch: usize,
        split: bool,
        sl: usize,
    },
    /// `ch` channels reversed within each pixel.
    Reverse { ndim: usize, ch: usize },
    /// Rows read backwards.
    RowReverse { ndim: usize },
    /// A short pattern repeated into one contiguous destination.
    Repeat,
    /// Small `nl x na` matrices transposed into `na x nl` ones.
    SmallMatrices { na: usize, nl: usize },
    /// Small `nl x na` matrices of 4-byte elements transposed, a warp per run of them.
    SmallWords { na: usize, nl: usize },
    /// Tiles over several axes; bytes per read and per written word.
    Tiled { read: usize, write: usize },
    /// Byte tiles through a shared-memory image: read, interior and edge
    /// words a thread holds.
    Image { ur: usize, ui: usize, ue: usize },
    /// Overlapping views in independent groups of the last axis.
    Groups { ndim: usize },
    /// One shifted run in ordered chunks.
    Ordered,
}

impl Variant {
    /// The runtime's key for this variant's kernel of `itemsize`-byte elements.
    fn key(self, itemsize: usize) -> FunctionKey {
        match self {
            Variant::Generic {
                ndim,
                wide,
                narrow,
                unr,
            } => (
                "strided_copy",
                [itemsize, ndim, wide as usize + 2 * narrow as usize, unr],
            ),
            Variant::Runs {
                ndim,
                wide,
                reversed,
                narrow,
                gathered,
                vec,
            } => (
                "element_runs",
                [
                    itemsize,
                    ndim,
                    wide as usize,
                    reversed as usize + 2 * narrow as usize + 4 * gathered + 16 * vec,
                ],
            ),
            Variant::Transpose { ndim, word } => ("tiled_transpose", [itemsize, ndim, word, 0]),
            Variant::Word { ndim } => ("word_transpose", [itemsize, ndim, 0, 0]),
            Variant::Channels { ndim, ch, sl } => ("channel_transpose", [itemsize, ndim, ch, sl]),
            Variant::Interleave { ndim, ch } => ("channel_interleave", [itemsize, ndim, ch, 0]),
            Variant::ChannelWords {
                ndim,
                ch,
                split,
                sl,
            } => (
                "channel_words",
                [itemsize, ndim, ch, 2 * sl + split as usize],
            ),
            Variant::Reverse { ndim, ch } => ("channel_reverse", [itemsize, ndim, ch, 0]),
            Variant::RowReverse { ndim } => ("row_reverse", [itemsize, ndim, 0, 0]),
            Variant::Repeat => ("repeat_pattern", [itemsize, 0, 0, 0]),
            Variant::SmallMatrices { na, nl } => ("small_matrices", [itemsize, na, nl, 0]),
            Variant::SmallWords { na, nl } => ("small_words", [itemsize, na, nl, 0]),
            Variant::Tiled { read, write } => ("tile_copy", [itemsize, read, write, 0]),
            Variant::Image { ur, ui, ue } => ("image_tile", [itemsize, ur, ui, ue]),
            Variant::Groups { ndim } => ("group_copy", [itemsize, ndim, 0, 0]),
            Variant::Ordered => ("ordered_copy", [itemsize, 0, 0, 0]),
        }
    }
}

/// The CUDA type of a word of `bytes` bytes.
fn word_type(bytes: usize) -> Option<&'static str> {
    Some(match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        16 => "b16",
        _ => return None,
    })
}

/// Elements each thread of the elementwise kernel keeps in flight for `plan`
/// (`bench/kernel_lab/elementwise_lab.cu` on the random set's elementwise cases below 0.9
/// of the roofline, then the engine on every elementwise case of the size, H100). Bytes:
/// 4, whose grid of one block per chunk keeps enough in flight (4 beat 8 and 16 on
/// scattered byte stores). Elements of 2 and 4 bytes: 8 bytes where the destination has
/// gaps ([`CopyPlan::gapped_destination`]: partly written sectors; 5-14% faster than 32
/// bytes on twelve such cases below 0.9, 3-6% slower on two), else 32 bytes (where the
/// destination is dense or nearly so, 8 bytes lost 6-11% on six cases). Elements of 8 and 16
/// bytes (2 and 1 elements; 0.3-6.4% faster on every one of 13 cases than 4 elements,
/// where 8 bytes a thread lost 10% on one).
fn unroll(plan: &CopyPlan) -> usize {
    depth(plan.itemsize, plan.gapped_destination())
}

/// The depth [`unroll`] picks for `itemsize`-byte elements, the destination `gapped` or not.
fn depth(itemsize: usize, gapped: bool) -> usize {
    match itemsize {
        1 => 4,
        2 | 4 if gapped => 8 / itemsize,
        2 | 4 => 32 / itemsize,
        isz => (16 / isz).max(1),
    }
}

/// Groups of `vec` bytes each thread of the run kernel keeps in flight: 32 bytes.
fn run_unroll(vec: usize) -> usize {
    (32 / vec).max(1)
}

/// The defines of the elementwise kernels' indexing: rank, parameter block, items a thread
/// keeps in flight, 32-bit indices with fast division unless `wide`, 32-bit element
/// offsets where `narrow`.
fn index_defines(ndim: usize, unr: usize, wide: bool, narrow: bool) -> String {
    format!(
        "#define NDIM {ndim}\n#define PMAX {}\n#define UNR {unr}\n{}#define IDX {}\n#define OFF {}\n",
        params::pmax(ndim),
        if wide { "" } else { "#define FASTDIV 1\n" },
        if wide { "unsigned long long" } else { "unsigned int" },
        if narrow { "int" } else { "long long" }
    )
}

/// The kernel for (device, itemsize, variant), compiled on first use.
fn function(stream: &Arc<CudaStream>, itemsize: usize, variant: Variant) -> Result<CudaFunction> {
    const OP: &str = "strided copy kernel";
    Runtime::of_stream(OP, stream)?.function(OP, variant.key(itemsize), || {
        compile_function(stream, itemsize, variant)
    })
}

/// Compiles (or loads from the disk cache) the kernel of `(itemsize, variant)`.
fn compile_function(
    stream: &Arc<CudaStream>,
    itemsize: usize,
    variant: Variant,
) -> Result<CudaFunction> {
    const OP: &str = "strided copy kernel";
    let ctx = stream.context();
    let (src, name) = kernel_source(itemsize, variant)?;
    let module = crate::nvrtc::compile(OP, ctx, &module_name(name, itemsize), &src)?;
    module
        .load_function(name)
        .map_err(driver(OP, "cuModuleGetFunction"))
}

/// The module the kernel `name` of `itemsize`-byte elements is compiled (and cached) as.
fn module_name(name: &str, itemsize: usize) -> String {
    format!("stridekit_{name}_{itemsize}")
}

/// The CUDA C++ source of the kernel of `(itemsize, variant)`, and its entry point.
fn kernel_source(itemsize: usize, variant: Variant) -> Result<(String, &'static str)> {
    const OP: &str = "strided copy kernel";
    let unsupported = |what: usize| Error::Unsupported {
        op: OP,
        reason: format!("itemsize {what}; the kernel moves 1, 2, 4, 8 or 16-byte elements"),
    };
    let elem = word_type(itemsize).ok_or_else(|| unsupported(itemsize))?;
    let wt = |bytes: usize| word_type(bytes).ok_or_else(|| unsupported(bytes));
    let (defs, body, name) = match variant {
        Variant::Generic {
            ndim,
            wide,
            narrow,
            unr,
        } => (
            index_defines(ndim, unr, wide, narrow),
            include_str!("../kernels/strided_copy.cu"),
            "strided_copy",
        ),
        Variant::Runs {
            ndim,
            wide,
            reversed,
            narrow,
            gathered,
            vec,
        } => (
            format!(
                "{}#define GV {vec}\n{}",
                index_defines(ndim, run_unroll(vec), wide, narrow),
                match (gathered, reversed) {
                    (0, false) => "#define SS 1\n".to_string(),
                    (0, true) => "#define SS (-1)\n".to_string(),
                    (ni, _) => format!("#define NI {ni}\n"),
                }
            ),
            include_str!("../kernels/element_runs.cu"),
            "element_runs",
        ),
        Variant::Transpose { ndim, word } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define WORD {}\n",
                params::pmax(ndim),
                wt(word)?
            ),
            include_str!("../kernels/tiled_transpose.cu"),
            "tiled_transpose",
        ),
        Variant::Word { ndim } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n#define WT_MINB {}\n",
                params::pmax(ndim),
                if itemsize == 1 { 4 } else { 8 }
            ),
            include_str!("../kernels/word_transpose.cu"),
            "word_transpose",
        ),
        Variant::Channels { ndim, ch, sl } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n#define CH {ch}\n#define SLB {}\n",
                params::pmax(ndim),
                sl * itemsize
            ),
            CHANNEL_TRANSPOSE,
            "channel_transpose",
        ),
        Variant::Interleave { ndim, ch } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n#define CH {ch}\n",
                params::pmax(ndim)
            ),
            CHANNEL_INTERLEAVE,
            "channel_interleave",
        ),
        Variant::ChannelWords {
            ndim,
            ch,
            split,
            sl,
        } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n#define CH {ch}\n#define SPLIT {}\n#define SL {}\n",
                params::pmax(ndim),
                split as usize,
                sl
            ),
            include_str!("../kernels/channel_words.cu"),
            "channel_words",
        ),
        Variant::Reverse { ndim, ch } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n#define CH {ch}\n",
                params::pmax(ndim)
            ),
            CHANNEL_REVERSE,
            "channel_reverse",
        ),
        Variant::RowReverse { ndim } => (
            format!(
                "#define NDIM {ndim}\n#define PMAX {}\n#define EB {itemsize}\n",
                params::pmax(ndim)
            ),
            ROW_REVERSE,
            "row_reverse",
        ),
        Variant::SmallMatrices { na, nl } => (
            format!("#define NDIM 3\n#define PMAX 8\n#define EB {itemsize}\n#define NA {na}\n#define NL {nl}\n"),
            SMALL_MATRICES,
            "small_matrices",
        ),
        Variant::SmallWords { na, nl } => (
            format!("#define NDIM 3\n#define PMAX 8\n#define NA {na}\n#define NL {nl}\n"),
            include_str!("../kernels/small_words.cu"),
            "small_words",
        ),
        Variant::Tiled { read, write } => (
            format!(
                "#define PMAX 8\n#define EB {itemsize}\n#define RWORD {}\n#define RW {}\n#define WWORD {}\n#define WW {}\n#define UNR {}\n",
                wt(read)?,
                read / itemsize,
                wt(write)?,
                write / itemsize,
                stridekit_layout::TilePlan::loads_per_thread(read)
            ) + TILE_PARAMS,
            include_str!("../kernels/tile_copy.cu"),
            "tile_copy",
        ),
        Variant::Image { ur, ui, ue } => (
            format!("#define PMAX 8\n#define UR {ur}\n#define UI {ui}\n#define UE {ue}\n#define MINB 3\n") + TILE_PARAMS,
            include_str!("../kernels/image_tile.cu"),
            "image_tile",
        ),
        Variant::Groups { ndim } => (
            format!("#define NDIM {ndim}\n#define PMAX {}\n", params::pmax(ndim)),
            GROUP_COPY,
            "group_copy",
        ),
        Variant::Ordered => (
            "#define PMAX 8\n".to_string(),
            ORDERED_COPY,
            "ordered_copy",
        ),
        Variant::Repeat => (
            "#define PMAX 8\n".to_string(),
            include_str!("../kernels/repeat_pattern.cu"),
            "repeat_pattern",
        ),
    };
    Ok((format!("#define ELEM {elem}\n{defs}{PRELUDE}{body}"), name))
}

/// SMs of the stream's device, asked once per device.
fn sm_count(stream: &Arc<CudaStream>) -> Result<u64> {
    const OP: &str = "strided copy kernel";
    Runtime::of_stream(OP, stream)?.sm_count(OP)
}

/// Blocks of 256 threads of `f` (the kernel of `(itemsize, variant)`) that fit on one
/// SM at once with `shared` bytes of dynamic shared memory, asked once per device and
/// shape: a persistent grid of exactly that many per SM runs in one wave.
fn resident_blocks(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    itemsize: usize,
    variant: Variant,
    shared: usize,
) -> Result<u64> {
    const OP: &str = "strided copy kernel";
    Runtime::of_stream(OP, stream)?.occupancy(OP, variant.key(itemsize), shared, || {
        Ok(
            f.occupancy_max_active_blocks_per_multiprocessor(256, shared, None)
                .map_err(driver(OP, "cuOccupancyMaxActiveBlocksPerMultiprocessor"))?
                .max(1) as u64,
        )
    })
}

/// The arguments every two-axis kernel takes, in order: source and destination element 0
/// (the plan's offsets applied to the two base addresses), the parameter block, the
/// source-contiguous axis `a`, the destination-contiguous axis `l`, the batch count and,
/// for kernels that read whole aligned words, the source memory's bounds.
struct AxesArgs<const D: usize> {
    src0: u64,
    dst0: u64,
    params: Params<D>,
    a: i32,
    l: i32,
    batches: i64,
    bounds: Option<(u64, u64)>,
}

impl<const D: usize> AxesArgs<D> {
    fn new(
        plan: &CopyPlan,
        (a, l): (usize, usize),
        batches: u64,
        (dst, src): (u64, u64),
        bounds: Option<(u64, u64)>,
    ) -> Self {
        let isz = plan.itemsize as i64;
        AxesArgs {
            src0: src.wrapping_add_signed(plan.src_offset * isz),
            dst0: dst.wrapping_add_signed(plan.dst_offset * isz),
            params: Params::<D>::new(plan),
            a: a as i32,
            l: l as i32,
            batches: batches as i64,
            bounds,
        }
    }

    /// Launches `f` over `cfg` with these arguments.
    ///
    /// # Safety
    /// `f` takes exactly these arguments (the bounds where given); every element the plan
    /// reaches lies inside memory the callers' views validated; the kernel reads whole
    /// words outside the elements only inside the bounds and writes the destination's
    /// elements only.
    unsafe fn launch(
        &self,
        stream: &Arc<CudaStream>,
        f: &CudaFunction,
        cfg: LaunchConfig,
    ) -> Result<()> {
        let mut launch = stream.launch_builder(f);
        launch
            .arg(&self.src0)
            .arg(&self.dst0)
            .arg(&self.params)
            .arg(&self.a)
            .arg(&self.l)
            .arg(&self.batches);
        if let Some((lo, hi)) = &self.bounds {
            launch.arg(lo).arg(hi);
        }
        // SAFETY: the caller's promise.
        unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
        Ok(())
    }
}

/// Runs the copy of `plan` from `src` to `dst` (the plan's offsets count from each
/// region's base) on `stream`: its schedule's memcpys and kernels, in order. Checked
/// first: every byte the plan reaches lies inside its region, the destination is
/// writable, and (unless the plan is one run of bytes, which `cuMemcpyAsync` moves
/// between any kinds) both are memory kernels can reach.
pub(crate) fn launch(
    plan: &CopyPlan,
    dst: Region<'_>,
    src: Region<'_>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    const OP: &str = "copy on the device";
    if plan.volume == 0 {
        return Ok(());
    }
    dst.check_writable(OP)?;
    for r in [&dst, &src] {
        if !plan.is_contiguous() && !r.kind().is_device_accessible() {
            return Err(crate::error::invalid(
                OP,
                format!(
                    "{:?} memory at {:#x} cannot be reached by kernels",
                    r.kind(),
                    r.base()
                ),
            ));
        }
    }
    let (d, s) = plan.byte_bounds()?;
    dst.check(OP, "destination elements", d)?;
    src.check(OP, "source elements", s)?;
    // Kernels may read whole aligned words around the elements inside the source's
    // memory (never past it): its bounds go with the source.
    let src_bounds = (src.base(), src.base().saturating_add(src.size() as u64));
    let (dst, src) = (dst.base(), src.base());
    if plan.is_contiguous() {
        // One run of bytes (most small copies): no schedule to build.
        return memcpy(plan, dst, src, stream);
    }
    let (steps, fresh) = schedules::schedule(plan, dst, src, sm_count(stream)?);
    // Armed (where the fallback kernel could stand in), a kernel that is not compiled yet
    // goes to a background thread and stops the steps; the fallback then copies the
    // whole plan (rewriting what the steps before wrote: the same bytes).
    let armed = fallback::fits(plan)
        .then(crate::background_compile::arm)
        .flatten();
    if let Some(armed) = armed {
        if fresh.0 {
            ahead::request(&steps, stream);
        }
        let done = launch_steps(&steps, dst, src, src_bounds, stream);
        if !armed.deferred() {
            return done;
        }
        drop(armed);
        if fallback::launch(plan, dst, src, stream)? {
            return Ok(());
        }
        // No fallback on this GPU: the steps wait for their kernels.
        return launch_steps(&steps, dst, src, src_bounds, stream);
    }
    if fresh.0 && steps.len() > 1 {
        ahead::compile_ahead(&steps, stream);
    }
    launch_steps(&steps, dst, src, src_bounds, stream)
}

/// The copy `plan` between overlapping regions in independent groups, when the plan
/// allows it ([`CopyPlan::overlap_groups`], both sides kernel-reachable): `Ok(false)`
/// leaves the copy to the caller (through a temporary).
pub(crate) fn launch_overlapping(
    plan: &CopyPlan,
    dst: Region<'_>,
    src: Region<'_>,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    const OP: &str = "copy on the device";
    if plan.volume == 0 {
        return Ok(true);
    }
    if !dst.kind().is_device_accessible() || !src.kind().is_device_accessible() {
        return Ok(false);
    }
    let isz = plan.itemsize as i64;
    let first = |base: u64, offset: i64| i128::from(base) + i128::from(offset) * i128::from(isz);
    let Ok(delta) =
        i64::try_from(first(src.base(), plan.src_offset) - first(dst.base(), plan.dst_offset))
    else {
        return Ok(false);
    };
    if !plan.overlap_groups(delta) {
        return Ok(false);
    }
    dst.check_writable(OP)?;
    let (d, s) = plan.byte_bounds()?;
    dst.check(OP, "destination elements", d)?;
    src.check(OP, "source elements", s)?;
    groups::launch(plan, dst.base(), src.base(), stream)?;
    Ok(true)
}

/// The ordered chunks of an overlapping copy `plan` between `dst` and `src`, when it is
/// one shifted run both sides of which kernels reach ([`CopyPlan::ordered_chunks`]).
pub(crate) fn ordered_chunks(
    plan: &CopyPlan,
    dst: &Region<'_>,
    src: &Region<'_>,
) -> Option<stridekit_layout::OrderedChunks> {
    if !dst.kind().is_device_accessible() || !src.kind().is_device_accessible() {
        return None;
    }
    let isz = i128::from(plan.itemsize as u64);
    let first = |base: u64, offset: i64| i128::from(base) + i128::from(offset) * isz;
    let delta =
        i64::try_from(first(src.base(), plan.src_offset) - first(dst.base(), plan.dst_offset))
            .ok()?;
    plan.ordered_chunks(delta)
}

/// Runs the ordered chunks `o` of `plan` between `dst` and `src`, zeroing `flags` (a
/// ticket and one flag a chunk, [`ordered_flag_bytes`]) on `stream` first. `Ok(false)`:
/// `flags` is not device memory (the kernel's atomics need it), and nothing ran. `flags`
/// is released on its allocation stream, `stream`, after the kernel.
pub(crate) fn launch_ordered(
    plan: &CopyPlan,
    o: &stridekit_layout::OrderedChunks,
    dst: Region<'_>,
    src: Region<'_>,
    flags: &mut crate::memory::Buffer,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    const OP: &str = "copy on the device";
    if flags.kind() != crate::memory::MemoryKind::Device {
        return Ok(false);
    }
    dst.check_writable(OP)?;
    let (d, s) = plan.byte_bounds()?;
    dst.check(OP, "destination elements", d)?;
    src.check(OP, "source elements", s)?;
    let need = ordered_flag_bytes(o)?;
    Region::of_buffer(flags).check(OP, "ordering flags", 0..need as i64)?;
    flags.fill(0, stream)?;
    ordered::launch(plan, o, dst.base(), src.base(), flags.ptr(), stream)?;
    Ok(true)
}

/// Shared memory an overlap kernel stages `bytes` bytes of a group or chunk in: 16 more,
/// for runs of small elements staged from the aligned word below their first byte.
pub(super) fn staged_bytes(bytes: usize) -> usize {
    bytes + 16
}

/// Bytes of flags the ordered chunks `o` need: a ticket counter and one flag a chunk.
pub(crate) fn ordered_flag_bytes(o: &stridekit_layout::OrderedChunks) -> Result<usize> {
    usize::try_from(o.chunks)
        .ok()
        .and_then(|c| c.checked_add(1))
        .and_then(|c| c.checked_mul(4))
        .ok_or_else(|| {
            crate::error::invalid(
                "copy on the device",
                format!("{} ordered chunks overflow usize", o.chunks),
            )
        })
}

/// The gap-free run of `p` between base addresses `dst` and `src`: one `cuMemcpyAsync`.
fn memcpy(p: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    let isz = p.itemsize as i64;
    // SAFETY: `p` is the checked plan of `launch` or a step of its schedule, which stays
    // within the plan's byte bounds (the schedule's CPU simulator tests this), so both
    // runs lie in the checked regions.
    unsafe {
        copy_bytes_unchecked(
            "copy",
            dst.wrapping_add_signed(p.dst_offset * isz),
            src.wrapping_add_signed(p.src_offset * isz),
            p.volume * p.itemsize,
            stream,
        )
    }
}

/// Runs `steps` between base addresses `dst` and `src` (whose memory spans `src_bounds`),
/// in order.
fn launch_steps(
    steps: &[CopyStep],
    dst: u64,
    src: u64,
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<()> {
    for step in steps {
        match step {
            CopyStep::Memcpy(p) => memcpy(p, dst, src, stream)?,
            CopyStep::Elementwise(p) => generic::launch(p, dst, src, stream)?,
            CopyStep::Transpose {
                plan: p,
                a,
                l,
                word,
            } => {
                let done = if word::takes(p.itemsize, *word) {
                    word::launch(p, (*a, *l), (dst, src), src_bounds, stream)?
                } else {
                    transpose::launch(p, (*a, *l), *word, dst, src, stream)?
                };
                if !done {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::Tiled(t) => tiled::launch(t, dst, src, src_bounds, stream)?,
            CopyStep::Channels { plan: p, a, l } => {
                if !runs::channels(p, (*a, *l), dst, src, src_bounds, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::SmallMatrices { plan: p, a, l } => {
                if !runs::small_matrices(p, (*a, *l), dst, src, src_bounds, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::Rows { plan: p } => {
                if !runs::rows(p, dst, src, src_bounds, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::Repeat { plan: p, outer } => {
                if !repeat::launch(p, *outer, dst, src, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::ReversedRows { plan: p } => {
                if !runs::reversed_rows(p, dst, src, src_bounds, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
            CopyStep::ReversedChannels {
                plan: p,
                pixels,
                channels,
            } => {
                let axes = (*pixels, *channels);
                if !runs::reversed(p, axes, dst, src, src_bounds, stream)? {
                    generic::launch(p, dst, src, stream)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elementwise depth of 2- and 4-byte elements follows the destination's gaps: 8
    /// bytes a thread where it has them, 32 where it is dense or nearly so.
    #[test]
    fn elementwise_depth_follows_the_destinations_gaps() {
        use stridekit_layout::{Order, StridedLayout};
        for isz in [2usize, 4] {
            let l = |st: &[i64], off: i64| {
                StridedLayout::with_offset(&[1000, 3], st, isz, off).unwrap()
            };
            let plan = |d: &StridedLayout, s: &StridedLayout| CopyPlan::new(d, s).unwrap();
            let (dense, reversed, gapped) = (l(&[3, 1], 0), l(&[-3, -1], 2999), l(&[6, 2], 0));
            let shallow = 8 / isz;
            assert_eq!(unroll(&plan(&gapped, &dense)), shallow);
            assert_eq!(unroll(&plan(&dense, &reversed)), 32 / isz);
            // Gaps in the source only, a broadcast source, one element of padding per row
            // of 1000.
            assert_eq!(unroll(&plan(&dense, &gapped)), 32 / isz);
            assert_eq!(unroll(&plan(&dense, &l(&[0, 1], 0))), 32 / isz);
            let rows = StridedLayout::dense(&[3, 1000], isz, Order::C).unwrap();
            let padded = StridedLayout::with_offset(&[3, 1000], &[1001, -1], isz, 999).unwrap();
            assert_eq!(unroll(&plan(&padded, &rows)), 32 / isz);
        }
        let bytes = StridedLayout::dense(&[1000, 3], 1, Order::C).unwrap();
        let plan = CopyPlan::new(&bytes, &bytes.permuted(&[0, 1]).unwrap()).unwrap();
        assert_eq!(unroll(&plan), 4);
    }

    /// Every kernel variant the schedule can ask for (a representative of each family of
    /// defines), compiled by NVRTC for Hopper without a GPU. Needs libnvrtc on the loader
    /// path (CI installs the `nvidia-cuda-nvrtc` wheel); without it the test says so and
    /// passes, unless `STRIDEKIT_REQUIRE_NVRTC` is set.
    #[test]
    fn nvrtc_compiles_every_kernel_variant_for_sm_90() {
        if !crate::driver::nvrtc_present() {
            return;
        }
        let mut variants = Vec::new();
        for isz in [1usize, 2, 4, 8, 16] {
            for ndim in [1usize, 2, 3, 8, 9] {
                for (wide, narrow) in [(false, true), (false, false), (true, false)] {
                    // The depths `unroll` picks for the size.
                    let (gapped, dense) = (depth(isz, true), depth(isz, false));
                    let depths = if gapped == dense {
                        &[dense][..]
                    } else {
                        &[gapped, dense][..]
                    };
                    for &unr in depths {
                        let v = Variant::Generic {
                            ndim,
                            wide,
                            narrow,
                            unr,
                        };
                        variants.push((isz, v));
                    }
                    if isz == 1 {
                        for reversed in [false, true] {
                            let v = Variant::Runs {
                                ndim,
                                wide,
                                reversed,
                                narrow,
                                gathered: 0,
                                vec: 4,
                            };
                            variants.push((isz, v));
                        }
                    }
                    if isz <= 2 {
                        for gathered in 1..=stridekit_layout::ElementRuns::MAX_ROW_AXES {
                            for vec in [4, 16] {
                                let v = Variant::Runs {
                                    ndim,
                                    wide,
                                    reversed: false,
                                    narrow,
                                    gathered,
                                    vec,
                                };
                                variants.push((isz, v));
                            }
                        }
                    }
                }
            }
            for ndim in [2usize, 3, 9] {
                for word in [isz, 4, 8, 16] {
                    if word >= isz && word <= 16 {
                        variants.push((isz, Variant::Transpose { ndim, word }));
                    }
                }
            }
            for read in [isz, 4, 8, 16] {
                for write in [isz, 4, 8, 16] {
                    if read >= isz && write >= isz {
                        variants.push((isz, Variant::Tiled { read, write }));
                    }
                }
            }
        }
        for isz in [1usize, 2, 4, 8] {
            variants.push((isz, Variant::Repeat));
        }
        for [ur, ui, ue] in image::variants() {
            variants.push((1, Variant::Image { ur, ui, ue }));
        }
        for isz in [1usize, 2] {
            for ndim in [2usize, 3, 9] {
                variants.push((isz, Variant::Word { ndim }));
            }
            for ch in 2..=8 / isz {
                for sl in ch..=8 / isz {
                    variants.push((isz, Variant::Channels { ndim: 3, ch, sl }));
                }
            }
            variants.push((1, Variant::Reverse { ndim: 2, ch: 1 }));
            for ndim in [1usize, 2, 9] {
                variants.push((isz, Variant::RowReverse { ndim }));
            }
            variants.push((1, Variant::Reverse { ndim: 9, ch: 1 }));
            for ch in 1..=4 {
                for ndim in [2usize, 3, 9] {
                    // Deinterleaving out of pixels `sl` elements apart; interleaving.
                    let interleave = (ch >= 2).then_some((false, ch));
                    for (split, sl) in (ch..=4).map(|sl| (true, sl)).chain(interleave) {
                        let v = Variant::ChannelWords {
                            ndim,
                            ch,
                            split,
                            sl,
                        };
                        variants.push((isz, v));
                    }
                }
            }
            for ch in 2..=16 {
                variants.push((isz, Variant::Interleave { ndim: 3, ch }));
                variants.push((isz, Variant::Reverse { ndim: 3, ch }));
            }
        }
        for isz in [1usize, 2, 4] {
            for (na, nl) in [
                (48usize, 16usize),
                (8, 32),
                (16, 16),
                (64, 64),
                (2, 4),
                (3, 8),
            ] {
                if isz == 4 && na * nl <= 512 {
                    variants.push((isz, Variant::SmallWords { na, nl }));
                } else if isz < 4 && na * nl * isz <= 8192 {
                    variants.push((isz, Variant::SmallMatrices { na, nl }));
                }
            }
        }
        let mut failed = Vec::new();
        for (isz, v) in &variants {
            let (src, name) = kernel_source(*isz, *v).unwrap();
            let opts = cudarc::nvrtc::CompileOptions {
                arch: Some("compute_90"),
                name: Some(format!("{name}.cu")),
                ..Default::default()
            };
            if let Err(e) = cudarc::nvrtc::compile_ptx_with_opts(&src, opts) {
                failed.push(format!("{name} itemsize {isz} {v:?}: {e:?}"));
            }
        }
        assert!(
            failed.is_empty(),
            "{} of {} variants failed:\n{}",
            failed.len(),
            variants.len(),
            failed.join("\n")
        );
        eprintln!("{} kernel variants compiled for compute_90", variants.len());
    }
}
