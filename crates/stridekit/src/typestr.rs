//! NumPy array-interface type strings (`"<f4"`, `"|b1"`, `">i8"`, `"<U3"`), read
//! completely: the byte order, the kind and the exact itemsize. The one reading of them,
//! for every front that takes `__array_interface__` or `__cuda_array_interface__`.

use crate::error::{invalid, Error, Result};
use crate::DType;

/// What a type string describes: a known dtype, or (for kinds stridekit has no name for:
/// strings, datetimes, opaque records) `None`, with the exact itemsize in bytes.
///
/// Refused: object (`O`) and pointer-holding kinds, whose bytes are references
/// ([`Error::ElementType`]); a byte order other than this machine's for multi-byte items
/// ([`Error::ElementType`]: the values would be misread; byte-swap the array first); and
/// anything malformed ([`Error::Invalid`]).
///
/// ```
/// use stridekit::{dtype_from_typestr, DType, Error};
/// assert_eq!(dtype_from_typestr("op", "<f4")?, (Some(DType::F32), 4));
/// assert_eq!(dtype_from_typestr("op", "|b1")?, (Some(DType::Bool), 1));
/// assert_eq!(dtype_from_typestr("op", "<U3")?, (None, 12));   // 3 UCS-4 code points
/// assert!(matches!(dtype_from_typestr("op", "|O8"), Err(Error::ElementType { .. })));
/// assert!(matches!(dtype_from_typestr("op", ">i4"), Err(Error::ElementType { .. })));
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn dtype_from_typestr(op: &'static str, typestr: &str) -> Result<(Option<DType>, usize)> {
    let bytes = typestr.as_bytes();
    let malformed = |why: &str| {
        invalid(
            op,
            format!("typestr {typestr:?} {why}; the array interface's form is a byte order (<, >, | or =), a kind letter and a size in bytes, like \"<f4\""),
        )
    };
    let (&order, rest) = bytes.split_first().ok_or_else(|| malformed("is empty"))?;
    let (&kind, digits) = rest
        .split_first()
        .ok_or_else(|| malformed("has no kind letter"))?;
    // Objects first: NumPy writes them with or without a size ("|O", "|O8").
    if matches!(kind, b'O' | b'P') {
        return Err(Error::ElementType {
            op,
            rule: format!(
                "typestr {typestr:?} holds {}; their bytes are references, which a view cannot copy or share without counting them (convert to a numeric dtype first)",
                if kind == b'O' { "Python objects" } else { "pointers" }
            ),
        });
    }
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(malformed(
            "has no size, or a size that is not a decimal number",
        ));
    }
    // Digits only (checked), so the slice is valid UTF-8 and the parse fails only on overflow.
    let count: usize = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| malformed("has a size too large for this machine"))?;
    if count == 0 {
        return Err(malformed("has size 0"));
    }
    let native = if cfg!(target_endian = "little") {
        b'<'
    } else {
        b'>'
    };
    let foreign = if native == b'<' { b'>' } else { b'<' };
    if !matches!(order, b'<' | b'>' | b'|' | b'=') {
        return Err(malformed("starts with an unknown byte order"));
    }
    // Unicode items are UCS-4 code points: the count is characters, 4 bytes each.
    let itemsize = if kind == b'U' {
        count
            .checked_mul(4)
            .ok_or_else(|| malformed("has a size too large for this machine"))?
    } else {
        count
    };
    // The element width that byte order applies to (a UCS-4 unit, or half a complex).
    let unit = match kind {
        b'U' => 4,
        b'c' => itemsize / 2,
        b'S' | b'V' | b'b' => 1,
        _ => itemsize,
    };
    if order == foreign && unit > 1 {
        return Err(Error::ElementType {
            op,
            rule: format!(
                "typestr {typestr:?} is {} byte order but this machine is {}; its values would be misread (byte-swap it first, e.g. numpy's a.astype(a.dtype.newbyteorder('=')))",
                if order == b'>' { "big-endian" } else { "little-endian" },
                if native == b'<' { "little-endian" } else { "big-endian" }
            ),
        });
    }
    // Numeric kinds map through the one dtype table (DLPack's codes); wider or unusual
    // numbers (long double, 128-bit ints), datetimes, strings and opaque records are
    // plain bytes of a known size, with no dtype.
    use crate::dtype::dlpack_code as code;
    let numeric = match kind {
        b'b' => Some(code::BOOL),
        b'i' => Some(code::INT),
        b'u' => Some(code::UINT),
        b'f' => Some(code::FLOAT),
        b'c' => Some(code::COMPLEX),
        b'm' | b'M' | b'S' | b'U' | b'V' => None,
        _ => return Err(malformed("has an unknown kind letter")),
    };
    let bits = itemsize.checked_mul(8).and_then(|b| u8::try_from(b).ok());
    let dtype = match (numeric, bits) {
        (Some(c), Some(bits)) => DType::from_dlpack(c, bits, 1),
        _ => None,
    };
    Ok((dtype, itemsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<(Option<DType>, usize)> {
        dtype_from_typestr("test", t)
    }

    #[test]
    fn every_numpy_numeric_typestr_maps_exactly() {
        for (t, d) in [
            ("|b1", DType::Bool),
            ("|i1", DType::I8),
            ("<i2", DType::I16),
            ("<i4", DType::I32),
            ("<i8", DType::I64),
            ("|u1", DType::U8),
            ("<u2", DType::U16),
            ("<u4", DType::U32),
            ("=u8", DType::U64),
            ("<f2", DType::F16),
            ("<f4", DType::F32),
            ("<f8", DType::F64),
            ("<c8", DType::Complex64),
            ("<c16", DType::Complex128),
        ] {
            assert_eq!(parse(t).unwrap(), (Some(d), d.itemsize()), "{t}");
        }
        // Big-endian single bytes are fine: order does not apply.
        assert_eq!(parse(">u1").unwrap(), (Some(DType::U8), 1));
        assert_eq!(parse(">S5").unwrap(), (None, 5));
    }

    #[test]
    fn nameless_kinds_keep_their_exact_itemsize() {
        assert_eq!(parse("<U3").unwrap(), (None, 12));
        assert_eq!(parse("|S7").unwrap(), (None, 7));
        assert_eq!(parse("|V24").unwrap(), (None, 24));
        assert_eq!(parse("<M8").unwrap(), (None, 8));
        assert_eq!(parse("<m8").unwrap(), (None, 8));
        assert_eq!(parse("<f16").unwrap(), (None, 16));
        assert_eq!(parse("<i16").unwrap(), (None, 16));
    }

    #[test]
    fn objects_pointers_and_foreign_byte_order_are_type_errors() {
        for t in ["|O8", "|O4", "<O8", "|P8", "|O"] {
            let e = parse(t).unwrap_err();
            assert!(matches!(e, Error::ElementType { .. }), "{t}: {e:?}");
            assert!(e.to_string().contains("references"), "{e}");
        }
        let foreign = if cfg!(target_endian = "little") {
            ">"
        } else {
            "<"
        };
        for k in ["i4", "f8", "u2", "c8", "U3", "M8"] {
            let t = format!("{foreign}{k}");
            let e = parse(&t).unwrap_err();
            assert!(matches!(e, Error::ElementType { .. }), "{t}: {e:?}");
            assert!(e.to_string().contains("misread"), "{e}");
        }
    }

    #[test]
    fn malformed_typestrs_are_refused_not_guessed() {
        for (t, words) in [
            ("", "is empty"),
            ("<", "no kind letter"),
            ("<f", "no size"),
            ("<f4x", "no size"),
            ("<f-4", "no size"),
            ("<f0", "size 0"),
            ("<f99999999999999999999999", "too large"),
            ("<U9999999999999999999", "too large"),
            ("!f4", "unknown byte order"),
            ("<q4", "unknown kind"),
            ("<t8", "unknown kind"),
        ] {
            let e = parse(t).unwrap_err();
            assert!(matches!(e, Error::Invalid { .. }), "{t:?}: {e:?}");
            assert!(e.to_string().contains(words), "{t:?}: {e}");
        }
    }
}
