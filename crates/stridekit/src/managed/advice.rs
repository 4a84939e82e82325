//! Advice on managed ranges (`cuMemAdvise`) and reading it back (`cuMemRangeGetAttribute`).

use super::location::LocationUse;
use super::support::{prepare, require_concurrent_access, require_location_access, ADVISE_V2};
use super::{Location, ManagedRange};
use crate::driver::types::{CUmem_advise as Advice, CUmem_range_attribute as Attr};
use crate::driver::{check, managed as dm};
use crate::error::Result;
use crate::runtime::Runtime;
use std::collections::BTreeSet;

fn advise(op: &'static str, range: &ManagedRange<'_>, advice: Advice, loc: Location) -> Result<()> {
    // SAFETY: the driver is loaded and has cuMemAdvise_v2 (prepare ran first); the range
    // is managed memory kept alive by its borrow; the location was checked; a context is
    // current (the callers bind one).
    check(op, "cuMemAdvise", unsafe {
        dm::advise(range.ptr(), range.size(), advice, loc.to_cu())
    })
}

fn attr_i32s(op: &'static str, range: &ManagedRange<'_>, attr: Attr, n: usize) -> Result<Vec<i32>> {
    let mut out = vec![0i32; n];
    // SAFETY: the range is managed memory kept alive by its borrow.
    check(op, "cuMemRangeGetAttribute", unsafe {
        dm::range_attribute(&mut out, attr, range.ptr(), range.size())
    })?;
    Ok(out)
}

fn attr_i32(op: &'static str, range: &ManagedRange<'_>, attr: Attr) -> Result<i32> {
    Ok(attr_i32s(op, range, attr, 1)?[0])
}

/// A location read back as a (type, id) attribute pair.
fn attr_location(
    op: &'static str,
    range: &ManagedRange<'_>,
    type_attr: Attr,
    id_attr: Attr,
) -> Result<Option<Location>> {
    let t = attr_i32(op, range, type_attr)?;
    let id = attr_i32(op, range, id_attr)?;
    Ok(Location::from_cu(t, id))
}

/// Advice that names a location: the location is checked for `usage` before the driver,
/// then against the device count and for concurrent managed access.
fn advise_location(
    op: &'static str,
    range: &ManagedRange<'_>,
    location: Location,
    usage: LocationUse,
    advice: Advice,
) -> Result<()> {
    location.check(op, usage, None)?;
    let n = prepare_advice(op, range)?;
    location.check(op, usage, Some(n))?;
    require_location_access(op, location)?;
    advise(op, range, advice, location)
}

/// Ready for advice: a non-empty range, a driver with `cuMemAdvise_v2`, and concurrent
/// managed access on the range's device. Returns the device count.
fn prepare_advice(op: &'static str, range: &ManagedRange<'_>) -> Result<usize> {
    range.check_nonempty(op)?;
    let n = prepare(op, ADVISE_V2)?;
    let device = range.device_ordinal().unwrap_or(0);
    require_concurrent_access(op, device)?;
    Runtime::get(op, device)?.bind_if_none(op)?;
    Ok(n)
}

/// Whether read-mostly advice applies to the whole range.
///
/// ```no_run
/// use stridekit::{managed, Device, ManagedMemoryResource};
/// let dev = Device::open(0)?;
/// let buf = ManagedMemoryResource::new(&dev)?.allocate(1 << 20, &dev.default_stream())?;
/// managed::set_read_mostly(&buf, true)?;
/// assert!(managed::read_mostly(&buf)?);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn read_mostly<'a>(range: impl Into<ManagedRange<'a>>) -> Result<bool> {
    const OP: &str = "managed::read_mostly";
    let range = range.into();
    prepare_advice(OP, &range)?;
    Ok(attr_i32(OP, &range, Attr::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY)? != 0)
}

/// Sets (`true`) or clears (`false`) read-mostly advice: reads by any processor make a
/// read-only copy of the pages there; a write invalidates the copies.
pub fn set_read_mostly<'a>(range: impl Into<ManagedRange<'a>>, read_mostly: bool) -> Result<()> {
    const OP: &str = "managed::set_read_mostly";
    let range = range.into();
    prepare_advice(OP, &range)?;
    let advice = if read_mostly {
        Advice::CU_MEM_ADVISE_SET_READ_MOSTLY
    } else {
        Advice::CU_MEM_ADVISE_UNSET_READ_MOSTLY
    };
    // The driver ignores the location of read-mostly advice but rejects type "invalid".
    advise(OP, &range, advice, Location::Host)
}

/// The preferred location of the whole range, with NUMA detail where the driver
/// reports it; `None` when none is set (or parts of the range differ).
pub fn preferred_location<'a>(range: impl Into<ManagedRange<'a>>) -> Result<Option<Location>> {
    const OP: &str = "managed::preferred_location";
    let range = range.into();
    prepare_advice(OP, &range)?;
    attr_location(
        OP,
        &range,
        Attr::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
        Attr::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
    )
}

/// Makes `location` the preferred home of the range's pages: a device, the host or a
/// host NUMA node.
pub fn set_preferred_location<'a>(
    range: impl Into<ManagedRange<'a>>,
    location: Location,
) -> Result<()> {
    const OP: &str = "managed::set_preferred_location";
    let range = range.into();
    advise_location(
        OP,
        &range,
        location,
        LocationUse::PreferredLocation,
        Advice::CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
    )
}

/// Clears the preferred location.
pub fn unset_preferred_location<'a>(range: impl Into<ManagedRange<'a>>) -> Result<()> {
    const OP: &str = "managed::unset_preferred_location";
    let range = range.into();
    prepare_advice(OP, &range)?;
    // The location is ignored, but a location of type "invalid" is rejected: pass the host.
    advise(
        OP,
        &range,
        Advice::CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
        Location::Host,
    )
}

/// Where the last prefetch of the whole range went; `None` if it was never prefetched
/// (or parts of the range differ).
pub fn last_prefetch_location<'a>(range: impl Into<ManagedRange<'a>>) -> Result<Option<Location>> {
    const OP: &str = "managed::last_prefetch_location";
    let range = range.into();
    prepare_advice(OP, &range)?;
    attr_location(
        OP,
        &range,
        Attr::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
        Attr::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
    )
}

/// The processors that accessed-by advice names for a range, as the driver reported
/// them when read: devices and the host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccessedBy {
    set: BTreeSet<Location>,
}

impl AccessedBy {
    /// Whether `location` is in the set.
    pub fn contains(&self, location: &Location) -> bool {
        self.set.contains(location)
    }

    /// How many processors the set names.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when no accessed-by advice applies.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The locations, devices first in ordinal order, then the host.
    pub fn iter(&self) -> impl Iterator<Item = Location> + '_ {
        self.set.iter().copied()
    }
}

impl IntoIterator for AccessedBy {
    type Item = Location;
    type IntoIter = std::collections::btree_set::IntoIter<Location>;
    fn into_iter(self) -> Self::IntoIter {
        self.set.into_iter()
    }
}

impl<'s> IntoIterator for &'s AccessedBy {
    type Item = &'s Location;
    type IntoIter = std::collections::btree_set::Iter<'s, Location>;
    fn into_iter(self) -> Self::IntoIter {
        self.set.iter()
    }
}

/// Reads the accessed-by set of the whole range from the driver.
pub fn accessed_by<'a>(range: impl Into<ManagedRange<'a>>) -> Result<AccessedBy> {
    const OP: &str = "managed::accessed_by";
    let range = range.into();
    let n = prepare_advice(OP, &range)?;
    read_accessed_by(OP, &range, n)
}

fn read_accessed_by(
    op: &'static str,
    range: &ManagedRange<'_>,
    devices: usize,
) -> Result<AccessedBy> {
    // One slot per device and one for the host; unused slots read -2 (CU_DEVICE_INVALID).
    let raw = attr_i32s(
        op,
        range,
        Attr::CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
        devices + 1,
    )?;
    Ok(AccessedBy {
        set: raw
            .into_iter()
            .filter_map(Location::from_legacy_ordinal)
            .collect(),
    })
}

/// Adds accessed-by advice for `location` (a device or the host): its page tables keep
/// a mapping to the range wherever the pages move.
pub fn add_accessed_by<'a>(range: impl Into<ManagedRange<'a>>, location: Location) -> Result<()> {
    const OP: &str = "managed::add_accessed_by";
    let range = range.into();
    advise_location(
        OP,
        &range,
        location,
        LocationUse::AccessedBy,
        Advice::CU_MEM_ADVISE_SET_ACCESSED_BY,
    )
}

/// Removes accessed-by advice for `location`; removing one that is not set is no error.
pub fn remove_accessed_by<'a>(
    range: impl Into<ManagedRange<'a>>,
    location: Location,
) -> Result<()> {
    const OP: &str = "managed::remove_accessed_by";
    let range = range.into();
    advise_location(
        OP,
        &range,
        location,
        LocationUse::AccessedBy,
        Advice::CU_MEM_ADVISE_UNSET_ACCESSED_BY,
    )
}

/// Checks every target of a replace-all before anything changes.
pub(crate) fn validate_accessed_by_targets(
    op: &'static str,
    targets: impl IntoIterator<Item = Location>,
    devices: Option<usize>,
) -> Result<BTreeSet<Location>> {
    let mut set = BTreeSet::new();
    for loc in targets {
        loc.check(op, LocationUse::AccessedBy, devices)?;
        set.insert(loc);
    }
    Ok(set)
}

/// Makes the accessed-by set exactly `locations`, advising only the differences. Every
/// element is checked first, so a bad element changes nothing.
///
/// ```no_run
/// use stridekit::{managed, managed::Location, Device, ManagedMemoryResource};
/// let dev = Device::open(0)?;
/// let buf = ManagedMemoryResource::new(&dev)?.allocate(1 << 20, &dev.default_stream())?;
/// managed::replace_accessed_by(&buf, [Location::Device(0), Location::Host])?;
/// assert_eq!(managed::accessed_by(&buf)?.len(), 2);
/// // A host NUMA node cannot be an accessed-by target: nothing changes.
/// assert!(managed::replace_accessed_by(&buf, [Location::HostNuma(0)]).is_err());
/// assert_eq!(managed::accessed_by(&buf)?.len(), 2);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn replace_accessed_by<'a>(
    range: impl Into<ManagedRange<'a>>,
    locations: impl IntoIterator<Item = Location>,
) -> Result<()> {
    const OP: &str = "managed::replace_accessed_by";
    let range = range.into();
    let targets: Vec<Location> = locations.into_iter().collect();
    validate_accessed_by_targets(OP, targets.iter().copied(), None)?;
    let n = prepare_advice(OP, &range)?;
    let target = validate_accessed_by_targets(OP, targets, Some(n))?;
    for loc in &target {
        require_location_access(OP, *loc)?;
    }
    let current = read_accessed_by(OP, &range, n)?;
    for loc in current.set.difference(&target) {
        advise(OP, &range, Advice::CU_MEM_ADVISE_UNSET_ACCESSED_BY, *loc)?;
    }
    for loc in target.difference(&current.set) {
        advise(OP, &range, Advice::CU_MEM_ADVISE_SET_ACCESSED_BY, *loc)?;
    }
    Ok(())
}
