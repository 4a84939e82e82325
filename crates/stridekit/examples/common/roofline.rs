//! The roofline of a copy: the DRAM traffic it cannot avoid (shared by the benchmarks).

use stridekit::StridedLayout;

/// Bytes a copy must write and read at least: the bytes of its elements, plus the
/// 32-byte sectors the source's reads touch.
pub fn traffic(src: &StridedLayout) -> u64 {
    read_bytes(src) + (src.volume() * src.itemsize()) as u64
}

/// Bytes of the 32-byte sectors the reads of `l` touch. Where its offsets are from a
/// 32-byte aligned base (none negative: stridekit's buffers are 256-byte aligned), every
/// element's sector is counted exactly, once however many elements share it; otherwise
/// an estimate ([`read_bytes_estimate`]).
pub fn read_bytes(l: &StridedLayout) -> u64 {
    match sector_fill(l) {
        Some(fill) if l.volume() > 0 => 32 * fill.iter().filter(|&&f| f > 0).count() as u64,
        _ => read_bytes_estimate(l),
    }
}

/// Sectors (32 bytes) the reads of `l` touch, estimated: per row along the smallest
/// nonzero stride, capped by the span; axes of stride 0 are read once. Rows a few
/// elements long that interleave inside the same sectors are counted once per row.
pub fn read_bytes_estimate(l: &StridedLayout) -> u64 {
    let isz = l.itemsize() as i64;
    let axes: Vec<(i64, i64)> = l
        .shape()
        .iter()
        .zip(l.strides())
        .filter(|(&n, &s)| n > 1 && s != 0)
        .map(|(&n, &s)| (n, s.abs() * isz))
        .collect();
    if axes.is_empty() {
        return 32;
    }
    let (inner, _) = axes
        .iter()
        .enumerate()
        .min_by_key(|(_, (_, s))| *s)
        .unwrap_or((0, &(1, 1)));
    let (n, s) = axes[inner];
    let rows: i64 = axes
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != inner)
        .map(|(_, (n, _))| n)
        .product();
    let per_row = if s >= 32 {
        n
    } else {
        let bytes = (n - 1) * s + isz;
        let aligned = (l.slice_offset() * isz) % 32 == 0
            && axes.iter().all(|(_, s)| s % 32 == 0 || *s == axes[inner].1);
        (bytes + 31) / 32 + if aligned { 0 } else { 1 }
    };
    let (lo, hi) = l.offset_bounds();
    let span = ((hi - lo + 1) * isz) as u64;
    ((rows * per_row) as u64 * 32).min(span.div_ceil(32) * 32 + 32)
}

/// [`sector_exact_traffic`] with the source's reads counted in aligned 64-byte pairs of
/// sectors: the H100's DRAM serves a read of one sector of a pair at about the cost of
/// both (`bench/kernel_lab/granularity_lab.cu`: every other 32-byte sector read runs at
/// 0.68 of the sector-exact rate, 64-byte runs at 0.95). A copy whose sources touch
/// isolated sectors cannot pass this figure; None where the source's offsets are not
/// from an aligned base.
pub fn pair_traffic(src: &StridedLayout, dst: &StridedLayout) -> Option<u64> {
    let fill = sector_fill(src)?;
    let pairs = fill.chunks(2).filter(|p| p.iter().any(|&f| f > 0)).count() as u64;
    let (full, partial) = written_sectors(dst);
    Some(64 * pairs + 32 * full + 64 * partial)
}

/// Bytes a copy into `dst` from `src` must move when DRAM works in 32-byte sectors: the
/// sectors its reads touch ([`read_bytes`]), every written sector once, and a partially
/// written sector twice (the DRAM reads it, merges the new bytes and writes it back).
/// `dst` offsets are from a 32-byte aligned base (stridekit's buffers are 256-byte
/// aligned). The primary roofline of the copy benchmarks; [`traffic`] is the bytes-only
/// figure beside it.
pub fn sector_exact_traffic(src: &StridedLayout, dst: &StridedLayout) -> u64 {
    let (full, partial) = written_sectors(dst);
    read_bytes(src) + 32 * full + 64 * partial
}

/// (fully written, partially written) 32-byte sectors of a unique layout whose offsets
/// are from a 32-byte aligned base, counted element by element.
pub fn written_sectors(dst: &StridedLayout) -> (u64, u64) {
    let Some(fill) = sector_fill(dst) else {
        return (0, 0);
    };
    let full = fill.iter().filter(|&&f| f >= 32).count() as u64;
    let partial = fill.iter().filter(|&&f| f > 0 && f < 32).count() as u64;
    (full, partial)
}

/// Bytes of `l`'s elements in each 32-byte sector from its base (saturating at 255: an
/// element read through a stride-0 axis counts each time), or None when an offset is
/// negative or there is no element.
fn sector_fill(l: &StridedLayout) -> Option<Vec<u8>> {
    let isz = l.itemsize();
    let (lo, hi) = l.offset_bounds();
    if l.volume() == 0 || lo < 0 {
        return None;
    }
    let mut fill = vec![0u8; ((hi as usize + 1) * isz).div_ceil(32)];
    let shape = l.shape();
    let strides = l.strides();
    let nd = shape.len();
    let mut idx = vec![0i64; nd];
    let mut off = l.slice_offset();
    for _ in 0..l.volume() {
        let first = off as usize * isz;
        // An element of 32 bytes or more covers whole sectors; a smaller one, part of one
        // (elements never straddle sectors: offsets are multiples of the itemsize).
        let mut b = first;
        while b < first + isz {
            let take = (32 - b % 32).min(first + isz - b);
            fill[b / 32] = fill[b / 32].saturating_add(take as u8);
            b += take;
        }
        let mut ax = nd;
        while ax > 0 {
            ax -= 1;
            idx[ax] += 1;
            off += strides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            off -= strides[ax] * shape[ax];
            idx[ax] = 0;
        }
    }
    Some(fill)
}
