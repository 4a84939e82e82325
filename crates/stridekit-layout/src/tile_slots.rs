//! Where a multi-axis tile's elements sit in shared memory ([`TilePlan::slot`]): in
//! destination order with padding of one written word (at least 4 bytes) after every
//! group of `2^slot_shift` elements, so that each written word is one aligned
//! shared-memory load, and the group chosen per tile so that the scatter (each warp
//! storing the elements it read, in source order) spreads over the 32 banks.

use crate::tile::TilePlan;
use smallvec::SmallVec;

/// Bytes of one shared-memory bank, and banks.
const BANK_BYTES: usize = 4;
const BANKS: usize = 32;

/// Larger groups than the densest that [`slot_shift`] tries (each doubles the group).
const WIDER_GROUPS: u32 = 6;

/// Warps of a block whose stores the model looks at (of the first 256 words).
const SAMPLED_WARPS: [usize; 2] = [0, 5];

impl TilePlan {
    /// Elements of padding after each group: one written word, at least 4 bytes.
    pub fn slot_pad(&self) -> usize {
        (self.write_word * self.itemsize).max(BANK_BYTES) / self.itemsize
    }

    /// The densest padding: `log2` of the group (elements) after which
    /// [`TilePlan::slot_pad`] elements follow, 32 pads long (4 bytes after every 128,
    /// 16 after every 512). Never more padding than 4 bytes after every 128 bytes (one
    /// element after every 32 of 4 bytes and more), which [`TilePlan::shared_bytes`]
    /// sizes shared memory for.
    pub fn densest_slot_shift(&self) -> u32 {
        densest(self.slot_pad())
    }

    /// The shared-memory slot (in elements) of destination-order element `j`, with `pad`
    /// elements of padding after every `2^shift`. With this tile's pad and any shift from
    /// its densest up, each written word's elements stay together and aligned to the
    /// word (at least 4 bytes).
    ///
    /// ```
    /// use stridekit_layout::TilePlan;
    /// // Halfwords: 2 elements of padding after every 64, or after every 128.
    /// assert_eq!(TilePlan::slot(130, 2, 6), 134);
    /// assert_eq!(TilePlan::slot(130, 2, 7), 132);
    /// ```
    pub fn slot(j: usize, pad: usize, shift: u32) -> usize {
        j + pad * (j >> shift)
    }

    /// Shared memory's bound on a tile image of `elements` of `itemsize` bytes: its
    /// end with 4 bytes of padding after every 128 (one element after every 32 for
    /// elements of 4 bytes and more), more than any tile's padding takes.
    pub fn slot_bound(elements: usize, itemsize: usize) -> usize {
        let pad = (BANK_BYTES / itemsize).max(1);
        Self::slot(elements, pad, densest(pad))
    }

    /// Bank wavefronts of the sampled scatter stores with groups of `2^shift` elements
    /// (the model by which the planner picks [`TilePlan::slot_shift`]).
    pub fn scatter_wavefronts(&self, shift: u32) -> usize {
        total_wavefronts(self, &scatter_addresses(self), shift)
    }
}

/// `log2` of the densest group for padding of `pad` elements: 32 pads long.
fn densest(pad: usize) -> u32 {
    (BANKS * pad).trailing_zeros()
}

/// The group of `t`'s padding (`log2`, elements): of the densest and up to
/// [`WIDER_GROUPS`] doublings, the one whose scatter stores take the fewest bank
/// wavefronts (the densest on a tie). The kernel stores a warp's read elements (32
/// consecutive words in source order) into their destination-order slots: where the
/// source's fast axis is a power of two apart in destination order, the densest padding
/// can leave a store on a few banks (halfwords 132 apart: 8 of the 32). The search stops
/// at a group where every sampled store takes its fewest wavefronts.
pub(crate) fn slot_shift(t: &TilePlan) -> u32 {
    let first = t.densest_slot_shift();
    let stores = scatter_addresses(t);
    // A store's fewest wavefronts: one, or its 4-byte words over the 32 banks.
    let fewest: usize = stores
        .iter()
        .map(|s| {
            (s.len() * t.itemsize.div_ceil(BANK_BYTES))
                .div_ceil(BANKS)
                .max(1)
        })
        .sum();
    let mut best = (usize::MAX, first);
    for shift in first..=first + WIDER_GROUPS {
        let cost = total_wavefronts(t, &stores, shift);
        if cost < best.0 {
            best = (cost, shift);
            if cost <= fewest {
                break;
            }
        }
    }
    best.1
}

/// Bank wavefronts of `stores` with `t`'s padding after groups of `2^shift` elements.
fn total_wavefronts(t: &TilePlan, stores: &[Store], shift: u32) -> usize {
    let pad = t.slot_pad();
    stores
        .iter()
        .map(|store| wavefronts(store, t.itemsize, pad, shift))
        .sum()
}

/// Lanes of a warp.
const LANES: usize = 32;

/// One sampled store: the destination-order index of each active lane's element.
type Store = SmallVec<[u32; LANES]>;

/// Destination-order indices `j` of the sampled stores: for each sampled warp and the
/// first and last element of a read word, the 32 lanes' elements (fewer past the tile).
fn scatter_addresses(t: &TilePlan) -> SmallVec<[Store; 4]> {
    let (vol, rw) = (t.volume(), t.read_word.max(1));
    let words = vol / rw;
    let weight = t.destination_weights();
    let mut stores = SmallVec::new();
    let elems: &[usize] = if rw > 1 { &[0, rw - 1] } else { &[0] };
    for warp in SAMPLED_WARPS {
        for &v in elems {
            let first = warp * LANES;
            if first >= words {
                continue;
            }
            // The lanes' elements are `rw` apart in source order: the first one's
            // coordinates by division, the rest by carrying (planning runs this often).
            let mut c = coordinates(t, first * rw + v);
            let lanes: Store = (first..words.min(first + LANES))
                .map(|_| {
                    let j = destination_of(t, &weight, &c);
                    advance(t, &mut c, rw);
                    j as u32
                })
                .collect();
            stores.push(lanes);
        }
    }
    stores
}

/// Coordinates (per tile axis) of the tile's `i`-th element in source order.
fn coordinates(t: &TilePlan, i: usize) -> [usize; crate::TILE_MAX_AXES] {
    let mut c = [0usize; crate::TILE_MAX_AXES];
    let mut rem = i;
    for &k in &t.src_order {
        let e = t.extents[k] as usize;
        c[k] = rem % e;
        rem /= e;
    }
    c
}

/// Coordinates `by` elements further on in source order.
fn advance(t: &TilePlan, c: &mut [usize; crate::TILE_MAX_AXES], by: usize) {
    let mut carry = by;
    for &k in &t.src_order {
        let e = t.extents[k] as usize;
        let sum = c[k] + carry;
        if sum < e {
            c[k] = sum;
            return;
        }
        c[k] = sum % e;
        carry = sum / e;
    }
}

/// The destination-order index of the element at source-order coordinates `c` (as
/// [`TilePlan::read_order`] forms it).
fn destination_of(t: &TilePlan, weight: &[usize], c: &[usize]) -> usize {
    t.src_order
        .iter()
        .map(|&k| t.read_coordinate(k, c[k] as i64) as usize * weight[k])
        .sum()
}

/// Wavefronts of one store: the most distinct 4-byte words any bank holds among the
/// lanes' elements. Planning a tiled copy runs this a few dozen times: no allocation, and
/// a sort only where elements can share a word.
fn wavefronts(store: &[u32], itemsize: usize, pad: usize, shift: u32) -> usize {
    let mut per_bank = [0u8; BANKS];
    if itemsize < BANK_BYTES {
        // Elements under 4 bytes can share a word (one access): count each word once.
        let mut words = [0u32; LANES];
        let mut n = 0;
        for (slot, &j) in words.iter_mut().zip(store) {
            *slot = (TilePlan::slot(j as usize, pad, shift) * itemsize / BANK_BYTES) as u32;
            n += 1;
        }
        let words = &mut words[..n];
        words.sort_unstable();
        let mut last = None;
        for &w in words.iter() {
            if last != Some(w) {
                per_bank[w as usize % BANKS] = per_bank[w as usize % BANKS].saturating_add(1);
            }
            last = Some(w);
        }
    } else {
        // Elements of 4 bytes and more: each lane's words its own (an element of a size
        // not a multiple of 4 may share an edge word with a neighbour's, counted twice).
        for &j in store {
            let at = TilePlan::slot(j as usize, pad, shift) * itemsize;
            for w in at / BANK_BYTES..(at + itemsize).div_ceil(BANK_BYTES) {
                per_bank[w % BANKS] = per_bank[w % BANKS].saturating_add(1);
            }
        }
    }
    per_bank.into_iter().max().unwrap_or(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampled stores walk the tile as the kernel's read tables do: each lane's
    /// destination index is `read_order`'s for its element (backward axes included).
    #[test]
    fn sampled_stores_are_the_read_orders_elements() {
        use crate::{CopyPlan, CopyStep, Order, StridedLayout};
        let shape = [7i64, 5, 9, 11, 13];
        // Column-major, its first and last axes reversed; into row-major.
        let offset = 6 + 3465 * 12;
        let src = StridedLayout::with_offset(&shape, &[-1, 7, 35, 315, -3465], 2, offset).unwrap();
        let dst = StridedLayout::dense(&shape, 2, Order::C).unwrap();
        let steps = CopyPlan::new(&dst, &src)
            .unwrap()
            .schedule_with_small_copy(0, 0, 0);
        let mut checked = 0;
        for t in steps.iter().filter_map(|s| match s {
            CopyStep::Tiled(t) => Some(t),
            _ => None,
        }) {
            let reads = t.read_order();
            let rw = t.read_word;
            let elems: &[usize] = if rw > 1 { &[0, rw - 1] } else { &[0] };
            let mut expected = Vec::new();
            for warp in SAMPLED_WARPS {
                for &v in elems {
                    let first = warp * LANES;
                    if first >= t.volume() / rw {
                        continue;
                    }
                    let lanes: Vec<u32> = (first..(t.volume() / rw).min(first + LANES))
                        .map(|w| reads[w * rw + v].1 as u32)
                        .collect();
                    expected.push(lanes);
                }
            }
            let got: Vec<Vec<u32>> = scatter_addresses(t).iter().map(|s| s.to_vec()).collect();
            assert_eq!(got, expected, "{t:?}");
            checked += 1;
        }
        assert!(checked > 0, "no tiled step: {steps:?}");
    }

    #[test]
    fn one_store_per_bank_is_one_wavefront() {
        // 32 consecutive 4-byte elements: one wavefront; 32 elements 32 apart with no
        // padding (a shift past them): all on bank 0.
        let dense: Vec<u32> = (0..32).collect();
        assert_eq!(wavefronts(&dense, 4, 1, 5), 1);
        let column: Vec<u32> = (0..32).map(|l| l * 32).collect();
        assert_eq!(wavefronts(&column, 4, 1, 20), 32);
        assert_eq!(wavefronts(&column, 4, 1, 5), 1);
        // Halfwords sharing a word are one access.
        assert_eq!(wavefronts(&dense, 2, 2, 6), 1);
        // 16-byte elements: four wavefronts at the least.
        assert_eq!(wavefronts(&dense, 16, 1, 5), 4);
    }
}
