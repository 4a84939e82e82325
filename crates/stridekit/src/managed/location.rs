//! `Location`: where managed memory may live, be preferred, or be prefetched to.

use crate::driver::types::{CUmemLocation, CUmemLocationType};
use crate::error::{invalid, Result};
use std::fmt;

/// A place that managed memory can live in: a device, the host, a host NUMA node, or
/// the NUMA node nearest the calling thread. Compared and hashed by value.
///
/// ```
/// use stridekit::managed::Location;
/// use std::collections::HashSet;
/// let set: HashSet<Location> = [Location::Device(0), Location::Host, Location::Device(0)].into();
/// assert_eq!(set.len(), 2);
/// assert_eq!(Location::HostNuma(1).to_string(), "host NUMA node 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// The device with this ordinal.
    Device(usize),
    /// Host memory, any NUMA node.
    Host,
    /// Host memory on this NUMA node.
    HostNuma(u32),
    /// Host memory on the NUMA node nearest the CPU of the calling thread.
    HostNumaCurrent,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Device(d) => write!(f, "device {d}"),
            Location::Host => f.write_str("the host"),
            Location::HostNuma(n) => write!(f, "host NUMA node {n}"),
            Location::HostNumaCurrent => f.write_str("the calling thread's host NUMA node"),
        }
    }
}

/// What a location is used for; each use allows a different set of location kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocationUse {
    /// `CU_MEM_ADVISE_SET_PREFERRED_LOCATION`: a device, the host or a host NUMA node.
    PreferredLocation,
    /// `CU_MEM_ADVISE_SET_ACCESSED_BY`: a device or the host.
    AccessedBy,
    /// `cuMemPrefetchAsync` and the batched prefetches: any location.
    Prefetch,
}

impl LocationUse {
    fn describe(self) -> &'static str {
        match self {
            LocationUse::PreferredLocation => {
                "a preferred location must be a device, the host or a host NUMA node (the \
                 calling thread's NUMA node is not a fixed place)"
            }
            LocationUse::AccessedBy => {
                "accessed-by advice names a processor: a device or the host (the driver \
                 accepts no host NUMA node here)"
            }
            LocationUse::Prefetch => "a prefetch may target any location",
        }
    }

    fn allows(self, loc: Location) -> bool {
        match self {
            LocationUse::PreferredLocation => !matches!(loc, Location::HostNumaCurrent),
            LocationUse::AccessedBy => matches!(loc, Location::Device(_) | Location::Host),
            LocationUse::Prefetch => true,
        }
    }
}

impl Location {
    /// Checks that this location may be used for `usage`, and that a device ordinal is
    /// below `device_count` when the count is known. Makes no driver call.
    pub(crate) fn check(
        self,
        op: &'static str,
        usage: LocationUse,
        device_count: Option<usize>,
    ) -> Result<()> {
        if !usage.allows(self) {
            return Err(invalid(
                op,
                format!("{self} is not allowed: {}", usage.describe()),
            ));
        }
        if let (Location::Device(d), Some(n)) = (self, device_count) {
            if d >= n {
                return Err(invalid(
                    op,
                    format!("device {d} does not exist; {n} device(s) are visible"),
                ));
            }
        }
        if let Location::Device(d) = self {
            if d > i32::MAX as usize {
                return Err(invalid(op, format!("device ordinal {d} exceeds i32::MAX")));
            }
        }
        if let Location::HostNuma(n) = self {
            if n > i32::MAX as u32 {
                return Err(invalid(op, format!("host NUMA node {n} exceeds i32::MAX")));
            }
        }
        Ok(())
    }

    /// The driver's `CUmemLocation` for this location (checked first by [`Self::check`]).
    pub(crate) fn to_cu(self) -> CUmemLocation {
        use CUmemLocationType as T;
        let (type_, id) = match self {
            Location::Device(d) => (T::CU_MEM_LOCATION_TYPE_DEVICE, d as i32),
            Location::Host => (T::CU_MEM_LOCATION_TYPE_HOST, 0),
            Location::HostNuma(n) => (T::CU_MEM_LOCATION_TYPE_HOST_NUMA, n as i32),
            Location::HostNumaCurrent => (T::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0),
        };
        CUmemLocation { type_, id }
    }

    /// Reads a location back from the driver's (type, id) pair; `None` for "invalid" (no
    /// location) and for types this library does not know.
    pub(crate) fn from_cu(type_: i32, id: i32) -> Option<Location> {
        use CUmemLocationType as T;
        match type_ {
            t if t == T::CU_MEM_LOCATION_TYPE_DEVICE as i32 => {
                usize::try_from(id).ok().map(Location::Device)
            }
            t if t == T::CU_MEM_LOCATION_TYPE_HOST as i32 => Some(Location::Host),
            t if t == T::CU_MEM_LOCATION_TYPE_HOST_NUMA as i32 => {
                u32::try_from(id).ok().map(Location::HostNuma)
            }
            t if t == T::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT as i32 => {
                Some(Location::HostNumaCurrent)
            }
            _ => None,
        }
    }

    /// Reads a legacy device-ordinal attribute: -1 is the host, -2 (or any other
    /// negative value) is no location.
    pub(crate) fn from_legacy_ordinal(v: i32) -> Option<Location> {
        match v {
            -1 => Some(Location::Host),
            d if d >= 0 => Some(Location::Device(d as usize)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_driver_encoding() {
        for loc in [
            Location::Device(0),
            Location::Device(7),
            Location::Host,
            Location::HostNuma(3),
            Location::HostNumaCurrent,
        ] {
            let cu = loc.to_cu();
            assert_eq!(Location::from_cu(cu.type_ as i32, cu.id), Some(loc));
        }
        assert_eq!(
            Location::from_cu(0, 0),
            None,
            "type INVALID means no location"
        );
        assert_eq!(Location::from_legacy_ordinal(-1), Some(Location::Host));
        assert_eq!(Location::from_legacy_ordinal(-2), None);
        assert_eq!(Location::from_legacy_ordinal(2), Some(Location::Device(2)));
    }

    #[test]
    fn each_use_allows_its_kinds() {
        const OP: &str = "test";
        let pref = LocationUse::PreferredLocation;
        assert!(Location::HostNuma(0).check(OP, pref, None).is_ok());
        let e = Location::HostNumaCurrent.check(OP, pref, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("calling thread's host NUMA node is not allowed"),
            "{e}"
        );
        let acc = LocationUse::AccessedBy;
        assert!(Location::Host.check(OP, acc, None).is_ok());
        let e = Location::HostNuma(1).check(OP, acc, None).unwrap_err();
        assert!(
            e.to_string().contains("host NUMA node 1 is not allowed"),
            "{e}"
        );
        assert!(Location::HostNumaCurrent.check(OP, acc, None).is_err());
        let pre = LocationUse::Prefetch;
        assert!(Location::HostNumaCurrent.check(OP, pre, None).is_ok());
        let e = Location::Device(3).check(OP, pre, Some(1)).unwrap_err();
        assert!(
            e.to_string()
                .contains("device 3 does not exist; 1 device(s)"),
            "{e}"
        );
        let e = Location::HostNuma(u32::MAX)
            .check(OP, pre, None)
            .unwrap_err();
        assert!(e.to_string().contains("exceeds i32::MAX"), "{e}");
    }
}
