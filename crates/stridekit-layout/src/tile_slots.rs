//! Where a multi-axis tile's elements sit in shared memory ([`TilePlan::slot`]): in
//! destination order with padding of one written word (at least 4 bytes) after every
//! group of `2^slot_shift` elements, so that each written word is one aligned
//! shared-memory load, and the group chosen per tile so that the scatter (each warp
//! storing the elements it read, in source order) spreads over the 32 banks.

use crate::tile::TilePlan;

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
        (BANKS * self.slot_pad()).trailing_zeros()
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
        Self::slot(elements, pad, (BANKS * pad).trailing_zeros())
    }

    /// Bank wavefronts of the sampled scatter stores with groups of `2^shift` elements
    /// (the model by which the planner picks [`TilePlan::slot_shift`]).
    pub fn scatter_wavefronts(&self, shift: u32) -> usize {
        let pad = self.slot_pad();
        scatter_addresses(self)
            .iter()
            .map(|store| wavefronts(store, self.itemsize, pad, shift))
            .sum()
    }
}

/// The group of `t`'s padding (`log2`, elements): of the densest and up to
/// [`WIDER_GROUPS`] doublings, the one whose scatter stores take the fewest bank
/// wavefronts (the densest on a tie). The kernel stores a warp's read elements (32
/// consecutive words in source order) into their destination-order slots: where the
/// source's fast axis is a power of two apart in destination order, the densest padding
/// can leave a store on a few banks (halfwords 132 apart: 8 of the 32).
pub(crate) fn slot_shift(t: &TilePlan) -> u32 {
    let first = t.densest_slot_shift();
    let pad = t.slot_pad();
    let stores = scatter_addresses(t);
    let mut best = (usize::MAX, first);
    for shift in first..=first + WIDER_GROUPS {
        let cost = stores
            .iter()
            .map(|store| wavefronts(store, t.itemsize, pad, shift))
            .sum();
        if cost < best.0 {
            best = (cost, shift);
        }
    }
    best.1
}

/// Destination-order indices `j` of the sampled stores: for each sampled warp and the
/// first and last element of a read word, the 32 lanes' elements (fewer past the tile).
fn scatter_addresses(t: &TilePlan) -> Vec<Vec<usize>> {
    let (vol, rw) = (t.volume(), t.read_word.max(1));
    let words = vol / rw;
    let mut weight = [0usize; crate::TILE_MAX_AXES];
    let mut w = 1usize;
    for (wk, &e) in weight.iter_mut().zip(&t.extents) {
        *wk = w;
        w *= e as usize;
    }
    let mut stores = Vec::new();
    let elems: &[usize] = if rw > 1 { &[0, rw - 1] } else { &[0] };
    for warp in SAMPLED_WARPS {
        for &v in elems {
            let lanes: Vec<usize> = (0..32)
                .map(|l| warp * 32 + l)
                .take_while(|&word| word < words)
                .map(|word| destination_index(t, &weight, word * rw + v))
                .collect();
            if !lanes.is_empty() {
                stores.push(lanes);
            }
        }
    }
    stores
}

/// The destination-order index of the tile's `i`-th element in source order (what
/// [`TilePlan::read_order`] lists).
fn destination_index(t: &TilePlan, weight: &[usize], i: usize) -> usize {
    let mut rem = i;
    let mut j = 0usize;
    for &k in &t.src_order {
        let e = t.extents[k] as usize;
        let mut c = rem % e;
        rem /= e;
        if t.src_strides[k] < 0 {
            c = e - 1 - c;
        }
        j += c * weight[k];
    }
    j
}

/// Wavefronts of one store: the most distinct 4-byte words any bank holds among the
/// lanes' elements.
fn wavefronts(store: &[usize], itemsize: usize, pad: usize, shift: u32) -> usize {
    let mut words: Vec<usize> = Vec::with_capacity(store.len() * itemsize.div_ceil(4));
    for &j in store {
        let at = TilePlan::slot(j, pad, shift) * itemsize;
        words.extend(at / BANK_BYTES..(at + itemsize).div_ceil(BANK_BYTES));
    }
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0usize; BANKS];
    for w in words {
        per_bank[w % BANKS] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_store_per_bank_is_one_wavefront() {
        // 32 consecutive 4-byte elements: one wavefront; 32 elements 32 apart with no
        // padding (a shift past them): all on bank 0.
        let dense: Vec<usize> = (0..32).collect();
        assert_eq!(wavefronts(&dense, 4, 1, 5), 1);
        let column: Vec<usize> = (0..32).map(|l| l * 32).collect();
        assert_eq!(wavefronts(&column, 4, 1, 20), 32);
        assert_eq!(wavefronts(&column, 4, 1, 5), 1);
        // Halfwords sharing a word are one access.
        assert_eq!(wavefronts(&dense, 2, 2, 6), 1);
        // 16-byte elements: four wavefronts at the least.
        assert_eq!(wavefronts(&dense, 16, 1, 5), 4);
    }
}
