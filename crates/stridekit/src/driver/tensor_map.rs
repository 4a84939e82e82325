//! Tensor-map (TMA) descriptors: encoding and re-pointing.

use cudarc::driver::sys;
use std::ffi::c_void;

/// The encode settings every kind of descriptor shares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodeCommon {
    pub data_type: sys::CUtensorMapDataType,
    pub rank: u32,
    pub address: u64,
    pub interleave: sys::CUtensorMapInterleave,
    pub swizzle: sys::CUtensorMapSwizzle,
    pub l2_promotion: sys::CUtensorMapL2promotion,
    pub oob_fill: sys::CUtensorMapFloatOOBfill,
}

/// The arrays of an encode call (the driver's order: innermost first).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodeArrays<'e> {
    pub global_dim: &'e [u64],
    pub global_strides: &'e [u64],
    pub element_strides: &'e [u32],
}

/// `cuTensorMapEncodeTiled`.
///
/// # Safety
/// The driver has the entry point; `arrays` hold `rank` entries (`rank - 1` strides) and
/// `box_dim` `rank`; the values meet the encode rules (checked by `tma::validate`); a
/// context is current.
pub(crate) unsafe fn encode_tiled(
    out: &mut sys::CUtensorMap,
    c: &EncodeCommon,
    a: EncodeArrays<'_>,
    box_dim: &[u32],
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            out,
            c.data_type,
            c.rank,
            c.address as *mut c_void,
            a.global_dim.as_ptr(),
            a.global_strides.as_ptr(),
            box_dim.as_ptr(),
            a.element_strides.as_ptr(),
            c.interleave,
            c.swizzle,
            c.l2_promotion,
            c.oob_fill,
        )
    }
}

/// The im2col settings of an encode call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Im2colShape<'e> {
    pub lower_corner: &'e [i32],
    pub upper_corner: &'e [i32],
    pub channels_per_pixel: u32,
    pub pixels_per_column: u32,
}

/// `cuTensorMapEncodeIm2col`.
///
/// # Safety
/// As for [`encode_tiled`]; the corners hold `rank - 2` entries.
pub(crate) unsafe fn encode_im2col(
    out: &mut sys::CUtensorMap,
    c: &EncodeCommon,
    a: EncodeArrays<'_>,
    s: Im2colShape<'_>,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        sys::cuTensorMapEncodeIm2col(
            out,
            c.data_type,
            c.rank,
            c.address as *mut c_void,
            a.global_dim.as_ptr(),
            a.global_strides.as_ptr(),
            s.lower_corner.as_ptr(),
            s.upper_corner.as_ptr(),
            s.channels_per_pixel,
            s.pixels_per_column,
            a.element_strides.as_ptr(),
            c.interleave,
            c.swizzle,
            c.l2_promotion,
            c.oob_fill,
        )
    }
}

/// `cuTensorMapEncodeIm2colWide`.
///
/// # Safety
/// As for [`encode_im2col`]; the corners hold at least one entry.
pub(crate) unsafe fn encode_im2col_wide(
    out: &mut sys::CUtensorMap,
    c: &EncodeCommon,
    a: EncodeArrays<'_>,
    s: Im2colShape<'_>,
    mode: sys::CUtensorMapIm2ColWideMode,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        sys::cuTensorMapEncodeIm2colWide(
            out,
            c.data_type,
            c.rank,
            c.address as *mut c_void,
            a.global_dim.as_ptr(),
            a.global_strides.as_ptr(),
            s.lower_corner[0],
            s.upper_corner[0],
            s.channels_per_pixel,
            s.pixels_per_column,
            a.element_strides.as_ptr(),
            c.interleave,
            mode,
            c.swizzle,
            c.l2_promotion,
            c.oob_fill,
        )
    }
}

/// `cuTensorMapReplaceAddress`.
///
/// # Safety
/// The driver has the entry point; `map` was encoded by the driver; `address` meets the
/// map's alignment and points at memory of the map's shape and strides.
pub(crate) unsafe fn replace_address(map: &mut sys::CUtensorMap, address: u64) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuTensorMapReplaceAddress(map, address as *mut c_void) }
}
