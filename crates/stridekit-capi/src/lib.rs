//! The C ABI of stridekit.
//!
//! A [`sk_view`] is a strided view whose attributes (pointer, shape, strides, itemsize,
//! dtype, device, read-only) are plain C values, readable in a loop without a call per
//! field. Views are acquired (`sk_view_from_ptr`, `sk_view_from_dlpack`) and released
//! once (`sk_view_release`), like Python's `Py_buffer`. Every function returns an
//! [`sk_status`] (0 is success) and leaves the error's text for [`sk_last_error`]; no
//! Rust panic crosses the boundary.
//!
//! The header is `include/stridekit.h`, generated from this crate by cbindgen.
#![allow(non_camel_case_types)]

// Lowest first: each module uses only the ones before it (tests/layers.rs).
mod acquire;
mod copy;
mod handle;
mod kernels;
mod route;
mod status;
mod tma;
mod types;
mod view;
mod vtable;

pub use acquire::{sk_view_from_dlpack, sk_view_from_ptr, sk_view_of};
pub use copy::{sk_view_copy, sk_view_copy_bits};
pub use kernels::{
    sk_add_kernel_pack, sk_precompile_kernels, sk_set_background_compile, sk_wait_for_kernels,
};
pub use status::{
    sk_last_error, sk_status, sk_status_str, sk_version, SK_ERR_DRIVER, SK_ERR_INTERNAL,
    SK_ERR_INVALID, SK_ERR_NO_DEVICE, SK_ERR_NO_DRIVER, SK_ERR_NULL_POINTER, SK_ERR_READ_ONLY,
    SK_ERR_RELEASED, SK_ERR_UNSUPPORTED, SK_OK, STRIDEKIT_VERSION_MAJOR, STRIDEKIT_VERSION_MINOR,
    STRIDEKIT_VERSION_PATCH,
};
pub use tma::sk_tensor_map_tiled;
pub use types::{sk_tma_options, sk_view, sk_vtable, SK_VTABLE_VERSION};
pub use view::{sk_view_is_contiguous, sk_view_release, sk_view_required_size, sk_view_to_dlpack};
