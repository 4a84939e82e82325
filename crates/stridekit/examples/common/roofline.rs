//! The roofline of a copy: the DRAM traffic it cannot avoid (shared by the benchmarks).

use stridekit::StridedLayout;

/// Bytes a copy must write and read at least: the bytes of its elements, plus the
/// 32-byte sectors the source's reads touch.
pub fn traffic(src: &StridedLayout) -> u64 {
    read_bytes(src) + (src.volume() * src.itemsize()) as u64
}

/// Sectors (32 bytes) the reads of `l` touch: per row along the smallest nonzero stride,
/// capped by the span; axes of stride 0 are read once.
pub fn read_bytes(l: &StridedLayout) -> u64 {
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
