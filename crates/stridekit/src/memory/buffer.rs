//! `Buffer`: a span of memory, who frees it, and contiguous copies.

use super::pending::{finish, PendingWork, Usage};
use super::{Deallocate, MemoryKind, Region};
use crate::driver::{bind_stream, check};
use crate::error::{driver, invalid, report_drop_failure, Result};
use crate::pointer::{pointer_info, PointerKind};
use cudarc::driver::CudaStream;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

enum Release {
    /// Freed through the resource that allocated it, ordered on `stream`.
    Resource {
        by: Arc<dyn Deallocate>,
        stream: Arc<CudaStream>,
        /// What keeps a borrowed `stream` alive until the release has used it.
        keeper: Option<Box<dyn Any + Send + Sync>>,
    },
    /// Memory someone else owns; `owner` is dropped when the buffer is released.
    Owner(Box<dyn Any + Send + Sync>),
}

/// A span of bytes: its address, size, kind and device, and how it is freed.
///
/// Dropping a buffer releases it through its resource, ordered on the stream it was
/// allocated on (or the one given to [`release`](Self::release)). A buffer made with
/// [`from_handle`](Self::from_handle) keeps its owner alive until then.
///
/// A buffer records the GPU work stridekit queues on it (copies, fills, on any stream):
/// each new use waits for the last one, a release is ordered after the last one on the
/// releasing stream, an owner is dropped only once it is done, and host reads wait for
/// it. No queued copy can write memory that has been handed to someone else.
pub struct Buffer {
    ptr: u64,
    size: usize,
    kind: MemoryKind,
    device: Option<usize>,
    // The stream that orders this buffer's release; `None` for foreign memory.
    release: Option<Release>,
    pending: PendingWork,
}

impl Buffer {
    pub(crate) fn from_resource(
        ptr: u64,
        size: usize,
        kind: MemoryKind,
        device: Option<usize>,
        by: Arc<dyn Deallocate>,
        stream: Arc<CudaStream>,
    ) -> Buffer {
        Buffer {
            ptr,
            size,
            kind,
            device,
            release: Some(Release::Resource {
                by,
                stream,
                keeper: None,
            }),
            pending: PendingWork::default(),
        }
    }

    /// Keeps `keeper` alive until the buffer has been released: the object that owns the
    /// borrowed stream the buffer was allocated on (a Python stream object, say), so that
    /// the release, ordered on that stream, never reaches a destroyed one. Buffers that a
    /// resource did not allocate drop `keeper` at once (their release uses no stream).
    pub fn keep_release_stream_alive<K: Any + Send + Sync>(&mut self, keeper: K) {
        if let Some(Release::Resource { keeper: k, .. }) = &mut self.release {
            *k = Some(Box::new(keeper));
        }
    }

    /// Host memory that `owner` owns (no driver needed to describe it).
    pub(crate) fn from_owned_host<O: Any + Send + Sync>(ptr: u64, size: usize, owner: O) -> Buffer {
        Buffer {
            ptr,
            size,
            kind: MemoryKind::Host,
            device: None,
            release: Some(Release::Owner(Box::new(owner))),
            pending: PendingWork::default(),
        }
    }

    /// An empty buffer (null address, 0 bytes) of a kind.
    pub(crate) fn empty(kind: MemoryKind, device: Option<usize>) -> Buffer {
        Buffer {
            ptr: 0,
            size: 0,
            kind,
            device,
            release: None,
            pending: PendingWork::default(),
        }
    }

    /// Wraps memory allocated elsewhere; `owner` (anything `Send + Sync`: a tensor, an
    /// `Arc`, a closure's captures) stays alive until the buffer is released. The memory's
    /// kind and device are asked of the driver; without a driver, it is host memory.
    ///
    /// ```
    /// let data = vec![1.0f32; 256];
    /// let ptr = data.as_ptr() as u64;
    /// // SAFETY: `data` owns 1024 bytes at `ptr` and moves into the buffer, which keeps it alive.
    /// let buf = unsafe { stridekit::Buffer::from_handle(ptr, 1024, data)? };
    /// assert_eq!(buf.kind(), stridekit::MemoryKind::Host);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    ///
    /// # Safety
    /// `ptr..ptr + size` must be memory (host or device) that stays valid, and that nobody
    /// else writes, for as long as `owner` is alive.
    pub unsafe fn from_handle<O: Any + Send + Sync>(
        ptr: u64,
        size: usize,
        owner: O,
    ) -> Result<Buffer> {
        if ptr == 0 && size > 0 {
            return Err(invalid(
                "Buffer::from_handle",
                format!("null address with size {size}; a non-empty buffer needs an address"),
            ));
        }
        let (kind, device) = match pointer_info(ptr) {
            Ok(info) => match info.kind {
                PointerKind::Pageable => (MemoryKind::Host, None),
                PointerKind::PinnedHost => (MemoryKind::PinnedHost, info.device),
                PointerKind::Managed => (MemoryKind::Managed, info.device),
                PointerKind::Device | PointerKind::Array => (MemoryKind::Device, info.device),
            },
            Err(crate::Error::NoDriver { .. }) => (MemoryKind::Host, None),
            Err(e) => return Err(e),
        };
        Ok(Buffer {
            ptr,
            size,
            kind,
            device,
            release: Some(Release::Owner(Box::new(owner))),
            pending: PendingWork::default(),
        })
    }

    /// The address (a device address for device memory, a host address otherwise).
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// True when the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Where the bytes live.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The device for device and managed memory, and the device whose context registered
    /// pinned memory (when the driver reports one); `None` for pageable host memory.
    pub fn device_ordinal(&self) -> Option<usize> {
        self.device
    }

    /// Whether the CPU may read and write the bytes.
    pub fn is_host_accessible(&self) -> bool {
        self.kind.is_host_accessible()
    }

    /// Whether kernels may read and write the bytes.
    pub fn is_device_accessible(&self) -> bool {
        self.kind.is_device_accessible()
    }

    /// The stream that orders this buffer's release, if a resource allocated it.
    pub fn stream(&self) -> Option<&Arc<CudaStream>> {
        match &self.release {
            Some(Release::Resource { stream, .. }) => Some(stream),
            _ => None,
        }
    }

    /// Releases the buffer now, ordered on `stream` instead of its allocation stream:
    /// after the work already queued on `stream` and after every GPU use stridekit
    /// recorded on the buffer, whatever stream it ran on.
    pub fn release(mut self, stream: &Arc<CudaStream>) -> Result<()> {
        const OP: &str = "Buffer::release";
        match self.release.take() {
            Some(Release::Resource { by, .. }) => {
                self.pending.order_before(OP, Usage::Write, stream)?;
                by.deallocate(self.ptr, self.size, stream)
            }
            Some(Release::Owner(owner)) => {
                // Work on `stream`, and recorded work on any stream, may still use the
                // memory: the owner waits for both.
                self.pending.wait_host(OP)?;
                stream
                    .synchronize()
                    .map_err(driver(OP, "cuStreamSynchronize"))?;
                drop(owner);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The record of GPU work queued on this buffer.
    pub(crate) fn pending(&self) -> &PendingWork {
        &self.pending
    }

    /// Waits on the host for every GPU use recorded on this buffer.
    pub fn synchronize(&self) -> Result<()> {
        self.pending.wait_host("Buffer::synchronize")
    }

    /// Whether dropping this buffer would block the calling thread on GPU work: memory
    /// whose owner frees it at once (recorded work waited for first), and pinned and
    /// managed memory (freed after their release stream drains). Device memory from a
    /// pool is released in stream order, without waiting.
    pub fn release_waits(&self) -> bool {
        match &self.release {
            Some(Release::Owner(_)) => true,
            Some(Release::Resource { .. }) => {
                matches!(self.kind, MemoryKind::PinnedHost | MemoryKind::Managed)
            }
            None => false,
        }
    }

    /// Waits now for what dropping this buffer would wait for ([`release_waits`](Self::release_waits)),
    /// so that the drop itself is quick: a front calls it without holding its
    /// interpreter's lock, then drops the buffer with it.
    pub fn prepare_release(&self) -> Result<()> {
        const OP: &str = "Buffer::prepare_release";
        if !self.release_waits() {
            return Ok(());
        }
        self.pending.wait_host(OP)?;
        if let Some(Release::Resource { stream, .. }) = &self.release {
            stream
                .synchronize()
                .map_err(driver(OP, "cuStreamSynchronize"))?;
        }
        Ok(())
    }

    fn check_size(&self, op: &'static str, what: &str, bytes: usize) -> Result<()> {
        if bytes != self.size {
            return Err(invalid(
                op,
                format!(
                    "{what} has {bytes} bytes but the buffer has {}; sizes must match",
                    self.size
                ),
            ));
        }
        Ok(())
    }

    /// Copies a host slice into the buffer (any kind); returns once the copy is done,
    /// since the slice is only borrowed.
    pub fn copy_from_host<T: bytemuck::Pod>(
        &mut self,
        src: &[T],
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        const OP: &str = "Buffer::copy_from_host";
        let bytes: &[u8] = bytemuck::cast_slice(src);
        self.check_size(OP, "the source slice", bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        if self.kind == MemoryKind::Host {
            self.pending.wait_host(OP)?;
            // SAFETY: the buffer owns `size` host bytes, `&mut self` is exclusive, and
            // pageable memory is touched by no kernel; the slice is a distinct borrow.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr as *mut u8, bytes.len())
            };
            return Ok(());
        }
        self.pending.order_before(OP, Usage::Write, stream)?;
        let n = bytes.len();
        raw_copy(
            OP,
            Region::of_buffer_mut(self),
            Region::of_host(bytes),
            n,
            stream,
        )?;
        stream
            .synchronize()
            .map_err(driver(OP, "cuStreamSynchronize"))
    }

    /// Copies the buffer into a host slice; returns once the copy is done.
    pub fn copy_to_host<T: bytemuck::Pod>(
        &self,
        dst: &mut [T],
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        const OP: &str = "Buffer::copy_to_host";
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(dst);
        self.check_size(OP, "the destination slice", bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        if self.kind == MemoryKind::Host {
            self.pending.wait_host(OP)?;
            // SAFETY: the buffer owns `size` readable host bytes; `dst` is a distinct
            // exclusive borrow of the same length.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.ptr as *const u8,
                    bytes.as_mut_ptr(),
                    bytes.len(),
                )
            };
            return Ok(());
        }
        self.pending.order_before(OP, Usage::Read, stream)?;
        let n = bytes.len();
        raw_copy(
            OP,
            Region::of_host_mut(bytes),
            Region::of_buffer(self),
            n,
            stream,
        )?;
        stream
            .synchronize()
            .map_err(driver(OP, "cuStreamSynchronize"))
    }

    /// Copies another buffer of the same size into this one, ordered on `stream`
    /// (asynchronous unless either side is pageable host memory).
    pub fn copy_from(&mut self, src: &Buffer, stream: &Arc<CudaStream>) -> Result<()> {
        const OP: &str = "Buffer::copy_from";
        self.check_size(OP, "the source buffer", src.size)?;
        if self.size == 0 {
            return Ok(());
        }
        if self.kind == MemoryKind::Host && src.kind == MemoryKind::Host {
            self.pending.wait_host(OP)?;
            src.pending.wait_host(OP)?;
            // SAFETY: both are owned host spans of `size` bytes; `&mut self` and `&src`
            // cannot be the same buffer, and pageable memory is touched by no kernel.
            unsafe { std::ptr::copy(src.ptr as *const u8, self.ptr as *mut u8, self.size) };
            return Ok(());
        }
        // Both uses begin before the work and are recorded after it, also when queuing it
        // failed halfway.
        let write = self.pending.begin(OP, Usage::Write, stream)?;
        let read = src.pending.begin(OP, Usage::Read, stream)?;
        let n = self.size;
        let queued = raw_copy(
            OP,
            Region::of_buffer_mut(self),
            Region::of_buffer(src),
            n,
            stream,
        );
        finish(OP, stream, [(&self.pending, write), (&src.pending, read)])?;
        queued
    }

    /// Sets every byte to `value`, ordered on `stream`.
    pub fn fill(&mut self, value: u8, stream: &Arc<CudaStream>) -> Result<()> {
        const OP: &str = "Buffer::fill";
        if self.size == 0 {
            return Ok(());
        }
        if self.kind == MemoryKind::Host {
            self.pending.wait_host(OP)?;
            stream
                .synchronize()
                .map_err(driver(OP, "cuStreamSynchronize"))?;
            // SAFETY: host memory of `size` bytes that this buffer owns or borrows from its
            // owner; `&mut self` gives exclusive access and the stream has drained.
            unsafe { std::ptr::write_bytes(self.ptr as *mut u8, value, self.size) };
            return Ok(());
        }
        let write = self.pending.begin(OP, Usage::Write, stream)?;
        let queued = bind_stream(OP, stream).and_then(|()| {
            // SAFETY: `ptr..ptr+size` is device-accessible memory owned by this buffer,
            // borrowed exclusively; earlier uses are ordered before (above); the context
            // of `stream` is current.
            check(OP, "cuMemsetD8Async", unsafe {
                crate::driver::memory::fill_async(self.ptr, value, self.size, stream.cu_stream())
            })
        });
        finish(OP, stream, [(&self.pending, write)])?;
        queued
    }
}

/// `cuMemcpyAsync` of the first `bytes` bytes of `src` into `dst` (any kinds: unified
/// addressing), after checking that both regions hold them and `dst` may be written.
pub(crate) fn raw_copy(
    op: &'static str,
    dst: Region<'_>,
    src: Region<'_>,
    bytes: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let n = i64::try_from(bytes).map_err(|_| invalid(op, format!("{bytes} bytes exceed i64")))?;
    dst.check_writable(op)?;
    dst.check(op, "copied bytes", 0..n)?;
    src.check(op, "copied bytes", 0..n)?;
    // SAFETY: both regions hold `bytes` bytes valid for the call (checked above; regions
    // are made only by owners of their memory); the destination is writable.
    unsafe { copy_bytes_unchecked(op, dst.base(), src.base(), bytes, stream) }
}

/// `cuMemcpyAsync` between two addresses.
///
/// # Safety
/// `src..src + bytes` and `dst..dst + bytes` are memory valid until the copy is done, and
/// nothing else writes the destination meanwhile.
pub(crate) unsafe fn copy_bytes_unchecked(
    op: &'static str,
    dst: u64,
    src: u64,
    bytes: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    bind_stream(op, stream)?;
    // SAFETY: the caller's promise; the context of `stream` is current.
    check(op, "cuMemcpyAsync", unsafe {
        crate::driver::memory::copy_async(dst, src, bytes, stream.cu_stream())
    })
}

/// `cuMemcpyPeerAsync` of `bytes` from `src` on device `src_device` to `dst` on device
/// `dst_device`, on `stream` (whose context is made current); the driver stages the bytes
/// where the two devices have no peer access.
///
/// # Safety
/// `src..src + bytes` is memory of `src_device` and `dst..dst + bytes` memory of
/// `dst_device`, both valid until the copy is done, and nothing else writes the
/// destination meanwhile.
pub(crate) unsafe fn copy_bytes_across_devices_unchecked(
    op: &'static str,
    (dst, dst_device): (u64, usize),
    (src, src_device): (u64, usize),
    bytes: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let (dc, sc) = (
        crate::runtime::Runtime::get(op, dst_device)?,
        crate::runtime::Runtime::get(op, src_device)?,
    );
    bind_stream(op, stream)?;
    // SAFETY: the caller's promise; the contexts are the devices' live primary contexts;
    // the stream's is current.
    check(op, "cuMemcpyPeerAsync", unsafe {
        crate::driver::memory::copy_peer_async(
            dst,
            dc.context().cu_ctx(),
            src,
            sc.context().cu_ctx(),
            bytes,
            stream.cu_stream(),
        )
    })
}

impl Drop for Buffer {
    fn drop(&mut self) {
        const OP: &str = "Buffer::drop";
        match self.release.take() {
            Some(Release::Resource { by, stream, keeper }) => {
                let freed = self
                    .pending
                    .order_before(OP, Usage::Write, &stream)
                    .and_then(|()| by.deallocate(self.ptr, self.size, &stream));
                if let Err(e) = freed {
                    report_drop_failure("release a buffer", &e.to_string());
                }
                // The stream has been used for the last time.
                drop(stream);
                drop(keeper);
            }
            Some(Release::Owner(owner)) => {
                // The owner may free the memory at once: the recorded GPU work goes first.
                if let Err(e) = self.pending.wait_host(OP) {
                    report_drop_failure(
                        "wait for the GPU work on a foreign buffer",
                        &e.to_string(),
                    );
                }
                drop(owner)
            }
            None => {}
        }
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("size", &self.size)
            .field("kind", &self.kind)
            .field("device", &self.device)
            .finish()
    }
}
