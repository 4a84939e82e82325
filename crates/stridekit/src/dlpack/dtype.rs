//! DLPack data types <-> stridekit dtypes.

use crate::dtype::DType;
use crate::error::{invalid, Result};
use dlpark::ffi::{DLDataType, DLDataTypeCode};

/// The DLPack encoding of a dtype (`None`: unknown, encoded as code 0, bits 0, lanes 0 by
/// the C ABI; DLPack exports need a known dtype or the byte size as `uint`, see
/// [`StridedMemoryView::to_dlpack`](crate::StridedMemoryView::to_dlpack)).
pub fn dtype_to_dlpack(d: DType) -> DLDataType {
    let (code, bits, lanes) = d.dlpack();
    DLDataType {
        code: DLDataTypeCode(code),
        bits,
        lanes,
    }
}

/// What a DLPack data type means to stridekit: a known dtype, or just an itemsize
/// (`Ok((None, n))` for a whole-byte type stridekit has no name for). Vector types
/// (lanes != 1), sub-byte types and 0-bit types are refused.
pub fn dtype_from_dlpack(op: &'static str, t: DLDataType) -> Result<(Option<DType>, usize)> {
    if t.lanes != 1 {
        return Err(invalid(
            op,
            format!(
                "data type (code {}, bits {}, lanes {}) has {} lanes; only scalar types (lanes = 1) can be viewed",
                t.code.0, t.bits, t.lanes, t.lanes
            ),
        ));
    }
    if t.bits == 0 || !t.bits.is_multiple_of(8) {
        return Err(invalid(
            op,
            format!(
                "data type (code {}, bits {}) is {} bits wide; only whole-byte element types can be viewed (sub-byte packed types are not supported)",
                t.code.0, t.bits, t.bits
            ),
        ));
    }
    Ok((
        DType::from_dlpack(t.code.0, t.bits, t.lanes),
        t.bits as usize / 8,
    ))
}
