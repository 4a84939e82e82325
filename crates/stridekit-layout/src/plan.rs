//! Joint normalisation of a source and a destination layout for a copy.

use crate::dims::Dims;
use crate::error::{LayoutError, Result, Tuple};
use crate::layout::StridedLayout;

/// A copy between two layouts of one shape, reduced to the fewest axes.
///
/// Axes run from outermost to innermost by destination stride; size-1 axes are gone,
/// axes with a negative destination stride are flipped in both layouts, and neighbours
/// contiguous in both are merged. Offsets are in elements of `itemsize` bytes, relative to
/// each side's base address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CopyPlan {
    /// Extents of the remaining axes (empty for a single element).
    pub shape: Dims,
    /// Source strides, in elements.
    pub src_strides: Dims,
    /// Destination strides, in elements (positive, decreasing).
    pub dst_strides: Dims,
    /// Offset of the first element on the source side.
    pub src_offset: i64,
    /// Offset of the first element on the destination side.
    pub dst_offset: i64,
    /// Bytes per element.
    pub itemsize: usize,
    /// Number of elements (0: nothing to copy).
    pub volume: usize,
}

/// The longest pattern ([`CopyPlan::repeated_pattern`]) the repeat kernel keeps in shared
/// memory: 8 KiB (with its slack, eight blocks an SM).
pub const REPEAT_PATTERN_MAX_BYTES: usize = 8192;

impl CopyPlan {
    /// Plans a copy from `src` to `dst`. Rejects different shapes or itemsizes and a
    /// destination that maps two elements to one address. A source with stride-0
    /// (broadcast) axes is fine.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// let src = StridedLayout::dense(&[8, 4, 2], 4, Order::C)?;
    /// let dst = StridedLayout::dense(&[8, 4, 2], 4, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// assert!(plan.is_contiguous()); // one memcpy
    /// let t = CopyPlan::new(&dst, &src.to_dense(Order::F)?)?;
    /// assert_eq!(t.shape.as_slice(), &[8, 4, 2]);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn new(dst: &StridedLayout, src: &StridedLayout) -> Result<CopyPlan> {
        if dst.shape() != src.shape() {
            return Err(LayoutError::Plan {
                rule: format!(
                    "source shape {} and destination shape {} differ; they must be equal",
                    Tuple::from(src.shape()),
                    Tuple::from(dst.shape())
                ),
            });
        }
        if dst.itemsize() != src.itemsize() {
            return Err(LayoutError::Plan {
                rule: format!(
                    "source itemsize {} and destination itemsize {} differ; they must be equal",
                    src.itemsize(),
                    dst.itemsize()
                ),
            });
        }
        if !dst.is_unique() {
            return Err(LayoutError::Plan {
                rule: format!(
                    "destination {dst} maps several elements to one address; a destination must be unique"
                ),
            });
        }
        let mut plan = CopyPlan {
            shape: Dims::new(),
            src_strides: Dims::new(),
            dst_strides: Dims::new(),
            src_offset: src.slice_offset(),
            dst_offset: dst.slice_offset(),
            itemsize: dst.itemsize(),
            volume: dst.volume(),
        };
        if plan.volume == 0 {
            return Ok(plan);
        }
        let too_big = || crate::error::overflow(crate::error::Op::PlanCopy, "the copy's offsets");
        // (extent, dst stride, src stride) of the axes that matter, flipped to dst >= 0.
        let mut axes: smallvec::SmallVec<[(i64, i64, i64); 8]> = smallvec::SmallVec::new();
        for ((&e, &d), &s) in dst.shape().iter().zip(dst.strides()).zip(src.strides()) {
            if e == 1 {
                continue;
            }
            if d < 0 {
                // Walk the axis backwards in both layouts: same pairs of elements.
                let walk = |offset: i64, stride: i64| {
                    stride
                        .checked_mul(e - 1)
                        .and_then(|r| offset.checked_add(r))
                };
                plan.dst_offset = walk(plan.dst_offset, d).ok_or_else(too_big)?;
                plan.src_offset = walk(plan.src_offset, s).ok_or_else(too_big)?;
                let (nd, ns) = (d.checked_neg(), s.checked_neg());
                axes.push((e, nd.ok_or_else(too_big)?, ns.ok_or_else(too_big)?));
            } else {
                axes.push((e, d, s));
            }
        }
        // Outermost first: decreasing destination stride (stable for equal strides).
        axes.sort_by_key(|a| std::cmp::Reverse(a.1));
        for (e, d, s) in axes {
            if let (Some(&pd), Some(&ps)) = (plan.dst_strides.last(), plan.src_strides.last()) {
                let last = plan.shape.len() - 1;
                let inner_e = plan.shape[last];
                // Merge when the previous (outer) axis steps exactly over this one in both
                // (a product that overflows steps over nothing).
                if Some(pd) == d.checked_mul(e) && Some(ps) == s.checked_mul(e) {
                    plan.shape[last] = inner_e.checked_mul(e).ok_or_else(too_big)?;
                    plan.dst_strides[last] = d;
                    plan.src_strides[last] = s;
                    continue;
                }
            }
            plan.shape.push(e);
            plan.dst_strides.push(d);
            plan.src_strides.push(s);
        }
        Ok(plan)
    }

    /// The bytes each side reaches, relative to its base address: `(dst, src)`, each a
    /// half-open range `lo..hi` (empty, `0..0`, for an empty plan). Every engine checks
    /// these against the memory it was given before it touches a byte.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// let dst = StridedLayout::dense(&[4, 3], 2, Order::C)?;
    /// let src = StridedLayout::dense(&[3, 4], 2, Order::C)?.permuted(&[1, 0])?;
    /// let (d, s) = CopyPlan::new(&dst, &src)?.byte_bounds()?;
    /// assert_eq!((d, s), (0..24, 0..24));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn byte_bounds(&self) -> Result<(std::ops::Range<i64>, std::ops::Range<i64>)> {
        if self.volume == 0 {
            return Ok((0..0, 0..0));
        }
        let side = |offset: i64, strides: &Dims| -> Option<std::ops::Range<i64>> {
            let isz = i64::try_from(self.itemsize).ok()?;
            let (mut lo, mut hi) = (i128::from(offset), i128::from(offset));
            for (&e, &st) in self.shape.iter().zip(strides.iter()) {
                let reach = i128::from(st) * i128::from(e - 1);
                if reach < 0 {
                    lo += reach;
                } else {
                    hi += reach;
                }
            }
            let lo = i64::try_from(lo * i128::from(isz)).ok()?;
            let hi = i64::try_from((hi + 1) * i128::from(isz)).ok()?;
            Some(lo..hi)
        };
        match (
            side(self.dst_offset, &self.dst_strides),
            side(self.src_offset, &self.src_strides),
        ) {
            (Some(d), Some(s)) => Ok((d, s)),
            _ => Err(crate::error::overflow(
                crate::error::Op::PlanCopy,
                format!(
                    "the byte range of a copy of shape {:?}",
                    self.shape.as_slice()
                ),
            )),
        }
    }

    /// Number of axes left.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The axes for a shared-memory tiled transpose, as `(a, l)`: `l` is the last axis,
    /// contiguous in the destination but not in the source, and `a` the longest axis
    /// contiguous in the source. Reading tiles along `a` and writing them along `l` keeps
    /// both sides coalesced. `None` when the copy is no transpose, or the two axes are
    /// too short (under 16 elements) for tiles to pay.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// let src = StridedLayout::dense(&[64, 48], 4, Order::F)?;
    /// let dst = StridedLayout::dense(&[64, 48], 4, Order::C)?;
    /// assert_eq!(CopyPlan::new(&dst, &src)?.tiled_transpose_axes(), Some((0, 1)));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn tiled_transpose_axes(&self) -> Option<(usize, usize)> {
        const MIN: i64 = 16;
        let n = self.ndim();
        if n < 2 || self.volume == 0 {
            return None;
        }
        let l = n - 1;
        if self.dst_strides[l] != 1 || self.src_strides[l] == 1 || self.shape[l] < MIN {
            return None;
        }
        (0..l)
            .filter(|&a| self.src_strides[a] == 1 && self.shape[a] >= MIN)
            .max_by_key(|&a| self.shape[a])
            .map(|a| (a, l))
    }

    /// The axes of a transpose with one short side (channel layouts: RGB interleaved <->
    /// planar, NHWC <-> NCHW, RGBA -> planes) for 1- and 2-byte elements: `(a, l)`, the
    /// source's and the destination's unit-stride axes, where one of them has 2 to 16
    /// elements (channels) and the other spans at least 256 bytes (pixels), and
    /// - deinterleaving (`a` short): the source's pixels are at most 8 bytes apart (gaps
    ///   between them are read, never written);
    /// - interleaving (`l` short): the destination's pixels are dense (their stride is
    ///   the channel count: no gaps to preserve).
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// // RGB interleaved (H, W, 3) -> planar (3, H, W), bytes.
    /// let src = StridedLayout::dense(&[64, 64, 3], 1, Order::C)?.permuted(&[2, 0, 1])?;
    /// let dst = StridedLayout::dense(&[3, 64, 64], 1, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// let (a, l) = plan.channel_transpose_axes().unwrap();
    /// assert_eq!((plan.shape[a], plan.shape[l]), (3, 64 * 64));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn channel_transpose_axes(&self) -> Option<(usize, usize)> {
        const SHORT: std::ops::RangeInclusive<i64> = 2..=16;
        // Pixels of a batch spanning at least 256 bytes: the kernel tiles one batch at a
        // time, so shorter ones leave its tiles nearly empty (a 3 x 87 halfword transpose
        // in each of 206030 batches ran at 0.06 of the roofline; multi-axis tiles take them).
        const LONG_BYTES: i64 = 256;
        let n = self.ndim();
        if !matches!(self.itemsize, 1 | 2) || n < 2 || self.volume == 0 {
            return None;
        }
        let l = n - 1;
        if self.dst_strides[l] != 1 {
            return None;
        }
        let a = (0..l).find(|&k| self.src_strides[k] == 1)?;
        let isz = self.itemsize as i64;
        let (na, nl) = (self.shape[a], self.shape[l]);
        let deinterleave = SHORT.contains(&na)
            && nl * isz >= LONG_BYTES
            && self.src_strides[l] >= na
            && self.src_strides[l] * isz <= 8;
        let interleave = SHORT.contains(&nl) && na * isz >= LONG_BYTES && self.dst_strides[a] == nl;
        (deinterleave || interleave).then_some((a, l))
    }

    /// Whether the channel transpose over `(a, l)` ([`CopyPlan::channel_transpose_axes`])
    /// deinterleaves (pixels in, planes out: `a` holds the channels) rather than
    /// interleaves (planes in, pixels out: `l` holds them).
    pub fn channel_deinterleaves(&self, (a, l): (usize, usize)) -> bool {
        let isz = self.itemsize as i64;
        self.shape[a] <= 16 && self.src_strides[l].saturating_mul(isz) <= 8
    }

    /// Whether the channel transpose over `(a, l)` can move its pixels in whole groups of
    /// 16 bytes per plane, regrouped in registers: interleaving 2 to 4 channels into
    /// dense pixels (their stride is the channel count), or deinterleaving 1 to 4 channels
    /// out of pixels at most 4 elements apart (what lies between is read, never written:
    /// RGBA read as RGB planes; [`CopyPlan::picked_channel`]), and every plane and every batch's
    /// interleaved run starting at a multiple of 16 bytes, given the two base addresses
    /// (both first elements, the plane stride and every batch axis's stride on both sides
    /// are multiples of 16 bytes).
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// // NHWC -> NCHW, bytes: (2, 32, 32, 3) -> (2, 3, 32, 32).
    /// let src = StridedLayout::dense(&[2, 32, 32, 3], 1, Order::C)?.permuted(&[0, 3, 1, 2])?;
    /// let dst = StridedLayout::dense(&[2, 3, 32, 32], 1, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// let axes = plan.channel_transpose_axes().unwrap();
    /// assert!(plan.channel_deinterleaves(axes));
    /// assert!(plan.channel_groups_aligned(axes, 1 << 20, 1 << 20));
    /// // A source that starts one byte in: the groups are not aligned.
    /// assert!(!plan.channel_groups_aligned(axes, 1 << 20, (1 << 20) + 1));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn channel_groups_aligned(
        &self,
        (a, l): (usize, usize),
        dst_ptr: u64,
        src_ptr: u64,
    ) -> bool {
        let n = self.ndim();
        if !matches!(self.itemsize, 1 | 2) || a >= n || l >= n || a == l || self.volume == 0 {
            return false;
        }
        if self.src_strides[a] != 1 || self.dst_strides[l] != 1 {
            return false;
        }
        let isz = self.itemsize as i64;
        let bytes16 = |x: i64| x.checked_mul(isz).is_some_and(|b| b % 16 == 0);
        let split = self.channel_deinterleaves((a, l));
        let (ch, inter_stride, plane_stride, planar_unit) = if split {
            (
                self.shape[a],
                self.src_strides[l],
                self.dst_strides[a],
                self.dst_strides[l],
            )
        } else {
            (
                self.shape[l],
                self.dst_strides[a],
                self.src_strides[l],
                self.src_strides[a],
            )
        };
        let first = |ptr: u64, offset: i64| {
            offset
                .checked_mul(isz)
                .is_some_and(|o| ptr.wrapping_add_signed(o).is_multiple_of(16))
        };
        // Deinterleaving reads the pixels' other elements (never writes them): up to 4
        // elements a pixel; interleaving writes dense pixels.
        let counts = if split {
            (1..=4).contains(&ch) && (ch..=4).contains(&inter_stride)
        } else {
            (2..=4).contains(&ch) && inter_stride == ch
        };
        counts
            && planar_unit == 1
            && (ch == 1 || bytes16(plane_stride))
            && first(src_ptr, self.src_offset)
            && first(dst_ptr, self.dst_offset)
            && (0..n)
                .filter(|&k| k != a && k != l)
                .all(|k| bytes16(self.src_strides[k]) && bytes16(self.dst_strides[k]))
    }

    /// One channel picked out of interleaved pixels (`x[..., 0]` of an RGB image, `x[::2]`
    /// of bytes or of stereo 16-bit samples), for 1- and 2-byte elements: the last axis is
    /// the destination's unit-stride one, the source steps 2 to 4 elements along it, and
    /// it spans at least 256 bytes. The same copy as a one-channel deinterleave: the plan
    /// with a channel axis of extent 1 (source stride 1) inserted before the last, whose
    /// axes `(a, l)` are the last two, for [`CopyPlan::channel_groups_aligned`].
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// // The red channel of a (64, 64, 3) RGB image.
    /// let rgb = StridedLayout::dense(&[64, 64, 3], 1, Order::C)?;
    /// let red = rgb.sliced(s![.., .., 0])?;
    /// let plan = CopyPlan::new(&StridedLayout::dense(&[64, 64], 1, Order::C)?, &red)?;
    /// let (picked, (a, l)) = plan.picked_channel().unwrap();
    /// assert_eq!((picked.shape[a], picked.shape[l], picked.src_strides[l]), (1, 64 * 64, 3));
    /// assert!(picked.channel_groups_aligned((a, l), 1 << 20, 1 << 20));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn picked_channel(&self) -> Option<(CopyPlan, (usize, usize))> {
        let n = self.ndim();
        if !matches!(self.itemsize, 1 | 2) || n == 0 || self.volume == 0 {
            return None;
        }
        let l = n - 1;
        let isz = self.itemsize as i64;
        let step = self.src_strides[l];
        if self.dst_strides[l] != 1
            || !(2..=4).contains(&step)
            || self.shape[l].saturating_mul(isz) < 256
        {
            return None;
        }
        let mut q = self.clone();
        q.shape.insert(l, 1);
        q.src_strides.insert(l, 1);
        q.dst_strides.insert(l, 1);
        Some((q, (l, l + 1)))
    }

    /// The axes `(a, l)` of a batch of small matrices transposed, for 1-, 2- and 4-byte
    /// elements: `(B, NL, NA) -> (B, NA, NL)` with both sides dense (each batch one run of
    /// bytes), `a` the source's unit-stride axis and `l` the destination's, each of 2 to
    /// 64 elements, and `l` a whole number of 4-byte words; a matrix of 1- or 2-byte
    /// elements at most 8 KiB (tiles of whole matrices), of 4-byte ones at most 512
    /// elements (a warp's run of whole matrices).
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// let src = StridedLayout::dense(&[8192, 16, 48], 1, Order::C)?.permuted(&[0, 2, 1])?;
    /// let dst = StridedLayout::dense(&[8192, 48, 16], 1, Order::C)?;
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// let (a, l) = plan.small_matrix_axes().unwrap();
    /// assert_eq!((plan.shape[a], plan.shape[l]), (48, 16));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn small_matrix_axes(&self) -> Option<(usize, usize)> {
        let n = self.ndim();
        if !matches!(self.itemsize, 1 | 2 | 4) || !(2..=3).contains(&n) || self.volume == 0 {
            return None;
        }
        let (a, l) = (n - 2, n - 1);
        let (na, nl) = (self.shape[a], self.shape[l]);
        let fits = if self.itemsize == 4 {
            na * nl <= 512
        } else {
            na * nl * self.itemsize as i64 <= 8192
        };
        let isz = self.itemsize as i64;
        let small = |e: i64| (2..=64).contains(&e);
        let dense_batches =
            n == 2 || (self.src_strides[0] == na * nl && self.dst_strides[0] == na * nl);
        let ok = small(na)
            && small(nl)
            && (nl * isz) % 4 == 0
            && fits
            && self.src_strides[a] == 1
            && self.src_strides[l] == na
            && self.dst_strides[l] == 1
            && self.dst_strides[a] == nl
            && dense_batches;
        ok.then_some((a, l))
    }

    /// The axes `(pixels, channels)` of a copy that reverses the channels of every pixel
    /// (RGB -> BGR: `x[..., ::-1]`) for 1- and 2-byte elements: the channel axis (2 to 16
    /// elements) has stride -1 in the source and 1 in the destination, and the pixel axis
    /// (at least 64 elements) is dense on both sides (its stride is the channel count).
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// let rgb = StridedLayout::dense(&[64, 64, 3], 1, Order::C)?;
    /// let plan = CopyPlan::new(&rgb, &rgb.sliced(s![.., .., ..;-1])?)?;
    /// let (p, c) = plan.reversed_channel_axes().unwrap();
    /// assert_eq!((plan.shape[p], plan.shape[c]), (64 * 64, 3));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn reversed_channel_axes(&self) -> Option<(usize, usize)> {
        let n = self.ndim();
        if !matches!(self.itemsize, 1 | 2) || n < 2 || self.volume == 0 {
            return None;
        }
        let c = n - 1;
        let ch = self.shape[c];
        if !(2..=16).contains(&ch) || self.dst_strides[c] != 1 || self.src_strides[c] != -1 {
            return None;
        }
        let p = (0..c).find(|&k| self.src_strides[k] == ch && self.dst_strides[k] == ch)?;
        (self.shape[p] >= 64).then_some((p, c))
    }

    /// Whether this copy reverses rows of 1- or 2-byte elements (`x[..., ::-1]`, a whole
    /// array read backwards): the last axis has stride 1 in the destination and -1 in the
    /// source, and its rows are long (128 bytes or more). The reversed-rows kernel moves
    /// each row in aligned 16-byte chunks, realigned and reversed in registers; the other
    /// axes are batches.
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// let x = StridedLayout::dense(&[480, 640], 1, Order::C)?;
    /// assert!(CopyPlan::new(&x, &x.sliced(s![.., ..;-1])?)?.reversed_rows());
    /// // Short rows (3 channels) are the reversed-channel kernel's.
    /// let rgb = StridedLayout::dense(&[64, 64, 3], 1, Order::C)?;
    /// assert!(!CopyPlan::new(&rgb, &rgb.sliced(s![.., .., ..;-1])?)?.reversed_rows());
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn reversed_rows(&self) -> bool {
        let Some(last) = self.ndim().checked_sub(1) else {
            return false;
        };
        matches!(self.itemsize, 1 | 2)
            && self.volume > 0
            && self.dst_strides[last] == 1
            && self.src_strides[last] == -1
            && self.shape[last].saturating_mul(self.itemsize as i64) >= 128
    }

    /// Where this copy writes one short pattern over and over into a contiguous
    /// destination (`x.expand(n, c).contiguous()`, a constant fill, a small block tiled):
    /// the number of leading axes the source broadcasts (stride 0), so that the remaining
    /// axes hold the pattern, [`REPEAT_PATTERN_MAX_BYTES`] or less. The repeat kernel
    /// gathers the pattern into shared memory once per block and writes the destination
    /// as one run of aligned 16-byte chunks. `None` when the destination is not one dense
    /// run, the source broadcasts no leading axis or the pattern is longer, and for
    /// elements of 16 bytes (words the elementwise kernel already writes whole: on the
    /// H100 a 16-byte fill ran at 1.04 of the roofline elementwise, 0.99 repeated).
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// // A row of 75 halfwords, read every third element, repeated a million times.
    /// let row = StridedLayout::with_offset(&[1 << 20, 75], &[0, 3], 2, 0)?;
    /// let out = StridedLayout::dense(&[1 << 20, 75], 2, Order::C)?;
    /// assert_eq!(CopyPlan::new(&out, &row)?.repeated_pattern(), Some(1));
    /// // A broadcast that writes a strided destination is not one run.
    /// let every_other = StridedLayout::with_offset(&[1 << 20, 75], &[152, 2], 2, 0)?;
    /// assert_eq!(CopyPlan::new(&every_other, &row)?.repeated_pattern(), None);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn repeated_pattern(&self) -> Option<usize> {
        let n = self.ndim();
        if n == 0 || self.volume == 0 || self.itemsize >= 16 {
            return None;
        }
        // One dense run in the destination, slowest axis first.
        let mut dense = 1i64;
        for k in (0..n).rev() {
            if self.dst_strides[k] != dense {
                return None;
            }
            dense = dense.checked_mul(self.shape[k])?;
        }
        let outer = (0..n).take_while(|&k| self.src_strides[k] == 0).count();
        if outer == 0 {
            return None;
        }
        // Elements of the pattern (at most the volume), more than once over.
        let pattern: i64 = self.shape[outer..].iter().product();
        let bytes = pattern.checked_mul(self.itemsize as i64)?;
        (bytes <= REPEAT_PATTERN_MAX_BYTES as i64 && (self.volume as i64) > pattern)
            .then_some(outer)
    }

    /// The same copy counted in bytes when both sides' last axis is contiguous and its
    /// rows are long (128 bytes or more) but move in words of at most 4 bytes (rows that
    /// start at different alignments): the run kernel moves such rows in 16-byte aligned
    /// chunks, realigned with funnel shifts. The byte plan's last axis holds each row's
    /// bytes; its other strides and offsets are in bytes. `None` when the rows do not
    /// qualify or a byte count would overflow.
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// // `[3:, 5:]` of a 7000 x 7000 byte matrix into a dense one: rows start anywhere.
    /// let src = StridedLayout::dense(&[7000, 7000], 1, Order::C)?.sliced(s![3.., 5..])?;
    /// let dst = StridedLayout::dense(&[6997, 6995], 1, Order::C)?;
    /// let rows = CopyPlan::new(&dst, &src)?.shifted_rows().unwrap();
    /// assert_eq!(rows.shape.as_slice(), &[6997, 6995]);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn shifted_rows(&self) -> Option<CopyPlan> {
        let n = self.ndim();
        if n == 0 || self.volume == 0 || self.itemsize > 4 {
            return None;
        }
        let last = n - 1;
        if self.dst_strides[last] != 1 || self.src_strides[last] != 1 {
            return None;
        }
        let isz = i64::try_from(self.itemsize).ok()?;
        let row = self.shape[last].checked_mul(isz)?;
        if row < 128 {
            return None;
        }
        let mut b = self.clone();
        b.itemsize = 1;
        b.shape[last] = row;
        for k in 0..last {
            b.src_strides[k] = self.src_strides[k].checked_mul(isz)?;
            b.dst_strides[k] = self.dst_strides[k].checked_mul(isz)?;
        }
        b.src_offset = self.src_offset.checked_mul(isz)?;
        b.dst_offset = self.dst_offset.checked_mul(isz)?;
        b.volume = self.volume.checked_mul(self.itemsize)?;
        Some(b)
    }

    /// Bytes per word of a tiled transpose over axes `a` (source-contiguous) and `l`
    /// (destination-contiguous), given the two base addresses: 4 for 1- and 2-byte
    /// elements, 8 for 4-byte ones, when both bases (with their offsets) and every stride
    /// other than the two unit ones keep each word aligned; else the itemsize.
    pub fn transpose_word(&self, a: usize, l: usize, dst_ptr: u64, src_ptr: u64) -> usize {
        let w = match self.itemsize {
            1 | 2 => 4i64,
            4 => 8,
            _ => return self.itemsize,
        };
        let isz = self.itemsize as i64;
        let src0 = src_ptr.wrapping_add_signed(self.src_offset * isz);
        let dst0 = dst_ptr.wrapping_add_signed(self.dst_offset * isz);
        let aligned = src0.is_multiple_of(w as u64)
            && dst0.is_multiple_of(w as u64)
            && (0..self.ndim()).all(|k| {
                (k == a || (self.src_strides[k] * isz) % w == 0)
                    && (k == l || (self.dst_strides[k] * isz) % w == 0)
            });
        if aligned {
            w as usize
        } else {
            self.itemsize
        }
    }

    /// True when the destination's elements fill at most four fifths of its span: gaps
    /// between them (every other element, rows of a padded array), so that most of its
    /// sectors are written in part.
    ///
    /// ```
    /// use stridekit_layout::{CopyPlan, Order, StridedLayout};
    /// let a = StridedLayout::dense(&[64, 48], 4, Order::C)?;
    /// let every_other = StridedLayout::with_offset(&[64, 48], &[96, 2], 4, 0)?;
    /// assert!(CopyPlan::new(&every_other, &a)?.gapped_destination());
    /// assert!(!CopyPlan::new(&a, &every_other)?.gapped_destination()); // gaps in the source
    /// // One element of padding after rows of 48: nearly dense.
    /// let padded = StridedLayout::with_offset(&[64, 48], &[49, 1], 4, 0)?;
    /// assert!(!CopyPlan::new(&padded, &a)?.gapped_destination());
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn gapped_destination(&self) -> bool {
        let span = self
            .shape
            .iter()
            .zip(&self.dst_strides)
            .try_fold(1i64, |acc, (&n, &s)| {
                acc.checked_add((n - 1).checked_mul(s.abs())?)
            });
        span.is_none_or(|s| 4 * (s as i128) >= 5 * self.volume as i128)
    }

    /// True when both sides are one gap-free run of bytes in the same order: one memcpy.
    pub fn is_contiguous(&self) -> bool {
        self.volume == 0
            || self.ndim() == 0
            || (self.ndim() == 1 && self.dst_strides[0] == 1 && self.src_strides[0] == 1)
    }

    /// Widens the element to the largest of 16, 8, 4 or 2 bytes (a multiple of the current
    /// itemsize) that the innermost axis allows on both sides: stride 1 in both, extent,
    /// outer strides, offsets and both base addresses divisible. Keeps copies in wide words.
    pub fn vectorized(&self, dst_ptr: u64, src_ptr: u64) -> CopyPlan {
        let mut best = self.clone();
        if self.ndim() == 0 || self.volume == 0 {
            return best;
        }
        let last = self.ndim() - 1;
        if self.dst_strides[last] != 1 || self.src_strides[last] != 1 {
            return best;
        }
        for wide in [16usize, 8, 4, 2] {
            if wide <= self.itemsize || wide % self.itemsize != 0 {
                continue;
            }
            let f = (wide / self.itemsize) as i64;
            let ok = self.shape[last] % f == 0
                && self.dst_strides[..last].iter().all(|s| s % f == 0)
                && self.src_strides[..last].iter().all(|s| s % f == 0)
                && self.dst_offset % f == 0
                && self.src_offset % f == 0
                && dst_ptr.is_multiple_of(wide as u64)
                && src_ptr.is_multiple_of(wide as u64);
            if ok {
                best.shape[last] /= f;
                for i in 0..last {
                    best.dst_strides[i] /= f;
                    best.src_strides[i] /= f;
                }
                best.dst_offset /= f;
                best.src_offset /= f;
                best.itemsize = wide;
                best.volume = self.volume / f as usize;
                return best;
            }
        }
        best
    }
}
