//! `ManagedRange` (a span of managed memory) and `ManagedBuffer` (an owned one).

use crate::error::{invalid, Result};
use crate::memory::{Buffer, MemoryKind, PendingWork};
use crate::pointer::{pointer_info, PointerKind};
use std::marker::PhantomData;
use std::ops::Deref;

/// A span of managed memory that advice, prefetches and discards apply to: a whole
/// [`ManagedBuffer`], a sub-range of one, or a foreign managed allocation.
///
/// A range borrows the buffer it came from, so it cannot outlive the memory. Building one
/// checks that the memory is managed; nothing else reaches the driver.
///
/// A range of a stridekit buffer carries the buffer's record of GPU work: a discard waits
/// for every use recorded on the buffer (on any stream) and is recorded as a write; a
/// prefetch is recorded as a read, so that a release waits for it.
#[derive(Debug, Clone, Copy)]
pub struct ManagedRange<'a> {
    ptr: u64,
    size: usize,
    device: Option<usize>,
    pending: Option<&'a PendingWork>,
    _memory: PhantomData<&'a ()>,
}

/// Two ranges are equal when they cover the same bytes of the same device's memory.
impl PartialEq for ManagedRange<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.ptr, self.size, self.device) == (other.ptr, other.size, other.device)
    }
}

impl Eq for ManagedRange<'_> {}

impl<'a> ManagedRange<'a> {
    pub(crate) fn new_unchecked(ptr: u64, size: usize, device: Option<usize>) -> Self {
        ManagedRange {
            ptr,
            size,
            device,
            pending: None,
            _memory: PhantomData,
        }
    }

    /// All of `buffer`, with its record (the caller checked that it is managed memory).
    fn of_buffer_unchecked(buffer: &'a Buffer) -> Self {
        ManagedRange {
            pending: Some(buffer.pending()),
            ..Self::new_unchecked(buffer.ptr(), buffer.size(), buffer.device_ordinal())
        }
    }

    /// The record of GPU work on the buffer this range came from, if it came from one.
    pub(crate) fn pending(&self) -> Option<&'a PendingWork> {
        self.pending
    }

    /// The whole of `buffer`, which must be managed memory.
    ///
    /// ```
    /// let host = stridekit::HostMemoryResource::allocate_host(64).unwrap();
    /// let err = stridekit::managed::ManagedRange::of(&host).unwrap_err();
    /// assert!(err.to_string().contains("is not managed memory"));
    /// ```
    pub fn of(buffer: &'a Buffer) -> Result<Self> {
        if buffer.kind() != MemoryKind::Managed {
            return Err(invalid(
                "ManagedRange::of",
                format!(
                    "a buffer of kind {:?} at {:#x} is not managed memory; advice, prefetch and \
                     discard need memory from ManagedMemoryResource or cuMemAllocManaged",
                    buffer.kind(),
                    buffer.ptr()
                ),
            ));
        }
        Ok(Self::of_buffer_unchecked(buffer))
    }

    /// A foreign managed allocation of `size` bytes at `ptr`. The driver is asked what
    /// the first and the last byte are; both must be managed memory.
    ///
    /// # Safety
    /// The memory must stay allocated for as long as the range (and anything built from
    /// it) is used: a discard on memory that was freed and reused would destroy someone
    /// else's data.
    pub unsafe fn from_raw(ptr: u64, size: usize) -> Result<ManagedRange<'static>> {
        const OP: &str = "ManagedRange::from_raw";
        if ptr == 0 || size == 0 {
            return Err(invalid(
                OP,
                format!("address {ptr:#x} with size {size}: a range needs a non-null address and at least one byte"),
            ));
        }
        let last = ptr.checked_add(size as u64 - 1).ok_or_else(|| {
            invalid(
                OP,
                format!("address {ptr:#x} + size {size} overflows the address space"),
            )
        })?;
        let first_info = pointer_info(ptr)?;
        for (addr, info) in [(ptr, first_info), (last, pointer_info(last)?)] {
            if info.kind != PointerKind::Managed {
                return Err(invalid(
                    OP,
                    format!(
                        "address {addr:#x} is {:?} memory, not managed memory; the range \
                         {ptr:#x}..{:#x} must lie in one managed allocation",
                        info.kind,
                        last + 1
                    ),
                ));
            }
        }
        // Both ends managed is not enough: they may belong to two allocations that happen
        // to lie side by side.
        match crate::pointer::allocation_range(ptr)? {
            Some((start, end)) if start <= ptr && last < end => {}
            found => {
                return Err(invalid(
                    OP,
                    format!(
                        "the range {ptr:#x}..{:#x} must lie in one managed allocation, but the allocation at {ptr:#x} is {}",
                        last + 1,
                        match found {
                            Some((s, e)) => format!("{s:#x}..{e:#x}"),
                            None => "unknown to the driver".into(),
                        }
                    ),
                ))
            }
        }
        Ok(ManagedRange::new_unchecked(ptr, size, first_info.device))
    }

    /// The `len` bytes at byte `offset` of this range.
    ///
    /// ```no_run
    /// # use stridekit::{Device, ManagedMemoryResource};
    /// let dev = Device::open(0)?;
    /// let buf = ManagedMemoryResource::new(&dev)?.allocate(1 << 20, &dev.default_stream())?;
    /// let second_half = buf.range().sub(1 << 19, 1 << 19)?;
    /// assert_eq!(second_half.ptr(), buf.ptr() + (1 << 19));
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn sub(&self, offset: usize, len: usize) -> Result<ManagedRange<'a>> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(ManagedRange {
                ptr: self.ptr + offset as u64,
                size: len,
                ..*self
            }),
            _ => Err(invalid(
                "ManagedRange::sub",
                format!(
                    "bytes {offset}..{} are outside the range of {} bytes",
                    offset as u128 + len as u128,
                    self.size
                ),
            )),
        }
    }

    /// The first address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device whose context allocated the memory, when known.
    pub fn device_ordinal(&self) -> Option<usize> {
        self.device
    }

    /// Fails unless the range has at least one byte: the driver takes no empty range.
    pub(crate) fn check_nonempty(&self, op: &'static str) -> Result<()> {
        if self.size == 0 {
            return Err(invalid(
                op,
                format!(
                    "the managed range at {:#x} is empty; advice, prefetch and discard need at least one byte",
                    self.ptr
                ),
            ));
        }
        Ok(())
    }
}

impl<'a> TryFrom<&'a Buffer> for ManagedRange<'a> {
    type Error = crate::Error;
    fn try_from(buffer: &'a Buffer) -> Result<Self> {
        ManagedRange::of(buffer)
    }
}

/// A managed range borrowed exclusively: what a discard takes, since it destroys the
/// contents for every reader. Made from `&mut ManagedBuffer`
/// ([`ManagedBuffer::exclusive_range`]), so no view or range of the buffer can be
/// reading it meanwhile; foreign memory comes through the `unsafe`
/// [`ManagedRange::assume_exclusive`].
#[derive(Debug)]
pub struct ExclusiveRange<'a> {
    range: ManagedRange<'a>,
    _exclusive: PhantomData<&'a mut ()>,
}

impl<'a> ExclusiveRange<'a> {
    /// The `len` bytes at byte `offset`, still exclusive.
    pub fn sub(self, offset: usize, len: usize) -> Result<ExclusiveRange<'a>> {
        Ok(ExclusiveRange {
            range: self.range.sub(offset, len)?,
            _exclusive: PhantomData,
        })
    }

    /// The range, shared (for advice and prefetch).
    pub fn range(&self) -> ManagedRange<'_> {
        self.range
    }
}

impl<'a> ManagedRange<'a> {
    /// The range as exclusive, for a discard.
    ///
    /// # Safety
    /// Nothing may read the range's contents from the discard until it is written again
    /// (the contents become unspecified for every reader).
    pub unsafe fn assume_exclusive(self) -> ExclusiveRange<'a> {
        ExclusiveRange {
            range: self,
            _exclusive: PhantomData,
        }
    }
}

impl<'a> From<&'a mut ManagedBuffer> for ExclusiveRange<'a> {
    fn from(buffer: &'a mut ManagedBuffer) -> Self {
        buffer.exclusive_range()
    }
}

impl<'a> From<&'a ManagedBuffer> for ManagedRange<'a> {
    fn from(buffer: &'a ManagedBuffer) -> Self {
        buffer.range()
    }
}

/// A [`Buffer`] of managed memory, as [`ManagedMemoryResource`](crate::ManagedMemoryResource)
/// allocates it. It derefs to `&Buffer` (never `&mut Buffer`: a swap through it could
/// leave a `ManagedBuffer` holding other memory) and converts into one; writes go through
/// its own `&mut self` methods; its other methods apply the managed-memory operations of
/// [`crate::managed`] to the whole buffer, and a discard needs `&mut self`.
pub struct ManagedBuffer {
    buffer: Buffer,
}

impl ManagedBuffer {
    pub(crate) fn from_buffer_unchecked(buffer: Buffer) -> Self {
        ManagedBuffer { buffer }
    }

    /// The whole buffer as a range.
    pub fn range(&self) -> ManagedRange<'_> {
        ManagedRange::of_buffer_unchecked(&self.buffer)
    }

    /// The whole buffer as an exclusive range (for a discard).
    pub fn exclusive_range(&mut self) -> ExclusiveRange<'_> {
        ExclusiveRange {
            range: ManagedRange::of_buffer_unchecked(&self.buffer),
            _exclusive: PhantomData,
        }
    }

    /// The plain buffer.
    pub fn into_buffer(self) -> Buffer {
        self.buffer
    }

    /// See [`Buffer::copy_from_host`].
    pub fn copy_from_host<T: bytemuck::Pod>(
        &mut self,
        src: &[T],
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> Result<()> {
        self.buffer.copy_from_host(src, stream)
    }

    /// See [`Buffer::copy_from`].
    pub fn copy_from(
        &mut self,
        src: &Buffer,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> Result<()> {
        self.buffer.copy_from(src, stream)
    }

    /// See [`Buffer::fill`].
    pub fn fill(
        &mut self,
        value: u8,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> Result<()> {
        self.buffer.fill(value, stream)
    }

    /// A writable view of the buffer (see [`StridedMemoryViewMut::from_buffer_mut`](crate::StridedMemoryViewMut::from_buffer_mut)).
    pub fn view_mut(
        &mut self,
        layout: stridekit_layout::StridedLayout,
        dtype: Option<crate::DType>,
    ) -> Result<crate::StridedMemoryViewMut<'_>> {
        crate::StridedMemoryViewMut::from_buffer_mut(&mut self.buffer, layout, dtype)
    }
}

impl Deref for ManagedBuffer {
    type Target = Buffer;
    fn deref(&self) -> &Buffer {
        &self.buffer
    }
}

impl AsRef<Buffer> for ManagedBuffer {
    fn as_ref(&self) -> &Buffer {
        &self.buffer
    }
}

impl From<ManagedBuffer> for Buffer {
    fn from(b: ManagedBuffer) -> Buffer {
        b.buffer
    }
}

impl TryFrom<Buffer> for ManagedBuffer {
    type Error = crate::Error;
    /// Accepts a buffer of managed memory (for example one wrapped with
    /// [`Buffer::from_handle`]); any other kind is returned in the error message.
    fn try_from(buffer: Buffer) -> Result<Self> {
        ManagedRange::of(&buffer)?;
        Ok(ManagedBuffer { buffer })
    }
}

impl std::fmt::Debug for ManagedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedBuffer")
            .field("ptr", &format_args!("{:#x}", self.buffer.ptr()))
            .field("size", &self.buffer.size())
            .field("device", &self.buffer.device_ordinal())
            .finish()
    }
}
