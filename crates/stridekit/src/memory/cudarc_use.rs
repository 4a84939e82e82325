//! Memory that cudarc tracks: a `CudaSlice` (or a view of one) keeps read and write
//! events, and every use of it on a stream must wait for its earlier work and record
//! itself there. A `CudarcUse` is that protocol, type-erased, for the copy engine. It is
//! `Copy` and holds no drop glue, so a view of a borrowed slice ends where it is last
//! used, like any borrow.

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use std::marker::PhantomData;

/// Begins a use of the slice at the pointer on a stream (see [`CudarcUse::begin`]).
type Begin = for<'s> unsafe fn(*mut (), &'s CudaStream) -> SyncOnDrop<'s>;

/// # Safety
/// `obj` points to an `S` that outlives every use of the returned guard.
unsafe fn read_of<T, S: DevicePtr<T>>(obj: *mut (), stream: &CudaStream) -> SyncOnDrop<'_> {
    // SAFETY: the caller's promise; a shared reference only.
    let s: &S = unsafe { &*(obj as *const S) };
    let guard = s.device_ptr(stream).1;
    // SAFETY: the guard borrows the slice's event, which the caller keeps alive for as
    // long as the guard (the promise above); only that borrow's lifetime is widened.
    unsafe { std::mem::transmute::<SyncOnDrop<'_>, SyncOnDrop<'_>>(guard) }
}

/// # Safety
/// As for [`read_of`], and the caller holds the one exclusive borrow of the slice, with
/// no other use of it in progress.
unsafe fn write_of<T, S: DevicePtrMut<T>>(obj: *mut (), stream: &CudaStream) -> SyncOnDrop<'_> {
    // SAFETY: the caller's promise: the one writer, with no other reference alive.
    let s: &mut S = unsafe { &mut *(obj as *mut S) };
    let guard = s.device_ptr_mut(stream).1;
    // SAFETY: as in `read_of`.
    unsafe { std::mem::transmute::<SyncOnDrop<'_>, SyncOnDrop<'_>>(guard) }
}

/// How a copy orders itself with cudarc's work on a slice borrowed for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct CudarcUse<'a> {
    obj: *mut (),
    read: Begin,
    write: Option<Begin>,
    _slice: PhantomData<&'a ()>,
}

// SAFETY: the slice behind `obj` is `Send + Sync` (required by the constructors; cudarc's
// slices and views are) and is reached only as `begin` describes.
unsafe impl Send for CudarcUse<'_> {}
// SAFETY: as above.
unsafe impl Sync for CudarcUse<'_> {}

impl std::fmt::Debug for CudarcUse<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudarcUse(writable: {})", self.write.is_some())
    }
}

impl<'a> CudarcUse<'a> {
    /// Reads of a slice borrowed for `'a`.
    pub(crate) fn shared<T, S: DevicePtr<T> + Send + Sync>(slice: &'a S) -> CudarcUse<'a> {
        CudarcUse {
            obj: slice as *const S as *mut (),
            read: read_of::<T, S>,
            write: None,
            _slice: PhantomData,
        }
    }

    /// Reads and writes of a slice borrowed exclusively for `'a`.
    pub(crate) fn exclusive<T, S: DevicePtr<T> + DevicePtrMut<T> + Send + Sync>(
        slice: &'a mut S,
    ) -> CudarcUse<'a> {
        CudarcUse {
            obj: slice as *mut S as *mut (),
            read: read_of::<T, S>,
            write: Some(write_of::<T, S>),
            _slice: PhantomData,
        }
    }

    /// Orders `stream` after cudarc's earlier work on the slice; the guard records this
    /// use (a write when `write` and the slice was borrowed exclusively) when dropped.
    ///
    /// # Safety
    /// The guard is dropped while the borrow `'a` lasts. With `write`, the caller is the
    /// one writable view of the slice and no other use of it is in progress.
    pub(crate) unsafe fn begin<'s>(
        &'s self,
        stream: &'s CudaStream,
        write: bool,
    ) -> SyncOnDrop<'s> {
        match (write, self.write) {
            // SAFETY: `obj` came from an exclusive borrow alive for 'a; the caller's
            // promise makes this the only use and bounds the guard by 'a.
            (true, Some(w)) => unsafe { w(self.obj, stream) },
            // SAFETY: `obj` came from a borrow alive for 'a; shared access only.
            _ => unsafe { (self.read)(self.obj, stream) },
        }
    }
}
