//! The image tile of a one-element byte tile ([`ImageTile`]): the same tile as a
//! [`TilePlan`], moved in aligned 4-byte words on both sides through a shared-memory image
//! of its source runs.
//!
//! A tile's source bytes fall into runs of consecutive addresses, the same in every tile.
//! Each run is loaded as aligned words, and each word of the run is funnel-shifted from
//! the two aligned words around it, so that the run's bytes sit in the image from a word
//! boundary of their own whatever the tile's phase (its base address modulo 4): image byte
//! `4 * first_word(run) + index in the run`. Every destination byte is then gathered from
//! the image through one table indexed by destination position, and written in the
//! aligned words of its destination run: the run's interior words are whole at every
//! phase and go through a branch-free loop; its edge words (at most three a run) are
//! written byte by byte where they fall inside the run.
//!
//! [`ImageTile::apply`] is that arithmetic on host memory, the reference a kernel is
//! checked against.

use crate::tile::TilePlan;

/// The largest image an [`ImageTile`] addresses (its table holds 16-bit image bytes).
pub const IMAGE_MAX_BYTES: usize = 1 << 16;

/// One aligned source word a tile loads into its image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRead {
    /// Source offset (from the tile's base) of the run's byte `4k`: the word loaded is the
    /// aligned one holding it, shifted by its phase with the next one.
    pub rel: i32,
    /// The image word it fills.
    pub word: u16,
    /// The run's bytes in this word (1 to 4): the next aligned word is loaded only where
    /// they reach into it, so no load touches a word that holds none of the run's bytes.
    pub bytes: u8,
}

/// An interior word of a destination run: whole at every phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InteriorWrite {
    /// Destination offset (from the tile's base) of the run's position `4m`.
    pub rel: i32,
    /// Table index of the run's position `4m`; the word's byte `b` at phase `ph` is
    /// position `4m + b - ph`, table index `table + b - ph`.
    pub table: u16,
}

/// An edge word of a destination run (its first, or one of its last two): written byte by
/// byte where its bytes fall inside the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeWrite {
    /// Destination offset (from the tile's base) of the run's position `4m`.
    pub rel: i32,
    /// Table index of the run's position `4m`.
    pub table: u16,
    /// Whether `m` is 0 (positions before the run's start are not its bytes).
    pub first: bool,
    /// The run's length less `4m`: positions from `left` on are past the run's end.
    pub left: i32,
}

/// A byte tile's image plan: its reads, its gather table and its writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageTile {
    /// Bytes a tile moves.
    pub volume: usize,
    /// 4-byte words of the image.
    pub image_words: usize,
    /// The words a tile loads (a thread's share: every `threads`-th from its index).
    pub reads: Vec<ImageRead>,
    /// For each destination position (the tile's destination bytes in address order, run
    /// after run): the image byte it takes.
    pub table: Vec<u16>,
    /// The destination runs' interior words.
    pub interior: Vec<InteriorWrite>,
    /// The destination runs' edge words.
    pub edges: Vec<EdgeWrite>,
}

impl ImageTile {
    /// The image plan of `plan`'s tile, or `None` where it does not apply: elements other
    /// than single bytes, offsets outside `i32`, an image past [`IMAGE_MAX_BYTES`] or a
    /// table index past 16 bits, or a destination byte written twice.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, CopyStep, ImageTile, Order, StridedLayout};
    /// // A (30, 40, 50) byte array permuted to (50, 30, 40): its tiles, moved through their
    /// // image, land where the tile's own replay puts them.
    /// let src = StridedLayout::dense(&[30, 40, 50], 1, Order::C)?.permuted(&[2, 0, 1])?;
    /// let dst = StridedLayout::dense(&[50, 30, 40], 1, Order::C)?;
    /// let steps = CopyPlan::new(&dst, &src)?.schedule_with_small_copy(0, 0, 0);
    /// let CopyStep::Tiled(t) = &steps[0] else { panic!("{steps:?}") };
    /// let image = ImageTile::of(t).expect("a byte tile");
    /// let input: Vec<u8> = (0..60_008).map(|i| (i * 7 + 3) as u8).collect();
    /// let (mut out, mut want) = (vec![0u8; 60_008], vec![0u8; 60_008]);
    /// let (reads, writes) = (t.read_order(), t.write_order());
    /// for tile in 0..t.tiles() {
    ///     let (s0, d0) = t.tile_offsets(tile);
    ///     image.apply(&input, s0 as usize, &mut out, d0 as usize);
    ///     for &(s, j) in &reads {
    ///         want[(d0 + writes[j]) as usize] = input[(s0 + s) as usize];
    ///     }
    /// }
    /// assert_eq!(out, want);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn of(plan: &TilePlan) -> Option<Self> {
        if plan.itemsize != 1 {
            return None;
        }
        let reads_in_order = plan.read_order(); // (source offset, destination index j)
        let writes = plan.write_order(); // destination offset of j
        let volume = writes.len();
        // Source runs: the tile's bytes by source address.
        let mut by_src: Vec<(i64, usize)> = reads_in_order;
        by_src.sort_unstable();
        let mut run_of = vec![(0usize, 0usize); volume]; // j -> (run, index in run)
        let mut runs: Vec<(i64, usize)> = Vec::new(); // (start, length)
        for (q, &(s, j)) in by_src.iter().enumerate() {
            let starts = q == 0 || s != by_src[q - 1].0 + 1;
            if starts {
                runs.push((s, 0));
            }
            let last = runs.len() - 1;
            run_of[j] = (last, runs[last].1);
            runs[last].1 += 1;
        }
        let mut first_word = Vec::with_capacity(runs.len());
        let mut image_words = 0usize;
        let mut reads = Vec::new();
        for &(start, len) in &runs {
            first_word.push(image_words);
            for k in 0..len.div_ceil(4) {
                reads.push(ImageRead {
                    rel: i32::try_from(start + 4 * k as i64).ok()?,
                    word: u16::try_from(image_words + k).ok()?,
                    bytes: (len - 4 * k).min(4) as u8,
                });
            }
            image_words += len.div_ceil(4);
        }
        if 4 * image_words > IMAGE_MAX_BYTES {
            return None;
        }
        // Destination runs: the tile's bytes by destination address.
        let mut by_dst: Vec<(i64, usize)> =
            writes.iter().enumerate().map(|(j, &d)| (d, j)).collect();
        by_dst.sort_unstable();
        let mut table = Vec::with_capacity(volume);
        let mut interior = Vec::new();
        let mut edges = Vec::new();
        let mut q = 0usize;
        while q < volume {
            let (start, _) = by_dst[q];
            let mut len = 0usize;
            while q + len < volume && by_dst[q + len].0 == start + len as i64 {
                let (run, index) = run_of[by_dst[q + len].1];
                table.push(u16::try_from(4 * first_word[run] + index).ok()?);
                len += 1;
            }
            if q + len < volume && by_dst[q + len].0 < start + len as i64 {
                return None; // a destination byte twice
            }
            // Words m = 0 ..= (len + 2) / 4 cover the run at every phase; 1 <= m <= (len - 4) / 4
            // are whole at every phase.
            let inner_hi = len.saturating_sub(4) / 4;
            for m in 0..=(len + 2) / 4 {
                let rel = i32::try_from(start + 4 * m as i64).ok()?;
                let at = u16::try_from(q + 4 * m).ok()?;
                if m >= 1 && m <= inner_hi {
                    interior.push(InteriorWrite { rel, table: at });
                } else {
                    edges.push(EdgeWrite {
                        rel,
                        table: at,
                        first: m == 0,
                        left: len as i32 - 4 * m as i32,
                    });
                }
            }
            q += len;
        }
        Some(ImageTile {
            volume,
            image_words,
            reads,
            table,
            interior,
            edges,
        })
    }

    /// Moves one tile on host memory as the kernel does on the GPU: the tile's source base
    /// `src_base` and destination base `dst_base` are byte indices into `src` and `dst`
    /// (their phases are those indices modulo 4, as a kernel's are its addresses'). Reads
    /// take the aligned words holding each run word's bytes (up to 3 bytes before a run
    /// and 3 past its end: `src` must hold them); writes touch only the tile's destination
    /// bytes.
    ///
    /// # Panics
    /// Where `src` or `dst` is too short for the tile at those bases (a test's mistake).
    pub fn apply(&self, src: &[u8], src_base: usize, dst: &mut [u8], dst_base: usize) {
        let word_at = |a: usize| u32::from_le_bytes([src[a], src[a + 1], src[a + 2], src[a + 3]]);
        let mut image = vec![0u32; self.image_words];
        for r in &self.reads {
            let a = (src_base as i64 + r.rel as i64) as usize;
            let ph = a & 3;
            let lo = word_at(a - ph);
            let hi = if ph + r.bytes as usize > 4 {
                word_at(a - ph + 4)
            } else {
                0
            };
            image[r.word as usize] = ((((hi as u64) << 32) | lo as u64) >> (8 * ph)) as u32;
        }
        let byte = |i: u16| image[i as usize / 4].to_le_bytes()[i as usize % 4];
        for w in &self.interior {
            let a = (dst_base as i64 + w.rel as i64) as usize;
            let ph = a & 3;
            let tb = w.table as usize - ph;
            for b in 0..4 {
                dst[a - ph + b] = byte(self.table[tb + b]);
            }
        }
        for w in &self.edges {
            let a = (dst_base as i64 + w.rel as i64) as usize;
            let ph = (a & 3) as i32;
            for b in 0..4i32 {
                let p = b - ph; // position less 4m
                if (!w.first || p >= 0) && p < w.left {
                    let t = (w.table as i32 + p) as usize;
                    dst[(a as i64 - ph as i64 + b as i64) as usize] = byte(self.table[t]);
                }
            }
        }
    }

    /// Whether whole words dominate the writes: edge words at most an eighth of the written
    /// words. Where they do, moving the tile through its image beats writing it a byte at a
    /// time (on the H200 1.06-1.13x at edge shares up to 0.10; at 0.14-0.50 it lost
    /// 0.57-0.90x: BENCHMARKS.md), and the planner prefers such tiles for bytes.
    pub fn whole_words_dominate(&self) -> bool {
        let written = self.interior.len() + self.edges.len();
        written > 0 && 8 * self.edges.len() <= written
    }

    /// Items of each kind a thread holds at `threads` threads a block: (reads, interior
    /// words, edge words).
    pub fn per_thread(&self, threads: usize) -> (usize, usize, usize) {
        let t = threads.max(1);
        (
            self.reads.len().div_ceil(t),
            self.interior.len().div_ceil(t),
            self.edges.len().div_ceil(t),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dims::Dims;
    use proptest::prelude::*;

    /// A tile of byte `extents` with the given strides, one tile (no grid).
    fn tile(extents: &[i64], src: &[i64], dst: &[i64], src_order: &[usize]) -> TilePlan {
        TilePlan {
            itemsize: 1,
            extents: Dims::from_slice(extents),
            src_strides: Dims::from_slice(src),
            dst_strides: Dims::from_slice(dst),
            src_order: src_order.iter().copied().collect(),
            counts: Dims::from_slice(&[1]),
            src_steps: Dims::from_slice(&[0]),
            dst_steps: Dims::from_slice(&[0]),
            src_offset: 0,
            dst_offset: 0,
            read_word: 1,
            write_word: 1,
            slot_shift: 31,
        }
    }

    /// Every destination byte of the tile where it belongs, nothing else touched, at every
    /// phase of both sides.
    fn check(t: &TilePlan) -> std::result::Result<(), TestCaseError> {
        let image = ImageTile::of(t).ok_or_else(|| TestCaseError::fail("no image plan"))?;
        let reads = t.read_order();
        let writes = t.write_order();
        let span = |offs: &mut dyn Iterator<Item = i64>| {
            offs.fold((i64::MAX, i64::MIN), |(lo, hi), o| (lo.min(o), hi.max(o)))
        };
        let (slo, shi) = span(&mut reads.iter().map(|r| r.0));
        let (dlo, dhi) = span(&mut writes.iter().copied());
        let src: Vec<u8> = (0..(shi - slo + 24) as usize)
            .map(|i| (i * 131 + 7) as u8)
            .collect();
        for sp in 0..4i64 {
            for dp in 0..4i64 {
                // The lowest source byte at phase sp, the lowest destination byte at dp.
                let (sb, db) = ((8 + sp - slo) as usize, (8 + dp - dlo) as usize);
                let mut dst = vec![0xEEu8; (db as i64 + dhi + 8) as usize];
                // The source ends with the aligned word of its highest byte: no read may
                // reach past it (a kernel's word there could lie past its allocation).
                let end = ((sb as i64 + shi) / 4 * 4 + 4) as usize;
                image.apply(&src[..end], sb, &mut dst, db);
                let mut want = vec![0xEEu8; dst.len()];
                for &(s, j) in &reads {
                    want[(db as i64 + writes[j]) as usize] = src[(sb as i64 + s) as usize];
                }
                prop_assert_eq!(&dst, &want, "phases {} {}", sp, dp);
            }
        }
        Ok(())
    }

    #[test]
    fn transposes_and_permutes_at_every_phase() {
        // A (5, 7) byte transpose; a 4-D permute with a reversed axis and gaps; runs of 1-3.
        check(&tile(&[7, 5], &[5, 1], &[1, 7], &[1, 0])).unwrap();
        check(&tile(
            &[3, 4, 2, 5],
            &[20, 1, -4, 80],
            &[1, 3, 12, 24],
            &[1, 2, 0, 3],
        ))
        .unwrap();
        check(&tile(&[2, 3], &[1, 4], &[9, 1], &[0, 1])).unwrap();
        check(&tile(&[1], &[1], &[1], &[0])).unwrap();
    }

    #[test]
    fn whole_words_dominate_long_destination_runs_only() {
        // One destination run of 40 bytes: words 0..=10, of which 0 and 10 are edges (2 of 11).
        let long = ImageTile::of(&tile(&[40], &[1], &[1], &[0])).unwrap();
        assert_eq!((long.interior.len(), long.edges.len()), (9, 2));
        assert!(!long.whole_words_dominate());
        // One of 400 bytes: 2 edge words of 101.
        let longer = ImageTile::of(&tile(&[400], &[1], &[1], &[0])).unwrap();
        assert_eq!(longer.edges.len(), 2);
        assert!(longer.whole_words_dominate());
        // A transpose into runs of 5: every written word an edge word.
        assert!(!ImageTile::of(&tile(&[7, 5], &[5, 1], &[1, 7], &[1, 0]))
            .unwrap()
            .whole_words_dominate());
    }

    #[test]
    fn a_destination_byte_written_twice_has_no_image_plan() {
        assert!(ImageTile::of(&tile(&[2, 2], &[1, 2], &[1, 1], &[0, 1])).is_none());
    }

    #[test]
    fn wider_elements_have_no_image_plan() {
        let mut t = tile(&[4], &[1], &[1], &[0]);
        t.itemsize = 2;
        assert!(ImageTile::of(&t).is_none());
    }

    #[test]
    fn run_words_split_into_interior_and_edges() {
        // One 13-byte destination run: words 0..=3 at phase 0-3 (m <= (13 + 2) / 4),
        // interior m = 1, 2 ((13 - 4) / 4 = 2), edges m = 0 and 3.
        let image = ImageTile::of(&tile(&[13], &[1], &[1], &[0])).unwrap();
        assert_eq!(
            image.interior.iter().map(|w| w.rel).collect::<Vec<_>>(),
            vec![4, 8]
        );
        assert_eq!(
            image
                .edges
                .iter()
                .map(|w| (w.rel, w.first, w.left))
                .collect::<Vec<_>>(),
            vec![(0, true, 13), (12, false, 1)]
        );
        assert_eq!((image.image_words, image.reads.len()), (4, 4));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random tiles of 1-4 axes: a destination that is a permuted dense block with
        /// gaps, a source of any strides (negative too).
        #[test]
        fn random_tiles_at_every_phase(
            extents in proptest::collection::vec(1i64..6, 1..5),
            perm_seed in any::<u64>(),
            src_strides in proptest::collection::vec(-40i64..40, 4),
            gap in 0i64..3,
        ) {
            let n = extents.len();
            // Destination: dense in a permuted order, each axis's stride padded by `gap`.
            let mut order: Vec<usize> = (0..n).collect();
            let mut s = perm_seed;
            for i in (1..n).rev() {
                order.swap(i, (s % (i as u64 + 1)) as usize);
                s /= i as u64 + 1;
            }
            let mut dst = vec![0i64; n];
            let mut step = 1i64;
            for &k in &order {
                dst[k] = step;
                step = step * extents[k] + gap;
            }
            let src: Vec<i64> = (0..n).map(|k| if src_strides[k] == 0 { 1 } else { src_strides[k] }).collect();
            // Source order: axes by the size of their stride.
            let mut so: Vec<usize> = (0..n).collect();
            so.sort_by_key(|&k| src[k].abs());
            check(&tile(&extents, &src, &dst, &so))?;
        }
    }
}
