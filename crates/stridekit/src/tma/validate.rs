//! Every rule of cuTensorMapEncodeTiled / Im2col / Im2colWide, checked before the driver
//! sees the arguments, and the translation to the driver's innermost-first order.
//!
//! Nothing here touches the GPU: the inputs are a layout, an address, a dtype and the
//! device's compute capability, so CI tests every rule.

use super::options::{
    Common, Im2colOptions, Im2colWideMode, Im2colWideOptions, Interleave, Swizzle,
    TensorMapDataType, TiledOptions,
};
use crate::dtype::DType;
use crate::error::{Error, Result};
use stridekit_layout::StridedLayout;

/// The largest rank a tensor map takes.
pub const MAX_RANK: usize = 5;

/// What kind of tensor map, with its own options.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind<'o> {
    Tiled(&'o TiledOptions),
    Im2col(&'o Im2colOptions),
    Im2colWide(&'o Im2colWideOptions),
}

impl Kind<'_> {
    pub(crate) fn op(&self) -> &'static str {
        match self {
            Kind::Tiled(_) => "TensorMapDescriptor::tiled",
            Kind::Im2col(_) => "TensorMapDescriptor::im2col",
            Kind::Im2colWide(_) => "TensorMapDescriptor::im2col_wide",
        }
    }

    pub(crate) fn call(&self) -> &'static str {
        match self {
            Kind::Tiled(_) => "cuTensorMapEncodeTiled",
            Kind::Im2col(_) => "cuTensorMapEncodeIm2col",
            Kind::Im2colWide(_) => "cuTensorMapEncodeIm2colWide",
        }
    }

    fn common(&self) -> &Common {
        match self {
            Kind::Tiled(o) => &o.common,
            Kind::Im2col(o) => &o.common,
            Kind::Im2colWide(o) => &o.common,
        }
    }
}

/// The arguments of the encode call, innermost dimension first, as the driver takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Encoding {
    pub data_type: TensorMapDataType,
    pub rank: usize,
    pub address: u64,
    pub global_dim: [u64; MAX_RANK],
    pub global_strides: [u64; MAX_RANK - 1],
    pub element_strides: [u32; MAX_RANK],
    pub box_dim: [u32; MAX_RANK],
    pub lower_corner: [i32; 3],
    pub upper_corner: [i32; 3],
    pub channels_per_pixel: u32,
    pub pixels_per_column: u32,
    pub wide_mode: Im2colWideMode,
    pub common: Common,
}

/// Where the tensor is: its layout (with offset), the base address of its memory, its
/// dtype if known, and the compute capability of its device.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'l> {
    pub layout: &'l StridedLayout,
    pub base: u64,
    pub dtype: Option<DType>,
    pub cc: (i32, i32),
}

struct Ctx {
    op: &'static str,
    call: &'static str,
}

impl Ctx {
    /// A broken rule: what was given, the rule, and the driver parameter it comes from.
    fn bad(&self, what: String, rule: &str, param: &str) -> Error {
        Error::Invalid {
            op: self.op,
            rule: format!("{what}; {rule} ({}: {param})", self.call),
        }
    }
}

const GIB4: u64 = 1 << 32;
/// The most bytes one box may hold: 228 KiB. The driver documentation states no such
/// limit; measured on compute capability 9.0, driver 580 (`examples/tma_probe.rs`):
/// tiled boxes of 233472 bytes are accepted and of 237568 refused for u8, f32 and f64;
/// im2col channels x pixels of 233472 bytes accepted, 233520 refused.
const BOX_BYTES_LIMIT: usize = 233_472;
const STRIDE_LIMIT: u64 = 1 << 40;

/// Validates the source and options for `kind` and encodes them for the driver: one
/// rule group after another, in the order a user would fix them.
pub(crate) fn encode(src: Source<'_>, kind: Kind<'_>) -> Result<Encoding> {
    let cx = Ctx {
        op: kind.op(),
        call: kind.call(),
    };
    let common = kind.common();
    let layout = src.layout;
    check_hardware(&cx, &src, &kind)?;
    let data_type = data_type(&cx, &src, common)?;
    check_rank(&cx, layout.ndim(), &kind, common)?;
    let align = if common.interleave == Interleave::B32 {
        32
    } else {
        16
    };
    let address = first_address(&cx, &src, align)?;
    check_global_dims(&cx, layout)?;
    check_inner_contiguous(&cx, layout)?;
    let global_strides = outer_strides(&cx, layout, align)?;
    let rank = layout.ndim();
    let inner = rank - 1;
    let mut enc = Encoding {
        data_type,
        rank,
        address,
        global_dim: [1; MAX_RANK],
        global_strides,
        element_strides: [1; MAX_RANK],
        box_dim: [1; MAX_RANK],
        lower_corner: [0; 3],
        upper_corner: [0; 3],
        channels_per_pixel: 0,
        pixels_per_column: 0,
        wide_mode: Im2colWideMode::W,
        common: common.clone(),
    };
    for (axis, &e) in layout.shape().iter().enumerate() {
        enc.global_dim[inner - axis] = e as u64;
    }
    element_strides(&cx, common, rank, &mut enc)?;
    check_swizzle_interleave(&cx, common)?;
    check_oob_fill(&cx, common, data_type)?;
    match kind {
        Kind::Tiled(o) => tiled_box(&cx, o, common, layout.shape(), &mut enc),
        Kind::Im2col(o) => im2col_box(&cx, o, common, layout.shape(), &mut enc),
        Kind::Im2colWide(o) => im2col_wide_box(&cx, o, common, layout.shape(), &mut enc),
    }?;
    Ok(enc)
}

/// TMA needs compute capability 9.0 (10.0 for im2col-wide).
fn check_hardware(cx: &Ctx, src: &Source<'_>, kind: &Kind<'_>) -> Result<()> {
    let need = if matches!(kind, Kind::Im2colWide(_)) {
        (10, 0)
    } else {
        (9, 0)
    };
    if src.cc < need {
        return Err(Error::Unsupported {
            op: cx.op,
            reason: format!(
                "the device has compute capability {}.{}; {} needs {}.{} or newer",
                src.cc.0, src.cc.1, cx.call, need.0, need.1
            ),
        });
    }

    Ok(())
}

/// The element type TMA moves: explicit (of the view's itemsize) or the view's dtype's.
fn data_type(cx: &Ctx, src: &Source<'_>, common: &Common) -> Result<TensorMapDataType> {
    let itemsize = src.layout.itemsize();
    Ok(match (common.data_type, src.dtype) {
        (Some(t), _) if t.size() != itemsize => {
            return Err(cx.bad(
                format!(
                "data type {t:?} has {} bytes per element but the view's elements have {itemsize}",
                t.size()
            ),
                "an explicit data type must have the view's itemsize",
                "tensorDataType",
            ))
        }
        (Some(t), _) => t,
        (None, Some(d)) => TensorMapDataType::for_dtype(d).ok_or_else(|| {
            cx.bad(
                format!("the view's dtype {d:?} has no TMA data type"),
                "pass data_type explicitly (for example U64 for complex64 moved as bits)",
                "tensorDataType",
            )
        })?,
        (None, None) => {
            return Err(cx.bad(
                "the view has no dtype".into(),
                "pass data_type explicitly",
                "tensorDataType",
            ))
        }
    })
}

/// The rank each kind takes, and interleave's minimum.
fn check_rank(cx: &Ctx, rank: usize, kind: &Kind<'_>, common: &Common) -> Result<()> {
    let (lo, hi) = match kind {
        Kind::Tiled(_) => (1, MAX_RANK),
        _ => (3, MAX_RANK),
    };
    if rank < lo || rank > hi {
        return Err(cx.bad(
            format!("the view has rank {rank}"),
            &format!("the rank must be in [{lo}, {hi}]"),
            "tensorRank",
        ));
    }
    if common.interleave != Interleave::None && rank < 3 {
        return Err(cx.bad(
            format!("interleave {:?} with rank {rank}", common.interleave),
            "an interleaved layout needs rank 3 or more",
            "tensorRank",
        ));
    }

    Ok(())
}

/// The first element's address, aligned as the interleave needs.
fn first_address(cx: &Ctx, src: &Source<'_>, align: u64) -> Result<u64> {
    let itemsize = src.layout.itemsize();
    let layout = src.layout;
    let offset_bytes = layout
        .slice_offset()
        .checked_mul(itemsize as i64)
        .ok_or_else(|| cx.bad("the view's offset overflows".into(), "", "globalAddress"))?;
    let address = src.base.checked_add_signed(offset_bytes).ok_or_else(|| {
        cx.bad(
            format!(
                "base {:#x} + offset {offset_bytes} bytes leaves the address space",
                src.base
            ),
            "the address must be valid",
            "globalAddress",
        )
    })?;
    if address % align != 0 {
        return Err(cx.bad(
            format!("the view's first element is at {address:#x}, {} bytes past a {align}-byte boundary", address % align),
            &format!(
                "the global address must be {align}-byte aligned{}",
                if align == 32 { " with 32-byte interleave" } else { "" }
            ),
            "globalAddress",
        ));
    }

    Ok(address)
}

/// Every global dimension in [1, 2^32].
fn check_global_dims(cx: &Ctx, layout: &StridedLayout) -> Result<()> {
    let shape = layout.shape();
    for (axis, &e) in shape.iter().enumerate() {
        if e < 1 || e as u64 > GIB4 {
            return Err(cx.bad(
                format!("axis {axis} has extent {e}"),
                "every global dimension must be in [1, 2^32]",
                "globalDim",
            ));
        }
    }

    Ok(())
}

/// The innermost axis is read contiguously: its stride is 1 element.
fn check_inner_contiguous(cx: &Ctx, layout: &StridedLayout) -> Result<()> {
    let (shape, strides, rank) = (layout.shape(), layout.strides(), layout.ndim());
    let inner = rank - 1;
    if shape[inner] > 1 && strides[inner] != 1 {
        let hint = match (0..rank).find(|&a| strides[a] == 1 && shape[a] > 1) {
            Some(a) => {
                let mut perm: Vec<usize> = (0..rank).filter(|&k| k != a).collect();
                perm.push(a);
                format!(
                    "; axis {a} has stride 1, so build the descriptor from the view permuted by {perm:?}, which puts it last"
                )
            }
            None => "; no axis has stride 1, so copy the tensor to a dense layout first".into(),
        };
        return Err(cx.bad(
            format!(
                "the innermost (last) axis {inner} has stride {} elements{hint}",
                strides[inner]
            ),
            "TMA reads the innermost dimension contiguously, so its stride must be 1 element",
            "globalDim[0] has no stride",
        ));
    }

    Ok(())
}

/// The outer strides in bytes, innermost-first for the driver.
fn outer_strides(cx: &Ctx, layout: &StridedLayout, align: u64) -> Result<[u64; MAX_RANK - 1]> {
    let (shape, strides, itemsize) = (layout.shape(), layout.strides(), layout.itemsize());
    let inner = layout.ndim() - 1;
    let mut global_strides = [0u64; MAX_RANK - 1];
    let substitute = strides
        .iter()
        .zip(shape)
        .filter(|(_, &e)| e > 1)
        .map(|(&s, _)| (s.unsigned_abs()).saturating_mul(itemsize as u64))
        .max()
        .unwrap_or(0)
        .max(align)
        .div_ceil(align)
        * align;
    for axis in 0..inner {
        let s = strides[axis];
        let bytes = s as i128 * itemsize as i128;
        let valid = bytes > 0 && bytes % align as i128 == 0 && bytes < STRIDE_LIMIT as i128;
        let value = if valid {
            bytes as u64
        } else if shape[axis] == 1 {
            // An axis of extent 1 is never stepped along: any valid stride describes it.
            substitute.min(STRIDE_LIMIT - align)
        } else if s < 0 {
            return Err(cx.bad(
                format!("axis {axis} has negative stride {s} elements"),
                "TMA strides are unsigned byte counts; flip the axis (slice with step 1) first",
                "globalStrides",
            ));
        } else if s == 0 {
            return Err(cx.bad(
                format!("axis {axis} has stride 0 (a broadcast axis of extent {})", shape[axis]),
                "each stride must be a positive multiple of 16 bytes; materialise the broadcast first",
                "globalStrides",
            ));
        } else if bytes % align as i128 != 0 {
            return Err(cx.bad(
                format!(
                    "axis {axis} has stride {s} elements = {bytes} bytes, {} past a multiple of {align}",
                    bytes % align as i128
                ),
                &format!(
                    "each stride except the innermost must be a multiple of {align} bytes{}; pad the rows so the stride becomes {}",
                    if align == 32 { " with 32-byte interleave" } else { "" },
                    (bytes as u64).div_ceil(align) * align
                ),
                "globalStrides",
            ));
        } else {
            return Err(cx.bad(
                format!("axis {axis} has stride {bytes} bytes"),
                "each stride must be below 2^40 bytes",
                "globalStrides",
            ));
        };
        global_strides[inner - 1 - axis] = value;
    }

    Ok(global_strides)
}

/// Element strides: one per axis, in [1, 8], 1 on the innermost without interleave.
fn element_strides(cx: &Ctx, common: &Common, rank: usize, enc: &mut Encoding) -> Result<()> {
    let inner = rank - 1;
    if let Some(es) = &common.element_strides {
        if es.len() != rank {
            return Err(cx.bad(
                format!("{} element strides for a view of rank {rank}", es.len()),
                "give one element stride per axis",
                "elementStrides",
            ));
        }
        for (axis, &e) in es.iter().enumerate() {
            if !(1..=8).contains(&e) {
                return Err(cx.bad(
                    format!("axis {axis} has element stride {e}"),
                    "every element stride must be in [1, 8]",
                    "elementStrides",
                ));
            }
        }
        if common.interleave == Interleave::None && es[inner] != 1 {
            return Err(cx.bad(
                format!("the innermost axis {inner} has element stride {}", es[inner]),
                "without interleave TMA ignores the innermost element stride, so it must be 1 (stride an outer axis instead)",
                "elementStrides[0]",
            ));
        }
        for (axis, &e) in es.iter().enumerate() {
            enc.element_strides[inner - axis] = e;
        }
    }

    Ok(())
}

/// 32-byte interleave goes with the 32-byte swizzle.
fn check_swizzle_interleave(cx: &Ctx, common: &Common) -> Result<()> {
    if common.interleave == Interleave::B32 && common.swizzle != Swizzle::B32 {
        return Err(cx.bad(
            format!("interleave B32 with swizzle {:?}", common.swizzle),
            "32-byte interleave requires the 32-byte swizzle",
            "swizzle",
        ));
    }
    Ok(())
}

/// Without interleave, the inner box fits in the swizzle span.
fn check_span(cx: &Ctx, common: &Common, inner_bytes: usize, what: &str) -> Result<()> {
    let span = common.swizzle.span();
    if common.interleave == Interleave::None && span > 0 && inner_bytes > span {
        return Err(cx.bad(
            format!("the inner {what} is {inner_bytes} bytes but swizzle {:?} spans {span}", common.swizzle),
            "without interleave, the inner box must fit in the swizzle span (choose a wider swizzle or a narrower box)",
            "swizzle",
        ));
    }
    Ok(())
}

/// NaN fill only for floating-point data.
fn check_oob_fill(cx: &Ctx, common: &Common, data_type: TensorMapDataType) -> Result<()> {
    if common.oob_fill == super::options::OobFill::Nan && !data_type.is_floating() {
        return Err(cx.bad(
            format!("NaN fill with data type {data_type:?}"),
            "NaN out-of-bounds fill needs a floating-point data type",
            "oobFill",
        ));
    }

    Ok(())
}

/// A tiled box: one dimension per axis in [1, 256], the inner box a multiple of 16
/// bytes, at most 228 KiB, within the swizzle span.
fn tiled_box(
    cx: &Ctx,
    o: &TiledOptions,
    common: &Common,
    shape: &[i64],
    enc: &mut Encoding,
) -> Result<()> {
    let (rank, esize) = (shape.len(), enc.data_type.size());
    let inner = rank - 1;

    if o.box_dim.len() != rank {
        return Err(cx.bad(
            format!(
                "the box has {} dimensions but the view has rank {rank}",
                o.box_dim.len()
            ),
            "give one box dimension per axis",
            "boxDim",
        ));
    }
    for (axis, &b) in o.box_dim.iter().enumerate() {
        if !(1..=256).contains(&b) {
            return Err(cx.bad(
                format!("axis {axis} has box dimension {b}"),
                "every box dimension must be in [1, 256]",
                "boxDim",
            ));
        }
        enc.box_dim[inner - axis] = b;
    }
    let inner_bytes = o.box_dim[inner] as usize * esize;
    if !inner_bytes.is_multiple_of(16) {
        return Err(cx.bad(
                format!(
                    "the inner box is {} elements x {esize} bytes = {inner_bytes} bytes",
                    o.box_dim[inner]
                ),
                "the inner box must be a multiple of 16 bytes, with or without interleave (with interleave: measured on compute capability 9.0, driver 580)",
                "boxDim[0]",
            ));
    }
    let total: usize = o.box_dim.iter().map(|&b| b as usize).product::<usize>() * esize;
    if total > BOX_BYTES_LIMIT {
        return Err(cx.bad(
                format!(
                    "the box {:?} of {esize}-byte elements holds {total} bytes",
                    o.box_dim
                ),
                &format!("a box may hold at most {BOX_BYTES_LIMIT} bytes (228 KiB; measured on compute capability 9.0, driver 580, where the documentation states no limit)"),
                "boxDim",
            ));
    }
    check_span(cx, common, inner_bytes, "box")
}

/// An im2col box: corners per spatial axis in range and a non-empty bounding box,
/// channels and pixels in range, channels a multiple of 16 bytes, at most 228 KiB.
fn im2col_box(
    cx: &Ctx,
    o: &Im2colOptions,
    common: &Common,
    shape: &[i64],
    enc: &mut Encoding,
) -> Result<()> {
    let (rank, esize) = (shape.len(), enc.data_type.size());

    let spatial = rank - 2;
    let limit: i32 = match rank {
        3 => 32768,
        4 => 128,
        _ => 16,
    };
    for (name, c) in [("lower", &o.lower_corner), ("upper", &o.upper_corner)] {
        if c.len() != spatial {
            return Err(cx.bad(
                format!("{} {name} corner offsets for rank {rank}", c.len()),
                &format!("give one offset per spatial axis ({spatial} for rank {rank})"),
                if name == "lower" {
                    "pixelBoxLowerCorner"
                } else {
                    "pixelBoxUpperCorner"
                },
            ));
        }
        for (k, &v) in c.iter().enumerate() {
            if v < -limit || v >= limit {
                return Err(cx.bad(
                    format!(
                        "{name} corner offset {v} on spatial axis {} (view axis {})",
                        k,
                        k + 1
                    ),
                    &format!(
                        "with rank {rank} each offset must be in [{}, {}]",
                        -limit,
                        limit - 1
                    ),
                    if name == "lower" {
                        "pixelBoxLowerCorner"
                    } else {
                        "pixelBoxUpperCorner"
                    },
                ));
            }
        }
    }
    for k in 0..spatial {
        let extent = shape[k + 1];
        let size = extent + o.upper_corner[k] as i64 - o.lower_corner[k] as i64;
        if size <= 0 {
            return Err(cx.bad(
                format!(
                    "on view axis {} (extent {extent}) the box spans {} to {}, which is empty",
                    k + 1,
                    o.lower_corner[k],
                    extent - 1 + o.upper_corner[k] as i64
                ),
                "the bounding box must have non-zero area",
                "pixelBoxLowerCorner/pixelBoxUpperCorner",
            ));
        }
        enc.lower_corner[spatial - 1 - k] = o.lower_corner[k];
        enc.upper_corner[spatial - 1 - k] = o.upper_corner[k];
    }
    check_counts(cx, o.channels_per_pixel, o.pixels_per_column, true)?;
    let channel_bytes = o.channels_per_pixel as usize * esize;
    if !channel_bytes.is_multiple_of(16) {
        return Err(cx.bad(
                format!(
                    "{} channels per pixel x {esize} bytes = {channel_bytes} bytes",
                    o.channels_per_pixel
                ),
                "the channels of a pixel must be a multiple of 16 bytes (measured on compute capability 9.0, driver 580)",
                "channelsPerPixel",
            ));
    }
    let total = channel_bytes * o.pixels_per_column as usize;
    if total > BOX_BYTES_LIMIT {
        return Err(cx.bad(
                format!(
                    "{} channels x {} pixels x {esize} bytes = {total} bytes",
                    o.channels_per_pixel, o.pixels_per_column
                ),
                &format!("a box may hold at most {BOX_BYTES_LIMIT} bytes (228 KiB; measured on compute capability 9.0, driver 580, where the documentation states no limit)"),
                "channelsPerPixel x pixelsPerColumn",
            ));
    }
    enc.channels_per_pixel = o.channels_per_pixel;
    enc.pixels_per_column = o.pixels_per_column;
    check_span(
        cx,
        common,
        o.channels_per_pixel as usize * esize,
        "box (channels per pixel)",
    )
}

/// An im2col-wide box: W corners in range and a non-empty bounding box, counts in
/// range, the 64- or 128-byte swizzle.
fn im2col_wide_box(
    cx: &Ctx,
    o: &Im2colWideOptions,
    common: &Common,
    shape: &[i64],
    enc: &mut Encoding,
) -> Result<()> {
    let (rank, esize) = (shape.len(), enc.data_type.size());

    for (name, v) in [("lower", o.lower_corner_w), ("upper", o.upper_corner_w)] {
        if !(-32768..=32767).contains(&v) {
            return Err(cx.bad(
                format!("{name} corner offset {v} along W"),
                "each W offset must be in [-32768, 32767]",
                "pixelBoxLowerCornerWidth/pixelBoxUpperCornerWidth",
            ));
        }
    }
    let w = shape[rank - 2];
    if w + o.upper_corner_w as i64 - o.lower_corner_w as i64 <= 0 {
        return Err(cx.bad(
            format!(
                "along W (extent {w}) the box spans {} to {}, which is empty",
                o.lower_corner_w,
                w - 1 + o.upper_corner_w as i64
            ),
            "the bounding box must have non-zero area",
            "pixelBoxLowerCornerWidth/pixelBoxUpperCornerWidth",
        ));
    }
    check_counts(
        cx,
        o.channels_per_pixel,
        o.pixels_per_column,
        o.mode == Im2colWideMode::W,
    )?;
    if !matches!(common.swizzle, Swizzle::B64 | Swizzle::B128) {
        return Err(cx.bad(
            format!("swizzle {:?}", common.swizzle),
            "im2col-wide supports the 64- and 128-byte swizzles only",
            "swizzle",
        ));
    }
    check_span(
        cx,
        common,
        o.channels_per_pixel as usize * esize,
        "box (channels per pixel)",
    )?;
    enc.lower_corner[0] = o.lower_corner_w;
    enc.upper_corner[0] = o.upper_corner_w;
    enc.channels_per_pixel = o.channels_per_pixel;
    enc.pixels_per_column = o.pixels_per_column;
    enc.wide_mode = o.mode;
    Ok(())
}

fn check_counts(cx: &Ctx, channels: u32, pixels: u32, pixels_matter: bool) -> Result<()> {
    if !(1..=256).contains(&channels) {
        return Err(cx.bad(
            format!("{channels} channels per pixel"),
            "channels per pixel must be in [1, 256]",
            "channelsPerPixel",
        ));
    }
    if pixels_matter && !(1..=1024).contains(&pixels) {
        return Err(cx.bad(
            format!("{pixels} pixels per column"),
            "pixels per column must be in [1, 1024]",
            "pixelsPerColumn",
        ));
    }
    Ok(())
}
