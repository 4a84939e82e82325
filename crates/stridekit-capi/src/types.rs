//! The C structs and constants of the ABI: plain data, no entry points.

use crate::status::sk_status;
use dlpark::ffi::DLDataType;
use std::ffi::{c_char, c_void};

/// A strided view whose attributes are plain C values. Acquired by `sk_view_from_ptr` or
/// `sk_view_from_dlpack`, released exactly once by `sk_view_release`.
#[repr(C)]
#[derive(Debug)]
pub struct sk_view {
    /// Address of element offset 0 (the element at index (0, ..., 0)).
    pub ptr: usize,
    /// Number of dimensions (0 to 64).
    pub ndim: i32,
    /// `ndim` extents, valid until the view is released.
    pub shape: *const i64,
    /// `ndim` strides in elements, valid until the view is released.
    pub strides: *const i64,
    /// Bytes per element.
    pub itemsize: i64,
    /// The element type; code 0, bits 0, lanes 0 when unknown.
    pub dtype: DLDataType,
    /// The device ordinal, -1 for memory that belongs to no device.
    pub device_id: i32,
    /// Whether kernels can reach the memory.
    pub device_accessible: bool,
    /// Whether writes through this view are refused.
    pub readonly: bool,
    /// Opaque; keeps the memory alive until the view is released.
    pub owner: *mut c_void,
    /// The functions of the library copy that made the view: another copy forwards
    /// calls on this view to them.
    pub vtable: *const sk_vtable,
}

/// Options of a tiled tensor map; a NULL `sk_tma_options*` means all defaults (zeros).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sk_tma_options {
    /// Swizzle span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: i32,
    /// Interleave in bytes: 0 (none), 16 or 32.
    pub interleave: i32,
    /// L2 promotion in bytes: 0 (none), 64, 128 or 256.
    pub l2_promotion: i32,
    /// Out-of-bounds fill: 0 zeros, 1 NaN (floating-point types only).
    pub oob_fill_nan: i32,
    /// `rank` element strides (1 to 8), or NULL for all 1.
    pub element_strides: *const u32,
}

/// The version of [`sk_vtable`]'s layout; a table of an older version is not used.
pub const SK_VTABLE_VERSION: u32 = 2;

/// The last field of every table from version 2 on: what tells a table from other bytes.
pub const SK_VTABLE_MAGIC: u64 = 0x7374_7269_6465_6b74;

/// The functions of the library copy that made a view. `version` and `size` come first
/// so that later versions can only add to the end.
#[repr(C)]
#[derive(Debug)]
pub struct sk_vtable {
    /// `SK_VTABLE_VERSION` of the copy that made the table.
    pub version: u32,
    /// `sizeof(sk_vtable)` of that copy.
    pub size: u32,
    /// That copy's `sk_last_error`.
    pub last_error: extern "C" fn() -> *const c_char,
    /// That copy's `sk_view_release`.
    pub release: unsafe extern "C" fn(*mut sk_view) -> sk_status,
    /// That copy's `sk_view_copy`.
    pub copy: unsafe extern "C" fn(*const sk_view, *const sk_view, usize, i32) -> sk_status,
    /// That copy's `sk_view_copy_bits`.
    pub copy_bits: unsafe extern "C" fn(*const sk_view, *const sk_view, usize, i32) -> sk_status,
    /// That copy's `sk_view_to_dlpack`.
    pub to_dlpack: unsafe extern "C" fn(*const sk_view, bool, *mut *mut c_void) -> sk_status,
    /// That copy's `sk_view_required_size`.
    pub required_size: unsafe extern "C" fn(*const sk_view, *mut i64) -> sk_status,
    /// That copy's `sk_view_is_contiguous`.
    pub is_contiguous: unsafe extern "C" fn(*const sk_view, u8, *mut bool) -> sk_status,
    /// That copy's `sk_tensor_map_tiled`.
    pub tensor_map_tiled: unsafe extern "C" fn(
        *const sk_view,
        i32,
        *const u32,
        *const sk_tma_options,
        *mut u8,
    ) -> sk_status,
    /// `SK_VTABLE_MAGIC`.
    pub magic: u64,
}
