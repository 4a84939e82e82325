//! Element types: what the bytes of a view mean.

use crate::error::{invalid, Result};
use dlpark::ffi::{DLDataType, DLDataTypeCode};

/// An element type, with its size and DLPack encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[allow(missing_docs)] // the names say it
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    Complex64,
    Complex128,
    F8E4M3,
    F8E5M2,
    /// Complex of two float16 (PyTorch's `complex32`/`chalf`).
    Complex32,
    /// FP8 E4M3 with IEEE infinities (ml_dtypes' `float8_e4m3`).
    F8E4M3Ieee,
    /// FP8 E3M4 (ml_dtypes' `float8_e3m4`).
    F8E3M4,
    /// FP8 E4M3, bias 11, finite, unsigned zero (ml_dtypes' `float8_e4m3b11fnuz`).
    F8E4M3B11Fnuz,
    /// FP8 E4M3, finite, unsigned zero (`float8_e4m3fnuz`).
    F8E4M3Fnuz,
    /// FP8 E5M2, finite, unsigned zero (`float8_e5m2fnuz`).
    F8E5M2Fnuz,
    /// FP8 E8M0, finite, no sign: a power-of-two scale (`float8_e8m0fnu`).
    F8E8M0Fnu,
}

/// DLPack type codes (`DLDataTypeCode`).
pub mod dlpack_code {
    /// Signed integer.
    pub const INT: u8 = 0;
    /// Unsigned integer.
    pub const UINT: u8 = 1;
    /// IEEE floating point.
    pub const FLOAT: u8 = 2;
    /// bfloat16.
    pub const BFLOAT: u8 = 4;
    /// Complex (two floats).
    pub const COMPLEX: u8 = 5;
    /// Boolean.
    pub const BOOL: u8 = 6;
    /// FP8 E4M3 (fn variant).
    pub const FLOAT8_E4M3FN: u8 = 10;
    /// FP8 E5M2.
    pub const FLOAT8_E5M2: u8 = 12;
    /// FP8 E3M4.
    pub const FLOAT8_E3M4: u8 = 7;
    /// FP8 E4M3 (IEEE-like, with infinities).
    pub const FLOAT8_E4M3: u8 = 8;
    /// FP8 E4M3, bias 11, finite, unsigned zero.
    pub const FLOAT8_E4M3B11FNUZ: u8 = 9;
    /// FP8 E4M3, finite, unsigned zero.
    pub const FLOAT8_E4M3FNUZ: u8 = 11;
    /// FP8 E5M2, finite, unsigned zero.
    pub const FLOAT8_E5M2FNUZ: u8 = 13;
    /// FP8 E8M0, finite, no sign.
    pub const FLOAT8_E8M0FNU: u8 = 14;
}

const ALL: [DType; 24] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::Complex64,
    DType::Complex128,
    DType::F8E4M3,
    DType::F8E5M2,
    DType::Complex32,
    DType::F8E4M3Ieee,
    DType::F8E3M4,
    DType::F8E4M3B11Fnuz,
    DType::F8E4M3Fnuz,
    DType::F8E5M2Fnuz,
    DType::F8E8M0Fnu,
];

impl DType {
    /// Every dtype.
    pub fn all() -> &'static [DType] {
        &ALL
    }

    /// Bytes per element.
    pub fn itemsize(self) -> usize {
        self.dlpack().1 as usize / 8
    }

    /// DLPack `(code, bits, lanes)`.
    pub fn dlpack(self) -> (u8, u8, u16) {
        use dlpack_code::*;
        let (code, bits) = match self {
            DType::Bool => (BOOL, 8),
            DType::I8 => (INT, 8),
            DType::I16 => (INT, 16),
            DType::I32 => (INT, 32),
            DType::I64 => (INT, 64),
            DType::U8 => (UINT, 8),
            DType::U16 => (UINT, 16),
            DType::U32 => (UINT, 32),
            DType::U64 => (UINT, 64),
            DType::F16 => (FLOAT, 16),
            DType::BF16 => (BFLOAT, 16),
            DType::F32 => (FLOAT, 32),
            DType::F64 => (FLOAT, 64),
            DType::Complex64 => (COMPLEX, 64),
            DType::Complex128 => (COMPLEX, 128),
            DType::F8E4M3 => (FLOAT8_E4M3FN, 8),
            DType::F8E5M2 => (FLOAT8_E5M2, 8),
            DType::Complex32 => (COMPLEX, 32),
            DType::F8E4M3Ieee => (FLOAT8_E4M3, 8),
            DType::F8E3M4 => (FLOAT8_E3M4, 8),
            DType::F8E4M3B11Fnuz => (FLOAT8_E4M3B11FNUZ, 8),
            DType::F8E4M3Fnuz => (FLOAT8_E4M3FNUZ, 8),
            DType::F8E5M2Fnuz => (FLOAT8_E5M2FNUZ, 8),
            DType::F8E8M0Fnu => (FLOAT8_E8M0FNU, 8),
        };
        (code, bits, 1)
    }

    /// The dtype of a DLPack `(code, bits, lanes)`; `None` for what stridekit has no name for.
    pub fn from_dlpack(code: u8, bits: u8, lanes: u16) -> Option<DType> {
        ALL.iter()
            .copied()
            .find(|d| d.dlpack() == (code, bits, lanes))
    }

    /// True for floating-point and complex types (the ones with a NaN).
    pub fn is_floating(self) -> bool {
        matches!(
            self,
            DType::F16
                | DType::BF16
                | DType::F32
                | DType::F64
                | DType::Complex64
                | DType::Complex128
                | DType::F8E4M3
                | DType::F8E5M2
                | DType::Complex32
                | DType::F8E4M3Ieee
                | DType::F8E3M4
                | DType::F8E4M3B11Fnuz
                | DType::F8E4M3Fnuz
                | DType::F8E5M2Fnuz
                | DType::F8E8M0Fnu
        )
    }
}

/// A Rust type whose values are the elements of a [`DType`].
pub trait Element: bytemuck::Pod {
    /// The matching dtype.
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16,
    [f32; 2] => Complex64, [f64; 2] => Complex128);

/// The DLPack encoding of a dtype as dlpark's `DLDataType` (the table is
/// [`DType::dlpack`]; this is its only other form).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itemsizes_and_dlpack_round_trip() {
        for &d in DType::all() {
            let (c, b, l) = d.dlpack();
            assert_eq!(DType::from_dlpack(c, b, l), Some(d));
            assert_eq!(d.itemsize() * 8, b as usize);
        }
        assert_eq!(DType::Complex128.itemsize(), 16);
        assert_eq!(DType::BF16.dlpack(), (4, 16, 1));
        assert_eq!(DType::from_dlpack(2, 32, 4), None);
        assert_eq!(<half::bf16 as Element>::DTYPE, DType::BF16);
        assert!(DType::F8E5M2.is_floating() && !DType::Bool.is_floating());
        // DLPack 1.1's codes for the narrow float kinds, and complex32 (two halves).
        assert_eq!(DType::from_dlpack(5, 32, 1), Some(DType::Complex32));
        assert_eq!(DType::from_dlpack(11, 8, 1), Some(DType::F8E4M3Fnuz));
        assert_eq!(DType::from_dlpack(13, 8, 1), Some(DType::F8E5M2Fnuz));
        assert_eq!(DType::from_dlpack(14, 8, 1), Some(DType::F8E8M0Fnu));
        assert_eq!(DType::Complex32.itemsize(), 4);
    }
}
