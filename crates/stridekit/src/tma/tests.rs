//! Every validation rule, one accepted and one rejected input each, with the message.

use super::validate::{encode, Encoding, Kind, Source};
use super::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use stridekit_layout::{Order, StridedLayout};

const BASE: u64 = 0x7000_0000_0000;
const H100: (i32, i32) = (9, 0);

fn dense(shape: &[i64], isz: usize) -> StridedLayout {
    StridedLayout::dense(shape, isz, Order::C).unwrap()
}

fn strided(shape: &[i64], strides: &[i64], isz: usize) -> StridedLayout {
    StridedLayout::new(shape, strides, isz).unwrap()
}

fn offset(l: &StridedLayout, off: i64) -> StridedLayout {
    StridedLayout::with_offset(l.shape(), l.strides(), l.itemsize(), off).unwrap()
}

fn tiled(l: &StridedLayout, dtype: Option<DType>, o: &TiledOptions) -> Result<Encoding> {
    tiled_at(l, BASE, dtype, o, H100)
}

fn tiled_at(
    l: &StridedLayout,
    base: u64,
    dtype: Option<DType>,
    o: &TiledOptions,
    cc: (i32, i32),
) -> Result<Encoding> {
    encode(
        Source {
            layout: l,
            base,
            dtype,
            cc,
        },
        Kind::Tiled(o),
    )
}

fn im2col(l: &StridedLayout, o: &Im2colOptions) -> Result<Encoding> {
    encode(
        Source {
            layout: l,
            base: BASE,
            dtype: Some(DType::F16),
            cc: H100,
        },
        Kind::Im2col(o),
    )
}

fn wide(l: &StridedLayout, o: &Im2colWideOptions, cc: (i32, i32)) -> Result<Encoding> {
    encode(
        Source {
            layout: l,
            base: BASE,
            dtype: Some(DType::F16),
            cc,
        },
        Kind::Im2colWide(o),
    )
}

/// One rule: an input it accepts and one it rejects, with words the message must hold.
struct Case {
    rule: &'static str,
    ok: Result<Encoding>,
    bad: Result<Encoding>,
    says: &'static [&'static str],
}

fn check(cases: Vec<Case>) {
    for c in cases {
        if let Err(e) = &c.ok {
            panic!("rule {:?}: the accepted input was rejected: {e}", c.rule);
        }
        match &c.bad {
            Ok(_) => panic!("rule {:?}: the rejected input was accepted", c.rule),
            Err(e) => {
                let msg = e.to_string();
                for w in c.says {
                    assert!(
                        msg.contains(w),
                        "rule {:?}: message {msg:?} lacks {w:?}",
                        c.rule
                    );
                }
            }
        }
    }
}

fn f32m(shape: &[i64]) -> StridedLayout {
    dense(shape, 4)
}

fn t(b: &[u32]) -> TiledOptions {
    TiledOptions::new(b)
}

#[test]
fn tiled_rules() {
    let m = f32m(&[64, 64]);
    let f32 = Some(DType::F32);
    check(vec![
        Case {
            rule: "compute capability 9.0",
            ok: tiled_at(&m, BASE, f32, &t(&[16, 16]), (9, 0)),
            bad: tiled_at(&m, BASE, f32, &t(&[16, 16]), (8, 6)),
            says: &["TensorMapDescriptor::tiled: not supported here", "compute capability 8.6", "needs 9.0"],
        },
        Case {
            rule: "explicit data type has the view's itemsize",
            ok: tiled(&m, f32, &t(&[16, 16]).data_type(TensorMapDataType::TF32)),
            bad: tiled(&m, f32, &t(&[16, 16]).data_type(TensorMapDataType::F16)),
            says: &["data type F16 has 2 bytes per element but the view's elements have 4", "(cuTensorMapEncodeTiled: tensorDataType)"],
        },
        Case {
            rule: "a data type is known",
            ok: tiled(&m, None, &t(&[16, 16]).data_type(TensorMapDataType::F32)),
            bad: tiled(&m, None, &t(&[16, 16])),
            says: &["the view has no dtype; pass data_type explicitly"],
        },
        Case {
            rule: "complex needs an explicit type",
            ok: tiled(&dense(&[8, 8], 8), Some(DType::Complex64), &t(&[8, 8]).data_type(TensorMapDataType::U64)),
            bad: tiled(&dense(&[8, 8], 8), Some(DType::Complex64), &t(&[8, 8])),
            says: &["dtype Complex64 has no TMA data type"],
        },
        Case {
            rule: "rank 1 to 5",
            ok: tiled(&f32m(&[2, 2, 2, 2, 4]), f32, &t(&[1, 1, 1, 1, 4])),
            bad: tiled(&f32m(&[2, 2, 2, 2, 2, 4]), f32, &t(&[1, 1, 1, 1, 1, 4])),
            says: &["the view has rank 6; the rank must be in [1, 5] (cuTensorMapEncodeTiled: tensorRank)"],
        },
        Case {
            rule: "interleave needs rank 3",
            ok: tiled(&f32m(&[4, 8, 8]), f32, &t(&[1, 8, 8]).interleave(Interleave::B16)),
            bad: tiled(&m, f32, &t(&[8, 8]).interleave(Interleave::B16)),
            says: &["interleave B16 with rank 2; an interleaved layout needs rank 3 or more"],
        },
        Case {
            rule: "address 16-byte aligned",
            ok: tiled_at(&m, BASE + 16, f32, &t(&[16, 16]), H100),
            bad: tiled_at(&m, BASE + 8, f32, &t(&[16, 16]), H100),
            says: &["8 bytes past a 16-byte boundary", "must be 16-byte aligned (cuTensorMapEncodeTiled: globalAddress)"],
        },
        Case {
            rule: "a slice offset counts towards the address",
            ok: tiled(&offset(&m, 4), f32, &t(&[16, 16])),
            bad: tiled(&offset(&m, 1), f32, &t(&[16, 16])),
            says: &["4 bytes past a 16-byte boundary"],
        },
        Case {
            rule: "address 32-byte aligned with 32-byte interleave",
            ok: tiled_at(&f32m(&[4, 8, 8]), BASE + 32, f32, &t(&[1, 8, 8]).interleave(Interleave::B32).swizzle(Swizzle::B32), H100),
            bad: tiled_at(&f32m(&[4, 8, 8]), BASE + 16, f32, &t(&[1, 8, 8]).interleave(Interleave::B32).swizzle(Swizzle::B32), H100),
            says: &["16 bytes past a 32-byte boundary", "32-byte aligned with 32-byte interleave"],
        },
        Case {
            rule: "global dimensions in [1, 2^32]",
            ok: tiled(&dense(&[1 << 32], 1), Some(DType::U8), &t(&[16])),
            bad: tiled(&dense(&[(1 << 32) + 1], 1), Some(DType::U8), &t(&[16])),
            says: &["axis 0 has extent 4294967297; every global dimension must be in [1, 2^32] (cuTensorMapEncodeTiled: globalDim)"],
        },
        Case {
            rule: "no empty axis",
            ok: tiled(&f32m(&[1, 64]), f32, &t(&[1, 16])),
            bad: tiled(&f32m(&[0, 64]), f32, &t(&[1, 16])),
            says: &["axis 0 has extent 0"],
        },
        Case {
            rule: "innermost axis contiguous",
            ok: tiled(&f32m(&[32, 64]), f32, &t(&[16, 16])),
            bad: tiled(&strided(&[64, 32], &[1, 64], 4), f32, &t(&[16, 16])),
            says: &[
                "the innermost (last) axis 1 has stride 64 elements",
                "axis 0 has stride 1, so build the descriptor from the view permuted by [1, 0]",
                "its stride must be 1 element",
            ],
        },
        Case {
            rule: "strides multiple of 16 bytes",
            ok: tiled(&f32m(&[4, 4]), f32, &t(&[4, 4])),
            bad: tiled(&f32m(&[4, 3]), f32, &t(&[4, 4])),
            says: &["axis 0 has stride 3 elements = 12 bytes, 12 past a multiple of 16", "pad the rows so the stride becomes 16", "(cuTensorMapEncodeTiled: globalStrides)"],
        },
        Case {
            rule: "strides multiple of 32 bytes with 32-byte interleave",
            ok: tiled(&strided(&[2, 4, 8], &[64, 16, 1], 2), Some(DType::F16), &t(&[1, 4, 8]).interleave(Interleave::B32).swizzle(Swizzle::B32)),
            bad: tiled(&strided(&[2, 4, 8], &[64, 8, 1], 2), Some(DType::F16), &t(&[1, 4, 8]).interleave(Interleave::B32).swizzle(Swizzle::B32)),
            says: &["axis 1 has stride 8 elements = 16 bytes", "multiple of 32 bytes with 32-byte interleave"],
        },
        Case {
            rule: "strides below 2^40 bytes",
            ok: tiled(&strided(&[2, 16], &[1 << 37, 1], 4), f32, &t(&[1, 16])),
            bad: tiled(&strided(&[2, 16], &[1 << 38, 1], 4), f32, &t(&[1, 16])),
            says: &["axis 0 has stride 1099511627776 bytes; each stride must be below 2^40 bytes"],
        },
        Case {
            rule: "strides positive",
            ok: tiled(&strided(&[1, 16], &[0, 1], 4), f32, &t(&[1, 16])),
            bad: tiled(&strided(&[4, 16], &[0, 1], 4), f32, &t(&[1, 16])),
            says: &["axis 0 has stride 0 (a broadcast axis of extent 4)"],
        },
        Case {
            rule: "no negative strides",
            ok: tiled(&strided(&[4, 16], &[16, 1], 4), f32, &t(&[1, 16])),
            bad: tiled(&offset(&strided(&[4, 16], &[-16, 1], 4), 48), f32, &t(&[1, 16])),
            says: &["axis 0 has negative stride -16 elements"],
        },
        Case {
            rule: "one box dimension per axis",
            ok: tiled(&m, f32, &t(&[8, 8])),
            bad: tiled(&m, f32, &t(&[8])),
            says: &["the box has 1 dimensions but the view has rank 2", "(cuTensorMapEncodeTiled: boxDim)"],
        },
        Case {
            rule: "box dimensions in [1, 256]",
            ok: tiled(&dense(&[300, 512], 1), Some(DType::U8), &t(&[256, 16])),
            bad: tiled(&dense(&[300, 512], 1), Some(DType::U8), &t(&[257, 16])),
            says: &["axis 0 has box dimension 257; every box dimension must be in [1, 256]"],
        },
        Case {
            rule: "box dimensions not zero",
            ok: tiled(&m, f32, &t(&[1, 16])),
            bad: tiled(&m, f32, &t(&[0, 16])),
            says: &["axis 0 has box dimension 0"],
        },
        Case {
            rule: "inner box a multiple of 16 bytes",
            ok: tiled(&m, f32, &t(&[8, 4])),
            bad: tiled(&m, f32, &t(&[8, 3])),
            says: &["the inner box is 3 elements x 4 bytes = 12 bytes", "multiple of 16 bytes", "(cuTensorMapEncodeTiled: boxDim[0])"],
        },
        Case {
            rule: "inner box a multiple of 16 bytes with interleave too",
            ok: tiled(&dense(&[4, 8, 64], 1), Some(DType::U8), &t(&[1, 8, 16]).interleave(Interleave::B16)),
            bad: tiled(&dense(&[4, 8, 64], 1), Some(DType::U8), &t(&[1, 8, 24]).interleave(Interleave::B16)),
            says: &["the inner box is 24 elements x 1 bytes = 24 bytes", "with or without interleave", "measured on compute capability 9.0, driver 580"],
        },
        Case {
            rule: "a box holds at most 228 KiB",
            ok: tiled(&dense(&[256, 256, 256], 4), f32, &t(&[228, 1, 256])),
            bad: tiled(&dense(&[256, 256, 256], 4), f32, &t(&[229, 1, 256])),
            says: &["the box [229, 1, 256] of 4-byte elements holds 234496 bytes", "at most 233472 bytes (228 KiB; measured on compute capability 9.0, driver 580", "(cuTensorMapEncodeTiled: boxDim)"],
        },
        Case {
            rule: "inner box within the swizzle span",
            ok: tiled(&m, f32, &t(&[8, 8]).swizzle(Swizzle::B32)),
            bad: tiled(&m, f32, &t(&[8, 16]).swizzle(Swizzle::B32)),
            says: &["the inner box is 64 bytes but swizzle B32 spans 32", "(cuTensorMapEncodeTiled: swizzle)"],
        },
        Case {
            rule: "32-byte interleave only with the 32-byte swizzle",
            ok: tiled(&f32m(&[4, 8, 8]), f32, &t(&[1, 8, 8]).interleave(Interleave::B32).swizzle(Swizzle::B32)),
            bad: tiled(&f32m(&[4, 8, 8]), f32, &t(&[1, 8, 8]).interleave(Interleave::B32).swizzle(Swizzle::B64)),
            says: &["interleave B32 with swizzle B64; 32-byte interleave requires the 32-byte swizzle"],
        },
        Case {
            rule: "element strides in [1, 8]",
            ok: tiled(&m, f32, &t(&[16, 16]).element_strides(&[8, 1])),
            bad: tiled(&m, f32, &t(&[16, 16]).element_strides(&[9, 1])),
            says: &["axis 0 has element stride 9; every element stride must be in [1, 8] (cuTensorMapEncodeTiled: elementStrides)"],
        },
        Case {
            rule: "element strides not zero",
            ok: tiled(&m, f32, &t(&[16, 16]).element_strides(&[1, 1])),
            bad: tiled(&m, f32, &t(&[16, 16]).element_strides(&[0, 1])),
            says: &["axis 0 has element stride 0"],
        },
        Case {
            rule: "one element stride per axis",
            ok: tiled(&m, f32, &t(&[16, 16]).element_strides(&[2, 1])),
            bad: tiled(&m, f32, &t(&[16, 16]).element_strides(&[2])),
            says: &["1 element strides for a view of rank 2"],
        },
        Case {
            rule: "innermost element stride 1 without interleave",
            ok: tiled(&f32m(&[4, 8, 8]), f32, &t(&[1, 8, 8]).interleave(Interleave::B16).element_strides(&[1, 1, 2])),
            bad: tiled(&m, f32, &t(&[16, 16]).element_strides(&[1, 2])),
            says: &["the innermost axis 1 has element stride 2", "TMA ignores the innermost element stride"],
        },
        Case {
            rule: "NaN fill for floating-point types only",
            ok: tiled(&m, f32, &t(&[16, 16]).oob_fill(OobFill::Nan)),
            bad: tiled(&m, Some(DType::I32), &t(&[16, 16]).oob_fill(OobFill::Nan)),
            says: &["NaN fill with data type I32; NaN out-of-bounds fill needs a floating-point data type (cuTensorMapEncodeTiled: oobFill)"],
        },
    ]);
}

fn nhwc(n: i64, h: i64, w: i64, c: i64) -> StridedLayout {
    dense(&[n, h, w, c], 2)
}

fn ic(lo: &[i32], hi: &[i32], ch: u32, px: u32) -> Im2colOptions {
    Im2colOptions::new(lo, hi, ch, px)
}

#[test]
fn im2col_rules() {
    let x = nhwc(2, 8, 8, 16);
    check(vec![
        Case {
            rule: "im2col rank 3 to 5",
            ok: im2col(&dense(&[2, 8, 16], 2), &ic(&[-1], &[-1], 16, 8)),
            bad: im2col(&dense(&[8, 16], 2), &ic(&[], &[], 16, 8)),
            says: &["TensorMapDescriptor::im2col:", "the view has rank 2; the rank must be in [3, 5] (cuTensorMapEncodeIm2col: tensorRank)"],
        },
        Case {
            rule: "one corner offset per spatial axis",
            ok: im2col(&x, &ic(&[-1, -1], &[-1, -1], 16, 8)),
            bad: im2col(&x, &ic(&[-1], &[-1, -1], 16, 8)),
            says: &["1 lower corner offsets for rank 4; give one offset per spatial axis (2 for rank 4)", "pixelBoxLowerCorner"],
        },
        Case {
            rule: "rank 3 offsets in [-32768, 32767]",
            ok: im2col(&dense(&[1, 70000, 16], 2), &ic(&[-32768], &[32767], 16, 8)),
            bad: im2col(&dense(&[1, 70000, 16], 2), &ic(&[-32769], &[0], 16, 8)),
            says: &["lower corner offset -32769", "with rank 3 each offset must be in [-32768, 32767]"],
        },
        Case {
            rule: "rank 4 offsets in [-128, 127]",
            ok: im2col(&x, &ic(&[-128, 0], &[127, 0], 16, 8)),
            bad: im2col(&x, &ic(&[0, 0], &[0, 128], 16, 8)),
            says: &["upper corner offset 128 on spatial axis 1 (view axis 2)", "with rank 4 each offset must be in [-128, 127] (cuTensorMapEncodeIm2col: pixelBoxUpperCorner)"],
        },
        Case {
            rule: "rank 5 offsets in [-16, 15]",
            ok: im2col(&dense(&[1, 4, 4, 4, 16], 2), &ic(&[-16, 0, 0], &[15, 0, 0], 16, 8)),
            bad: im2col(&dense(&[1, 4, 4, 4, 16], 2), &ic(&[-17, 0, 0], &[0, 0, 0], 16, 8)),
            says: &["with rank 5 each offset must be in [-16, 15]"],
        },
        Case {
            rule: "bounding box not empty",
            ok: im2col(&x, &ic(&[0, 0], &[-7, -7], 16, 8)),
            bad: im2col(&x, &ic(&[0, 0], &[-8, 0], 16, 8)),
            says: &["on view axis 1 (extent 8) the box spans 0 to -1, which is empty", "non-zero area"],
        },
        Case {
            rule: "channels per pixel in [1, 256]",
            ok: im2col(&nhwc(1, 4, 4, 512), &ic(&[0, 0], &[0, 0], 256, 8).swizzle(Swizzle::None)),
            bad: im2col(&nhwc(1, 4, 4, 512), &ic(&[0, 0], &[0, 0], 257, 8)),
            says: &["257 channels per pixel; channels per pixel must be in [1, 256] (cuTensorMapEncodeIm2col: channelsPerPixel)"],
        },
        Case {
            rule: "pixels per column in [1, 1024]",
            ok: im2col(&x, &ic(&[0, 0], &[0, 0], 16, 1024)),
            bad: im2col(&x, &ic(&[0, 0], &[0, 0], 16, 1025)),
            says: &["1025 pixels per column; pixels per column must be in [1, 1024]"],
        },
        Case {
            rule: "channels of a pixel a multiple of 16 bytes",
            ok: im2col(&nhwc(1, 4, 4, 16), &ic(&[0, 0], &[0, 0], 8, 8)),
            bad: im2col(&nhwc(1, 4, 4, 16), &ic(&[0, 0], &[0, 0], 12, 8)),
            says: &["12 channels per pixel x 2 bytes = 24 bytes", "multiple of 16 bytes (measured on compute capability 9.0, driver 580) (cuTensorMapEncodeIm2col: channelsPerPixel)"],
        },
        Case {
            rule: "channels x pixels at most 228 KiB",
            ok: im2col(&nhwc(1, 4, 4, 256), &ic(&[0, 0], &[0, 0], 256, 456)),
            bad: im2col(&nhwc(1, 4, 4, 256), &ic(&[0, 0], &[0, 0], 256, 457)),
            says: &["256 channels x 457 pixels x 2 bytes = 233984 bytes", "at most 233472 bytes"],
        },
        Case {
            rule: "channels within the swizzle span",
            ok: im2col(&x, &ic(&[0, 0], &[0, 0], 16, 8).swizzle(Swizzle::B32)),
            bad: im2col(&nhwc(1, 4, 4, 64), &ic(&[0, 0], &[0, 0], 64, 8).swizzle(Swizzle::B64)),
            says: &["the inner box (channels per pixel) is 128 bytes but swizzle B64 spans 64"],
        },
        Case {
            rule: "im2col keeps the shared rules (contiguous channels)",
            ok: im2col(&x, &ic(&[0, 0], &[0, 0], 16, 8)),
            bad: im2col(&strided(&[2, 8, 8, 16], &[1024, 128, 1, 8], 2), &ic(&[0, 0], &[0, 0], 16, 8)),
            says: &["the innermost (last) axis 3 has stride 8 elements", "axis 2 has stride 1"],
        },
    ]);
}

#[test]
fn im2col_wide_rules() {
    let x = nhwc(1, 4, 64, 32);
    let o = || Im2colWideOptions::new(-1, -1, 32, 64).swizzle(Swizzle::B64);
    check(vec![
        Case {
            rule: "im2col-wide needs compute capability 10.0",
            ok: wide(&x, &o(), (10, 0)),
            bad: wide(&x, &o(), (9, 0)),
            says: &[
                "TensorMapDescriptor::im2col_wide: not supported here",
                "compute capability 9.0; cuTensorMapEncodeIm2colWide needs 10.0",
            ],
        },
        Case {
            rule: "W offsets in [-32768, 32767]",
            ok: wide(
                &x,
                &Im2colWideOptions::new(-32768, 0, 32, 64).swizzle(Swizzle::B64),
                (10, 0),
            ),
            bad: wide(
                &x,
                &Im2colWideOptions::new(0, 32768, 32, 64).swizzle(Swizzle::B64),
                (10, 0),
            ),
            says: &["upper corner offset 32768 along W"],
        },
        Case {
            rule: "W box not empty",
            ok: wide(
                &x,
                &Im2colWideOptions::new(0, -63, 32, 64).swizzle(Swizzle::B64),
                (10, 0),
            ),
            bad: wide(
                &x,
                &Im2colWideOptions::new(0, -64, 32, 64).swizzle(Swizzle::B64),
                (10, 0),
            ),
            says: &["along W (extent 64) the box spans 0 to -1, which is empty"],
        },
        Case {
            rule: "pixels per column ignored in W128 mode",
            ok: wide(
                &x,
                &Im2colWideOptions::new(0, 0, 32, 0)
                    .mode(Im2colWideMode::W128)
                    .swizzle(Swizzle::B64),
                (10, 0),
            ),
            bad: wide(
                &x,
                &Im2colWideOptions::new(0, 0, 32, 0).swizzle(Swizzle::B64),
                (10, 0),
            ),
            says: &["0 pixels per column"],
        },
        Case {
            rule: "64- or 128-byte swizzle",
            ok: wide(&x, &o().swizzle(Swizzle::B128), (10, 0)),
            bad: wide(&x, &o().swizzle(Swizzle::B32), (10, 0)),
            says: &["swizzle B32; im2col-wide supports the 64- and 128-byte swizzles only"],
        },
    ]);
}

#[test]
fn shapes_and_boxes_are_reversed_for_the_driver() {
    let l = offset(&strided(&[3, 5, 7, 32], &[7 * 64 * 5, 7 * 64, 64, 1], 4), 8);
    let e = tiled(
        &l,
        Some(DType::F32),
        &t(&[1, 2, 4, 8]).element_strides(&[2, 3, 4, 1]),
    )
    .unwrap();
    assert_eq!(e.rank, 4);
    assert_eq!(e.address, BASE + 32);
    assert_eq!(&e.global_dim[..4], &[32, 7, 5, 3]);
    assert_eq!(&e.global_strides[..3], &[256, 256 * 7, 256 * 35]);
    assert_eq!(&e.box_dim[..4], &[8, 4, 2, 1]);
    assert_eq!(&e.element_strides[..4], &[1, 4, 3, 2]);
    assert_eq!(e.data_type, TensorMapDataType::F32);

    let e = im2col(
        &dense(&[2, 4, 6, 8, 16], 2),
        &ic(&[-1, -2, -3], &[1, 2, 3], 16, 32),
    )
    .unwrap();
    assert_eq!(e.lower_corner, [-3, -2, -1]);
    assert_eq!(e.upper_corner, [3, 2, 1]);
    assert_eq!((e.channels_per_pixel, e.pixels_per_column), (16, 32));
}

#[test]
fn extent_one_axes_take_any_stride() {
    // A squeezed or unsqueezed axis may carry a stride TMA would reject; it is never used.
    let l = strided(&[1, 4, 16], &[3, 16, 1], 4);
    let e = tiled(&l, Some(DType::F32), &t(&[1, 4, 16])).unwrap();
    assert_eq!(e.global_strides[0], 64);
    assert_eq!(e.global_strides[1] % 16, 0);
}

#[test]
fn errors_are_invalid_or_unsupported() {
    let m = f32m(&[64, 64]);
    assert!(matches!(
        tiled(&m, Some(DType::F32), &t(&[0, 16])),
        Err(Error::Invalid { .. })
    ));
    assert!(matches!(
        tiled_at(&m, BASE, Some(DType::F32), &t(&[16, 16]), (8, 0)),
        Err(Error::Unsupported { .. })
    ));
}

#[test]
fn descriptors_are_send_sync_clone() {
    fn assert_traits<T: Send + Sync + Clone>() {}
    assert_traits::<TensorMapDescriptor<'static>>();
    assert_traits::<TiledOptions>();
    assert_traits::<Im2colOptions>();
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<crate::ManagedBuffer>();
    assert_send_sync::<crate::managed::ManagedRange<'static>>();
}

#[test]
fn data_types_follow_the_view_dtype() {
    use TensorMapDataType as T;
    for (d, t) in [
        (DType::U8, T::U8),
        (DType::I8, T::U8),
        (DType::Bool, T::U8),
        (DType::I16, T::U16),
        (DType::F16, T::F16),
        (DType::BF16, T::BF16),
        (DType::I32, T::I32),
        (DType::U32, T::U32),
        (DType::F32, T::F32),
        (DType::I64, T::I64),
        (DType::U64, T::U64),
        (DType::F64, T::F64),
    ] {
        assert_eq!(TensorMapDataType::for_dtype(d), Some(t));
        assert_eq!(t.size(), d.itemsize(), "{d:?}");
    }
    assert_eq!(TensorMapDataType::for_dtype(DType::Complex128), None);
    assert!(T::TF32.is_floating() && !T::I64.is_floating());
}

#[test]
fn the_kernel_argument_is_128_bytes_64_aligned() {
    use crate::driver::types::CUtensorMap;
    assert_eq!(std::mem::size_of::<CUtensorMap>(), 128);
    assert!(std::mem::align_of::<CUtensorMap>() >= 64);
}

#[test]
fn options_from_byte_counts() {
    assert_eq!(Swizzle::from_bytes(128).unwrap(), Swizzle::B128);
    assert_eq!(Swizzle::from_bytes(0).unwrap(), Swizzle::None);
    assert_eq!(Interleave::from_bytes(16).unwrap(), Interleave::B16);
    assert_eq!(L2Promotion::from_bytes(256).unwrap(), L2Promotion::B256);
    let e = Swizzle::from_bytes(48).unwrap_err().to_string();
    assert!(
        e.contains("swizzle 48 is not one of 0, 32, 64, 128 (bytes)"),
        "{e}"
    );
    assert!(Interleave::from_bytes(64).is_err());
    assert!(L2Promotion::from_bytes(32).is_err());
}
