//! The image tile kernel (`image_tile.cu`): byte tiles moved in aligned 4-byte words on
//! both sides through a shared-memory image of their source runs ([`ImageTile`]), where
//! the tile kernel writes them a byte at a time.
//!
//! A tile's image plan (its reads, gather table, interior and edge words) is the same in
//! every tile: it is made once per tile shape and kept in device memory (the runtime's
//! constant tables). The kernel runs where the plan's destination runs are long enough for
//! whole words to dominate (edge words at most an eighth of the written words) and its
//! items fit a thread's registers; elsewhere, and for copies under [`MIN_BYTES`], the tile
//! kernel stays. On the H200, against the tile kernel in the same run, on the seven
//! random-set cases of two seeds it takes (edge shares 0.00-0.10): six at 1.06-1.13x, one
//! at 0.95x; with edge shares of 0.14-0.50 it ran 0.57-0.90x, which is why the rule stops
//! at an eighth (BENCHMARKS.md).

use super::params::TileParams;
use super::{function, resident_blocks, sm_count, Variant};
use crate::error::{driver, invalid, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use stridekit_layout::{ImageTile, TilePlan};

/// Copies of fewer bytes keep the tile kernel (1 MiB).
pub(super) const MIN_BYTES: u64 = 1 << 20;
/// Threads of a block.
const THREADS: usize = 256;
/// Blocks an SM: the registers the kernel is compiled for (`MINB`, at most 80 a thread).
const BLOCKS_PER_SM: u64 = 3;
/// Shared memory a block may take without opting in (48 KiB).
const MAX_SHARED: usize = 48 << 10;

static ENABLED: AtomicBool = AtomicBool::new(true);
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// Turns the image tile kernel for byte tiles on (the default) or off, for measuring what
/// it gains: off, those tiles run on the tile kernel, written a byte at a time.
/// For every thread of the process, from its next copy on; either way each copy is exact.
///
/// ```
/// stridekit::set_image_tiles(false);
/// assert!(!stridekit::image_tiles());
/// stridekit::set_image_tiles(true);
/// ```
pub fn set_image_tiles(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether [`set_image_tiles`] left the image tile kernel on.
pub fn image_tiles() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Launches of the image tile kernel in this process so far (which copies took it).
///
/// ```
/// let before = stridekit::image_tile_launches();
/// assert!(stridekit::image_tile_launches() >= before);
/// ```
pub fn image_tile_launches() -> u64 {
    LAUNCHES.load(Ordering::Relaxed)
}

/// `ImageArgs` of `image_tile.cu`: device addresses of the table's parts, then counts.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct ImageArgs {
    rrel: u64,
    rmeta: u64,
    irel: u64,
    ibase: u64,
    erel: u64,
    emeta: u64,
    dtab: u64,
    nread: i32,
    ninner: i32,
    nedge: i32,
    ndtab: i32,
    img_words: i32,
    pad: i32,
}

// SAFETY: plain C struct matching `ImageArgs` in image_tile.cu: seven 8-byte addresses,
// then six 4-byte fields (80 bytes, no padding).
unsafe impl DeviceRepr for ImageArgs {}

/// What a launch needs of a tile's image plan besides its table: kept in the table's
/// header ([`ImageMeta::header`]), so a launch reads it back without the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImageMeta {
    /// Items: reads, interior words, edge words; table entries; image words.
    pub counts: [usize; 5],
    /// Read, interior and edge words a thread holds (the kernel's `UR`, `UI`, `UE`).
    pub unroll: [usize; 3],
    /// The lowest and highest source byte a tile's loads reach, from its base, before
    /// rounding to aligned words.
    pub reach: (i64, i64),
}

impl ImageMeta {
    /// Dynamic shared memory of a block: the image, then the table.
    fn shared_bytes(&self) -> usize {
        4 * self.counts[4] + 2 * self.counts[3]
    }

    /// The table's length in words: two a read, interior and edge item, then the gather
    /// table two entries a word.
    fn table_words(&self) -> usize {
        let [nread, ninner, nedge, ndtab, _] = self.counts;
        2 * (nread + ninner + nedge) + ndtab.div_ceil(2)
    }

    fn header(&self) -> [u32; 8] {
        let c = |i: usize| self.counts[i] as u32;
        let [ur, ui, ue] = self.unroll;
        [
            c(0),
            c(1),
            c(2),
            c(3),
            c(4),
            (ur | ui << 8 | ue << 16) as u32,
            self.reach.0 as i32 as u32,
            self.reach.1 as i32 as u32,
        ]
    }

    fn from_header(h: &[u32; 8]) -> ImageMeta {
        let u = h[5] as usize;
        ImageMeta {
            counts: [0, 1, 2, 3, 4].map(|i| h[i] as usize),
            unroll: [u & 0xff, (u >> 8) & 0xff, (u >> 16) & 0xff],
            reach: (h[6] as i32 as i64, h[7] as i32 as i64),
        }
    }
}

/// A tile's image plan as the kernel reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Packed {
    /// `rrel, rmeta, irel, ibase, erel, emeta` (one word an item each), then the gather
    /// table two 16-bit entries a word.
    pub words: Vec<u32>,
    pub meta: ImageMeta,
}

/// The kernel's variants: read, interior and edge words a thread holds (`UR`, `UI`,
/// `UE`). Eight reads beside eight interior or four edge words spill registers at three
/// blocks an SM (ptxas, sm_90: 28-88 bytes), so those are not built.
pub(super) fn variants() -> impl Iterator<Item = [usize; 3]> {
    [4usize, 8].into_iter().flat_map(|ur| {
        [4usize, 8].into_iter().flat_map(move |ui| {
            [1usize, 2, 4]
                .into_iter()
                .map(move |ue| [ur, ui, ue])
                .filter(|&[ur, ui, ue]| ur == 4 || (ui == 4 && ue <= 2))
        })
    })
}

/// The smallest of `choices` holding `n`.
fn unroll_of(n: usize, choices: &[usize]) -> Option<usize> {
    choices.iter().copied().find(|&c| n <= c)
}

/// `t`'s image plan packed for the kernel, or `None` where the image tile does not take
/// it: not a byte tile written a byte at a time (the tile kernel writes wider words
/// faster), no image plan ([`ImageTile::of`]), edge words more than an eighth of the
/// written words ([`ImageTile::whole_words_dominate`]: short destination runs, where the
/// tile kernel is faster), more items a thread than the kernel's variants hold, or more
/// shared memory than a block takes without opting in.
pub(crate) fn pack(t: &TilePlan) -> Option<Packed> {
    if t.itemsize != 1 || t.write_word != 1 {
        return None;
    }
    let img = ImageTile::of(t)?;
    if !img.whole_words_dominate() {
        return None;
    }
    let written = img.interior.len() + img.edges.len();
    let (r, i, e) = img.per_thread(THREADS);
    let unroll = [
        unroll_of(r, &[4, 8])?,
        unroll_of(i, &[4, 8])?,
        unroll_of(e.max(1), &[1, 2, 4])?,
    ];
    if !variants().any(|v| v == unroll) {
        return None;
    }
    let mut words = Vec::with_capacity(2 * (img.reads.len() + written) + img.table.len() / 2 + 1);
    words.extend(img.reads.iter().map(|r| r.rel as u32));
    words.extend(
        img.reads
            .iter()
            .map(|r| r.word as u32 | (r.bytes as u32) << 16),
    );
    words.extend(img.interior.iter().map(|w| w.rel as u32));
    words.extend(img.interior.iter().map(|w| w.table as u32));
    words.extend(img.edges.iter().map(|w| w.rel as u32));
    for w in &img.edges {
        // table | first << 15 | (left + 8) << 16: the kernel's 15-bit table field.
        let left = u32::try_from(w.left + 8).ok().filter(|&l| l < 1 << 16)?;
        if w.table >= 1 << 15 {
            return None;
        }
        words.push(w.table as u32 | (w.first as u32) << 15 | left << 16);
    }
    words.extend(
        img.table
            .chunks(2)
            .map(|c| c[0] as u32 | (c.get(1).copied().unwrap_or(0) as u32) << 16),
    );
    let reach = (
        img.reads.iter().map(|r| r.rel as i64).min()?,
        img.reads
            .iter()
            .map(|r| r.rel as i64 + r.bytes as i64 - 1)
            .max()?,
    );
    let meta = ImageMeta {
        counts: [
            img.reads.len(),
            img.interior.len(),
            img.edges.len(),
            img.table.len(),
            img.image_words,
        ],
        unroll,
        reach,
    };
    (meta.shared_bytes() <= MAX_SHARED).then_some(Packed { words, meta })
}

/// The key of `t`'s tile shape: what its image plan depends on.
fn key(t: &TilePlan) -> Vec<i64> {
    let mut k = Vec::with_capacity(1 + 4 * t.extents.len());
    k.push(t.extents.len() as i64);
    k.extend(t.extents.iter().copied());
    k.extend(t.src_strides.iter().copied());
    k.extend(t.dst_strides.iter().copied());
    k.extend(t.src_order.iter().map(|&o| o as i64));
    k
}

/// Whether every aligned word the kernel loads lies inside `[lo, hi)` for tiles whose
/// first source byte is at `src0`: the lowest and highest bytes over all tiles, rounded
/// out to their aligned words.
fn loads_inside(t: &TilePlan, reach: (i64, i64), src0: u64, (lo, hi): (u64, u64)) -> bool {
    let mut span = (reach.0 as i128, reach.1 as i128);
    for (&n, &step) in t.counts.iter().zip(&t.src_steps) {
        let far = (n as i128 - 1) * step as i128;
        span.0 += far.min(0);
        span.1 += far.max(0);
    }
    let first = (src0 as i128 + span.0) & !3;
    let last = ((src0 as i128 + span.1) & !3) + 4;
    first >= lo as i128 && last <= hi as i128
}

/// Runs `t` (parameters `p`) on the image tile kernel between tiles' first elements
/// `dst0` and `src0`, whose source memory spans `src_bounds`. `Ok(false)`: the kernel does
/// not take this copy (off, too small, no image plan, loads past the source's memory, a
/// capture with no table made yet, or a full table cache); run it another way.
pub(super) fn launch(
    t: &TilePlan,
    p: &TileParams,
    (dst0, src0): (u64, u64),
    src_bounds: (u64, u64),
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    const OP: &str = "strided copy kernel";
    if !image_tiles() || t.itemsize != 1 || t.write_word != 1 {
        return Ok(false);
    }
    let bytes = (t.volume() as u64).saturating_mul(t.tiles());
    if bytes < MIN_BYTES {
        return Ok(false);
    }
    // A capture takes only tables made before it (an upload is not captured).
    let capturing = crate::copy::captured::is_capturing(OP, stream)?;
    let rt = Runtime::of_stream(OP, stream)?;
    let Some(table) = rt.table(OP, &key(t), !capturing, || {
        pack(t).map(|pk| (pk.words, pk.meta.header()))
    })?
    else {
        return Ok(false);
    };
    let meta = ImageMeta::from_header(table.header());
    if !loads_inside(t, meta.reach, src0, src_bounds) {
        return Ok(false);
    }
    let [nread, ninner, nedge, ndtab, img_words] = meta.counts;
    let need = meta.table_words();
    if table.words() != need {
        return Err(invalid(
            OP,
            format!(
                "the image table holds {} words where its counts need {need}",
                table.words()
            ),
        ));
    }
    let [ur, ui, ue] = meta.unroll;
    let variant = Variant::Image { ur, ui, ue };
    let f = function(stream, 1, variant)?;
    let shared = meta.shared_bytes();
    let resident = resident_blocks(stream, &f, 1, variant, shared)?;
    let blocks = t
        .tiles()
        .min(sm_count(stream)?.max(1) * resident.min(BLOCKS_PER_SM)) as u32;
    let at = |words: usize| table.ptr() + 4 * words as u64;
    let args = ImageArgs {
        rrel: at(0),
        rmeta: at(nread),
        irel: at(2 * nread),
        ibase: at(2 * nread + ninner),
        erel: at(2 * nread + 2 * ninner),
        emeta: at(2 * nread + 2 * ninner + nedge),
        dtab: at(2 * (nread + ninner + nedge)),
        nread: nread as i32,
        ninner: ninner as i32,
        nedge: nedge as i32,
        ndtab: ndtab as i32,
        img_words: img_words as i32,
        pad: 0,
    };
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: shared as u32,
    };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(p).arg(&args);
    // SAFETY: the kernel's parameters are (const unsigned char*, unsigned char*,
    // TileParams, ImageArgs), in that order. The table is the image plan of this tile
    // shape, whole in device memory for the process (checked against its counts above);
    // a thread reads only items below those counts. Every written byte is one of a tile's
    // destination bytes (interior words are whole destination runs; edge words are
    // written a byte at a time inside their run), and the tiles partition the plan's
    // elements inside memory the callers' views validated. Loads are the aligned words
    // holding the tiles' source bytes, inside the source's memory (checked above).
    // Shared memory is the image and the table the kernel carves it into.
    unsafe { launch.launch(cfg) }.map_err(driver(OP, "cuLaunchKernel"))?;
    LAUNCHES.fetch_add(1, Ordering::Relaxed);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::tiled::first_tiled_step;
    use super::*;
    use stridekit_layout::StridedLayout;

    /// Random-set case 106 with 4 in place of its 21287: a 5-D byte permute gathering runs
    /// of 3 source bytes into one dense destination run a tile.
    fn case_106() -> TilePlan {
        let shape = [49, 3, 4, 3, 9];
        let src = StridedLayout::new(&shape, &[27, 1, 4131, 1377, 3], 1).unwrap();
        let dst = StridedLayout::new(&shape, &[1, 147, 3969, 49, 441], 1).unwrap();
        first_tiled_step(&dst, &src)
    }

    #[test]
    fn packs_a_byte_permute_with_long_destination_runs() {
        let t = case_106();
        let pk = pack(&t).unwrap_or_else(|| {
            panic!(
                "{t:?} {:?}",
                ImageTile::of(&t).map(|i| (i.interior.len(), i.edges.len()))
            )
        });
        let img = ImageTile::of(&t).unwrap();
        assert_eq!(pk.meta.counts[0], img.reads.len());
        assert_eq!(
            pk.words.len(),
            2 * (pk.meta.counts[0] + pk.meta.counts[1] + pk.meta.counts[2])
                + pk.meta.counts[3].div_ceil(2)
        );
        // The gather table's entries, two a word, as the kernel reads them.
        let at = 2 * (pk.meta.counts[0] + pk.meta.counts[1] + pk.meta.counts[2]);
        for (j, &e) in img.table.iter().enumerate() {
            assert_eq!((pk.words[at + j / 2] >> (16 * (j % 2))) as u16, e);
        }
        assert_eq!(pk.words.len(), pk.meta.table_words());
        // The header carries counts, unroll and reach whole.
        assert_eq!(ImageMeta::from_header(&pk.meta.header()), pk.meta);
    }

    #[test]
    fn short_destination_runs_and_wider_elements_keep_the_tile_kernel() {
        // A permute into rows of 3 bytes, 4 apart: every written word an edge word.
        let src = StridedLayout::new(&[50, 30, 3], &[1, 150, 50], 1).unwrap();
        let dst = StridedLayout::new(&[50, 30, 3], &[120, 4, 1], 1).unwrap();
        let mut t = first_tiled_step(&dst, &src);
        assert!(ImageTile::of(&t).is_some());
        assert!(
            pack(&t).is_none(),
            "{:?}",
            ImageTile::of(&t).map(|i| i.edges.len())
        );
        t.itemsize = 2;
        assert!(pack(&t).is_none());
    }

    #[test]
    fn the_read_word_does_not_matter_the_written_word_does() {
        let mut t = case_106();
        let plain = pack(&t).unwrap();
        // Read in 16-byte words, still written a byte at a time: the same image plan.
        t.read_word = 16;
        assert_eq!(pack(&t), Some(plain));
        // Written in 4-byte words: the tile kernel's.
        t.write_word = 4;
        assert_eq!(pack(&t), None);
    }

    #[test]
    fn loads_stay_inside_the_source_memory() {
        let t = case_106();
        let pk = pack(&t).unwrap();
        // The source's highest byte: 48 * 27 + 2 + 3 * 4131 + 2 * 1377 + 8 * 3.
        let last = 16469u64;
        let base = 1 << 20;
        // Its aligned word ends 3 bytes past it (16469 = 4 * 4117 + 1).
        assert!(loads_inside(
            &t,
            pk.meta.reach,
            base,
            (base, base + last + 3)
        ));
        assert!(!loads_inside(
            &t,
            pk.meta.reach,
            base,
            (base, base + last + 2)
        ));
        // Shifted by one byte, the first byte's aligned word starts a byte before it.
        assert!(loads_inside(
            &t,
            pk.meta.reach,
            base + 1,
            (base, base + last + 7)
        ));
        assert!(!loads_inside(
            &t,
            pk.meta.reach,
            base + 1,
            (base + 1, base + last + 7)
        ));
    }
}
