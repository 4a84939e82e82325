//! The runs of a multi-axis tile ([`TileRuns`]): how a tile whose runs start at any
//! alignment moves as aligned 16-byte chunks on both sides, and when that beats words.

use crate::tile::TilePlan;

/// Bytes a run must hold on each side for a tile to move as chunks: two whole chunks'
/// worth, so that most of a destination run leaves in whole 16-byte stores.
pub const RUN_MIN_BYTES: usize = 32;

/// Chunks (source, whole destination and edge ones) each of a block's 256 threads takes
/// per tile at most.
const PER_THREAD: usize = 4;

/// Shared memory a block of the run kernel may use.
const RUN_SHARED_BUDGET: usize = 40 * 1024;

/// A tile moved run by run (`tile_runs.cu`): each source run read as the aligned 16-byte
/// chunks that cover it into a slot of a shared-memory image, each destination run written
/// as aligned 16-byte chunks gathered from it through a table of one entry per element.
///
/// Runs are the tile's leading axes that follow each other in memory: the source's in
/// [`TilePlan::src_order`] (an axis the source walks backwards read from its far end, as
/// [`TilePlan::read_order`] does), the destination's in destination order. A tile's runs
/// may start anywhere: a source run of `n` bytes at address `a` takes the chunks from
/// `a & !15` up to `a + n`, at most [`chunk_slots`](Self::chunk_slots) of them; its slot
/// leaves one chunk spare, so that every byte sits at its table entry plus the tile's source
/// address mod 16. A destination run of `n` elements whose first is `e` elements past a
/// 16-byte boundary holds whole chunks 1 to [`whole_chunks`](Self::whole_chunks) whatever
/// `e` is; chunks 0 and the two after the last whole one hold its ends.
///
/// ```
/// use stridekit_layout::{CopyPlan, CopyStep, Order, StridedLayout};
/// // Bytes of a (3, 45, 64, 4096) array into axis order (2, 3, 0, 1) of 135-byte rows
/// // 138 bytes apart: runs of 64 bytes in, 135 out, starting anywhere.
/// let src = StridedLayout::dense(&[3, 45, 64, 4096], 1, Order::C)?;
/// let dst = StridedLayout::dense(&[64, 4096, 46, 3], 1, Order::C)?
///     .sliced(stridekit_layout::s![.., .., 0..45, ..])?
///     .permuted(&[3, 2, 0, 1])?;
/// let plan = CopyPlan::new(&dst, &src)?;
/// let steps = plan.schedule(0, 0);
/// let CopyStep::Tiled(t) = &steps[0] else { panic!("{steps:?}") };
/// let runs = t.runs().expect("both sides move runs of 32 bytes or more");
/// assert_eq!((runs.src_run * t.itemsize, runs.dst_run * t.itemsize), (64, 135));
/// assert_eq!(runs.whole_chunks, 7); // 135 bytes: chunks 1 to 7 whole at any alignment
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileRuns {
    /// Elements of a source run.
    pub src_run: usize,
    /// Elements of a destination run.
    pub dst_run: usize,
    /// Source runs a tile.
    pub src_runs: usize,
    /// Destination runs a tile.
    pub dst_runs: usize,
    /// Aligned 16-byte chunks a source run's cover may take.
    pub chunk_slots: usize,
    /// Bytes of a source run's slot in the image: one chunk more than its cover takes.
    pub slot_bytes: usize,
    /// Chunks every destination run holds whole, whatever its alignment (chunks 1 to this).
    pub whole_chunks: usize,
    /// Bytes of a tile's image (all its source slots).
    pub image_bytes: usize,
    /// Tiles a block moves at once (up to [`RUN_GROUP`]): as many as the per-thread limits
    /// and the shared-memory budget allow, so that enough bytes are in flight per block.
    pub group: usize,
    /// Table entries a destination run: `dst_run` or more, 2 mod 4 (an odd number of 4-byte
    /// banks), so that neighbouring lanes, which gather the same chunk of neighbouring runs,
    /// read different banks.
    pub row_entries: usize,
}

/// The most tiles a block of the run kernel moves at once.
pub const RUN_GROUP: usize = 8;

impl TileRuns {
    /// Bytes of shared memory a block needs: a group's images, the table (a row of 2-byte
    /// entries a destination run, a 16-byte multiple in all), each source run's start and
    /// each destination run's offset (i32).
    pub fn shared_bytes(&self) -> usize {
        self.group * self.image_bytes
            + (2 * self.dst_runs * self.row_entries).next_multiple_of(16)
            + 4 * (self.src_runs + self.dst_runs)
    }
}

impl TilePlan {
    /// The tile moved run by run where that is how it moves fastest, else `None`: elements
    /// of 1 to 8 bytes, a side whose words are narrower than 16 bytes, runs of at least
    /// [`RUN_MIN_BYTES`] on both sides, and a tile within the run kernel's limits (a table
    /// entry and a run's row within 16 bits, at most 4 chunks of each kind a thread, the
    /// shared-memory budget).
    pub fn runs(&self) -> Option<TileRuns> {
        let isz = self.itemsize;
        if !matches!(isz, 1 | 2 | 4 | 8) {
            return None;
        }
        if self.read_word * isz >= 16 && self.write_word * isz >= 16 {
            return None;
        }
        let (src_run, dst_run) = (self.src_run(), self.dst_run());
        if src_run * isz < RUN_MIN_BYTES || dst_run * isz < RUN_MIN_BYTES {
            return None;
        }
        let volume = self.volume();
        let chunk = 16 / isz;
        let chunk_slots = (15 + src_run * isz).div_ceil(16);
        let slot_bytes = 16 * (chunk_slots + 1);
        let (src_runs, dst_runs) = (volume / src_run, volume / dst_run);
        let whole_chunks = (dst_run / chunk).saturating_sub(1);
        let image_bytes = src_runs.checked_mul(slot_bytes)?;
        let most = 256 * PER_THREAD;
        let per_tile = (src_runs * chunk_slots)
            .max(dst_runs * whole_chunks)
            .max(dst_runs * 3);
        let mut runs = TileRuns {
            src_run,
            dst_run,
            src_runs,
            dst_runs,
            chunk_slots,
            slot_bytes,
            whole_chunks,
            image_bytes,
            group: (most / per_tile.max(1)).min(RUN_GROUP),
            row_entries: dst_run + (2 + 4 - dst_run % 4) % 4,
        };
        while runs.group > 1 && runs.shared_bytes() > RUN_SHARED_BUDGET {
            runs.group -= 1;
        }
        let fits = volume < 1 << 16
            && dst_runs * runs.row_entries < 1 << 16
            && image_bytes + 16 < 1 << 16
            && per_tile <= most
            && runs.shared_bytes() <= RUN_SHARED_BUDGET;
        fits.then_some(runs)
    }

    /// Elements of a source run: the leading axes of [`src_order`](Self::src_order) that
    /// follow each other in memory (either direction: a backward axis is read from its far
    /// end).
    fn src_run(&self) -> usize {
        let mut run = 1i64;
        for &k in &self.src_order {
            let e = self.extents[k];
            if e == 1 {
                continue;
            }
            if self.src_strides[k].abs() != run {
                break;
            }
            run *= e;
        }
        run as usize
    }

    /// Elements of a destination run: the leading tile axes (destination order) that follow
    /// each other upwards in memory.
    fn dst_run(&self) -> usize {
        let mut run = 1i64;
        for (&e, &s) in self.extents.iter().zip(&self.dst_strides) {
            if e == 1 {
                continue;
            }
            if s != run {
                break;
            }
            run *= e;
        }
        run as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CopyPlan, CopyStep, Order, StridedLayout};

    /// The tiled steps of `dst <- src` at base addresses `(dptr, sptr)`.
    fn tiles(dst: &StridedLayout, src: &StridedLayout, dptr: u64, sptr: u64) -> Vec<TilePlan> {
        CopyPlan::new(dst, src)
            .expect("plan")
            .schedule(dptr, sptr)
            .into_iter()
            .filter_map(|s| match s {
                CopyStep::Tiled(t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// What the run kernel does to one tile, byte for byte: source runs into their slots
    /// through the aligned chunks covering them (at the tile's real source address), then
    /// destination runs out through whole and edge chunks (at its real destination address).
    fn replay(t: &TilePlan, r: &TileRuns, src: &[u8], sbase: u64, dst: &mut [u8], dbase: u64) {
        let isz = t.itemsize;
        let reads = t.read_order();
        let writes = t.write_order();
        let lowest = reads.iter().map(|&(s, _)| s).min().unwrap_or(0);
        let mut table = vec![usize::MAX; t.volume()];
        let mut first = vec![0i64; r.src_runs];
        for (i, &(s, j)) in reads.iter().enumerate() {
            let (run, b) = (i / r.src_run, i % r.src_run);
            let start = s - lowest - b as i64;
            if b == 0 {
                first[run] = start;
            }
            assert_eq!(start, first[run], "a source run is contiguous");
            table[j] = run * r.slot_bytes + ((start as usize * isz) & 15) + b * isz;
        }
        assert!(
            table.iter().all(|&p| p != usize::MAX),
            "every element has an entry"
        );
        let mut image = vec![0u8; r.image_bytes];
        let mut written = vec![false; r.image_bytes];
        for tile in 0..t.tiles() {
            let (s0, d0) = t.tile_offsets(tile);
            let ts = sbase + ((s0 + lowest) as usize * isz) as u64; // the tile's lowest byte
            let t15 = (ts & 15) as usize;
            written.iter_mut().for_each(|w| *w = false);
            for (run, &f) in first.iter().enumerate() {
                let a = ts + f as u64 * isz as u64;
                let a15 = (a & 15) as usize;
                for k in 0..r.chunk_slots {
                    if 16 * k >= a15 + r.src_run * isz {
                        continue;
                    }
                    let at = run * r.slot_bytes + ((f as usize * isz) & 15) + 16 * k + t15 - a15;
                    assert!(at % 16 == 0 && at + 16 <= r.image_bytes, "slot {at}");
                    for m in 0..16 {
                        let addr = a - a15 as u64 + (16 * k + m) as u64;
                        if addr >= a && addr < a + (r.src_run * isz) as u64 {
                            image[at + m] = src[(addr - sbase) as usize];
                            written[at + m] = true;
                        }
                    }
                }
            }
            for q in 0..r.dst_runs {
                let d = dbase + ((d0 + writes[q * r.dst_run]) as usize * isz) as u64;
                let e = (d & 15) as usize / isz;
                let chunk = 16 / isz;
                let kinds = (1..=r.whole_chunks).chain([0, r.whole_chunks + 1, r.whole_chunks + 2]);
                for k in kinds {
                    for m in 0..chunk {
                        let i = (k * chunk + m) as i64 - e as i64;
                        let whole = (1..=r.whole_chunks).contains(&k);
                        if whole {
                            assert!(
                                i >= 0 && (i as usize) < r.dst_run,
                                "whole chunk {k} at e {e}"
                            );
                        }
                        if i < 0 || i as usize >= r.dst_run {
                            continue;
                        }
                        let p = table[q * r.dst_run + i as usize] + t15;
                        // The chunk's address plus the element's place in it (the chunk may
                        // start before the buffer; the element is inside it).
                        let at = (d as i64 - (d & 15) as i64 + 16 * k as i64 + (m * isz) as i64
                            - dbase as i64) as usize;
                        assert_eq!(at, (d - dbase) as usize + i as usize * isz);
                        for b in 0..isz {
                            assert!(
                                written[p + b],
                                "image byte {} read before it was loaded",
                                p + b
                            );
                            dst[at + b] = image[p + b];
                        }
                    }
                }
            }
        }
    }

    /// The plain copy a tile plan describes.
    fn reference(t: &TilePlan, src: &[u8], dst: &mut [u8]) {
        let isz = t.itemsize;
        let (reads, writes) = (t.read_order(), t.write_order());
        for tile in 0..t.tiles() {
            let (s0, d0) = t.tile_offsets(tile);
            for &(s, j) in &reads {
                let (from, to) = ((s0 + s) as usize * isz, (d0 + writes[j]) as usize * isz);
                dst[to..to + isz].copy_from_slice(&src[from..from + isz]);
            }
        }
    }

    /// Layout pairs whose tiles move runs of 32+ bytes on both sides, at every alignment.
    #[test]
    fn replayed_run_kernel_copies_exactly_at_every_alignment() {
        let cases: Vec<(StridedLayout, StridedLayout)> = vec![
            // Bytes: 135-byte rows 138 apart out, 64-byte source runs in.
            (
                StridedLayout::dense(&[3, 45, 64, 40], 1, Order::C).unwrap(),
                StridedLayout::dense(&[64, 40, 46, 3], 1, Order::C)
                    .unwrap()
                    .sliced(crate::s![.., .., 0..45, ..])
                    .unwrap()
                    .permuted(&[3, 2, 0, 1])
                    .unwrap(),
            ),
            // Halfwords, a backward source axis and a padded destination.
            (
                StridedLayout::dense(&[33, 7, 50], 2, Order::C)
                    .unwrap()
                    .sliced(crate::s![.., .., ..;-1])
                    .unwrap(),
                StridedLayout::dense(&[50, 35, 7], 2, Order::C)
                    .unwrap()
                    .sliced(crate::s![.., 0..33, ..])
                    .unwrap()
                    .permuted(&[1, 2, 0])
                    .unwrap(),
            ),
        ];
        let mut tried = 0;
        for (src, dst) in &cases {
            let (ssz, dsz) = (
                src.required_size_in_bytes().unwrap(),
                dst.required_size_in_bytes().unwrap(),
            );
            let input: Vec<u8> = (0..ssz + 64).map(|i| (i * 131 % 251) as u8).collect();
            for (sa, da) in [(0u64, 0u64), (1, 5), (6, 3), (15, 14), (8, 0), (3, 12)] {
                // Element-aligned, as every view's elements are.
                let isz = src.itemsize() as u64;
                let (sbase, dbase) = (4096 + sa * isz % 16, 8192 + da * isz % 16);
                for t in tiles(dst, src, dbase, sbase) {
                    let Some(r) = t.runs() else { continue };
                    tried += 1;
                    let mut want = vec![0xa5u8; dsz + 64];
                    let mut got = want.clone();
                    reference(&t, &input, &mut want);
                    replay(&t, &r, &input, sbase, &mut got, dbase);
                    assert!(want == got, "tile {t:?} at alignments ({sa}, {da})");
                }
            }
        }
        assert!(tried >= 6, "only {tried} tiles moved runs");
    }

    /// Case 106 of the random set's first tile: bytes, tile axes (49, 2, 3, 9), the source
    /// walking axis 2, 3, 0 then 1 (runs of 1323 bytes), the destination 98-byte runs.
    fn case_106(read_word: usize, write_word: usize) -> TilePlan {
        TilePlan {
            itemsize: 1,
            extents: crate::Dims::from_slice(&[49, 2, 3, 9]),
            src_strides: crate::Dims::from_slice(&[27, -1377, -1, 3]),
            dst_strides: crate::Dims::from_slice(&[1, 49, 147, 441]),
            src_order: smallvec::SmallVec::from_slice(&[2, 3, 0, 1]),
            counts: crate::Dims::from_slice(&[21287]),
            src_steps: crate::Dims::from_slice(&[4131]),
            dst_steps: crate::Dims::from_slice(&[3969]),
            src_offset: 2754,
            dst_offset: 294,
            read_word,
            write_word,
        }
    }

    #[test]
    fn runs_are_the_contiguous_leading_axes_of_each_side() {
        let r = case_106(1, 1).runs().expect("runs of 1323 and 98 bytes");
        assert_eq!((r.src_run, r.dst_run), (1323, 98));
        assert_eq!((r.src_runs, r.dst_runs), (2, 27));
        // 1323 bytes from any alignment: up to 84 chunks; 98 from any: chunks 1-5 whole.
        assert_eq!(
            (r.chunk_slots, r.slot_bytes, r.whole_chunks),
            (84, 16 * 85, 5)
        );
        assert_eq!(r.image_bytes, 2 * 16 * 85);
        // 168 source chunks a tile: six tiles at once (1008 of 1024).
        assert_eq!(r.group, 6);
        // Rows of 98 entries (2 mod 4).
        assert_eq!(r.row_entries, 98);
        assert_eq!(
            r.shared_bytes(),
            6 * 2 * 16 * 85 + (2 * 27 * 98 + 4) + 4 * 29
        );
    }

    #[test]
    fn runs_need_narrow_words_32_bytes_a_side_and_the_limits() {
        // 16-byte words both ways: the tile kernel's own.
        assert_eq!(case_106(16, 16).runs(), None);
        assert!(case_106(16, 1).runs().is_some() && case_106(1, 16).runs().is_some());
        // Destination runs of 28 bytes: too short.
        let mut t = case_106(1, 1);
        t.extents[0] = 14;
        t.dst_strides = crate::Dims::from_slice(&[1, 14, 147, 441]);
        assert_eq!(t.runs(), None);
        // A destination axis walked downwards ends the run.
        let mut t = case_106(1, 1);
        t.dst_strides[1] = -49;
        assert_eq!(t.runs().map(|r| r.dst_run), Some(49));
        // Elements of 16 bytes move as whole chunks in the tile kernel already.
        let mut t = case_106(1, 1);
        t.itemsize = 16;
        assert_eq!(t.runs(), None);
        // A tile past the per-thread chunk limit: 1323-byte runs, 13 of them.
        let mut t = case_106(1, 1);
        t.extents[1] = 13;
        t.src_strides[1] = -1377;
        t.dst_strides = crate::Dims::from_slice(&[1, 49, 637, 1911]);
        assert_eq!(t.runs(), None, "13 runs of 84 chunks pass 1024");
    }
}
