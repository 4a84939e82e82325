//! The one error type of this crate.

use std::fmt;

/// The layout operation that rejected its input; every [`LayoutError`] names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[allow(missing_docs)] // named by their Display text
pub enum Op {
    New,
    FromByteStrides,
    Dense,
    DenseLike,
    Reshape,
    Permute,
    Flatten,
    Unsqueeze,
    BroadcastTo,
    Repack,
    MaxCompatibleItemsize,
    Slice,
    RequiredSize,
    PlanCopy,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::New => "new layout",
            Op::FromByteStrides => "layout from byte strides",
            Op::Dense => "dense layout",
            Op::DenseLike => "dense_like",
            Op::Reshape => "reshape",
            Op::Permute => "permute",
            Op::Flatten => "flatten",
            Op::Unsqueeze => "unsqueeze",
            Op::BroadcastTo => "broadcast_to",
            Op::Repack => "repack",
            Op::MaxCompatibleItemsize => "max_compatible_itemsize",
            Op::Slice => "slice",
            Op::RequiredSize => "required_size_in_bytes",
            Op::PlanCopy => "plan copy",
        })
    }
}

/// A shape or stride tuple, kept for an error message and shown as `(5,3,4)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tuple(pub Vec<i64>);

impl fmt::Display for Tuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        if self.0.len() == 1 {
            f.write_str(",")?;
        }
        f.write_str(")")
    }
}

impl From<&[i64]> for Tuple {
    fn from(v: &[i64]) -> Self {
        Tuple(v.to_vec())
    }
}

/// Everything a layout operation can reject. Each message names the operation,
/// the offending value and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[allow(missing_docs)] // each variant's message documents it
pub enum LayoutError {
    #[error("{op}: {ndim} dimensions given; at most {max} are supported")]
    TooManyDims { op: Op, ndim: usize, max: usize },

    #[error("{op}: extent {extent} at axis {axis} of {shape} is negative; extents must be >= 0")]
    NegativeExtent {
        op: Op,
        axis: usize,
        extent: i64,
        shape: Tuple,
    },

    #[error(
        "{op}: {what} has {got} entries but the layout has {expected} dimensions; they must match"
    )]
    LengthMismatch {
        op: Op,
        what: &'static str,
        expected: usize,
        got: usize,
    },

    #[error("{op}: itemsize {itemsize} is invalid; it must be at least 1 byte")]
    ZeroItemsize { op: Op, itemsize: usize },

    #[error(
        "{op}: byte stride {stride} at axis {axis} is not a multiple of the itemsize {itemsize}"
    )]
    StrideNotMultipleOfItemsize {
        op: Op,
        axis: usize,
        stride: i64,
        itemsize: usize,
    },

    #[error("{op}: {what} overflows a 64-bit signed integer; extents, strides and offsets must keep every byte offset within i64")]
    Overflow { op: Op, what: String },

    #[error("{op}: axis {axis} is out of range for a {ndim}-d layout; valid axes are {lo}..={hi}")]
    AxisOutOfRange {
        op: Op,
        axis: i64,
        ndim: usize,
        lo: i64,
        hi: i64,
    },

    #[error("{op}: axis {axis} appears more than once in {axes}; each axis may appear once")]
    DuplicateAxis { op: Op, axis: usize, axes: Tuple },

    #[error("reshape {from} -> {to}: {rule}")]
    ReshapeVolume {
        from: Tuple,
        to: Tuple,
        rule: String,
    },

    #[error("reshape {from} -> {to}: axes {first}..{last} cannot merge: stride[{first}]={stride} != stride[{last}]*shape[{last}]={merged}; no view without a copy exists")]
    ReshapeIncompatible {
        from: Tuple,
        to: Tuple,
        first: usize,
        last: usize,
        stride: i64,
        merged: i64,
    },

    #[error("broadcast_to {from} -> {to}: {rule}")]
    Broadcast {
        from: Tuple,
        to: Tuple,
        rule: String,
    },

    #[error("{op}: {rule}")]
    Repack { op: Op, rule: String },

    #[error("slice: {rule}")]
    Slice { rule: String },

    #[error("required_size_in_bytes: min_offset {min_offset} is negative, so the layout reaches memory before its base address and no allocation size fits it")]
    NegativeMinOffset { min_offset: i64 },

    #[error("plan copy: {rule}")]
    Plan { rule: String },

    /// A tensor split over ranks, or its redistribution, that cannot be.
    #[error("distribute: {rule}")]
    Distribute { rule: String },
}

/// Shorthand for results of this crate.
pub type Result<T, E = LayoutError> = std::result::Result<T, E>;

pub(crate) fn overflow(op: Op, what: impl Into<String>) -> LayoutError {
    LayoutError::Overflow {
        op,
        what: what.into(),
    }
}
