//! `Region`: a span of memory that an owner keeps valid for `'a`. It is the only way the
//! copy engines, the host copy and raw copies receive memory (not raw addresses), and
//! every one of them checks the bytes it will touch against its regions first: a plan or
//! a size that reaches outside is an error, never an out-of-bounds access.

use super::{Buffer, MemoryKind};
use crate::dtype::DType;
use crate::error::{invalid, Result};
use std::marker::PhantomData;
use std::ops::Range;
use stridekit_layout::StridedLayout;

/// A span of valid memory: base address, size, kind, and whether it may be
/// written through this region.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region<'a> {
    base: u64,
    size: usize,
    kind: MemoryKind,
    writable: bool,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> Region<'a> {
    /// A buffer's memory (writable: device memory is written through shared handles, as
    /// the driver allows; host buffers are written only by their exclusive borrowers,
    /// which make their regions from `&mut Buffer`).
    pub(crate) fn of_buffer(b: &'a Buffer) -> Region<'a> {
        Region {
            base: b.ptr(),
            size: b.size(),
            kind: b.kind(),
            writable: b.kind() != MemoryKind::Host,
            _borrow: PhantomData,
        }
    }

    /// A buffer's memory, borrowed exclusively: writable whatever its kind.
    pub(crate) fn of_buffer_mut(b: &'a mut Buffer) -> Region<'a> {
        Region {
            writable: true,
            ..Region::of_buffer(b)
        }
    }

    /// Host bytes, read only.
    pub(crate) fn of_host(bytes: &'a [u8]) -> Region<'a> {
        Region {
            base: bytes.as_ptr() as u64,
            size: bytes.len(),
            kind: MemoryKind::Host,
            writable: false,
            _borrow: PhantomData,
        }
    }

    /// Host bytes, borrowed exclusively.
    pub(crate) fn of_host_mut(bytes: &'a mut [u8]) -> Region<'a> {
        Region {
            writable: true,
            ..Region::of_host(bytes)
        }
    }

    /// A pinned staging block.
    pub(crate) fn of_pinned(b: &'a crate::driver::PinnedBlock) -> Region<'a> {
        Region {
            base: b.ptr(),
            size: b.size(),
            kind: MemoryKind::PinnedHost,
            writable: true,
            _borrow: PhantomData,
        }
    }

    /// A region of memory known by address.
    ///
    /// # Safety
    /// `base..base + size` is memory of `kind` that stays valid for `'a`,
    /// and, if `writable`, that nothing else reads or writes meanwhile except through
    /// regions of it.
    pub(crate) unsafe fn from_raw(
        op: &'static str,
        base: u64,
        size: usize,
        kind: MemoryKind,
        writable: bool,
    ) -> Result<Region<'a>> {
        if size > 0 && base == 0 {
            return Err(invalid(op, format!("a null address with {size} bytes")));
        }
        if base.checked_add(size as u64).is_none() {
            return Err(invalid(
                op,
                format!("{size} bytes at {base:#x} wrap past the end of the address space"),
            ));
        }
        Ok(Region {
            base,
            size,
            kind,
            writable,
            _borrow: PhantomData,
        })
    }

    pub(crate) fn base(&self) -> u64 {
        self.base
    }
    /// Bytes from the base that are valid memory.
    pub(crate) fn size(&self) -> usize {
        self.size
    }
    pub(crate) fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The same memory, read only.
    pub(crate) fn read_only(self) -> Region<'a> {
        Region {
            writable: false,
            ..self
        }
    }

    /// `len` bytes from `offset`.
    pub(crate) fn sub(&self, op: &'static str, offset: usize, len: usize) -> Result<Region<'a>> {
        self.check(
            op,
            "bytes",
            offset as i64..(offset as i64).saturating_add(len as i64),
        )?;
        Ok(Region {
            base: self.base + offset as u64,
            size: len,
            ..*self
        })
    }

    /// Fails unless the byte offsets `range` (relative to the base) lie inside.
    pub(crate) fn check(&self, op: &'static str, what: &str, range: Range<i64>) -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        if range.start < 0 || range.end as u64 > self.size as u64 || range.end < 0 {
            return Err(invalid(
                op,
                format!(
                    "the {what} reach bytes {}..{} of a {}-byte region of {:?} memory at {:#x}; every byte touched must lie inside the memory",
                    range.start, range.end, self.size, self.kind, self.base
                ),
            ));
        }
        Ok(())
    }

    /// Fails unless the region may be written.
    pub(crate) fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(invalid(
                op,
                format!("the {:?} memory at {:#x} is borrowed read-only and cannot be a copy's destination", self.kind, self.base),
            ))
        }
    }

    /// Fails unless the CPU may touch the region.
    pub(crate) fn check_host(&self, op: &'static str) -> Result<()> {
        if self.kind.is_host_accessible() {
            Ok(())
        } else {
            Err(invalid(
                op,
                format!(
                    "the {:?} memory at {:#x} is not host memory; the CPU cannot copy it",
                    self.kind, self.base
                ),
            ))
        }
    }
}

/// Checks a layout (and dtype) over `size` bytes at `ptr` of memory of `kind`: the
/// dtype's itemsize is the layout's, the address range neither is null nor wraps, every
/// element lies inside, and, for memory kernels read, every element is aligned to its
/// size (up to 16 bytes): a misaligned element would fault in the copy kernels and end
/// the context, so it is an error here.
/// Kernels read elements whole: in memory they reach (all but pageable host memory), the
/// lowest element of a non-empty layout must sit at a multiple of the element alignment.
pub(crate) fn check_element_alignment(
    op: &'static str,
    ptr: u64,
    volume: usize,
    kind: MemoryKind,
    itemsize: usize,
) -> Result<()> {
    let align = element_alignment(itemsize);
    if kind != MemoryKind::Host && volume > 0 && !ptr.is_multiple_of(align) {
        return Err(invalid(
            op,
            format!(
                "the memory starts at {ptr:#x}, {} bytes past a multiple of {align}; elements of {itemsize} bytes in {kind:?} memory are read by kernels whole, so their addresses must be multiples of {align} (a DLPack byte_offset or a pointer that is not, say)",
                ptr % align,
            ),
        ));
    }
    Ok(())
}

pub(crate) fn validate_layout(
    op: &'static str,
    ptr: u64,
    size: usize,
    kind: MemoryKind,
    layout: &StridedLayout,
    dtype: Option<DType>,
) -> Result<()> {
    check_element_alignment(op, ptr, layout.volume(), kind, layout.itemsize())?;
    if ptr.checked_add(size as u64).is_none() || (ptr == 0 && size > 0) {
        return Err(invalid(
            op,
            format!(
                "{size} bytes at {ptr:#x} are not an address range: memory must not be null or wrap past the end of the address space"
            ),
        ));
    }
    if let Some(d) = dtype {
        if d.itemsize() != layout.itemsize() {
            return Err(invalid(
                op,
                format!(
                    "dtype {d:?} has itemsize {} but the layout's itemsize is {}; they must match",
                    d.itemsize(),
                    layout.itemsize()
                ),
            ));
        }
    }
    if layout.volume() == 0 {
        return Ok(());
    }
    let (lo, hi) = layout.offset_bounds();
    if lo < 0 {
        return Err(invalid(
            op,
            format!("layout {layout} reaches offset {lo}, before the start of the memory; min_offset must be >= 0"),
        ));
    }
    let need = layout.required_size_in_bytes()?;
    if need > size {
        return Err(invalid(
            op,
            format!(
                "layout {layout} reaches element offset {hi} ({need} bytes) but the memory has {size} bytes"
            ),
        ));
    }
    Ok(())
}

/// The bytes a layout reaches when its element offset 0 is at `ptr`: the lowest address,
/// the number of bytes, and the layout moved so that its lowest element is at offset 0 of
/// that span. A null `ptr` is refused for a non-empty layout, and so is a span that
/// reaches below address 0 or past the end of the address space.
pub(crate) fn span_at(
    op: &'static str,
    ptr: u64,
    layout: StridedLayout,
) -> Result<(u64, usize, StridedLayout)> {
    if layout.volume() == 0 {
        return Ok((ptr, 0, layout));
    }
    let (lo, bytes) = layout.byte_span();
    let base = span_base(op, ptr, layout.volume(), lo, bytes)?;
    Ok((base, bytes, layout.into_rebased()?))
}

/// The lowest address elements reach at `ptr` (`volume` of them, their bytes `lo .. lo +
/// bytes` around it; [`StridedLayout::byte_span`]): a null `ptr` is refused for a non-empty
/// layout, and so is a span that reaches below address 0 or past the end of the address
/// space. The one rule [`span_at`] and DLPack's checked descriptions follow.
pub(crate) fn span_base(
    op: &'static str,
    ptr: u64,
    volume: usize,
    lo: i64,
    bytes: usize,
) -> Result<u64> {
    if volume == 0 {
        return Ok(ptr);
    }
    if ptr == 0 {
        return Err(invalid(
            op,
            format!("the address is null but the layout has {volume} elements"),
        ));
    }
    ptr.checked_add_signed(lo)
        .filter(|b| b.checked_add(bytes as u64).is_some())
        .ok_or_else(|| {
            invalid(
                op,
                format!(
                    "a layout at {ptr:#x} reaches bytes {lo}..{} around it, outside the address space",
                    lo + bytes as i64
                ),
            )
        })
}

/// The alignment kernels need for elements of `itemsize` bytes: the largest power of two
/// dividing it, at most 16.
pub(crate) fn element_alignment(itemsize: usize) -> u64 {
    if itemsize == 0 {
        return 1;
    }
    (1u64 << itemsize.trailing_zeros()).min(16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridekit_layout::Order;

    #[test]
    fn elements_kernels_read_must_be_aligned() {
        let f32s = StridedLayout::dense(&[16], 4, Order::C).unwrap();
        for kind in [
            MemoryKind::Device,
            MemoryKind::Managed,
            MemoryKind::PinnedHost,
        ] {
            let e = validate_layout("t", 0x1002, 64, kind, &f32s, None).unwrap_err();
            assert!(
                e.to_string().contains("2 bytes past a multiple of 4"),
                "{e}"
            );
            validate_layout("t", 0x1004, 64, kind, &f32s, None).unwrap();
        }
        // The CPU copies pageable memory byte by byte: any address.
        validate_layout("t", 0x1002, 64, MemoryKind::Host, &f32s, None).unwrap();
        // An empty layout touches nothing.
        let empty = StridedLayout::dense(&[0], 4, Order::C).unwrap();
        validate_layout("t", 0x1002, 0, MemoryKind::Device, &empty, None).unwrap();
        assert_eq!(
            [1, 2, 3, 4, 6, 8, 12, 16, 32].map(element_alignment),
            [1, 2, 1, 4, 2, 8, 4, 16, 16]
        );
    }

    #[test]
    fn regions_refuse_what_lies_outside() {
        let bytes = [0u8; 32];
        let r = Region::of_host(&bytes);
        r.check("t", "bytes", 0..32).unwrap();
        assert!(r.check("t", "bytes", 0..33).is_err());
        assert!(r.check("t", "bytes", -1..4).is_err());
        assert!(r.sub("t", 16, 17).is_err());
        assert!(r.check_writable("t").is_err());
        // SAFETY: refused before it could be used (what is tested).
        let wraps = unsafe { Region::from_raw("t", u64::MAX - 3, 8, MemoryKind::Host, false) };
        assert!(wraps.is_err());
        // SAFETY: as above.
        let null = unsafe { Region::from_raw("t", 0, 8, MemoryKind::Host, false) };
        assert!(null.is_err());
    }
}
