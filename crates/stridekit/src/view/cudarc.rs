//! Views of cudarc's device memory: a `CudaSlice<T>`, `CudaView<T>` or `CudaViewMut<T>`
//! borrowed with a layout, safely. A copy through such a view waits for the work cudarc
//! queued on the slice and records itself on the slice's read or write event, as
//! cudarc's own `DevicePtr`/`DevicePtrMut` guards do, so cudarc's later work waits for it.

use super::*;
use crate::memory::CudarcUse;
use ::cudarc::driver::{DevicePtr, DevicePtrMut};

/// The parts of a view of a cudarc slice: its address, bytes and device, `layout`, `T`'s
/// dtype, and `backing`.
fn parts_of<'a, T: Element, S: DevicePtr<T>>(
    slice: &S,
    layout: StridedLayout,
    backing: Backing<'a>,
) -> Parts<'a> {
    let stream = slice.stream();
    // The address only: the guard records a read on the slice's own stream, which orders
    // nothing new.
    let (ptr, _guard) = slice.device_ptr(stream);
    Parts {
        ptr,
        size: slice.num_bytes(),
        kind: MemoryKind::Device,
        device: Some(stream.context().ordinal()),
        layout,
        dtype: Some(T::DTYPE),
        backing,
    }
}

impl<'a> StridedMemoryView<'a> {
    /// A read-only view of a cudarc slice (or view) with `layout`, borrowing it for
    /// `'a`. The layout's itemsize must be `T`'s, and every element must lie in the slice.
    ///
    /// ```no_run
    /// use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    /// let dev = stridekit::Device::open(0)?;
    /// let stream = dev.new_stream()?;
    /// let a = stream.clone_htod(&(0..12).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    /// let mut b = stream.alloc_zeros::<f32>(12).unwrap();
    /// let src = StridedMemoryView::from_cudarc(&a, StridedLayout::dense(&[3, 4], 4, Order::C)?)?;
    /// StridedMemoryViewMut::from_cudarc_mut(&mut b, StridedLayout::dense(&[3, 4], 4, Order::F)?)?
    ///     .copy_from(&src, Some(&stream))?;                // b holds a's transpose
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn from_cudarc<T: Element, S: DevicePtr<T> + Send + Sync>(
        slice: &'a S,
        layout: StridedLayout,
    ) -> Result<Self> {
        let backing = Backing::Cudarc(CudarcUse::shared::<T, S>(slice));
        Self::from_parts(
            "StridedMemoryView::from_cudarc",
            parts_of::<T, S>(slice, layout, backing),
        )
    }
}

impl<'a> StridedMemoryViewMut<'a> {
    /// A writable view of a cudarc slice (or mutable view) with `layout`, borrowing it
    /// exclusively for `'a`; see [`StridedMemoryView::from_cudarc`].
    pub fn from_cudarc_mut<T: Element, S: DevicePtr<T> + DevicePtrMut<T> + Send + Sync>(
        slice: &'a mut S,
        layout: StridedLayout,
    ) -> Result<Self> {
        let parts = parts_of::<T, S>(&*slice, layout, Backing::Slice(PhantomData));
        Self::from_parts(
            "StridedMemoryViewMut::from_cudarc_mut",
            Parts {
                backing: Backing::Cudarc(CudarcUse::exclusive::<T, S>(slice)),
                ..parts
            },
        )
    }
}
