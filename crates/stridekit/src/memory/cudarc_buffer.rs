//! Buffers lent to cudarc: kernels launched with cudarc's builder, and cudarc-based
//! libraries, take stridekit memory through cudarc's `DeviceSlice` / `DevicePtr` /
//! `DevicePtrMut`, ordered both ways with the work stridekit queued on the buffer.

use super::pending::{mark, Mark, Usage};
use super::{Buffer, MemoryKind};
use crate::error::{invalid, Result};
use cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, LaunchArgs, PushKernelArg,
    SyncOnDrop,
};
use std::marker::PhantomData;
use std::sync::Arc;

/// A buffer lent to cudarc as a slice of `T`, read only. Made by [`Buffer::as_cudarc`].
///
/// The loan's stream waits for the work stridekit queued on the buffer when the loan is
/// made; kernels launched on that stream with `&loan` as an argument, and any cudarc call
/// that takes `DevicePtr` on any stream (whose guard orders that stream after the loan's
/// earlier uses and records the call), are taken into the buffer's record when the loan
/// ends. stridekit's later copies, releases and host reads wait for them.
pub struct CudarcBuffer<'b, T> {
    buffer: &'b Buffer,
    ptr: u64,
    loan: Loan,
    _t: PhantomData<fn() -> T>,
}

/// A buffer lent to cudarc as a slice of `T`, writable. Made by [`Buffer::as_cudarc_mut`].
pub struct CudarcBufferMut<'b, T> {
    buffer: &'b mut Buffer,
    ptr: u64,
    loan: Loan,
    _t: PhantomData<fn() -> T>,
}

/// What a loan keeps: the stream it was made on and its mark, recorded at the start and
/// again after every launch.
struct Loan {
    stream: Arc<CudaStream>,
    mark: Arc<Mark>,
    len: usize,
    /// A read-only loan's launches read the buffer; a writable one's may write it.
    usage: Usage,
}

impl Loan {
    fn new<T>(
        op: &'static str,
        b: &Buffer,
        usage: Usage,
        stream: &Arc<CudaStream>,
    ) -> Result<Loan> {
        let isz = std::mem::size_of::<T>();
        if !b.kind().is_device_accessible() {
            return Err(invalid(
                op,
                format!(
                    "the buffer is {:?} memory, which kernels cannot reach",
                    b.kind()
                ),
            ));
        }
        if isz == 0
            || !b.size().is_multiple_of(isz)
            || !b.ptr().is_multiple_of(std::mem::align_of::<T>() as u64)
        {
            return Err(invalid(
                op,
                format!(
                    "{} bytes at {:#x} are not a whole, aligned number of {}-byte elements",
                    b.size(),
                    b.ptr(),
                    isz
                ),
            ));
        }
        if b.kind() == MemoryKind::Device && b.device_ordinal() != Some(stream.context().ordinal())
        {
            return Err(invalid(
                op,
                format!(
                    "the buffer is on device {:?} but the stream on device {}",
                    b.device_ordinal(),
                    stream.context().ordinal()
                ),
            ));
        }
        // The loan's mark covers stridekit's earlier work from the start.
        b.pending().order_before(op, usage, stream)?;
        Ok(Loan {
            stream: stream.clone(),
            mark: mark(op, stream)?,
            len: b.size() / isz,
            usage,
        })
    }

    /// The guard of one launch on `stream`: it waits for the loan's earlier uses, and
    /// records the launch on the loan's mark when dropped.
    fn begin<'a>(&'a self, stream: &'a CudaStream) -> SyncOnDrop<'a> {
        match self.mark.event() {
            Ok(ev) => {
                stream.context().record_err(stream.wait(ev));
                SyncOnDrop::Record(Some((ev, stream)))
            }
            // A mark always holds its event; without one, wait for the launch instead.
            Err(_) => SyncOnDrop::sync_stream(stream),
        }
    }

    fn end(&self, b: &Buffer) {
        if let Err(e) = b
            .pending()
            .merge("end a cudarc loan", &self.mark, self.usage, &self.stream)
        {
            crate::error::report_drop_failure("order a buffer after cudarc's work", &e.to_string());
        }
    }
}

impl Buffer {
    /// Lends the buffer to cudarc as a read-only slice of `T` on `stream` (kernels take
    /// `&loan` as an argument). The buffer must be device-accessible, a whole number of
    /// aligned `T`, and on the stream's device.
    pub fn as_cudarc<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
    ) -> Result<CudarcBuffer<'_, T>> {
        Ok(CudarcBuffer {
            loan: Loan::new::<T>("Buffer::as_cudarc", self, Usage::Read, stream)?,
            ptr: self.ptr(),
            buffer: self,
            _t: PhantomData,
        })
    }

    /// Lends the buffer to cudarc as a writable slice of `T`; see [`as_cudarc`](Self::as_cudarc).
    pub fn as_cudarc_mut<T: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
    ) -> Result<CudarcBufferMut<'_, T>> {
        Ok(CudarcBufferMut {
            loan: Loan::new::<T>("Buffer::as_cudarc_mut", self, Usage::Write, stream)?,
            ptr: self.ptr(),
            buffer: self,
            _t: PhantomData,
        })
    }
}

impl<T> Drop for CudarcBuffer<'_, T> {
    fn drop(&mut self) {
        self.loan.end(self.buffer);
    }
}

impl<T> Drop for CudarcBufferMut<'_, T> {
    fn drop(&mut self) {
        self.loan.end(self.buffer);
    }
}

// A loan goes into a launch as the buffer's device address (ordered as the type docs say).
// SAFETY: pushes a pointer to the loan's `u64` address, alive for 'b, which outlives the
// launch builder ('b: 'a), as cudarc's own slices do.
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b CudarcBuffer<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b CudarcBuffer<'c, T>) -> &mut Self {
        self.arg(&arg.ptr)
    }
}

// SAFETY: as above.
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b mut CudarcBufferMut<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b mut CudarcBufferMut<'c, T>) -> &mut Self {
        self.arg(&arg.ptr)
    }
}

impl<T> DeviceSlice<T> for CudarcBuffer<'_, T> {
    fn len(&self) -> usize {
        self.loan.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.loan.stream
    }
}

impl<T> DeviceSlice<T> for CudarcBufferMut<'_, T> {
    fn len(&self) -> usize {
        self.loan.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.loan.stream
    }
}

impl<T> DevicePtr<T> for CudarcBuffer<'_, T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.ptr, self.loan.begin(stream))
    }
}

impl<T> DevicePtr<T> for CudarcBufferMut<'_, T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.ptr, self.loan.begin(stream))
    }
}

impl<T> DevicePtrMut<T> for CudarcBufferMut<'_, T> {
    fn device_ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        (self.ptr, self.loan.begin(stream))
    }
}
