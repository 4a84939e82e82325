//! This copy's function table, which every `sk_view` it makes points to (see `route`
//! for how a call on another copy's view is forwarded).

use crate::types::{sk_vtable, SK_VTABLE_MAGIC, SK_VTABLE_VERSION};

/// This copy's table.
pub(crate) static VTABLE: sk_vtable = sk_vtable {
    version: SK_VTABLE_VERSION,
    size: std::mem::size_of::<sk_vtable>() as u32,
    last_error: crate::status::sk_last_error,
    release: crate::view::sk_view_release,
    copy: crate::copy::sk_view_copy,
    copy_bits: crate::copy::sk_view_copy_bits,
    to_dlpack: crate::view::sk_view_to_dlpack,
    required_size: crate::view::sk_view_required_size,
    is_contiguous: crate::view::sk_view_is_contiguous,
    tensor_map_tiled: crate::tma::sk_tensor_map_tiled,
    magic: SK_VTABLE_MAGIC,
};
