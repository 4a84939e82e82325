//! Managed (unified) memory: advice, prefetch, discard and discard-and-prefetch.
//!
//! Every operation is a free function on a [`ManagedRange`]: a whole [`ManagedBuffer`]
//! (pass `&buffer`), a sub-range of one ([`ManagedRange::sub`]), or a foreign managed
//! allocation ([`ManagedRange::from_raw`]). Arguments are checked before any driver
//! call; a driver that lacks an entry point answers [`Error::Unsupported`], and so does
//! a device without concurrent managed access.
//!
//! | operation | driver call |
//! |---|---|
//! | [`read_mostly`], [`set_read_mostly`] | `cuMemRangeGetAttribute`, `cuMemAdvise` |
//! | [`preferred_location`], [`set_preferred_location`], [`unset_preferred_location`] | same |
//! | [`accessed_by`], [`add_accessed_by`], [`remove_accessed_by`], [`replace_accessed_by`] | same |
//! | [`last_prefetch_location`] | `cuMemRangeGetAttribute` |
//! | [`prefetch`], [`prefetch_batch`] | `cuMemPrefetchAsync`, `cuMemPrefetchBatchAsync` |
//! | [`discard`], [`discard_batch`] | `cuMemDiscardBatchAsync` |
//! | [`discard_and_prefetch`], [`discard_and_prefetch_batch`] | `cuMemDiscardAndPrefetchBatchAsync` |
//!
//! [`Error::Unsupported`]: crate::Error::Unsupported

mod advice;
mod location;
mod prefetch;
mod range;
mod resource;
mod support;

pub use advice::{
    accessed_by, add_accessed_by, last_prefetch_location, preferred_location, read_mostly,
    remove_accessed_by, replace_accessed_by, set_preferred_location, set_read_mostly,
    unset_preferred_location, AccessedBy,
};
pub use location::Location;
pub use prefetch::{
    discard, discard_and_prefetch, discard_and_prefetch_batch, discard_batch, prefetch,
    prefetch_batch, BatchLocations,
};
pub use range::{ExclusiveRange, ManagedBuffer, ManagedRange};
pub use resource::ManagedMemoryResource;

use crate::error::Result;
use cudarc::driver::CudaStream;

/// The operations of this module, applied to the whole buffer.
impl ManagedBuffer {
    /// See [`read_mostly`].
    pub fn read_mostly(&self) -> Result<bool> {
        read_mostly(self)
    }
    /// See [`set_read_mostly`].
    pub fn set_read_mostly(&self, read_mostly: bool) -> Result<()> {
        set_read_mostly(self, read_mostly)
    }
    /// See [`preferred_location`].
    pub fn preferred_location(&self) -> Result<Option<Location>> {
        preferred_location(self)
    }
    /// See [`set_preferred_location`].
    pub fn set_preferred_location(&self, location: Location) -> Result<()> {
        set_preferred_location(self, location)
    }
    /// See [`unset_preferred_location`].
    pub fn unset_preferred_location(&self) -> Result<()> {
        unset_preferred_location(self)
    }
    /// See [`accessed_by`].
    pub fn accessed_by(&self) -> Result<AccessedBy> {
        accessed_by(self)
    }
    /// See [`add_accessed_by`].
    pub fn add_accessed_by(&self, location: Location) -> Result<()> {
        add_accessed_by(self, location)
    }
    /// See [`remove_accessed_by`].
    pub fn remove_accessed_by(&self, location: Location) -> Result<()> {
        remove_accessed_by(self, location)
    }
    /// See [`replace_accessed_by`].
    pub fn replace_accessed_by(&self, locations: impl IntoIterator<Item = Location>) -> Result<()> {
        replace_accessed_by(self, locations)
    }
    /// See [`last_prefetch_location`].
    pub fn last_prefetch_location(&self) -> Result<Option<Location>> {
        last_prefetch_location(self)
    }
    /// See [`prefetch`].
    pub fn prefetch(&self, location: Location, stream: &CudaStream) -> Result<()> {
        prefetch(self, location, stream)
    }
    /// See [`discard`]: the contents become unspecified, so the buffer is borrowed
    /// exclusively (no view of it can be reading).
    pub fn discard(&mut self, stream: &CudaStream) -> Result<()> {
        discard(self, stream)
    }
    /// See [`discard_and_prefetch`] (exclusive, as [`discard`](Self::discard)).
    pub fn discard_and_prefetch(&mut self, location: Location, stream: &CudaStream) -> Result<()> {
        discard_and_prefetch(self, location, stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn fake() -> ManagedRange<'static> {
        ManagedRange::new_unchecked(0x7f00_0000_0000, 1 << 20, Some(0))
    }

    fn assert_invalid(r: Result<()>, expected: &str) {
        match r {
            Err(Error::Invalid { .. }) => {
                let msg = r.unwrap_err().to_string();
                assert!(msg.contains(expected), "{msg}");
            }
            other => panic!("expected Invalid containing {expected:?}, got {other:?}"),
        }
    }

    // Each of these must be rejected before the driver is looked at: on a machine
    // without one, a late check would answer NoDriver instead.
    #[test]
    fn locations_are_checked_before_the_driver() {
        assert_invalid(
            set_preferred_location(fake(), Location::HostNumaCurrent),
            "managed::set_preferred_location: the calling thread's host NUMA node is not allowed",
        );
        assert_invalid(
            add_accessed_by(fake(), Location::HostNuma(0)),
            "managed::add_accessed_by: host NUMA node 0 is not allowed: accessed-by advice names a processor",
        );
        assert_invalid(
            remove_accessed_by(fake(), Location::HostNumaCurrent),
            "not allowed",
        );
    }

    #[test]
    fn replace_all_checks_every_element_first() {
        assert_invalid(
            replace_accessed_by(
                fake(),
                [Location::Device(0), Location::Host, Location::HostNuma(2)],
            ),
            "managed::replace_accessed_by: host NUMA node 2 is not allowed",
        );
        let set = advice::validate_accessed_by_targets(
            "t",
            [Location::Host, Location::Device(1), Location::Host],
            Some(2),
        )
        .unwrap();
        assert_eq!(
            set.into_iter().collect::<Vec<_>>(),
            vec![Location::Device(1), Location::Host]
        );
        let e =
            advice::validate_accessed_by_targets("t", [Location::Device(2)], Some(2)).unwrap_err();
        assert!(
            e.to_string()
                .contains("device 2 does not exist; 2 device(s)"),
            "{e}"
        );
    }

    #[test]
    fn empty_ranges_are_rejected_before_the_driver() {
        let empty = ManagedRange::new_unchecked(0x1000, 0, Some(0));
        assert_invalid(
            set_read_mostly(empty, true),
            "the managed range at 0x1000 is empty",
        );
        assert_invalid(read_mostly(empty).map(|_| ()), "is empty");
        assert_invalid(unset_preferred_location(empty), "is empty");
    }

    #[test]
    fn sub_ranges_stay_inside() {
        let r = fake();
        let s = r.sub(4096, 8192).unwrap();
        assert_eq!((s.ptr(), s.size()), (r.ptr() + 4096, 8192));
        let e = r.sub(1 << 20, 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("bytes 1048576..1048577 are outside the range of 1048576 bytes"),
            "{e}"
        );
        assert!(r.sub(usize::MAX, 2).is_err());
    }

    #[test]
    fn non_managed_buffers_are_rejected() {
        let host = crate::HostMemoryResource::allocate_host(256).unwrap();
        let e = ManagedRange::of(&host).unwrap_err();
        assert!(e.to_string().contains("a buffer of kind Host"), "{e}");
        assert!(e.to_string().contains("is not managed memory"), "{e}");
        let e = ManagedBuffer::try_from(host).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }));
    }

    #[test]
    fn foreign_ranges_need_an_address_and_bytes() {
        // SAFETY: rejected before anything is dereferenced.
        let e = unsafe { ManagedRange::from_raw(0, 16) }.unwrap_err();
        assert!(e.to_string().contains("needs a non-null address"), "{e}");
        // SAFETY: as above.
        let e = unsafe { ManagedRange::from_raw(u64::MAX - 4, 16) }.unwrap_err();
        assert!(e.to_string().contains("overflows the address space"), "{e}");
    }
}
