//! The multi-axis tile of a copy ([`TilePlan`]): its geometry, the tables its kernel
//! builds, and how the planner chooses it - axes merged until both sides move a long run,
//! grown to a useful size within the shared-memory budget, read and written in the widest
//! words that stay aligned, with remainder slabs where extents do not divide.

use crate::dims::Dims;
use crate::plan::CopyPlan;
use smallvec::SmallVec;
use std::cell::Cell;

/// The most axes a tile or its grid may have.
pub const TILE_MAX_AXES: usize = 8;

/// A copy cut into equal tiles, each read in source order into shared memory and written
/// in destination order.
///
/// Tile axes run fastest-in-the-destination first. Within a tile, element `j` in
/// destination order has coordinates `c` (axis 0 fastest) and sits at shared-memory
/// position `j`; it is read from `src_offset + tile_src + sum(c[k] * src_strides[k])`.
/// Tile `t` has grid coordinates `g` (grid axis 0 fastest): `tile_src = sum(g[k] *
/// src_steps[k])`, likewise for the destination.
///
/// Replaying a tile on the CPU is what its kernel does on the GPU:
///
/// ```
/// use stridekit_layout::{CopyPlan, CopyStep, Order, StridedLayout};
/// // 4-byte elements of a (24, 4096) array into its (4096, 24) transpose: the
/// // destination's rows are 96 bytes long, so tiles merge them with the next axis.
/// let src = StridedLayout::dense(&[24, 4096], 4, Order::C)?.permuted(&[1, 0])?;
/// let dst = StridedLayout::dense(&[4096, 24], 4, Order::C)?;
/// // (Small: tiles only when asked for; `schedule` copies it elementwise.)
/// let steps = CopyPlan::new(&dst, &src)?.schedule_with_small_copy(0, 0, 0);
/// let CopyStep::Tiled(t) = &steps[0] else { panic!("{steps:?}") };
/// assert_eq!((t.read_word, t.write_word), (4, 4)); // 16-byte words both ways
/// let (reads, writes) = (t.read_order(), t.write_order());
/// let mut out = vec![0u32; 4096 * 24];
/// let input: Vec<u32> = (0..4096 * 24).map(|i| (i % 251) as u32).collect();
/// for tile in 0..t.tiles() {
///     let (s0, d0) = t.tile_offsets(tile);
///     for &(s, j) in &reads {
///         out[(d0 + writes[j]) as usize] = input[(s0 + s) as usize];
///     }
/// }
/// // out[r][c] = input[c][r]
/// assert!((0..4096).all(|r| (0..24).all(|c| out[r * 24 + c] == input[c * 4096 + r])));
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TilePlan {
    /// Bytes per element.
    pub itemsize: usize,
    /// Extent of each tile axis within a tile.
    pub extents: Dims,
    /// Source stride of each tile axis (elements).
    pub src_strides: Dims,
    /// Destination stride of each tile axis (elements).
    pub dst_strides: Dims,
    /// Tile axes in the order reads walk them (the source's fastest first).
    pub src_order: SmallVec<[usize; 8]>,
    /// Tiles along each grid axis.
    pub counts: Dims,
    /// Source step between neighbouring tiles along each grid axis (elements).
    pub src_steps: Dims,
    /// Destination step between neighbouring tiles along each grid axis (elements).
    pub dst_steps: Dims,
    /// Source offset of tile 0's first element (elements).
    pub src_offset: i64,
    /// Destination offset of tile 0's first element (elements).
    pub dst_offset: i64,
    /// Elements per read word: consecutive in source order and in source memory.
    pub read_word: usize,
    /// Elements per written word: consecutive in destination order and memory.
    pub write_word: usize,
    /// `log2` of the elements between two paddings of the tile's shared-memory image
    /// ([`TilePlan::slot`]), chosen against bank conflicts of its stores.
    pub slot_shift: u32,
}

impl TilePlan {
    /// Elements per tile.
    pub fn volume(&self) -> usize {
        self.extents.iter().product::<i64>() as usize
    }

    /// Number of tiles.
    pub fn tiles(&self) -> u64 {
        self.counts.iter().product::<i64>() as u64
    }

    /// For each element in source (read) order: its source offset within the tile and its
    /// destination-order index `j`. What a kernel's read tables hold. Source order walks
    /// memory upwards: an axis the source steps backwards along is walked from its last
    /// coordinate to its first, so that a reversed run reads as words too.
    pub fn read_order(&self) -> Vec<(i64, usize)> {
        let nt = self.extents.len();
        let weight = self.destination_weights();
        let mut c = [0i64; TILE_MAX_AXES];
        let mut out = Vec::with_capacity(self.volume());
        for _ in 0..self.volume() {
            let mut off = 0i64;
            let mut j = 0usize;
            for (k, &walked) in c.iter().enumerate().take(nt) {
                let ck = self.read_coordinate(k, walked);
                off += ck * self.src_strides[k];
                j += ck as usize * weight[k];
            }
            out.push((off, j));
            for &k in &self.src_order {
                c[k] += 1;
                if c[k] < self.extents[k] {
                    break;
                }
                c[k] = 0;
            }
        }
        out
    }

    /// Each tile axis's weight in destination order (axis 0 fastest): an element's
    /// destination-order index is the sum of its coordinates times these.
    pub(crate) fn destination_weights(&self) -> [usize; TILE_MAX_AXES] {
        let mut weight = [0usize; TILE_MAX_AXES];
        let mut w = 1usize;
        for (wk, &e) in weight.iter_mut().zip(&self.extents) {
            *wk = w;
            w *= e as usize;
        }
        weight
    }

    /// The coordinate along tile axis `k` of the element `walked` steps into the source
    /// order's walk of it: from the far end where the source steps backwards (reads walk
    /// memory upwards).
    pub(crate) fn read_coordinate(&self, k: usize, walked: i64) -> i64 {
        if self.src_strides[k] < 0 {
            self.extents[k] - 1 - walked
        } else {
            walked
        }
    }

    /// For each element in destination order: its destination offset within the tile.
    pub fn write_order(&self) -> Vec<i64> {
        let nt = self.extents.len();
        let mut c = [0i64; TILE_MAX_AXES];
        let mut out = Vec::with_capacity(self.volume());
        for _ in 0..self.volume() {
            out.push((0..nt).map(|k| c[k] * self.dst_strides[k]).sum());
            for (ck, &e) in c.iter_mut().zip(&self.extents) {
                *ck += 1;
                if *ck < e {
                    break;
                }
                *ck = 0;
            }
        }
        out
    }

    /// Offsets (source, destination) of tile `t`'s first element.
    pub fn tile_offsets(&self, mut t: u64) -> (i64, i64) {
        let (mut s, mut d) = (self.src_offset, self.dst_offset);
        for k in 0..self.counts.len() {
            let n = self.counts[k] as u64;
            let g = (t % n) as i64;
            t /= n;
            s += g * self.src_steps[k];
            d += g * self.dst_steps[k];
        }
        (s, d)
    }

    /// Read words each of a block's 256 threads holds per tile (the kernel keeps them
    /// all in flight): 16 for words of 1 or 2 bytes, else 8.
    pub fn loads_per_thread(read_bytes: usize) -> usize {
        if read_bytes <= 2 {
            16
        } else {
            8
        }
    }

    /// Bytes of shared memory a block needs: the padded tile, the read positions (u16),
    /// the word offsets of reads and writes (i32).
    pub fn shared_bytes(&self) -> usize {
        let v = self.volume();
        self.image_bytes()
            + self.slot_table_bytes()
            + 4 * (v / self.read_word)
            + 4 * (v / self.write_word)
    }

    /// Bytes of the padded tile at the start of a block's shared memory (sized by the
    /// bound on any padding, [`TilePlan::slot_bound`]; 16-byte aligned end).
    pub fn image_bytes(&self) -> usize {
        (Self::slot_bound(self.volume(), self.itemsize).next_multiple_of(2) * self.itemsize)
            .next_multiple_of(16)
    }

    /// Bytes of shared memory the read positions take after the image (a 16-bit slot
    /// each, 16-byte aligned end).
    pub fn slot_table_bytes(&self) -> usize {
        (self.volume() * 2).next_multiple_of(16)
    }
}

/// Shared memory a tile may use: 40 KiB (five blocks an SM on Hopper's 228 KiB), or up to
/// [`SHARED_BUDGET_WIDE`] where that leaves fewer remainder slabs ([`tile`]).
const SHARED_BUDGET: usize = 40 * 1024;

/// The most shared memory a block takes without opting in (48 KiB; four blocks an SM). On
/// the H100 a tile this large ran 12-33% faster where it took an axis whole that 40 KiB
/// split into tiles and a remainder slab (one launch instead of three), and 2-6% slower
/// where it only made the tiles larger (BENCHMARKS.md).
const SHARED_BUDGET_WIDE: usize = 48 * 1024;

/// Elements each side of a tile should move contiguously: 128 bytes, at least 32.
fn side_target(itemsize: usize) -> i64 {
    (128 / itemsize as i64).max(32)
}

/// Tile extents per plan axis (0: not a tile axis) for targets `td` (destination) and
/// `ts` (source) elements.
fn extents(p: &CopyPlan, td: i64, ts: i64, q: i64) -> SmallVec<[i64; 8]> {
    let n = p.ndim();
    let mut ext: SmallVec<[i64; 8]> = SmallVec::from_elem(0, n);
    let mut prod = 1i64;
    for k in (0..n).rev() {
        if prod >= td {
            break;
        }
        let need = (td + prod - 1) / prod;
        ext[k] = fit(p.shape[k], need, quantum(p, k, q));
        prod *= ext[k];
    }
    let mut order: SmallVec<[usize; 8]> = (0..n).filter(|&k| p.src_strides[k] != 0).collect();
    order.sort_by_key(|&k| (p.src_strides[k].unsigned_abs(), usize::MAX - k));
    let mut prod = 1i64;
    for k in order {
        if prod >= ts {
            break;
        }
        let need = (ts + prod - 1) / prod;
        ext[k] = ext[k].max(fit(p.shape[k], need, quantum(p, k, q)));
        prod *= ext[k];
    }
    ext
}

/// A tile extent of at least `need` along an axis of `n`, a multiple of `q` unless it is
/// the whole axis: the whole axis when `need` reaches it, else the smallest such divisor
/// of `n` up to `2 * need` (no remainder slab, no extra launch), else `need` rounded up to
/// a multiple of `q`. The divisor search is the largest part of planning a multi-axis
/// copy, and a plan's tile candidates ask for the same extents again and again, as do
/// copies of the same shapes: answers are kept per thread ([`FITS`]).
fn fit(n: i64, need: i64, q: i64) -> i64 {
    let key = (n, need, q);
    let slot = fits_slot(key);
    // A thread being torn down finds no store: it searches, and keeps nothing.
    if let Ok(Some(kept)) = FITS.try_with(|f| {
        let (k, v) = f[slot].get();
        (k == key).then_some(v)
    }) {
        return kept;
    }
    let found = fit_searched(n, need, q);
    let _ = FITS.try_with(|f| f[slot].set((key, found)));
    found
}

/// The slot of [`FITS`] that keeps `(n, need, q)`.
fn fits_slot((n, need, q): (i64, i64, i64)) -> usize {
    ((n as u64 ^ (need as u64).rotate_left(21) ^ (q as u64).rotate_left(42))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        >> (64 - FITS_BITS)) as usize
}

/// [`fit`], searched.
fn fit_searched(n: i64, need: i64, q: i64) -> i64 {
    let need = (need + q - 1) / q * q;
    if need >= n {
        return n;
    }
    let hi = (2 * need).min(n);
    smallest_divisor(n, need, hi, q).unwrap_or(need)
}

/// log2 of the answers of [`fit`] a thread keeps.
const FITS_BITS: u32 = 8;

/// A question to [`fit`] and its answer.
type KeptFit = ((i64, i64, i64), i64);

thread_local! {
    /// `((n, need, q), fit)` by a hash of the key, one answer a slot (a later key that
    /// hashes alike replaces it). An empty slot's key, `(0, 0, 0)`, is no question `fit` is
    /// asked: `q` is at least 1.
    static FITS: [Cell<KeptFit>; 1 << FITS_BITS] =
        const { [const { Cell::new(((0, 0, 0), 0)) }; 1 << FITS_BITS] };
}

/// The smallest divisor of `n` in `lo..=hi` that is a multiple of `q` (`lo` a multiple of
/// `q`, and `1 <= lo <= hi <= n`), walking whichever is shorter: the candidates themselves, or
/// their cofactors `n / d` (largest first), which an axis much longer than the tile
/// makes few.
fn smallest_divisor(n: i64, lo: i64, hi: i64, q: i64) -> Option<i64> {
    if lo < 1 || q < 1 {
        return None;
    }
    let (m_lo, m_hi) = ((n + hi - 1) / hi, n / lo);
    if (hi - lo) / q <= m_hi - m_lo {
        (lo..=hi).step_by(q as usize).find(|d| n % d == 0)
    } else {
        (m_lo..=m_hi)
            .rev()
            .filter(|m| n % m == 0)
            .map(|m| n / m)
            .find(|d| d % q == 0)
    }
}

/// The multiple tile extents along plan axis `k` keep to: `q` along an axis either side
/// moves along contiguously (its extent is the run's length and the step between tiles,
/// which decide whether words of `q` elements stay aligned), else 1.
fn quantum(p: &CopyPlan, k: usize, q: i64) -> i64 {
    if p.src_strides[k].abs() == 1 || p.dst_strides[k].abs() == 1 {
        q
    } else {
        1
    }
}

/// Elements a tile can hold with words of one element: within the shared-memory budget,
/// and no more reads than a block's threads keep in flight.
fn max_volume(itemsize: usize, budget: usize) -> i64 {
    let per_element = itemsize + itemsize.div_ceil(32) + 10; // data, slot, two tables
    (budget / per_element).min(256 * TilePlan::loads_per_thread(itemsize)) as i64
}

/// Enlarges a small tile along the destination's fastest axes not yet whole, towards 2048
/// elements (within [`max_volume`]): tiles of a few dozen elements leave most of a
/// block's threads idle.
fn grow(p: &CopyPlan, ext: &mut [i64], q: i64, budget: usize) {
    let cap = max_volume(p.itemsize, budget);
    let want = cap.min(2048);
    let mut vol: i64 = ext.iter().filter(|&&e| e > 0).product();
    for k in (0..p.ndim()).rev() {
        if vol >= want {
            break;
        }
        let cur = ext[k].max(1);
        if cur >= p.shape[k] {
            continue;
        }
        let qk = quantum(p, k, q);
        let mut grown = fit(p.shape[k], cur * ((want + vol - 1) / vol), qk);
        if vol / cur * grown > cap {
            grown = cur * (cap / vol) / qk * qk;
        }
        if grown <= cur {
            continue;
        }
        vol = vol / cur * grown;
        ext[k] = grown;
    }
}

/// Elements per word for one side of a tile walked in `order` (tile axes, fastest
/// first; extents `ext`, the side's strides `st`, grid steps `steps`), given the side's
/// first-element offset and base address: the widest of 16, 8 or 4 bytes such that every
/// word lies inside one contiguous run of the tile and stays aligned. The run is the
/// leading axes of `order` that follow each other in memory (a 3-long axis and the one
/// over it make one run of 3 x n elements), each walked upwards in memory (an axis of
/// negative stride from its far end, as [`TilePlan::read_order`] does), so that the
/// words start at the tile's lowest element.
fn word(
    itemsize: usize,
    ext: &[i64],
    st: &[i64],
    order: &[usize],
    steps: &[i64],
    offset: i64,
    ptr: u64,
) -> usize {
    let first = order[0];
    // Axes of extent 1 never move: their stride does not matter.
    let st = |k: usize| if ext[k] == 1 { 0 } else { st[k] };
    if st(first).abs() != 1 {
        return 1;
    }
    let mut run = ext[first];
    let mut in_run = 1;
    for &k in &order[1..] {
        if st(k).abs() != run {
            break;
        }
        run *= ext[k];
        in_run += 1;
    }
    let lowest: i64 = order
        .iter()
        .filter(|&&k| st(k) < 0)
        .map(|&k| (ext[k] - 1) * st(k))
        .sum();
    let addr = ptr.wrapping_add_signed((offset + lowest) * itemsize as i64);
    for bytes in [16usize, 8, 4] {
        if bytes <= itemsize {
            break;
        }
        let f = (bytes / itemsize) as i64;
        if run % f == 0
            && order[in_run..].iter().all(|&k| st(k) % f == 0)
            && steps.iter().all(|s| s % f == 0)
            && addr.is_multiple_of(bytes as u64)
        {
            return f as usize;
        }
    }
    1
}

/// The tiled step for `p` and the remainder copies its tiles leave, or `None` when no
/// tile fits the limits: tiles within [`SHARED_BUDGET`], or within [`SHARED_BUDGET_WIDE`]
/// where those leave fewer remainder slabs (fewer launches, fewer sectors that two
/// launches both write).
pub(crate) fn tile(p: &CopyPlan, dst_ptr: u64, src_ptr: u64) -> Option<(TilePlan, Vec<CopyPlan>)> {
    let base = tile_within(p, dst_ptr, src_ptr, SHARED_BUDGET)?;
    let (mut t, rest) = if base.1.is_empty() {
        base
    } else {
        match tile_within(p, dst_ptr, src_ptr, SHARED_BUDGET_WIDE) {
            Some(wide) if wide.1.len() < base.1.len() => wide,
            _ => base,
        }
    };
    // The padding of the tile taken (the candidates' would go unused).
    t.slot_shift = crate::tile_slots::slot_shift(&t);
    Some((t, rest))
}

/// [`tile`] with tiles of at most `budget` bytes of shared memory.
fn tile_within(
    p: &CopyPlan,
    dst_ptr: u64,
    src_ptr: u64,
    budget: usize,
) -> Option<(TilePlan, Vec<CopyPlan>)> {
    let (mut td, mut ts) = (side_target(p.itemsize), side_target(p.itemsize));
    loop {
        if let Some(found) = tile_with(p, dst_ptr, src_ptr, (td, ts), budget, false, 1) {
            let best = widest(p, dst_ptr, src_ptr, (td, ts), budget, found);
            let rest = remainders(p, &best.ext, best.lead);
            return Some((best.tile, rest));
        }
        if td <= 8 && ts <= 8 {
            return None;
        }
        if td >= ts {
            td /= 2;
        } else {
            ts /= 2;
        }
    }
}

/// `found` or, where one has wider words, a variant of it: whole tiles ending at the
/// source's lowest address along its backward axes (the remainder leads), and extents
/// along the contiguous axes kept to multiples of a 16- or 4-byte word (a divisor that
/// leaves no remainder may be odd, and an odd run's words never align). A word-multiple
/// variant costs remainder launches, so it is taken only where it at least doubles the
/// bytes a read and a write move together (measured on the H100, BENCHMARKS.md: 4-byte
/// words widened to 16 gained 1.3x; smaller widenings lost up to 6%).
fn widest(
    p: &CopyPlan,
    dst_ptr: u64,
    src_ptr: u64,
    targets: (i64, i64),
    budget: usize,
    found: Found,
) -> Found {
    let words = |t: &TilePlan| t.read_word + t.write_word;
    let most = 2 * (16 / p.itemsize).max(1);
    let backward = p.src_strides.iter().any(|&s| s < 0);
    let mut quanta: SmallVec<[i64; 2]> = SmallVec::new();
    for bytes in [16, 4] {
        let q = (bytes / p.itemsize) as i64;
        if q > 1 && !quanta.contains(&q) {
            quanta.push(q);
        }
    }
    let mut best = found;
    let tries =
        std::iter::once((true, 1)).chain(quanta.iter().flat_map(|&q| [(false, q), (true, q)]));
    for (lead, q) in tries {
        if words(&best.tile) >= most {
            break;
        }
        if lead && !backward {
            continue;
        }
        // Extents along the contiguous axes that are word multiples already: the same tile.
        let contiguous_multiples = best
            .tile
            .extents
            .iter()
            .zip(best.tile.src_strides.iter().zip(&best.tile.dst_strides))
            .all(|(e, (s, d))| (s.abs() != 1 && d.abs() != 1) || e % q == 0);
        if q > 1 && contiguous_multiples {
            continue;
        }
        if let Some(v) = tile_with(p, dst_ptr, src_ptr, targets, budget, lead, q) {
            let enough = if q > 1 {
                words(&v.tile) >= 2 * words(&best.tile)
            } else {
                words(&v.tile) > words(&best.tile)
            };
            if enough {
                best = v;
            }
        }
    }
    best
}

/// A candidate tile: its plan, its extent along every plan axis (0: not a tile axis), and
/// whether the remainder leads along the source's backward axes.
struct Found {
    tile: TilePlan,
    ext: SmallVec<[i64; 8]>,
    lead: bool,
}

/// The remainder before the whole tiles along plan axis `k` where `lead` asks for it (see
/// [`leading_remainder`]), else none.
fn lead_of(p: &CopyPlan, ext: &[i64], k: usize, lead: bool) -> i64 {
    if lead {
        leading_remainder(p, ext, k)
    } else {
        0
    }
}

/// The tile for targets `td` (destination) and `ts` (source) within `budget` bytes of
/// shared memory (extents kept to multiples of `q` along contiguous axes), or `None` when
/// it breaks a limit. Its remainder slabs are made only for the
/// candidate taken ([`remainders`]).
fn tile_with(
    p: &CopyPlan,
    dst_ptr: u64,
    src_ptr: u64,
    (td, ts): (i64, i64),
    budget: usize,
    lead: bool,
    q: i64,
) -> Option<Found> {
    let n = p.ndim();
    let mut ext = extents(p, td, ts, q);
    grow(p, &mut ext, q, budget);
    // Tile axes, fastest destination axis first.
    let tile_axes: SmallVec<[usize; 8]> = (0..n).rev().filter(|&k| ext[k] > 0).collect();
    let grid_axes: SmallVec<[usize; 8]> = (0..n).rev().filter(|&k| ext[k] < p.shape[k]).collect();
    if tile_axes.len() > TILE_MAX_AXES || grid_axes.len() > TILE_MAX_AXES {
        return None;
    }
    let mut t = TilePlan {
        itemsize: p.itemsize,
        extents: tile_axes.iter().map(|&k| ext[k]).collect(),
        src_strides: tile_axes.iter().map(|&k| p.src_strides[k]).collect(),
        dst_strides: tile_axes.iter().map(|&k| p.dst_strides[k]).collect(),
        src_order: SmallVec::new(),
        counts: Dims::new(),
        src_steps: Dims::new(),
        dst_steps: Dims::new(),
        src_offset: p.src_offset,
        dst_offset: p.dst_offset,
        read_word: 1,
        write_word: 1,
        slot_shift: 0,
    };
    // With `lead`, along an axis the source steps backwards along, whole tiles end at its
    // last coordinate (the source's lowest address) and the remainder leads: the tiles'
    // words then align where the source's lowest element does.
    for k in 0..n {
        let before = lead_of(p, &ext, k, lead);
        t.src_offset += before * p.src_strides[k];
        t.dst_offset += before * p.dst_strides[k];
    }
    let mut order: SmallVec<[usize; 8]> = (0..tile_axes.len()).collect();
    // Broadcast axes (stride 0) last: reads walk memory that moves.
    order.sort_by_key(|&i| (t.src_strides[i] == 0, t.src_strides[i].unsigned_abs(), i));
    t.src_order = order;
    for &k in &grid_axes {
        let step = if ext[k] == 0 { 1 } else { ext[k] };
        let count = if ext[k] == 0 {
            p.shape[k]
        } else {
            p.shape[k] / ext[k]
        };
        t.counts.push(count);
        t.src_steps.push(p.src_strides[k] * step);
        t.dst_steps.push(p.dst_strides[k] * step);
    }
    // 32-bit offsets within a tile and 32-bit tile indices.
    let span = |st: &Dims| -> i64 {
        t.extents
            .iter()
            .zip(st)
            .map(|(e, s)| (e - 1) * s.abs())
            .sum()
    };
    if span(&t.src_strides) >= i32::MAX as i64
        || span(&t.dst_strides) >= i32::MAX as i64
        || t.tiles() > u32::MAX as u64
    {
        return None;
    }
    // Words: reads along the source's run, writes along the destination's.
    let dst_order: SmallVec<[usize; 8]> = (0..t.extents.len()).collect();
    t.read_word = word(
        p.itemsize,
        &t.extents,
        &t.src_strides,
        &t.src_order,
        &t.src_steps,
        t.src_offset,
        src_ptr,
    );
    t.write_word = word(
        p.itemsize,
        &t.extents,
        &t.dst_strides,
        &dst_order,
        &t.dst_steps,
        t.dst_offset,
        dst_ptr,
    );
    let reads = t.volume() / t.read_word;
    if t.shared_bytes() > budget
        || reads > 256 * TilePlan::loads_per_thread(t.read_word * t.itemsize)
    {
        return None;
    }
    Some(Found { tile: t, ext, lead })
}

/// The remainder slabs of tiles of extents `ext` over `p`: along each split axis, the part
/// past the last whole tile (before the first one where the remainder leads).
fn remainders(p: &CopyPlan, ext: &[i64], lead: bool) -> Vec<CopyPlan> {
    let split: SmallVec<[usize; 8]> = (0..p.ndim())
        .filter(|&k| ext[k] > 0 && p.shape[k] % ext[k] != 0)
        .collect();
    let mut rest = Vec::new();
    for mask in 1u32..(1 << split.len()) {
        let mut r = p.clone();
        for (bit, &k) in split.iter().enumerate() {
            let whole = p.shape[k] / ext[k] * ext[k];
            let before = lead_of(p, ext, k, lead);
            // The slab's first coordinate along k, and the tiles' first.
            let (slab, tiles) = if before > 0 { (0, before) } else { (whole, 0) };
            if mask & (1 << bit) != 0 {
                r.src_offset += slab * p.src_strides[k];
                r.dst_offset += slab * p.dst_strides[k];
                r.shape[k] = p.shape[k] - whole;
            } else {
                r.src_offset += tiles * p.src_strides[k];
                r.dst_offset += tiles * p.dst_strides[k];
                r.shape[k] = whole;
            }
        }
        rest.push(squeezed(r));
    }
    rest
}

/// The remainder that comes before the whole tiles along plan axis `k` (tile extents
/// `ext`): the part of the axis that tiles do not divide where the source steps
/// backwards along it, else none.
fn leading_remainder(p: &CopyPlan, ext: &[i64], k: usize) -> i64 {
    if ext[k] > 0 && p.src_strides[k] < 0 {
        p.shape[k] % ext[k]
    } else {
        0
    }
}

/// `p` without its extent-1 axes, volume recounted.
fn squeezed(p: CopyPlan) -> CopyPlan {
    let keep: SmallVec<[usize; 8]> = (0..p.ndim()).filter(|&k| p.shape[k] != 1).collect();
    CopyPlan {
        shape: keep.iter().map(|&k| p.shape[k]).collect(),
        src_strides: keep.iter().map(|&k| p.src_strides[k]).collect(),
        dst_strides: keep.iter().map(|&k| p.dst_strides[k]).collect(),
        volume: p.shape.iter().product::<i64>() as usize,
        ..p
    }
}

#[cfg(test)]
mod tests {
    use super::{fit, fit_searched, fits_slot, smallest_divisor};

    /// The kept answers are the searched ones, keys that share a slot included (thousands
    /// of keys over 256 slots, some differing only in `need` or `q`), asked in one order
    /// and again in another.
    #[test]
    fn kept_fits_are_the_searched_ones() {
        let mut keys = vec![];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = 1 + (x % 100_000) as i64;
            let need = 1 + ((x >> 20) % 3000) as i64;
            let q = [1i64, 2, 4, 8, 16][((x >> 40) % 5) as usize];
            keys.push((n, need, q));
        }
        // Keys that differ only in `need` or `q` (one axis, many tile candidates).
        for n in [720_720i64, 4097, 1_000_003] {
            for need in 1..600 {
                for q in [1i64, 2, 4, 8, 16] {
                    keys.push((n, need, q));
                }
            }
        }
        // Pairs that share a slot, have different answers and differ in one part of the
        // key only, asked in turn: each answer must come from its own key.
        let mut by_slot = vec![vec![]; 1 << super::FITS_BITS];
        for &k in &keys {
            by_slot[fits_slot(k)].push(k);
        }
        let mut pairs = 0;
        for sharing in &by_slot {
            for (i, &a) in sharing.iter().enumerate() {
                for &b in &sharing[i + 1..] {
                    let same = (a.0 == b.0) as u8 + (a.1 == b.1) as u8 + (a.2 == b.2) as u8;
                    if same == 2 && fit_searched(a.0, a.1, a.2) != fit_searched(b.0, b.1, b.2) {
                        pairs += 1;
                        for k in [a, b, a, b] {
                            assert_eq!(fit(k.0, k.1, k.2), fit_searched(k.0, k.1, k.2), "{k:?}");
                        }
                    }
                }
            }
        }
        assert!(pairs > 10, "only {pairs} pairs of keys that share a slot");
        for pass in 0..3 {
            for (i, &(n, need, q)) in keys.iter().enumerate() {
                let (n, need, q) = if pass == 1 {
                    keys[keys.len() - 1 - i]
                } else {
                    (n, need, q)
                };
                assert_eq!(
                    fit(n, need, q),
                    fit_searched(n, need, q),
                    "n {n} need {need} q {q}"
                );
            }
        }
    }

    /// Either walk (the candidates, or their cofactors) finds what a plain search does.
    #[test]
    fn smallest_divisor_agrees_with_a_plain_search() {
        for n in 1..=700i64 {
            for q in [1i64, 2, 4, 8, 16] {
                for lo in (q..=n).step_by(q as usize) {
                    let hi = (2 * lo).min(n);
                    let plain = (lo..=hi).step_by(q as usize).find(|d| n % d == 0);
                    assert_eq!(
                        smallest_divisor(n, lo, hi, q),
                        plain,
                        "n {n} lo {lo} hi {hi} q {q}"
                    );
                }
            }
        }
        // An axis far longer than the tile: the cofactor walk, on a prime and a product.
        assert_eq!(smallest_divisor(1_000_003, 500, 1000, 1), None);
        assert_eq!(smallest_divisor(23_736 * 4096, 1000, 2000, 4), Some(1024));
    }
}
