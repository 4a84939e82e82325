//! Views of views: other layouts over the same memory, reborrows, read-only faces, and
//! owners that keep the memory alive.

use super::*;

impl<'a, A: Access> StridedMemoryViewBase<'a, A> {
    /// The same memory under another layout and dtype (validated), keeping the access.
    /// `None` keeps the view's dtype: a dtype is only ever changed by naming the new one,
    /// so typed reads of a relaid view never reinterpret by accident.
    fn relayout<B: Access>(
        &self,
        op: &'static str,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryViewBase<'a, B>> {
        let dtype = dtype.or(self.dtype);
        validate_layout(op, self.ptr, self.size, self.kind, &layout, dtype)?;
        Ok(self.with_parts(layout, dtype))
    }

    /// The same memory under `layout` and `dtype` (already validated), with access `B`
    /// and the memory's whole lifetime: callers shorten the lifetime, or hand out
    /// writable results only from `&mut self` or `unsafe`.
    pub(super) fn with_parts<B: Access>(
        &self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> StridedMemoryViewBase<'a, B> {
        StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout,
            dtype,
            backing: self.backing.clone(),
            access: PhantomData,
        }
    }

    /// The same view with access `B`, for as long as the borrow of `self`. Callers give
    /// out writable results only from `&mut self`.
    fn duplicate<B: Access>(&self) -> StridedMemoryViewBase<'_, B> {
        self.with_parts(self.layout.clone(), self.dtype)
    }

    /// The same view with no dtype: typed reads then check only the element size, copies
    /// only the itemsize, and exports describe the elements as unsigned integers of the
    /// itemsize. The one way to drop a known dtype, so reading its bits as another type is
    /// always asked for (relaying with `dtype: None` keeps the dtype).
    ///
    /// ```
    /// use stridekit::StridedMemoryView;
    /// let data = [1.0f32, -2.0];
    /// let v = StridedMemoryView::from_slice(&data, &[2])?;
    /// assert!(v.to_vec::<u32>().is_err());
    /// assert_eq!(v.without_dtype().to_vec::<u32>()?, [0x3f80_0000, 0xc000_0000]);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn without_dtype(mut self) -> Self {
        self.dtype = None;
        self
    }

    /// A read-only view of the whole view; a writable `self` cannot write while it lives.
    pub fn as_view(&self) -> StridedMemoryView<'_> {
        self.duplicate()
    }
}

impl<'a> StridedMemoryView<'a> {
    /// A new read-only view of the same memory with another layout and dtype, validated
    /// like the constructors; it lives as long as the memory (not only as `self`).
    /// `dtype: None` keeps this view's dtype (as cuda.core's `view(dtype=None)` does).
    ///
    /// ```
    /// use stridekit::{s, DType, StridedMemoryView};
    /// let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    /// let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
    /// let rows = v.view(v.layout().sliced(s![1..])?, None)?;
    /// assert_eq!(rows.dtype(), Some(DType::F32));             // kept
    /// assert!(rows.as_slice::<u32>().is_err());               // so no silent reinterpretation
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn view(&self, layout: StridedLayout, dtype: Option<DType>) -> Result<Self> {
        self.relayout("StridedMemoryView::view", layout, dtype)
    }
}

impl<'a> StridedMemoryViewMut<'a> {
    /// A read-only view of the same memory with another layout and dtype, validated like
    /// the constructors; `self` cannot write while it lives. `dtype: None` keeps this
    /// view's dtype.
    pub fn view(
        &self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryView<'_>> {
        self.relayout("StridedMemoryViewMut::view", layout, dtype)
    }

    /// A writable view of the same memory with another layout and dtype, borrowing `self`
    /// mutably (a reborrow: `self` is usable again once it is gone). `dtype: None` keeps
    /// this view's dtype.
    pub fn view_mut(
        &mut self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryViewMut<'_>> {
        self.relayout("StridedMemoryViewMut::view_mut", layout, dtype)
    }

    /// The same memory under another layout and dtype, keeping the writable view's
    /// lifetime (consumes `self`).
    pub fn into_view_mut(self, layout: StridedLayout, dtype: Option<DType>) -> Result<Self> {
        self.relayout("StridedMemoryViewMut::into_view_mut", layout, dtype)
    }

    /// A writable reborrow of the whole view, for a shorter lifetime.
    pub fn reborrow(&mut self) -> StridedMemoryViewMut<'_> {
        self.duplicate()
    }

    /// A read-only view of the same memory that lives as long as the memory, not only as
    /// long as a borrow of `self`: for fronts outside Rust's borrow rules (Python, C).
    ///
    /// # Safety
    /// Nothing may be written through `self` while the alias (or anything made from it)
    /// is read.
    pub unsafe fn shared_alias(&self) -> StridedMemoryView<'a> {
        self.with_parts(self.layout.clone(), self.dtype)
    }

    /// A second writable view of the same memory, from a shared borrow: for fronts whose
    /// objects are shared between threads (Python), which serialise their writers
    /// themselves and let attribute reads go on during a copy.
    ///
    /// # Safety
    /// While the alias lives, nothing else writes the memory (the caller serialises its
    /// writers) and nothing reads bytes the alias writes, except under the front's own
    /// rules (Python's, where concurrent reads of memory being written are the caller's
    /// affair, as in cuda.core).
    pub unsafe fn writable_alias(&self) -> StridedMemoryViewMut<'a> {
        self.with_parts(self.layout.clone(), self.dtype)
    }

    /// Gives up writing: the same view, read-only (and then cloneable).
    pub fn into_read_only(self) -> StridedMemoryView<'a> {
        self.with_parts(self.layout.clone(), self.dtype)
    }
}

impl<A: Access> StridedMemoryViewBase<'static, A> {
    /// A handle that keeps this view's memory alive as long as it lives.
    pub fn memory_owner(&self) -> MemoryOwner {
        MemoryOwner(self.backing.clone())
    }
}
