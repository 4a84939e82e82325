//! Which kernel runs a copy: the class of a normalised [`CopyPlan`] and its steps.
//!
//! Tensor-transpose libraries sort copies into classes by what their fast axes do; so
//! does [`CopyPlan::schedule`]. "Fast axes" are the destination's smallest-stride axis
//! (the plan's last) and the source's smallest nonzero-stride axis.
//!
//! | class | when | step | what the GPU does |
//! | --- | --- | --- | --- |
//! | empty | no elements | none | nothing |
//! | contiguous | one gap-free run on both sides | [`CopyStep::Memcpy`] | `cuMemcpyAsync` |
//! | reversed channels | 1- and 2-byte elements; dense pixels on both sides, 2 to 16 channels with stride -1 in the source ([`CopyPlan::reversed_channel_axes`]) | [`CopyStep::ReversedChannels`] | the pixels as one run of aligned 16-byte chunks in and out, every pixel's channels reversed in registers |
//! | repeated pattern | the destination one dense run, the source broadcasting its leading axes, a pattern of 8 KiB or less ([`CopyPlan::repeated_pattern`]) | [`CopyStep::Repeat`] | the pattern gathered into shared memory once per block, the destination written as aligned 16-byte chunks, each realigned from five shared-memory words with funnel shifts |
//! | reversed rows | 1- and 2-byte elements; the last axis has stride -1 in the source and 1 in the destination, rows of 128 bytes or more ([`CopyPlan::reversed_rows`]) | [`CopyStep::ReversedRows`] | a thread per aligned 16-byte destination chunk: its mirror image read as the two aligned source chunks that hold it, realigned with funnel shifts and reversed with byte permutes in registers |
//! | shifted rows | both sides' last axis contiguous, rows of 128 bytes or more that no word wider than 4 bytes keeps aligned on both sides ([`CopyPlan::shifted_rows`]) | [`CopyStep::Rows`] | each row as runs of aligned 16-byte chunks in and out, realigned with funnel shifts in shared memory |
//! | shared fast axis | the source's fast axis is the destination's fastest axis along which the source moves (broadcast axes skipped) and long (>= 32 elements or 64 bytes); or the source spans a quarter of the elements or less (a broadcast: reads come from cache) | [`CopyStep::Elementwise`] | one thread per element (widened to 16-, 8-, 4- or 2-byte words when both inner runs allow), coalesced on both sides, several loads in flight per thread |
//! | batched small matrices | 1-, 2- and 4-byte elements; `(B, m, n) -> (B, n, m)` with both sides dense, `m` and `n` 2 to 64 ([`CopyPlan::small_matrix_axes`]) | [`CopyStep::SmallMatrices`] | many matrices a tile: the batch as one run of aligned 16-byte chunks in and out, destination words gathered from shared memory with compile-time extents; 4-byte elements: a warp per run of whole matrices, no block barrier |
//! | transpose of two long axes | the source's fast axis and the destination's differ, both at least a tile side (32 words; 1- and 2-byte elements in 4-byte words where those stay aligned) | [`CopyStep::Transpose`] | 32 x 32 word tiles through shared memory, all of a thread's loads in flight at once; 1- and 2-byte elements whose rows start anywhere (no aligned 4-byte words), where its tiles are at least 80% full ([`WORD_TRANSPOSE_FILL`]; emptier ones take the multi-axis tiles): the word transpose (aligned 16-byte chunks in, realigned with funnel shifts across lanes, 4 x 4 byte or 2 x 2 halfword blocks transposed in registers, 16-byte chunks out where the destination's rows are 16-byte aligned, realigned words elsewhere) |
//! | one short side | 1- and 2-byte elements; one fast axis has 2 to 16 elements (channels), the other spans at least 256 bytes (pixels) ([`CopyPlan::channel_transpose_axes`]); or one channel picked out of pixels 2 to 4 elements apart, in aligned groups ([`CopyPlan::picked_channel`]) | [`CopyStep::Channels`] | 2 to 4 channels whose planes and batches start on 16 bytes ([`CopyPlan::channel_groups_aligned`]): 16 bytes of every plane a thread, regrouped in registers; others: tiles of up to 4 KiB per channel, the interleaved pixels moving as one run of aligned 16-byte chunks, each plane as another, realigned with funnel shifts |
//! | gathered reads | short fast axes, but one warp of the elementwise kernel (32 consecutive destination elements) reads few more source sectors than they fill, and elements sharing a sector are read within 1 MiB of each other: planes into small blocks, pairs of interleaved streams ([`GATHER_SPREAD`], [`GATHER_REUSE_BYTES`]); not bytes whose rows the run kernel would read along contiguous source bytes (tiles take those) | [`CopyStep::Elementwise`] | as above: L1 and L2 gather the short runs, no shared-memory staging, barrier or remainder launch; bytes (and gathered halfwords) whose destination is dense along a row of the last axes ([`CopyPlan::element_runs`]): 16 (rows of 64 bytes or more) or 4 destination bytes a thread, one index decomposition and one aligned store each, where a warp's reads stay within a few dozen sectors |
//! | everything else (short fast axes: permutations of many small axes; channel layouts and batched small transposes of wider elements) | fast axes differ, one is short | [`CopyStep::Tiled`] | tiles that merge axes until both sides move >= 32 elements (128 bytes where it fits) contiguously and the tile holds ~2048 elements, staged through shared memory, read and written in 4-16 byte words where the runs are aligned (extents along the contiguous axes kept to word multiples, leaving a remainder slab, where that widens the words at least twofold) |
//! | small copy | a copy of at most [`SMALL_COPY`] (2^20) elements that would take tiles | [`CopyStep::Elementwise`] | as above: one launch, one round trip, its partly used sectors kept in L2 ([`CopyPlan::schedule_with_small_copy`] sets another bound) |
//! | few tiles | a whole copy whose one tile launch would hold fewer than [`FEW_TILES_PER_SM`] tiles an SM (one and a half a block of the persistent grid; 792 on 132 SMs, [`ScheduleBounds::for_sms`]) | [`CopyStep::Elementwise`] | as above (off with the small-copy bound 0) |
//! | mid-size copy | a copy of at most 2^22 elements that would take tiles, whose elementwise warps read under 0.8 sectors an element (four warps sampled) or whose tiles would leave remainder slabs of more than 2^18 elements | [`CopyStep::Elementwise`] | as above (off with the small-copy bound 0) |
//! | fallback | a tile would not fit (offsets past 32 bits, more than 8 tile or grid axes) | [`CopyStep::Elementwise`] | as above |
//!
//! A tile's extents need not divide the axes: the tiled part covers whole tiles and the
//! remainder slabs are planned again as copies of their own (their own remainders then
//! run elementwise); a slab of 2^18 elements or fewer runs elementwise whole, as one
//! launch.

use crate::plan::CopyPlan;
use crate::sectors::source_sectors;
use crate::tile::{tile, TilePlan};
use smallvec::SmallVec;

/// One kernel launch (or memcpy) of a scheduled copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyStep {
    /// A gap-free run of `plan.volume` elements at the plan's offsets.
    Memcpy(CopyPlan),
    /// One thread per element (the plan may have been widened to larger words).
    Elementwise(CopyPlan),
    /// 32 x 32 shared-memory tiles over axes `a` (the source's contiguous one) and `l`
    /// (the destination's); other axes are batches.
    Transpose {
        /// The copy.
        plan: CopyPlan,
        /// The source's unit-stride axis.
        a: usize,
        /// The destination's unit-stride axis (the last).
        l: usize,
        /// Bytes each thread moves per access: the itemsize, or 4 (1- and 2-byte
        /// elements) or 8 (4-byte ones) where every such word stays aligned.
        word: usize,
    },
    /// Tiles over several axes staged through shared memory.
    Tiled(Box<TilePlan>),
    /// A transpose with one short side (2 to 16 elements) of 1- or 2-byte elements, over
    /// axes `a` (the source's unit-stride one) and `l` (the destination's): channel
    /// layouts ([`CopyPlan::channel_transpose_axes`]); other axes are batches.
    Channels {
        /// The copy.
        plan: CopyPlan,
        /// The source's unit-stride axis.
        a: usize,
        /// The destination's unit-stride axis (the last).
        l: usize,
    },
    /// A batch of small matrices transposed, many per tile: both sides one dense run
    /// ([`CopyPlan::small_matrix_axes`]).
    SmallMatrices {
        /// The copy.
        plan: CopyPlan,
        /// The source's unit-stride axis (the destination's rows).
        a: usize,
        /// The destination's unit-stride axis (the last).
        l: usize,
    },
    /// Rows contiguous on both sides that start at different alignments, counted in
    /// bytes ([`CopyPlan::shifted_rows`]): each row moves as runs of 16-byte aligned
    /// chunks, realigned with funnel shifts; other axes are batches.
    Rows {
        /// The copy in bytes (itemsize 1).
        plan: CopyPlan,
    },
    /// A short pattern written over and over into a contiguous destination
    /// ([`CopyPlan::repeated_pattern`]): gathered into shared memory once per block, the
    /// destination written as one run of aligned 16-byte chunks.
    Repeat {
        /// The copy.
        plan: CopyPlan,
        /// Its leading axes that the source broadcasts (the others hold the pattern).
        outer: usize,
    },
    /// Rows of 1- or 2-byte elements read backwards ([`CopyPlan::reversed_rows`]): each
    /// row moves in aligned 16-byte chunks, realigned and reversed in registers; other
    /// axes are batches.
    ReversedRows {
        /// The copy (its last axis: stride -1 in the source, 1 in the destination).
        plan: CopyPlan,
    },
    /// Every pixel's channels reversed (RGB -> BGR), 1- or 2-byte elements
    /// ([`CopyPlan::reversed_channel_axes`]); other axes are batches.
    ReversedChannels {
        /// The copy.
        plan: CopyPlan,
        /// The pixel axis (dense on both sides).
        pixels: usize,
        /// The channel axis (stride -1 in the source, 1 in the destination).
        channels: usize,
    },
}

/// The schedule sees base addresses only through their remainders modulo this many
/// bytes: word widths follow alignments of up to 16 bytes and the gathered-reads test
/// counts 32-byte sectors, so `schedule(d, s)` equals `schedule(d + i * 256, s + j * 256)`
/// for every `i` and `j`. An engine can keep a schedule for a plan and the two
/// remainders, and use it again at other addresses.
pub const SCHEDULE_ADDRESS_PERIOD: u64 = 256;

impl CopyPlan {
    /// The steps that run this copy on a GPU, given the two base addresses (offset 0 of
    /// each side; word widths depend on their alignment, and nothing else does: see
    /// [`SCHEDULE_ADDRESS_PERIOD`]). See the module table.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, CopyStep, Order, StridedLayout};
    /// // NHWC -> NCHW with C = 3, bytes: channels out of pixels, the channel kernel.
    /// let src = StridedLayout::dense(&[8, 64, 64, 3], 1, Order::C)?.permuted(&[0, 3, 1, 2])?;
    /// let dst = StridedLayout::dense(&[8, 3, 64, 64], 1, Order::C)?;
    /// let steps = CopyPlan::new(&dst, &src)?.schedule(0, 0);
    /// assert!(matches!(steps[0], CopyStep::Channels { .. }));
    /// // The same with 8-byte elements: both fast axes are short, so tiles merge axes
    /// // (of a copy past `SMALL_COPY` elements).
    /// let src = StridedLayout::dense(&[512, 64, 64, 3], 8, Order::C)?.permuted(&[0, 3, 1, 2])?;
    /// let dst = StridedLayout::dense(&[512, 3, 64, 64], 8, Order::C)?;
    /// let steps = CopyPlan::new(&dst, &src)?.schedule(0, 0);
    /// assert!(matches!(steps[0], CopyStep::Tiled(_)));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn schedule(&self, dst_ptr: u64, src_ptr: u64) -> SmallVec<[CopyStep; 4]> {
        self.schedule_with_small_copy(dst_ptr, src_ptr, SMALL_COPY)
    }

    /// [`schedule`](Self::schedule) with `small_copy` elements in place of
    /// [`SMALL_COPY`]: a whole copy of at most that many elements that would take
    /// multi-axis tiles runs as one elementwise launch. 0 keeps tiles for every copy that
    /// takes them, whatever its size (tests of the tile kernel use small copies).
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, CopyStep, Order, StridedLayout};
    /// // A 5-D permute of 8^5 f32: small, so elementwise; tiled when told so.
    /// let src = StridedLayout::dense(&[8; 5], 4, Order::C)?.permuted(&[4, 2, 0, 3, 1])?;
    /// let dst = StridedLayout::dense(src.shape(), 4, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// assert!(matches!(plan.schedule(0, 0)[..], [CopyStep::Elementwise(_)]));
    /// assert!(matches!(plan.schedule_with_small_copy(0, 0, 0)[0], CopyStep::Tiled(_)));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn schedule_with_small_copy(
        &self,
        dst_ptr: u64,
        src_ptr: u64,
        small_copy: usize,
    ) -> SmallVec<[CopyStep; 4]> {
        let bounds = ScheduleBounds {
            small_copy,
            ..ScheduleBounds::default()
        };
        self.schedule_with_bounds(dst_ptr, src_ptr, bounds)
    }

    /// [`schedule`](Self::schedule) with other bounds for the rules that keep a whole copy
    /// off multi-axis tiles: the small-copy bound and the tiles that fill the GPU's grid.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, CopyStep, Order, ScheduleBounds, StridedLayout, SMALL_COPY};
    /// // A 5-D permute of f64 whose tiles number 540: elementwise on 132 SMs (under 792
    /// // tiles), tiles on 66 (two rounds of a grid of 264 blocks and more).
    /// let src = StridedLayout::dense(&[18, 30, 3, 36, 27], 8, Order::C)?.permuted(&[3, 1, 4, 0, 2])?;
    /// let dst = StridedLayout::dense(src.shape(), 8, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// let on = |sms| plan.schedule_with_bounds(0, 0, ScheduleBounds::for_sms(SMALL_COPY, sms));
    /// assert!(matches!(on(132)[..], [CopyStep::Elementwise(_)]));
    /// assert!(matches!(on(66)[0], CopyStep::Tiled(_)));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn schedule_with_bounds(
        &self,
        dst_ptr: u64,
        src_ptr: u64,
        bounds: ScheduleBounds,
    ) -> SmallVec<[CopyStep; 4]> {
        let mut out = SmallVec::new();
        if self.volume == 0 {
            return out;
        }
        if self.is_contiguous() {
            out.push(CopyStep::Memcpy(self.clone()));
            return out;
        }
        // Tiles, words and remainders do their arithmetic in i64 on offsets within each
        // side's span. No memory spans 2^62 bytes, so a plan reaching further (which no
        // engine runs: they check the plan against their memory first) is one elementwise
        // step, planned without that arithmetic.
        let reasonable = self.byte_bounds().is_ok_and(|(d, s)| {
            (i128::from(d.end) - i128::from(d.start)) < (1 << 62)
                && (i128::from(s.end) - i128::from(s.start)) < (1 << 62)
        });
        if !reasonable {
            out.push(CopyStep::Elementwise(self.clone()));
            return out;
        }
        classify(
            &self.vectorized(dst_ptr, src_ptr),
            (dst_ptr, src_ptr),
            bounds,
            0,
            &mut out,
        );
        out
    }
}

/// A source whose span is a quarter of the bytes written or less (broadcasts, repeats):
/// its reads come from cache whatever their order, so the writes alone decide.
fn source_is_small(p: &CopyPlan) -> bool {
    let span: i128 = (0..p.ndim())
        .map(|k| i128::from(p.shape[k] - 1) * i128::from(p.src_strides[k]).abs())
        .sum::<i128>()
        + 1;
    span * 4 <= p.volume as i128
}

/// The source's fast axis: smallest nonzero |stride|, the later axis on ties.
fn source_fast_axis(p: &CopyPlan) -> Option<usize> {
    (0..p.ndim())
        .filter(|&k| p.src_strides[k] != 0)
        .min_by_key(|&k| (p.src_strides[k].unsigned_abs(), usize::MAX - k))
}

/// Whether both sides' first elements (and so, with whole-element strides, all of them)
/// sit at addresses that are multiples of the itemsize.
fn element_aligned(p: &CopyPlan, dst_ptr: u64, src_ptr: u64) -> bool {
    let isz = p.itemsize as u64;
    let s0 = src_ptr.wrapping_add_signed(p.src_offset * isz as i64);
    let d0 = dst_ptr.wrapping_add_signed(p.dst_offset * isz as i64);
    s0.is_multiple_of(isz) && d0.is_multiple_of(isz)
}

/// Whether the elementwise step of `p` would take the run kernel along rows of
/// contiguous source bytes ([`ElementRuns::source_step`](crate::ElementRuns::source_step)):
/// bytes read forwards or backwards in short rows, not one element a thread as
/// [`elementwise_reads_gather`] models. Tiles are faster for those: on the H200, the
/// twelve copies of nine random sets at 64-128 MiB (none in the published one) that the
/// gather rule kept off tiles ran at a geometric mean of 1.19x on tiles, eleven faster
/// (1.03-1.48x), one 0.95x. Gathered rows (no source step) are what the rule models:
/// tiles lost up to 0.63x there.
fn reads_rows_of_source_bytes(p: &CopyPlan) -> bool {
    p.element_runs().is_some_and(|r| r.source_step().is_some())
}

/// How far one warp of the elementwise kernel may scatter its reads (0: its 32 elements
/// read the fewest 32-byte sectors they can fill, 1: a sector each) for it to take a copy
/// that tiles would otherwise stage.
const GATHER_SPREAD: f64 = 0.4;

/// Source elements that share a sector lie at most this many destination bytes apart in
/// the elementwise kernel's order for it to take such a copy: the sector is still in L2
/// when the second element is read.
const GATHER_REUSE_BYTES: i128 = 1 << 20;

/// Whether the elementwise kernel reads this copy's source almost as tiles would: one
/// warp's 32 consecutive elements (in destination order) read few more 32-byte sectors
/// than they fill ([`GATHER_SPREAD`], averaged over four warps spread over the copy),
/// and elements that share a sector are read close together ([`GATHER_REUSE_BYTES`]).
/// Short source runs that interleave (planes into pixels, `(n, 3, 3)` blocks of wide
/// elements) then need no shared-memory staging, no barrier and no remainder launches.
/// Never for bytes the run kernel reads in rows of contiguous source bytes
/// ([`reads_rows_of_source_bytes`]).
fn elementwise_reads_gather(p: &CopyPlan, src_ptr: u64) -> bool {
    const WARP: i128 = 32;
    // What follows samples the one-element-a-thread kernel; the run kernel's rows of
    // contiguous source bytes read otherwise.
    if reads_rows_of_source_bytes(p) {
        return false;
    }
    let nd = p.ndim();
    let vol = p.volume as i128;
    let isz = p.itemsize as i128;
    if vol < 4 * WARP {
        return false;
    }
    // Along an axis whose source stride is under a sector, neighbours share sectors: the
    // kernel reaches the next one after as many elements as the faster axes hold.
    // Without such an axis every element reads sectors of its own: the widest spread.
    let mut faster: i128 = 1;
    let mut shared = false;
    for k in (0..nd).rev() {
        let s = i128::from(p.src_strides[k]).abs() * isz;
        if s != 0 && s < 32 && p.shape[k] > 1 {
            if faster * isz > GATHER_REUSE_BYTES {
                return false;
            }
            shared = true;
        }
        faster = faster.saturating_mul(i128::from(p.shape[k]));
    }
    // 32 elements fill `itemsize` sectors at best (at least one) and 32 at worst; the
    // four warps may touch `budget` sectors in all.
    let fewest = (WARP * isz / 32).max(1) as f64;
    if !shared || fewest >= WARP as f64 {
        return false;
    }
    let budget = (4.0 * (fewest + GATHER_SPREAD * (WARP as f64 - fewest))) as usize;
    let mut touched = 0usize;
    for quarter in 0..4 {
        let first = (vol * quarter / 4 / WARP * WARP) as usize;
        match source_sectors(p, src_ptr, first, WARP as usize, budget - touched) {
            Some(n) => touched += n,
            None => return false,
        }
    }
    true
}

/// The word transpose's tiles (1- and 2-byte elements whose rows start anywhere) must be
/// at least this full: below it, multi-axis tiles sized to the axes move the copy faster
/// (random cases with a 57-byte side, tiles 45% full: 1.9x; 71% and 64% full: 1.06x and
/// 1.11x).
const WORD_TRANSPOSE_FILL: f64 = 0.8;

/// Elements of a remainder slab at or below which it runs as one elementwise launch
/// rather than as tiles (and their own remainders). A tile launch first builds its tables
/// in shared memory, then makes a round trip to memory per tile a block takes: 2 to 10 µs
/// on the H200 for slabs of 1 to 9 tiles, 6 to 18 µs for 60 to 430. An elementwise launch
/// costs its launch, one round trip and its sectors: at 2^18 elements even one sector per
/// element on both sides (a read sector, a partially written one read and written) is
/// 24 MiB, about 7 µs at an H200's rate, and a slab's runs are seldom that scattered.
/// Measured on the random set (H200): the 37 cases whose slabs are 2^16 elements or fewer
/// ran 1.00-1.10x as fast, none slower; the five with slabs between 2^16 and 2^18,
/// 1.01-1.06x, none slower.
const SMALL_REMAINDER: usize = 1 << 18;

/// Elements of a whole copy at or below which it runs as one elementwise launch where it
/// would otherwise take multi-axis tiles. A tile launch's blocks first build their tables
/// in shared memory and then take one or two tiles each at this size, so the tables and
/// the round trip between them outweigh the tiles' better sectors, and a copy this small
/// (at most 16 MiB a side) keeps its partly used sectors in the 50 MB L2 until their
/// other elements are read. Measured on the H200 (`examples/small_bench.rs`, and the
/// random set at 1-2 and 8-16 MiB a case): every tiled copy of the 1-2 MiB set but one
/// (71 of 72) 1.1-3.2x as fast; of the 8-16 MiB set's tiled copies of 2^20 elements or
/// fewer, 12 of 15 1.06-1.54x, two within 2%, one 0.94x; small many-axis permutes
/// 1.4-2.6x on 19 of 20 (5-D 8^5 f32 9.1 -> 4.8 µs), 0.97x on 16^5 of 16-byte elements.
/// Above 2^20 elements the two split (8-16 MiB cases of 2^20 to 2^22 elements: 26
/// faster elementwise, 13 as tiles, up to 1.9x).
pub const SMALL_COPY: usize = 1 << 20;

/// Elements up to which a whole copy runs elementwise where its warps' reads gather
/// partly ([`MID_GATHER_SHARE`]) or its tiles would leave remainder slabs of tile
/// launches of their own. Measured on the H200 (random sets of 8-16 MiB, `BENCHMARKS.md`):
/// on the published seed 18 of the 19 copies it moves ran faster (1.11-2.0x, one 0.92x),
/// on seed 0x4444 all 7 (1.07-2.38x); past 2^22 elements tiles win more often.
const MID_COPY: usize = 1 << 22;

/// Tiles an SM under which a whole copy's one tile launch runs elementwise instead: one
/// and a half tiles a block of the tile kernel's persistent grid at four blocks an SM.
/// With one tile a block and a second for some, the launch lasts two rounds of tiles, the
/// second nearly empty. Measured on the H200 (132 SMs, so 792 tiles; `BENCHMARKS.md`): of
/// the 8-16 MiB random set's copies past 2^20 elements, the five with 537-783 tiles in one
/// launch ran 1.16-1.58x as fast elementwise, those with 819-1086 within 5% either way,
/// most of those with more faster on tiles; `small_bench`'s f64 (18,30,3,36,27) permute
/// (540 tiles) and 48^4 bytes (768) ran at 0.56x and 0.67x PyTorch's elementwise copy,
/// 1.74x and 1.43x faster elementwise.
pub const FEW_TILES_PER_SM: u64 = 6;

/// [`FEW_TILES_PER_SM`] on a GPU of 132 SMs (H100, H200): the bound [`CopyPlan::schedule`]
/// plans with.
pub const FEW_TILES: u64 = 132 * FEW_TILES_PER_SM;

/// The bounds under which a whole copy that would take multi-axis tiles runs as one
/// elementwise launch instead ([`CopyPlan::schedule_with_bounds`]).
///
/// ```
/// use stridekit_layout::{ScheduleBounds, FEW_TILES, SMALL_COPY};
/// assert_eq!(ScheduleBounds::default(), ScheduleBounds { small_copy: SMALL_COPY, few_tiles: FEW_TILES });
/// // A GPU of 58 SMs: fewer tiles fill its grid.
/// assert_eq!(ScheduleBounds::for_sms(SMALL_COPY, 58).few_tiles, 348);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScheduleBounds {
    /// Elements of a whole copy at or below which it runs elementwise ([`SMALL_COPY`] by
    /// default); 0 keeps tiles for every copy that takes them, whatever its size, and
    /// turns off the rules for mid-size copies and copies of few tiles as well.
    pub small_copy: usize,
    /// Tiles of a whole copy's one tile launch below which it runs elementwise
    /// ([`FEW_TILES`] by default; [`ScheduleBounds::for_sms`] for a given GPU).
    pub few_tiles: u64,
}

impl Default for ScheduleBounds {
    fn default() -> Self {
        ScheduleBounds {
            small_copy: SMALL_COPY,
            few_tiles: FEW_TILES,
        }
    }
}

impl ScheduleBounds {
    /// The bounds for a GPU of `sms` SMs, with the small-copy bound `small_copy`:
    /// [`FEW_TILES_PER_SM`] tiles an SM.
    pub fn for_sms(small_copy: usize, sms: u64) -> Self {
        ScheduleBounds {
            small_copy,
            few_tiles: sms.saturating_mul(FEW_TILES_PER_SM),
        }
    }
}

/// Sectors the elementwise kernel's warps may read, as a share of one per element
/// (averaged over four warps spread over the copy), for [`MID_COPY`].
const MID_GATHER_SHARE: f64 = 0.8;

/// Whether four warps of 32 destination-order elements, spread over the copy, read fewer
/// than `share` of a sector per element.
fn warp_reads_within(p: &CopyPlan, src_ptr: u64, share: f64) -> bool {
    const WARP: usize = 32;
    if p.volume < 4 * WARP {
        return false;
    }
    let budget = (4.0 * share * WARP as f64) as usize;
    let mut touched = 0usize;
    for quarter in 0..4 {
        let first = p.volume * quarter / 4 / WARP * WARP;
        match source_sectors(p, src_ptr, first, WARP, budget - touched) {
            Some(n) => touched += n,
            None => return false,
        }
    }
    touched < budget
}

/// How full the word transpose's tiles are: 128 source bytes along `a` by 128 (bytes) or
/// 64 (halfwords) rows along `l`.
fn word_transpose_fill(p: &CopyPlan, a: usize, l: usize) -> f64 {
    let rows = if p.itemsize == 1 { 128.0 } else { 64.0 };
    let along_l = (p.shape[l] as f64 / rows).min(1.0);
    let along_a = (p.shape[a] as f64 * p.itemsize as f64 / 128.0).min(1.0);
    along_l * along_a
}

/// Appends the steps of `p` to `out`: `depth` 0 for the whole copy, 1 for a remainder
/// slab of its tiles; a whole copy under `bounds` that would take tiles runs elementwise.
fn classify(
    p: &CopyPlan,
    (dst_ptr, src_ptr): (u64, u64),
    bounds: ScheduleBounds,
    depth: usize,
    out: &mut SmallVec<[CopyStep; 4]>,
) {
    if p.volume == 0 {
        return;
    }
    if p.is_contiguous() {
        out.push(CopyStep::Memcpy(p.clone()));
        return;
    }
    if let Some((pixels, channels)) = p.reversed_channel_axes() {
        out.push(CopyStep::ReversedChannels {
            plan: p.clone(),
            pixels,
            channels,
        });
        return;
    }
    if let Some(outer) = p.repeated_pattern() {
        out.push(CopyStep::Repeat {
            plan: p.clone(),
            outer,
        });
        return;
    }
    if p.reversed_rows() {
        out.push(CopyStep::ReversedRows { plan: p.clone() });
        return;
    }
    if let Some(bytes) = p.shifted_rows() {
        out.push(CopyStep::Rows { plan: bytes });
        return;
    }
    if let Some((q, axes)) = p.picked_channel() {
        // One channel out of interleaved pixels, in aligned groups: the channel kernel.
        if q.channel_groups_aligned(axes, dst_ptr, src_ptr) {
            out.push(CopyStep::Channels {
                plan: q,
                a: axes.0,
                l: axes.1,
            });
            return;
        }
    }
    let long = |k: usize| p.shape[k] >= 32 || p.shape[k] as usize * p.itemsize >= 64;
    // The destination's fastest axis along which the source moves (broadcast axes
    // re-read what is already cached).
    let moving = (0..p.ndim()).rev().find(|&k| p.src_strides[k] != 0);
    let shared = match (source_fast_axis(p), moving) {
        (Some(sf), Some(m)) => sf == m && long(m),
        _ => true,
    };
    if shared || source_is_small(p) {
        out.push(CopyStep::Elementwise(p.clone()));
        return;
    }
    if let Some((a, l)) = p.small_matrix_axes() {
        // Its kernel reads whole elements in shared memory.
        if element_aligned(p, dst_ptr, src_ptr) {
            out.push(CopyStep::SmallMatrices {
                plan: p.clone(),
                a,
                l,
            });
            return;
        }
    }
    if let Some((a, l)) = p.tiled_transpose_axes() {
        // Its tiles are 32 words on a side: both axes must fill them, or most threads idle
        // (many-axis permutations of short axes take the multi-axis tiles). It handles its
        // edges in the same launch, where multi-axis tiles need remainder launches.
        let word = p.transpose_word(a, l, dst_ptr, src_ptr);
        let side = 32 * (word / p.itemsize) as i64;
        let filled = p.itemsize > 2
            || word > p.itemsize
            || word_transpose_fill(p, a, l) >= WORD_TRANSPOSE_FILL;
        if p.shape[a] >= side && p.shape[l] >= side && filled {
            out.push(CopyStep::Transpose {
                plan: p.clone(),
                a,
                l,
                word,
            });
            return;
        }
    }
    if let Some((a, l)) = p.channel_transpose_axes() {
        // Its kernels read and write whole elements in shared memory.
        if element_aligned(p, dst_ptr, src_ptr) {
            out.push(CopyStep::Channels {
                plan: p.clone(),
                a,
                l,
            });
            return;
        }
    }
    if elementwise_reads_gather(p, src_ptr) {
        out.push(CopyStep::Elementwise(p.clone()));
        return;
    }
    // The rules that keep a whole copy off tiles (all off with the small-copy bound 0).
    let whole = depth == 0 && bounds.small_copy > 0;
    let mid = whole && p.volume <= MID_COPY;
    if mid && warp_reads_within(p, src_ptr, MID_GATHER_SHARE) {
        // A copy of a few MiB whose warps read partly shared sectors: one elementwise
        // launch, its sectors' other elements read from L2.
        out.push(CopyStep::Elementwise(p.clone()));
        return;
    }
    let small = if depth == 0 {
        bounds.small_copy
    } else {
        SMALL_REMAINDER
    };
    if p.volume <= small {
        // A small copy, or a small remainder slab: one elementwise launch, its own
        // remainders included.
        out.push(CopyStep::Elementwise(p.clone()));
        return;
    }
    match tile(p, dst_ptr, src_ptr) {
        Some((t, rest)) => {
            if mid && rest.iter().any(|r| r.volume > SMALL_REMAINDER) {
                // Tiles that would need launches of their own for the remainders.
                out.push(CopyStep::Elementwise(p.clone()));
                return;
            }
            if whole && t.tiles() < bounds.few_tiles {
                // Fewer tiles than one and a half per block of the persistent grid: most
                // blocks take one tile, some a second, and the launch waits for those.
                out.push(CopyStep::Elementwise(p.clone()));
                return;
            }
            out.push(CopyStep::Tiled(Box::new(t)));
            for r in rest {
                if depth < 1 {
                    classify(&r, (dst_ptr, src_ptr), bounds, depth + 1, out);
                } else if r.volume > 0 {
                    out.push(CopyStep::Elementwise(r));
                }
            }
        }
        None => out.push(CopyStep::Elementwise(p.clone())),
    }
}
