//! The knobs of a tensor map: data type, interleave, swizzle, L2 promotion, out-of-bounds
//! fill, and the per-kind options with their builders.

use crate::driver::types;
use crate::dtype::DType;

/// The element type TMA moves. Inferred from the view's dtype unless given; an explicit
/// type must have the view's itemsize.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the names say it
pub enum TensorMapDataType {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    BF16,
    /// f32, denormals flushed to zero.
    F32Ftz,
    /// TensorFloat-32 (f32 storage).
    TF32,
    /// TensorFloat-32, denormals flushed to zero.
    TF32Ftz,
}

impl TensorMapDataType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        use TensorMapDataType::*;
        match self {
            U8 => 1,
            U16 | F16 | BF16 => 2,
            U32 | I32 | F32 | F32Ftz | TF32 | TF32Ftz => 4,
            U64 | I64 | F64 => 8,
        }
    }

    /// Whether the type is floating point (NaN out-of-bounds fill needs one).
    pub fn is_floating(self) -> bool {
        use TensorMapDataType::*;
        matches!(self, F16 | F32 | F64 | BF16 | F32Ftz | TF32 | TF32Ftz)
    }

    /// The TMA type for a dtype: the same type where TMA has it, otherwise the unsigned
    /// type of the same size (TMA copies bits; only NaN fill looks at them). `None` for
    /// complex types, which must be given explicitly.
    pub fn for_dtype(d: DType) -> Option<Self> {
        use TensorMapDataType::*;
        Some(match d {
            DType::Bool
            | DType::U8
            | DType::I8
            | DType::F8E4M3
            | DType::F8E5M2
            | DType::F8E4M3Ieee
            | DType::F8E3M4
            | DType::F8E4M3B11Fnuz
            | DType::F8E4M3Fnuz
            | DType::F8E5M2Fnuz
            | DType::F8E8M0Fnu => U8,
            DType::U16 | DType::I16 => U16,
            DType::U32 => U32,
            DType::I32 => I32,
            DType::U64 => U64,
            DType::I64 => I64,
            DType::F16 => F16,
            DType::BF16 => BF16,
            DType::F32 => F32,
            DType::F64 => F64,
            _ => return None,
        })
    }

    pub(crate) fn to_cu(self) -> types::CUtensorMapDataType {
        use types::CUtensorMapDataType as T;
        use TensorMapDataType::*;
        match self {
            U8 => T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            U16 => T::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
            U64 => T::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
            F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            BF16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            F32Ftz => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
            TF32 => T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            TF32Ftz => T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
        }
    }
}

/// Interleaved layouts such as NC/8HWC8 (16 bytes) or NC/16HWC16 (32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Interleave {
    /// Plain layout (the default).
    #[default]
    None,
    /// 16-byte interleave.
    B16,
    /// 32-byte interleave (address and strides 32-byte aligned, swizzle 32B only).
    B32,
}

impl Interleave {
    pub(crate) fn to_cu(self) -> types::CUtensorMapInterleave {
        use types::CUtensorMapInterleave as T;
        match self {
            Interleave::None => T::CU_TENSOR_MAP_INTERLEAVE_NONE,
            Interleave::B16 => T::CU_TENSOR_MAP_INTERLEAVE_16B,
            Interleave::B32 => T::CU_TENSOR_MAP_INTERLEAVE_32B,
        }
    }
}

/// How tiles are shuffled across shared-memory banks on arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Swizzle {
    /// No swizzle (the default).
    #[default]
    None,
    /// 32-byte swizzle span.
    B32,
    /// 64-byte swizzle span.
    B64,
    /// 128-byte swizzle span.
    B128,
}

impl Swizzle {
    /// The swizzle span in bytes (0 for none): the inner box may be at most this wide.
    pub fn span(self) -> usize {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    pub(crate) fn to_cu(self) -> types::CUtensorMapSwizzle {
        use types::CUtensorMapSwizzle as T;
        match self {
            Swizzle::None => T::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => T::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => T::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => T::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

/// The granularity at which L2 requests are filled from DRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum L2Promotion {
    /// No promotion (the default).
    #[default]
    None,
    /// 64-byte requests.
    B64,
    /// 128-byte requests.
    B128,
    /// 256-byte requests.
    B256,
}

impl L2Promotion {
    pub(crate) fn to_cu(self) -> types::CUtensorMapL2promotion {
        use types::CUtensorMapL2promotion as T;
        match self {
            L2Promotion::None => T::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => T::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => T::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => T::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        }
    }
}

/// What a load writes for elements outside the tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OobFill {
    /// Zeros (the default).
    #[default]
    Zero,
    /// A NaN that requests zero from FMA units; floating-point types only.
    Nan,
}

impl OobFill {
    pub(crate) fn to_cu(self) -> types::CUtensorMapFloatOOBfill {
        use types::CUtensorMapFloatOOBfill as T;
        match self {
            OobFill::Zero => T::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            OobFill::Nan => T::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
        }
    }
}

/// How im2col-wide loads walk the W dimension (compute capability 10.0+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Im2colWideMode {
    /// `pixels_per_column` elements along W (the default).
    #[default]
    W,
    /// 128 elements along W; `pixels_per_column` is ignored.
    W128,
}

impl Im2colWideMode {
    pub(crate) fn to_cu(self) -> types::CUtensorMapIm2ColWideMode {
        use types::CUtensorMapIm2ColWideMode as T;
        match self {
            Im2colWideMode::W => T::CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
            Im2colWideMode::W128 => T::CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128,
        }
    }
}

/// Settings every kind of tensor map shares. All default to "none", element strides to 1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Common {
    /// One per axis, in the view's order; `None` means all 1.
    pub element_strides: Option<Vec<u32>>,
    /// `None` infers the type from the view's dtype.
    pub data_type: Option<TensorMapDataType>,
    /// Interleaved layout.
    pub interleave: Interleave,
    /// Shared-memory swizzle.
    pub swizzle: Swizzle,
    /// L2 promotion.
    pub l2_promotion: L2Promotion,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
}

macro_rules! common_builders {
    ($t:ty) => {
        impl $t {
            /// Traversal step per axis (view order), each in 1..=8.
            pub fn element_strides(mut self, s: &[u32]) -> Self {
                self.common.element_strides = Some(s.to_vec());
                self
            }
            /// Overrides the data type (same itemsize as the view).
            pub fn data_type(mut self, t: TensorMapDataType) -> Self {
                self.common.data_type = Some(t);
                self
            }
            /// Interleaved layout.
            pub fn interleave(mut self, i: Interleave) -> Self {
                self.common.interleave = i;
                self
            }
            /// Shared-memory swizzle.
            pub fn swizzle(mut self, s: Swizzle) -> Self {
                self.common.swizzle = s;
                self
            }
            /// L2 promotion.
            pub fn l2_promotion(mut self, p: L2Promotion) -> Self {
                self.common.l2_promotion = p;
                self
            }
            /// Out-of-bounds fill.
            pub fn oob_fill(mut self, f: OobFill) -> Self {
                self.common.oob_fill = f;
                self
            }
        }
    };
}

/// Options of a tiled tensor map: the box (tile) shape in the view's axis order, and the
/// shared settings.
///
/// ```
/// use stridekit::tma::{OobFill, Swizzle, TiledOptions};
/// let opts = TiledOptions::new(&[64, 64]).swizzle(Swizzle::B128).oob_fill(OobFill::Nan);
/// assert_eq!(opts.box_dim, vec![64, 64]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiledOptions {
    /// Box extent per axis, view order, each in 1..=256.
    pub box_dim: Vec<u32>,
    /// The shared settings.
    pub common: Common,
}

impl TiledOptions {
    /// A box of this shape (view order), every other setting at its default.
    pub fn new(box_dim: &[u32]) -> Self {
        TiledOptions {
            box_dim: box_dim.to_vec(),
            common: Common::default(),
        }
    }
}
common_builders!(TiledOptions);

/// Options of an im2col tensor map over an N(D)(H)WC view (rank 3 to 5): the bounding
/// box corners of the spatial axes in the view's order (D, H, W), channels per pixel and
/// pixels per column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Im2colOptions {
    /// Lower corner offsets, one per spatial axis (view order).
    pub lower_corner: Vec<i32>,
    /// Upper corner offsets, one per spatial axis (view order).
    pub upper_corner: Vec<i32>,
    /// Elements loaded along C per pixel, 1..=256.
    pub channels_per_pixel: u32,
    /// Pixels loaded per request, 1..=1024.
    pub pixels_per_column: u32,
    /// The shared settings.
    pub common: Common,
}

impl Im2colOptions {
    /// Corners and counts, every other setting at its default.
    pub fn new(
        lower_corner: &[i32],
        upper_corner: &[i32],
        channels_per_pixel: u32,
        pixels_per_column: u32,
    ) -> Self {
        Im2colOptions {
            lower_corner: lower_corner.to_vec(),
            upper_corner: upper_corner.to_vec(),
            channels_per_pixel,
            pixels_per_column,
            common: Common::default(),
        }
    }
}
common_builders!(Im2colOptions);

/// Options of an im2col-wide tensor map (compute capability 10.0+, CUDA 13 driver):
/// rows always run along W, so only W's corner offsets are given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Im2colWideOptions {
    /// Lower corner offset along W.
    pub lower_corner_w: i32,
    /// Upper corner offset along W.
    pub upper_corner_w: i32,
    /// Elements loaded along C per pixel, 1..=256.
    pub channels_per_pixel: u32,
    /// Pixels per request along W, 1..=1024 (ignored in W128 mode).
    pub pixels_per_column: u32,
    /// How W is walked.
    pub mode: Im2colWideMode,
    /// The shared settings.
    pub common: Common,
}

impl Im2colWideOptions {
    /// Corners and counts, every other setting at its default.
    pub fn new(
        lower_corner_w: i32,
        upper_corner_w: i32,
        channels_per_pixel: u32,
        pixels_per_column: u32,
    ) -> Self {
        Im2colWideOptions {
            lower_corner_w,
            upper_corner_w,
            channels_per_pixel,
            pixels_per_column,
            mode: Im2colWideMode::W,
            common: Common::default(),
        }
    }

    /// How W is walked.
    pub fn mode(mut self, mode: Im2colWideMode) -> Self {
        self.mode = mode;
        self
    }
}
common_builders!(Im2colWideOptions);

/// Options given as byte counts, as the C ABI and the Python package take them.
fn from_bytes<T: Copy>(what: &str, bytes: u32, table: &[(u32, T)]) -> crate::Result<T> {
    table
        .iter()
        .find(|(k, _)| *k == bytes)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let allowed: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
            crate::error::invalid(
                "TiledOptions",
                format!(
                    "{what} {bytes} is not one of {} (bytes)",
                    allowed.join(", ")
                ),
            )
        })
}

impl Swizzle {
    /// The swizzle of a span in bytes: 0 (none), 32, 64 or 128.
    pub fn from_bytes(bytes: u32) -> crate::Result<Swizzle> {
        from_bytes(
            "swizzle",
            bytes,
            &[
                (0, Swizzle::None),
                (32, Swizzle::B32),
                (64, Swizzle::B64),
                (128, Swizzle::B128),
            ],
        )
    }
}

impl Interleave {
    /// The interleave of a size in bytes: 0 (none), 16 or 32.
    pub fn from_bytes(bytes: u32) -> crate::Result<Interleave> {
        from_bytes(
            "interleave",
            bytes,
            &[
                (0, Interleave::None),
                (16, Interleave::B16),
                (32, Interleave::B32),
            ],
        )
    }
}

impl L2Promotion {
    /// The L2 promotion of a size in bytes: 0 (none), 64, 128 or 256.
    pub fn from_bytes(bytes: u32) -> crate::Result<L2Promotion> {
        from_bytes(
            "l2_promotion",
            bytes,
            &[
                (0, L2Promotion::None),
                (64, L2Promotion::B64),
                (128, L2Promotion::B128),
                (256, L2Promotion::B256),
            ],
        )
    }
}
