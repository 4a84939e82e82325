//! Strided GPU memory on CUDA.
//!
//! stridekit describes tensors in memory ([`StridedLayout`]), allocates and moves them
//! (memory resources and [`Buffer`]s on host, pinned, managed and device memory), and asks
//! the driver what a pointer is ([`pointer_info`]). It runs on cudarc; without a CUDA
//! driver every GPU entry point returns [`Error::NoDriver`] instead of panicking.
//!
//! ```no_run
//! use stridekit::{Device, DeviceMemoryResource, MemoryResource};
//! let dev = Device::open(0)?;
//! let stream = dev.new_stream()?;
//! let mr = DeviceMemoryResource::new(&dev)?;
//! let mut buf = mr.allocate(4096, &stream)?;
//! buf.copy_from_host(&[1u32; 1024], &stream)?;
//! let mut back = [0u32; 1024];
//! buf.copy_to_host(&mut back, &stream)?;
//! assert_eq!(back, [1u32; 1024]);
//! # Ok::<(), stridekit::Error>(())
//! ```
#![warn(missing_docs)]

mod background_compile;
mod copy;
mod cubin_image;
mod device;
mod device_tables;
pub mod dist;
pub mod dlpack;
mod driver;
mod dtype;
mod error;
pub mod graph;
mod kernel_cache;
mod kernel_pack;
pub mod managed;
mod memory;
mod nvrtc;
pub mod peer;
mod pointer;
mod runtime;
pub mod stream;
pub mod tma;
mod typestr;
pub mod view;

pub use background_compile::{
    kernels_compiled_in_background, set_background_compile, wait_for_kernels,
};
pub use copy::{
    elementwise_kernel, image_tile_launches, image_tiles, release_copy_temporaries,
    set_image_tiles, set_small_copy_elements, set_tile_blocks_per_sm, small_copy_elements,
    tile_blocks_per_sm, CopyOptions, ElementwiseKernel, MANAGED_PREFETCH_MIN_BYTES,
    TEMPORARIES_KEPT_BYTES,
};
pub use cudarc;
pub use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
pub use device::Device;
pub use dlpack::DlpackTensor;
pub use driver::nvrtc_lib::{add_nvrtc_search_dir, wheel_dirs as nvrtc_wheel_dirs};
pub use driver::{cuda_available, driver_version};
pub use dtype::{dlpack_code, DType, Element};
pub use error::{Error, Result};
pub use kernel_pack::{add_kernel_pack, precompile_kernels, Precompiled};
pub use managed::{ManagedBuffer, ManagedMemoryResource, ManagedRange};
pub use memory::{
    Buffer, CudarcBuffer, CudarcBufferMut, DeviceMemoryResource, DevicePoolOptions,
    HostMemoryResource, MemoryKind, MemoryResource, PinnedMemoryResource,
};
pub use pointer::{pointer_info, PointerInfo, PointerKind};
pub use stream::{StreamOrder, StreamValue};
pub use stridekit_layout as layout;
pub use stridekit_layout::{
    s, CopyPlan, CopyStep, LayoutError, Order, ScheduleBounds, SliceArg, StridedLayout, TilePlan,
    SCHEDULE_ADDRESS_PERIOD, SMALL_COPY,
};
pub use tma::TensorMapDescriptor;
pub use typestr::dtype_from_typestr;
pub use view::{StridedMemoryView, StridedMemoryViewBase, StridedMemoryViewMut};
