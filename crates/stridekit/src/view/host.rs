//! Reading host-accessible views on the CPU.

use super::*;

impl<'a, A: Access> StridedMemoryViewBase<'a, A> {
    /// The elements in row-major (C) order, for host-accessible views, after every write
    /// queued on the memory (library copies on any stream; for pinned and managed memory,
    /// the device context's kernels too). `T` must be the view's element type.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        const OP: &str = "StridedMemoryView::to_vec";
        self.check_element::<T>(OP)?;
        if !self.is_host_accessible() {
            return Err(invalid(
                OP,
                format!("the view is in {:?} memory, which the CPU cannot read; copy it to a host view first", self.kind),
            ));
        }
        let mut out: Vec<T> = crate::memory::try_zeroed(OP, self.layout.volume())?;
        if out.is_empty() {
            return Ok(out);
        }
        // Whatever stream a library copy into the memory ran on, the read waits for it;
        // kernels of the caller's own on the device's context are waited for too.
        self.wait_for_host_access(OP)?;
        let dense = StridedLayout::dense(self.layout.shape(), self.layout.itemsize(), Order::C)?;
        let plan = stridekit_layout::CopyPlan::new(&dense, &self.layout)?;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        crate::copy::host::copy(OP, &plan, Region::of_host_mut(bytes), self.region()?)?;
        Ok(out)
    }
}
