//! The kernels copies commonly need, named and written out as [`super::compile_function`]
//! compiles them: what a kernel pack holds ([`crate::precompile_kernels`]), so that a new
//! machine's first copies load kernels instead of compiling them.
//!
//! The set spans each kernel family over the shapes the schedule picks for copies of up
//! to [`MAX_NDIM`] axes after merging (ranks beyond are rare, and compile on first use as
//! before): every element size, index width, offset width and depth of the elementwise
//! and run kernels (the depths small copies halve to included); every word of the
//! transposes and tiles (the image tile kernel's too); the channel and reversal kernels up to five axes; the repeat and
//! overlap kernels. Kernels with compile-time extents (small matrices) are left out:
//! their variants are as many as the extents.
//!
//! How much it covers, counted by copying the random set's layouts through a driver that
//! loads kernels without running them, NVRTC absent: on the seven seeds the benchmarks
//! use, every one of 1400 copies found all its kernels in the set (1391 while the channel
//! kernels stopped at three axes); on six seeds not looked at before, 1197 of 1200 (the
//! others: channel reversals of 5 and 15 halfwords, and of bytes over six axes).

use super::{depth, generic::halvings, kernel_source, Variant};
use crate::error::Result;

/// The highest rank (after merging axes) whose kernels the set holds.
pub(crate) const MAX_NDIM: usize = 6;

/// The highest rank of the channel and row-reversal kernels in the set (their copies
/// merge to fewer axes than the others').
const CHANNEL_NDIM: usize = 5;

/// Every `(itemsize, variant)` of the set.
fn variants() -> Vec<(usize, Variant)> {
    let mut out = Vec::new();
    let widths = [(false, true), (false, false), (true, false)];
    for isz in [1usize, 2, 4, 8, 16] {
        let mut depths = vec![depth(isz, false)];
        if depth(isz, true) != depths[0] {
            depths.push(depth(isz, true));
        }
        // Small copies halve the depth down to one element a thread (`generic::spread`);
        // they index in 32 bits.
        let mut spread: Vec<usize> = depths.iter().flat_map(|&d| halvings(d)).collect();
        spread.sort_unstable();
        spread.dedup();
        spread.retain(|u| !depths.contains(u));
        for ndim in 1..=MAX_NDIM {
            for (wide, narrow) in widths {
                let extra = if wide { &[][..] } else { &spread[..] };
                for &unr in depths.iter().chain(extra) {
                    out.push((
                        isz,
                        Variant::Generic {
                            ndim,
                            wide,
                            narrow,
                            unr,
                        },
                    ));
                }
                if isz > 2 {
                    continue;
                }
                let runs = |reversed, gathered, vec| Variant::Runs {
                    ndim,
                    wide,
                    reversed,
                    narrow,
                    gathered,
                    vec,
                };
                if isz == 1 {
                    out.push((isz, runs(false, 0, 4)));
                    out.push((isz, runs(true, 0, 4)));
                }
                // Gathered rows: bytes in 4- or 16-byte groups, halfwords in 16-byte ones
                // only (their rows hold 64 bytes or more: `CopyPlan::element_runs`).
                let vecs: &[usize] = if isz == 1 { &[4, 16] } else { &[16] };
                for gathered in 1..=stridekit_layout::ElementRuns::MAX_ROW_AXES {
                    for &vec in vecs {
                        out.push((isz, runs(false, gathered, vec)));
                    }
                }
            }
        }
        // Transposes: the element, or the wider word `CopyPlan::transpose_word` picks.
        let transpose_words: &[usize] = match isz {
            1 | 2 => &[isz, 4],
            4 => &[4, 8],
            _ => &[isz],
        };
        // Tiles: the element, or any wider word (`TilePlan`'s read and write words).
        let tile_words = || {
            [4, 8, 16]
                .into_iter()
                .filter(move |&w| w > isz)
                .chain([isz])
        };
        for ndim in 2..=MAX_NDIM {
            for &word in transpose_words {
                out.push((isz, Variant::Transpose { ndim, word }));
            }
            if isz <= 2 {
                out.push((isz, Variant::Word { ndim }));
            }
        }
        for read in tile_words() {
            for write in tile_words() {
                out.push((isz, Variant::Tiled { read, write }));
            }
        }
        if isz == 1 {
            for [ur, ui, ue] in super::image::variants() {
                out.push((isz, Variant::Image { ur, ui, ue }));
            }
        }
        if isz <= 8 {
            out.push((isz, Variant::Repeat));
        }
        out.push((isz, Variant::Ordered));
        for ndim in 1..=3 {
            out.push((isz, Variant::Groups { ndim }));
        }
    }
    for isz in [1usize, 2] {
        for ndim in 2..=CHANNEL_NDIM {
            for ch in 2..=8 / isz {
                for sl in ch..=8 / isz {
                    out.push((isz, Variant::Channels { ndim, ch, sl }));
                }
            }
            for ch in 2..=4 {
                out.push((isz, Variant::Interleave { ndim, ch }));
            }
            for ch in 1..=4 {
                out.push((isz, Variant::Reverse { ndim, ch }));
                let interleave = (ch >= 2).then_some((false, ch));
                for (split, sl) in (ch..=4).map(|sl| (true, sl)).chain(interleave) {
                    out.push((
                        isz,
                        Variant::ChannelWords {
                            ndim,
                            ch,
                            split,
                            sl,
                        },
                    ));
                }
            }
        }
        for ndim in 1..=CHANNEL_NDIM {
            out.push((isz, Variant::RowReverse { ndim }));
        }
    }
    out
}

/// The set as modules to compile: each one's name (as the runtime compiles it) and source.
pub(crate) fn common_kernels() -> Result<Vec<(String, String)>> {
    variants()
        .into_iter()
        .map(|(isz, v)| {
            let (source, name) = kernel_source(isz, v)?;
            Ok((super::module_name(name, isz), source))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set holds each variant once, and the kernels the schedule picks for common
    /// copies: a 2-D transpose of every element size, its wider-word form, a gathered
    /// halfword row, the tile kernel's mixed words.
    #[test]
    fn the_set_is_distinct_and_holds_the_common_kernels() {
        let all = variants();
        let mut keys: Vec<_> = all.iter().map(|&(isz, v)| v.key(isz)).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "a variant is listed twice");
        for want in [
            (4, Variant::Transpose { ndim: 2, word: 8 }),
            (4, Variant::Transpose { ndim: 2, word: 4 }),
            (8, Variant::Transpose { ndim: 3, word: 8 }),
            (1, Variant::Word { ndim: 2 }),
            (2, Variant::Tiled { read: 4, write: 2 }),
            (1, Variant::Tiled { read: 1, write: 1 }),
            (
                1,
                Variant::Image {
                    ur: 4,
                    ui: 4,
                    ue: 1,
                },
            ),
            (
                2,
                Variant::Runs {
                    ndim: 3,
                    wide: false,
                    reversed: false,
                    narrow: true,
                    gathered: 3,
                    vec: 16,
                },
            ),
        ] {
            assert!(all.contains(&want), "{want:?} missing");
        }
        assert_eq!(common_kernels().unwrap().len(), n);
    }
}
