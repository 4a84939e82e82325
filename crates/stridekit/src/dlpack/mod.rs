//! DLPack exchange: any framework's tensor becomes a view, and views become theirs.
//!
//! - **Import**: [`StridedMemoryView::from_dlpack`] / [`StridedMemoryViewMut::from_dlpack`]
//!   take ownership of a [`DlpackTensor`] (a DLPack 1.x `DLManagedTensorVersioned` or a
//!   legacy 0.x `DLManagedTensor`, as [`dlpark`] handles). The view keeps the tensor alive
//!   through an owner shared by every view derived from it; the producer's deleter runs
//!   exactly once, when the last of them is gone. The driver is asked what the pointer is,
//!   and a device type that contradicts it is an error.
//! - **Export**: [`StridedMemoryView::to_dlpack`] (read-only) and
//!   [`StridedMemoryViewMut::into_dlpack`] (writable) hand out a tensor whose deleter
//!   keeps the memory alive until the consumer is done; `*_legacy` give the 0.x struct.
//! - **Streams**: [`StreamValue`](crate::StreamValue) decodes the protocols' stream
//!   values and [`wait_for_producer`](crate::stream::wait_for_producer) orders a
//!   consumer stream after a producer's (the [`stream`](crate::stream) module).
//!
//! ```
//! use stridekit::{StridedMemoryView, StridedMemoryViewMut};
//! let owned = StridedMemoryViewMut::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3])?;
//! let tensor = owned.into_dlpack()?;                        // a DLManagedTensorVersioned
//! // SAFETY: the tensor came from stridekit and nobody else holds its memory.
//! let back = unsafe { StridedMemoryViewMut::from_dlpack(tensor)? };
//! assert_eq!(back.as_view().to_vec::<f32>()?, [0., 1., 2., 3., 4., 5.]);
//! # Ok::<(), stridekit::Error>(())
//! ```
//!
//! [`StridedMemoryView::from_dlpack`]: crate::StridedMemoryView::from_dlpack
//! [`StridedMemoryViewMut::from_dlpack`]: crate::StridedMemoryViewMut::from_dlpack
//! [`StridedMemoryView::to_dlpack`]: crate::StridedMemoryView::to_dlpack
//! [`StridedMemoryViewMut::into_dlpack`]: crate::StridedMemoryViewMut::into_dlpack

mod export;
mod import;

pub use crate::dtype::{dtype_from_dlpack, dtype_to_dlpack};
pub use dlpark;
pub use dlpark::ffi::{
    DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLPackExchangeAPI, DLTensor,
};
pub use dlpark::DlpackFlags;
pub(crate) use export::{dl_device, dl_dtype, export, ExportSpec};
pub use import::{check_dltensor, DlpackTensor, TensorFacts};
pub(crate) use import::{describe_memory, Claim, Described};

/// The highest DLPack version stridekit produces and understands, (major, minor).
pub const DLPACK_VERSION: (u32, u32) = (
    dlpark::ffi::DLPACK_MAJOR_VERSION,
    dlpark::ffi::DLPACK_MINOR_VERSION,
);

#[cfg(test)]
mod tests;
