//! Helpers shared by the test files (included with `mod common;`).
#![allow(dead_code)]

/// Deterministic pseudo-random bytes (never all zeros).
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// True when a CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library.
    unsafe { stridekit::cudarc::driver::sys::is_culib_present() }
}

use stridekit::StridedLayout;

#[path = "../../../stridekit-layout/tests/common/mod.rs"]
mod layout_common;

/// Byte offsets (relative to the base) of every element, in row-major index order.
pub fn byte_offsets(l: &StridedLayout) -> Vec<i64> {
    let isz = l.itemsize() as i64;
    layout_common::offsets(l)
        .into_iter()
        .map(|o| o * isz)
        .collect()
}

/// The reference copy: element by element in row-major order, into a copy of `dst`.
pub fn naive_copy(dst: &[u8], dl: &StridedLayout, src: &[u8], sl: &StridedLayout) -> Vec<u8> {
    let mut out = dst.to_vec();
    let isz = dl.itemsize();
    for (d, s) in byte_offsets(dl).into_iter().zip(byte_offsets(sl)) {
        out[d as usize..d as usize + isz].copy_from_slice(&src[s as usize..s as usize + isz]);
    }
    out
}

pub mod dist;
pub mod pattern_check;
pub mod random_set;
pub use random_set::Rng;

/// A random layout of `shape`: dense in a random order inside a padded allocation, then
/// sliced with random (possibly negative) steps; with `broadcast`, some axes have stride 0.
/// Returns the layout and the bytes its memory needs.
pub fn random_layout(
    rng: &mut Rng,
    shape: &[i64],
    itemsize: usize,
    broadcast: bool,
) -> (StridedLayout, usize) {
    use stridekit::{Order, SliceArg};
    let nd = shape.len();
    let bshape: Vec<i64> = shape
        .iter()
        .map(|&e| if broadcast && rng.below(3) == 0 { 1 } else { e })
        .collect();
    let steps: Vec<i64> = (0..nd)
        .map(|_| [1, 1, 2, -1, -2, 3][rng.below(6) as usize])
        .collect();
    let pads: Vec<i64> = (0..nd).map(|_| rng.below(3) as i64).collect();
    let big: Vec<i64> = (0..nd)
        .map(|i| bshape[i] * steps[i].abs() + pads[i])
        .collect();
    let base = StridedLayout::dense(&big, itemsize, Order::Axes(&rng.perm(nd))).unwrap();
    let slices: Vec<SliceArg> = (0..nd)
        .map(|i| {
            let n = bshape[i] * steps[i].abs();
            let start = pads[i].min(rng.below(pads[i] as u64 + 1) as i64);
            random_set::stepped(start, n, steps[i])
        })
        .collect();
    let mut l = base.sliced(&slices).unwrap();
    assert_eq!(l.shape(), &bshape[..]);
    if broadcast {
        l = l.broadcast_to(shape).unwrap();
    }
    (l, base.required_size_in_bytes().unwrap())
}

/// A buffer from `mr` holding `bytes`.
pub fn filled(
    mr: &dyn stridekit::MemoryResource,
    bytes: &[u8],
    stream: &std::sync::Arc<stridekit::CudaStream>,
) -> stridekit::Buffer {
    let mut b = mr.allocate(bytes.len(), stream).unwrap();
    b.copy_from_host(bytes, stream).unwrap();
    b
}

/// All bytes of a buffer.
pub fn read(b: &stridekit::Buffer, stream: &std::sync::Arc<stridekit::CudaStream>) -> Vec<u8> {
    let mut out = vec![0u8; b.size()];
    b.copy_to_host(&mut out, stream).unwrap();
    out
}

/// Bytes a layout's elements reach from its base (0 for an empty one).
pub fn required(l: &StridedLayout) -> usize {
    if l.volume() == 0 {
        return 0;
    }
    ((l.max_offset() + 1) as usize) * l.itemsize()
}

/// Copies `sl` (in memory of `smr`, random bytes) into `dl` (in memory of `dmr`, poisoned
/// with other random bytes) on `stream`; `None` when every byte of the destination's
/// memory is what the host reference gives, else what went wrong.
pub fn copy_between(
    smr: &dyn stridekit::MemoryResource,
    dmr: &dyn stridekit::MemoryResource,
    stream: &std::sync::Arc<stridekit::CudaStream>,
    sl: &StridedLayout,
    dl: &StridedLayout,
    seed: u64,
) -> Option<String> {
    copy_between_padded(smr, dmr, stream, (sl, dl), seed, 0)
}

/// [`copy_between`] in buffers of `pad` bytes more than each layout's elements reach.
pub fn copy_between_padded(
    smr: &dyn stridekit::MemoryResource,
    dmr: &dyn stridekit::MemoryResource,
    stream: &std::sync::Arc<stridekit::CudaStream>,
    (sl, dl): (&StridedLayout, &StridedLayout),
    seed: u64,
    pad: usize,
) -> Option<String> {
    use stridekit::{StridedMemoryView, StridedMemoryViewMut};
    let data = random_bytes(required(sl).max(1) + pad, seed);
    let poison = random_bytes(required(dl).max(1) + pad, seed ^ 0x5a5a);
    let sbuf = filled(smr, &data, stream);
    let mut dbuf = filled(dmr, &poison, stream);
    {
        let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
        if let Err(e) = dst.copy_from(&src, Some(stream)) {
            return Some(format!("{sl} -> {dl}: {e}"));
        }
    }
    stream.synchronize().unwrap();
    let got = read(&dbuf, stream);
    let want = naive_copy(&poison, dl, &data, sl);
    (got != want).then(|| {
        let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        format!("{sl} -> {dl}: {bad} of {} bytes differ", want.len())
    })
}

/// A dense C-order layout of `shape` with `itemsize`-byte elements.
pub fn dense_c(shape: &[i64], itemsize: usize) -> StridedLayout {
    StridedLayout::dense(shape, itemsize, stridekit::Order::C).unwrap()
}

/// [`dense_c`] with its axes permuted (`perm[k]` is the axis that becomes axis `k`).
pub fn permuted_c(shape: &[i64], itemsize: usize, perm: &[i64]) -> StridedLayout {
    dense_c(shape, itemsize).permuted(perm).unwrap()
}
