//! Prefetch, discard and discard-and-prefetch, on one range or a batch of them.

use super::location::LocationUse;
use super::support::{
    prepare, require_concurrent_access, require_location_access, DISCARD_AND_PREFETCH_BATCH,
    DISCARD_BATCH, PREFETCH_BATCH, PREFETCH_V2,
};
use super::{ExclusiveRange, Location, ManagedRange};
use crate::driver::managed::{self as dm, LocatedBatch};
use crate::driver::{bind_stream, ensure, has_symbol, require_symbol};
use crate::driver::{check, types::CUmemLocation};
use crate::error::{invalid, Result};
use crate::memory::{finish, Usage};
use cudarc::driver::CudaStream;

/// Where a batch goes: one location for every range, or one per range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchLocations<'l> {
    /// Every range goes to this location.
    All(Location),
    /// Range `i` goes to `locations[i]`; the lengths must match.
    PerRange(&'l [Location]),
}

impl From<Location> for BatchLocations<'_> {
    fn from(l: Location) -> Self {
        BatchLocations::All(l)
    }
}

impl<'l> From<&'l [Location]> for BatchLocations<'l> {
    fn from(l: &'l [Location]) -> Self {
        BatchLocations::PerRange(l)
    }
}

impl<'l> From<&'l Vec<Location>> for BatchLocations<'l> {
    fn from(l: &'l Vec<Location>) -> Self {
        BatchLocations::PerRange(l)
    }
}

impl<'l, const N: usize> From<&'l [Location; N]> for BatchLocations<'l> {
    fn from(l: &'l [Location; N]) -> Self {
        BatchLocations::PerRange(l)
    }
}

/// The arrays a batched driver call takes: addresses, sizes, and the locations as runs
/// (`locations[i]` applies from operation `first_ops[i]` up to the next run).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct BatchPlan {
    pub ptrs: Vec<u64>,
    pub sizes: Vec<usize>,
    pub locations: Vec<Location>,
    pub first_ops: Vec<usize>,
}

/// Checks a batch and encodes it; makes no driver call. `locations` is `None` for a
/// discard. Rules: at least one range, each non-empty; per-range locations as many as
/// ranges; every location allowed for a prefetch.
pub(crate) fn plan_batch(
    op: &'static str,
    ranges: &[ManagedRange<'_>],
    locations: Option<BatchLocations<'_>>,
) -> Result<BatchPlan> {
    if ranges.is_empty() {
        return Err(invalid(op, "the batch is empty; give at least one range"));
    }
    for r in ranges {
        r.check_nonempty(op)?;
    }
    let mut plan = BatchPlan {
        ptrs: ranges.iter().map(|r| r.ptr()).collect(),
        sizes: ranges.iter().map(|r| r.size()).collect(),
        ..BatchPlan::default()
    };
    match locations {
        None => {}
        Some(BatchLocations::All(loc)) => {
            loc.check(op, LocationUse::Prefetch, None)?;
            plan.locations.push(loc);
            plan.first_ops.push(0);
        }
        Some(BatchLocations::PerRange(locs)) => {
            if locs.len() != ranges.len() {
                return Err(invalid(
                    op,
                    format!(
                        "{} locations for {} ranges; give one location for all, or exactly one per range",
                        locs.len(),
                        ranges.len()
                    ),
                ));
            }
            for (i, loc) in locs.iter().enumerate() {
                loc.check(op, LocationUse::Prefetch, None)?;
                if plan.locations.last() != Some(loc) {
                    plan.locations.push(*loc);
                    plan.first_ops.push(i);
                }
            }
        }
    }
    Ok(plan)
}

/// The location of operation `i` in a plan.
fn location_of(plan: &BatchPlan, i: usize) -> Location {
    let run = plan.first_ops.partition_point(|&first| first <= i) - 1;
    plan.locations[run]
}

/// Driver-side checks shared by every batch: device ordinals exist and every device has
/// concurrent managed access (the batched calls require it of all devices).
fn prepare_batch(
    op: &'static str,
    symbol: &'static str,
    plan: &BatchPlan,
    stream: &CudaStream,
) -> Result<()> {
    check_not_legacy_stream(op, stream)?;
    let n = prepare(op, symbol)?;
    for loc in &plan.locations {
        loc.check(op, LocationUse::Prefetch, Some(n))?;
    }
    for d in 0..n {
        require_concurrent_access(op, d)?;
    }
    bind_stream(op, stream)
}

/// The batched calls reject the legacy default stream (CUstream 0) with
/// CUDA_ERROR_INVALID_VALUE (seen on driver 13.0); say so before calling.
fn check_not_legacy_stream(op: &'static str, stream: &CudaStream) -> Result<()> {
    if stream.cu_stream().is_null() {
        return Err(invalid(
            op,
            "the legacy default stream (CUstream 0) was given; the driver's batched \
             managed-memory calls (which discard uses) do not accept it, so pass a stream \
             from Device::new_stream",
        ));
    }
    Ok(())
}

fn single_prefetch(
    op: &'static str,
    ptr: u64,
    size: usize,
    loc: Location,
    stream: &CudaStream,
) -> Result<()> {
    // SAFETY: the driver has cuMemPrefetchAsync_v2 (checked by the caller); the range is
    // managed memory kept alive by its borrow; flags must be 0; the stream is live.
    check(op, "cuMemPrefetchAsync", unsafe {
        dm::prefetch(ptr, size, loc.to_cu(), stream.cu_stream())
    })
}

/// Prefetches the range to `location` on `stream`: the pages migrate there (or, for
/// read-mostly ranges, get a read-only copy there) before later work on the stream.
///
/// ```no_run
/// use stridekit::{managed, managed::Location, Device, ManagedMemoryResource};
/// let dev = Device::open(0)?;
/// let stream = dev.new_stream()?;
/// let buf = ManagedMemoryResource::new(&dev)?.allocate(1 << 20, &stream)?;
/// managed::prefetch(&buf, Location::Device(0), &stream)?;
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn prefetch<'a>(
    range: impl Into<ManagedRange<'a>>,
    location: Location,
    stream: &CudaStream,
) -> Result<()> {
    const OP: &str = "managed::prefetch";
    let range = range.into();
    range.check_nonempty(OP)?;
    location.check(OP, LocationUse::Prefetch, None)?;
    let n = prepare(OP, PREFETCH_V2)?;
    location.check(OP, LocationUse::Prefetch, Some(n))?;
    require_location_access(OP, location)?;
    require_concurrent_access(OP, stream.context().ordinal())?;
    recorded(OP, &[range], Usage::Read, stream, || {
        bind_stream(OP, stream)?;
        single_prefetch(OP, range.ptr(), range.size(), location, stream)
    })
}

/// Queues `work` on `stream` as a use of kind `usage` of every range that carries a
/// buffer's record: ordered after the uses it must follow, then recorded (also when
/// queuing failed partway).
fn recorded(
    op: &'static str,
    ranges: &[ManagedRange<'_>],
    usage: Usage,
    stream: &CudaStream,
    work: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let mut uses = Vec::new();
    for r in ranges {
        if let Some(p) = r.pending() {
            uses.push((p, p.begin(op, usage, stream)?));
        }
    }
    let queued = work();
    finish(op, stream, uses)?;
    queued
}

/// Discards the range's contents on `stream`: its pages lose their data (reads see
/// unspecified values until written) and need not migrate. CUDA 13 drivers only; the
/// stream must not be the legacy default stream (the driver refuses it).
pub fn discard<'a>(range: impl Into<ExclusiveRange<'a>>, stream: &CudaStream) -> Result<()> {
    discard_batch_op("managed::discard", &[range.into().range()], stream)
}

/// Discards the range's contents and prefetches it to `location`, so that the pages are
/// populated there without moving stale data. CUDA 13 drivers only.
pub fn discard_and_prefetch<'a>(
    range: impl Into<ExclusiveRange<'a>>,
    location: Location,
    stream: &CudaStream,
) -> Result<()> {
    discard_and_prefetch_op(
        "managed::discard_and_prefetch",
        &[range.into().range()],
        BatchLocations::All(location),
        stream,
    )
}

/// Prefetches many ranges with one driver call (`cuMemPrefetchBatchAsync`). On a driver
/// without it, and on the legacy default stream (which the batched call rejects), falls
/// back to one `cuMemPrefetchAsync` per range.
///
/// ```no_run
/// use stridekit::{managed, managed::Location, Device, ManagedMemoryResource};
/// let dev = Device::open(0)?;
/// let stream = dev.new_stream()?;
/// let mr = ManagedMemoryResource::new(&dev)?;
/// let (a, b) = (mr.allocate(4096, &stream)?, mr.allocate(4096, &stream)?);
/// managed::prefetch_batch(&[a.range(), b.range()], Location::Device(0), &stream)?;
/// managed::prefetch_batch(&[a.range(), b.range()], &[Location::Host, Location::Device(0)], &stream)?;
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn prefetch_batch<'l>(
    ranges: &[ManagedRange<'_>],
    locations: impl Into<BatchLocations<'l>>,
    stream: &CudaStream,
) -> Result<()> {
    const OP: &str = "managed::prefetch_batch";
    let plan = plan_batch(OP, ranges, Some(locations.into()))?;
    ensure(OP)?;
    // Without the batched entry point, or on the legacy default stream that it rejects,
    // one cuMemPrefetchAsync per range does the same work.
    if !has_symbol(PREFETCH_BATCH) || stream.cu_stream().is_null() {
        let n = prepare(OP, PREFETCH_V2)?;
        for loc in &plan.locations {
            loc.check(OP, LocationUse::Prefetch, Some(n))?;
            require_location_access(OP, *loc)?;
        }
        require_concurrent_access(OP, stream.context().ordinal())?;
        return recorded(OP, ranges, Usage::Read, stream, || {
            bind_stream(OP, stream)?;
            for i in 0..plan.ptrs.len() {
                single_prefetch(
                    OP,
                    plan.ptrs[i],
                    plan.sizes[i],
                    location_of(&plan, i),
                    stream,
                )?;
            }
            Ok(())
        });
    }
    prepare_batch(OP, PREFETCH_BATCH, &plan, stream)?;
    recorded(OP, ranges, Usage::Read, stream, || {
        located_batch(
            OP,
            "cuMemPrefetchBatchAsync",
            LocatedBatch::Prefetch,
            plan,
            stream,
        )
    })
}

fn located_batch(
    op: &'static str,
    call: &'static str,
    which: LocatedBatch,
    mut plan: BatchPlan,
    stream: &CudaStream,
) -> Result<()> {
    let mut locs: Vec<CUmemLocation> = plan.locations.iter().map(|l| l.to_cu()).collect();
    // SAFETY: the caller checked that the driver has the entry point and bound the
    // stream's context; `ptrs`/`sizes` and `locs`/`first_ops` have matching lengths
    // (plan_batch); the ranges are managed memory kept alive by their borrows.
    check(op, call, unsafe {
        dm::located_batch(
            which,
            &mut plan.ptrs,
            &mut plan.sizes,
            &mut locs,
            &mut plan.first_ops,
            stream.cu_stream(),
        )
    })
}

/// Discards many ranges with one driver call (`cuMemDiscardBatchAsync`). A driver
/// without it answers [`Error::Unsupported`](crate::Error::Unsupported); the legacy
/// default stream, which the driver rejects here, is refused with a clear error.
pub fn discard_batch(ranges: &[ExclusiveRange<'_>], stream: &CudaStream) -> Result<()> {
    let shared: Vec<ManagedRange<'_>> = ranges.iter().map(|r| r.range()).collect();
    discard_batch_op("managed::discard_batch", &shared, stream)
}

fn discard_batch_op(
    op: &'static str,
    ranges: &[ManagedRange<'_>],
    stream: &CudaStream,
) -> Result<()> {
    let mut plan = plan_batch(op, ranges, None)?;
    ensure(op)?;
    require_symbol(op, DISCARD_BATCH)?;
    prepare_batch(op, DISCARD_BATCH, &plan, stream)?;
    // A discard destroys the contents: it waits for every recorded use, as a write.
    recorded(op, ranges, Usage::Write, stream, || {
        // SAFETY: the driver has the entry point (checked); `ptrs`/`sizes` hold `count`
        // entries; flags must be 0; the ranges are managed memory.
        check(op, "cuMemDiscardBatchAsync", unsafe {
            dm::discard_batch(&mut plan.ptrs, &mut plan.sizes, stream.cu_stream())
        })
    })
}

/// Discards many ranges and prefetches them, one driver call
/// (`cuMemDiscardAndPrefetchBatchAsync`). A driver without it answers
/// [`Error::Unsupported`](crate::Error::Unsupported).
pub fn discard_and_prefetch_batch<'l>(
    ranges: &[ExclusiveRange<'_>],
    locations: impl Into<BatchLocations<'l>>,
    stream: &CudaStream,
) -> Result<()> {
    let shared: Vec<ManagedRange<'_>> = ranges.iter().map(|r| r.range()).collect();
    discard_and_prefetch_op(
        "managed::discard_and_prefetch_batch",
        &shared,
        locations.into(),
        stream,
    )
}

fn discard_and_prefetch_op(
    op: &'static str,
    ranges: &[ManagedRange<'_>],
    locations: BatchLocations<'_>,
    stream: &CudaStream,
) -> Result<()> {
    let plan = plan_batch(op, ranges, Some(locations))?;
    ensure(op)?;
    require_symbol(op, DISCARD_AND_PREFETCH_BATCH)?;
    prepare_batch(op, DISCARD_AND_PREFETCH_BATCH, &plan, stream)?;
    recorded(op, ranges, Usage::Write, stream, || {
        located_batch(
            op,
            "cuMemDiscardAndPrefetchBatchAsync",
            LocatedBatch::DiscardAndPrefetch,
            plan,
            stream,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(n: usize) -> Vec<ManagedRange<'static>> {
        (0..n)
            .map(|i| ManagedRange::new_unchecked(0x1000_0000 + (i as u64) * 4096, 4096, Some(0)))
            .collect()
    }

    #[test]
    fn broadcast_location_is_one_run() {
        let plan = plan_batch("t", &fake(3), Some(Location::Host.into())).unwrap();
        assert_eq!(plan.locations, vec![Location::Host]);
        assert_eq!(plan.first_ops, vec![0]);
        assert_eq!(plan.sizes, vec![4096; 3]);
        assert_eq!(
            (0..3).map(|i| location_of(&plan, i)).collect::<Vec<_>>(),
            vec![Location::Host; 3]
        );
    }

    #[test]
    fn per_range_locations_are_run_length_encoded() {
        let locs = [
            Location::Device(0),
            Location::Device(0),
            Location::Host,
            Location::Device(0),
            Location::HostNuma(1),
            Location::HostNuma(1),
        ];
        let plan = plan_batch("t", &fake(6), Some((&locs).into())).unwrap();
        assert_eq!(
            plan.locations,
            vec![
                Location::Device(0),
                Location::Host,
                Location::Device(0),
                Location::HostNuma(1)
            ]
        );
        assert_eq!(plan.first_ops, vec![0, 2, 3, 4]);
        for (i, l) in locs.iter().enumerate() {
            assert_eq!(location_of(&plan, i), *l);
        }
    }

    #[test]
    fn batch_rules_are_checked_before_the_driver() {
        let e =
            plan_batch("managed::prefetch_batch", &[], Some(Location::Host.into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "managed::prefetch_batch: the batch is empty; give at least one range"
        );
        let locs = [Location::Host; 2];
        let e = plan_batch("managed::prefetch_batch", &fake(3), Some((&locs).into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "managed::prefetch_batch: 2 locations for 3 ranges; give one location for all, or exactly one per range"
        );
        let mut ranges = fake(2);
        ranges[1] = ManagedRange::new_unchecked(0x2000, 0, Some(0));
        let e = plan_batch("managed::discard_batch", &ranges, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("the managed range at 0x2000 is empty"),
            "{e}"
        );
        let locs = [Location::Host, Location::HostNuma(u32::MAX)];
        let e = plan_batch("managed::prefetch_batch", &fake(2), Some((&locs).into())).unwrap_err();
        assert!(e.to_string().contains("exceeds i32::MAX"), "{e}");
    }
}
