//! Strided tensor layouts, the GPU-free core of stridekit.
//!
//! A [`StridedLayout`] describes how an N-dimensional tensor sits in memory: its extents,
//! its strides in elements, its itemsize in bytes and the offset of its first element.
//! Every transform (reshape, permute, slice, broadcast, squeeze, flatten, repack) returns
//! a new layout or a [`LayoutError`] that names the operation, the value and the rule;
//! none panics and none overflows. Layouts of up to 8 dimensions never allocate.
//!
//! ```
//! use stridekit_layout::{s, Order, StridedLayout};
//!
//! let nchw = StridedLayout::dense(&[64, 256, 64, 64], 4, Order::C)?;
//! let nhwc = nchw.permuted(&[0, 2, 3, 1])?;
//! assert!(!nhwc.is_contiguous_c() && nhwc.is_contiguous_any());
//! let crop = nchw.sliced(s![.., 0..3, 8..56;2, ..;-1])?;
//! assert_eq!(crop.shape(), &[64, 3, 24, 64]);
//! assert_eq!(crop.strides(), &[256 * 64 * 64, 64 * 64, 128, -1]);
//! # Ok::<(), stridekit_layout::LayoutError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dims;
pub mod dist;
mod error;
mod groups;
mod image_tile;
mod layout;
mod plan;
mod repack;
mod runs;
mod schedule;
mod sectors;
mod slice;
mod tile;
mod tile_slots;
mod transform;

pub use dims::{Dims, MAX_NDIM};
pub use error::{LayoutError, Op, Result, Tuple};
pub use groups::{OrderedChunks, GROUP_MAX_BYTES};
pub use image_tile::{EdgeWrite, ImageRead, ImageTile, InteriorWrite, IMAGE_MAX_BYTES};
pub use layout::{byte_span_of, Order, StridedLayout};
pub use plan::{CopyPlan, REPEAT_PATTERN_MAX_BYTES};
pub use repack::RepackOptions;
pub use runs::{ElementRuns, RowAxis};
pub use schedule::{
    CopyStep, ScheduleBounds, FEW_TILES, FEW_TILES_PER_SM, SCHEDULE_ADDRESS_PERIOD, SMALL_COPY,
};
pub use slice::{IntoRangeBounds, SliceArg};
pub use tile::{TilePlan, TILE_MAX_AXES};
pub use transform::AxisMask;
