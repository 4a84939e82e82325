//! TMA tensor-map descriptors (Hopper and newer): built from a view, validated rule by
//! rule before the driver sees them, and passed to kernels by value.
//!
//! Shapes, boxes, corners and element strides are given in the view's order (row-major,
//! as the user sees the tensor); the driver's order is innermost-first, and stridekit
//! does the reversal. Each rejected input names the value, the rule, and the driver
//! parameter the rule comes from (`cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col`,
//! `cuTensorMapEncodeIm2colWide`).
//!
//! What is checked, per the driver's documentation: rank (1–5 tiled, 3–5 im2col, 3+ with
//! interleave); global address alignment (16 bytes, 32 with 32-byte interleave); every
//! global dimension in [1, 2^32]; the innermost axis contiguous (stride 1); every other
//! stride a positive multiple of 16 bytes (32 with 32-byte interleave) below 2^40; box
//! dimensions in [1, 256] and, without interleave, an inner box of a multiple of 16 bytes;
//! the inner box within the swizzle span; 32-byte interleave only with the 32-byte
//! swizzle; element strides in [1, 8] (and 1 on the innermost axis without interleave,
//! where TMA ignores it); NaN fill for floating-point types only; im2col corner offsets
//! per rank ([-32768, 32767], [-128, 127], [-16, 15]) with a non-empty bounding box,
//! channels per pixel in [1, 256], pixels per column in [1, 1024]; compute capability 9.0
//! (10.0 for im2col-wide) and the driver entry point.

mod descriptor;
mod options;
mod validate;

pub use descriptor::TensorMapDescriptor;
pub use options::{
    Common, Im2colOptions, Im2colWideMode, Im2colWideOptions, Interleave, L2Promotion, OobFill,
    Swizzle, TensorMapDataType, TiledOptions,
};
pub use validate::MAX_RANK;

#[cfg(test)]
mod tests;
