//! The elementwise kernels: `element_runs.cu` for plans with runs
//! ([`CopyPlan::element_runs`]), `strided_copy.cu` for any plan.

use super::params::{pmax, Params, RowAxes, MAXD, SMALLD};
use super::{function, schedules::small_copy_elements, sm_count, Variant};
use crate::error::{driver, Result};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::{CopyPlan, ElementRuns};

/// Launches the elementwise copy of `plan` between base addresses `dst` and `src`: a
/// group of its last axis a thread where it has runs, else one element a thread.
pub(super) fn launch(plan: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    let runs = runs_of(plan);
    let sms = sm_count(stream)?;
    // The kernel's rank is the plan it indexes (a gathered row is one axis of it).
    let nd = runs.as_ref().map_or(plan.ndim(), |r| r.runs.plan.ndim());
    if pmax(nd.max(1)) == SMALLD {
        launch_with::<SMALLD>(plan, runs.as_ref(), (dst, src), sms, stream)
    } else {
        launch_with::<MAXD>(plan, runs.as_ref(), (dst, src), sms, stream)
    }
}

/// The kernel the elementwise copy of `plan` runs on a GPU of `sms` SMs (for compiling it
/// ahead).
pub(super) fn kernel_of(plan: &CopyPlan, sms: u64) -> Variant {
    kernel_with(plan, runs_of(plan).as_ref(), sms).0
}

/// The kernel an elementwise step runs on ([`elementwise_kernel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementwiseKernel {
    /// One element a thread (`strided_copy.cu`).
    Elements,
    /// Rows of bytes or halfwords dense in the destination and read along contiguous
    /// source elements, a group of them a thread (`element_runs.cu`).
    Runs,
    /// Rows dense in the destination gathered from the source over `axes` axes, a group
    /// a thread (`element_runs.cu` with the row's parameter block).
    GatheredRows {
        /// The row's axes ([`ElementRuns::row`]).
        axes: usize,
    },
}

/// The kernel the engine runs the elementwise step `plan` (a
/// [`CopyStep::Elementwise`](stridekit_layout::CopyStep::Elementwise)) on, as a copy picks
/// it: for benchmarks and tools that report which kernel a copy took. No GPU needed.
///
/// ```
/// use stridekit::layout::{s, CopyPlan, Order, StridedLayout};
/// use stridekit::{elementwise_kernel, ElementwiseKernel};
/// // Pixels of 3 byte channels written interleaved from 3 planes: rows gathered over two
/// // axes (pixels, channels) once the copy is past `small_copy_elements`.
/// let planes = StridedLayout::dense(&[3, 1024, 1024], 1, Order::C)?.permuted(&[1, 2, 0])?;
/// let pixels = StridedLayout::dense(&[1024, 1024, 3], 1, Order::C)?;
/// let plan = CopyPlan::new(&pixels, &planes)?;
/// assert_eq!(elementwise_kernel(&plan), ElementwiseKernel::GatheredRows { axes: 2 });
/// // Rows of bytes reversed (`x[:, ::-1]`): read along contiguous source bytes.
/// let src = StridedLayout::dense(&[64, 1000], 1, Order::C)?.sliced(s![.., ..;-1])?;
/// let dst = StridedLayout::dense(&[64, 1000], 1, Order::C)?;
/// assert_eq!(elementwise_kernel(&CopyPlan::new(&dst, &src)?), ElementwiseKernel::Runs);
/// // 4-byte elements have no runs: one element a thread.
/// let src = StridedLayout::dense(&[1024, 1024], 4, Order::C)?.permuted(&[1, 0])?;
/// let dst = StridedLayout::dense(&[1024, 1024], 4, Order::C)?;
/// assert_eq!(elementwise_kernel(&CopyPlan::new(&dst, &src)?), ElementwiseKernel::Elements);
/// # Ok::<(), stridekit::layout::LayoutError>(())
/// ```
pub fn elementwise_kernel(plan: &CopyPlan) -> ElementwiseKernel {
    match runs_of(plan) {
        None => ElementwiseKernel::Elements,
        Some(KernelRuns { row: None, .. }) => ElementwiseKernel::Runs,
        Some(KernelRuns { runs, row: Some(_) }) => ElementwiseKernel::GatheredRows {
            axes: runs.row.len(),
        },
    }
}

/// A plan's runs as the run kernel takes them: the rows, and for rows it gathers their
/// parameter block (the kernel is compiled to gather exactly when there is one).
struct KernelRuns {
    runs: ElementRuns,
    row: Option<RowAxes>,
}

/// The runs of `plan` the run kernel can take: rows of contiguous source bytes, or
/// gathered rows its parameter block holds. A small copy (at most
/// [`small_copy_elements`]) gathers no rows: a thread gathering a group of 4 or 16 bytes
/// element by element leaves such a copy a few blocks (8 for a 64 KiB one), where one
/// element a thread spreads it over every SM (H200, `examples/small_bench.rs`: 16^4
/// permutes of bytes 11.1 -> 4.7 µs, of halfwords 8.5 -> 4.9; the random set at 1-2 MiB,
/// 13 such copies: geomean 1.19x).
fn runs_of(plan: &CopyPlan) -> Option<KernelRuns> {
    let runs = plan.element_runs()?;
    let row = match runs.source_step() {
        Some(_) => None,
        None if plan.volume <= small_copy_elements() => return None,
        None => Some(RowAxes::new(&runs)?),
    };
    Some(KernelRuns { runs, row })
}

/// The kernel for `plan` with its runs (if any), and the items a thread keeps in flight,
/// on a GPU of `sms` SMs.
fn kernel_with(plan: &CopyPlan, runs: Option<&KernelRuns>, sms: u64) -> (Variant, usize) {
    let nd = plan.ndim().max(1);
    let indexed = runs.map_or(plan, |r| &r.runs.plan);
    let wide = indexed.volume as u64 > NARROW_INDICES_UP_TO;
    // Offsets as the original plan reaches them (groups reach a few bytes past a row).
    let narrow = offsets_fit_32_bits(plan);
    match runs {
        Some(KernelRuns { runs: r, row }) => {
            let gathered = if row.is_some() { r.row.len() } else { 0 };
            let reversed = r.source_step().is_some_and(|step| step < 0);
            let v = Variant::Runs {
                ndim: r.plan.ndim(),
                wide,
                reversed,
                narrow,
                gathered,
                vec: r.vec,
            };
            (v, super::run_unroll(r.vec))
        }
        None => {
            let unr = spread(super::unroll(plan), indexed.volume as u64, sms);
            let v = Variant::Generic {
                ndim: nd,
                wide,
                narrow,
                unr,
            };
            (v, unr)
        }
    }
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    runs: Option<&KernelRuns>,
    (dst, src): (u64, u64),
    sms: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    // The kernel indexes groups where there are runs, elements otherwise.
    let indexed = runs.map_or(plan, |r| &r.runs.plan);
    let n = indexed.volume as u64;
    let p = Params::<D>::new(indexed);
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let (variant, per_thread) = kernel_with(plan, runs, sms);
    let f = function(stream, plan.itemsize, variant)?;
    let blocks = grid_blocks(n, per_thread);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let len = runs.map(|r| r.runs.len);
    let row = runs.and_then(|r| r.row.as_ref());
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p);
    if let Some(len) = &len {
        launch.arg(len);
    }
    if let Some(row) = row {
        launch.arg(row);
    }
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params), and for the run
    // kernel the row length (i64) and, where it gathers (NI defined exactly when
    // `KernelRuns::row` holds a block), the row's axes; we pass two 64-bit addresses, a
    // Params by value, the length and the row's axes; every offset the plan reaches lies
    // inside memory the callers' views validated (as 32-bit offsets only where
    // `offsets_fit_32_bits` says every one fits), and the run kernel reads and writes only
    // a group's elements inside its row (a whole group as one 4- or 16-byte store,
    // aligned by `ElementRuns`), reading each at the row's source offset of its column.
    unsafe { launch.launch(cfg) }.map_err(driver("strided copy kernel", "cuLaunchKernel"))?;
    Ok(())
}

/// `unr` elements a thread, halved while the grid of `n` elements would leave SMs of the
/// `sms` without a block (down to one element a thread): a small copy spreads over the
/// GPU instead of queuing its elements on a few SMs' threads (H200, `examples/small_bench.rs`:
/// 5-D 8^5 and 6^5 permutes of f32, 6-D 4^6, 1.08-1.16x; a grid of two blocks an SM lost
/// up to 10% on copies of 2^20 elements that one block an SM leaves alone).
fn spread(unr: usize, n: u64, sms: u64) -> usize {
    halvings(unr)
        .find(|&u| u == 1 || n.div_ceil(256 * u as u64) >= sms)
        .unwrap_or(1)
}

/// The depths [`spread`] can pick from `unr`: `unr`, its half, ... down to 1.
pub(super) fn halvings(unr: usize) -> impl Iterator<Item = usize> {
    std::iter::successors(Some(unr.max(1)), |&u| (u > 1).then_some(u / 2))
}

/// The most items (elements or groups) the kernels index in 32 bits: a chunk's first index
/// plus the whole grid's step (at most the items rounded up to a chunk) stays below 2^32.
pub(super) const NARROW_INDICES_UP_TO: u64 = u32::MAX as u64 / 4;

// The kernels' short division (`div_extent` in prelude.cu) is exact only below 2^31.
const _: () = assert!(NARROW_INDICES_UP_TO < 1 << 31);

/// Blocks of 256 threads for `n` items, `per_thread` each: one block per chunk, not a
/// persistent grid (measured in `bench/kernel_lab/elementwise_lab.cu`: blocks that the
/// hardware hands out in order keep the stores of scattered bytes together, 1.2-1.8x
/// faster). Past the largest grid the kernels loop over chunks.
pub(super) fn grid_blocks(n: u64, per_thread: usize) -> u32 {
    n.div_ceil(256 * per_thread as u64)
        .clamp(1, i32::MAX as u64) as u32
}

/// Whether every element offset the kernel computes for `plan` (from each side's element
/// 0, in elements: a group's first column may sit up to 15 before its row) fits a signed
/// 32-bit integer.
fn offsets_fit_32_bits(plan: &CopyPlan) -> bool {
    let reach = |strides: &[i64]| -> i128 {
        plan.shape
            .iter()
            .zip(strides)
            .map(|(&n, &s)| i128::from(n.max(1) - 1) * i128::from(s).abs())
            .sum()
    };
    // The run kernel's groups reach up to 15 columns before a row (its first group's
    // start) and none past it.
    let slack = 4 * 4;
    reach(&plan.src_strides) + slack <= i128::from(i32::MAX)
        && reach(&plan.dst_strides) + slack <= i128::from(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::{grid_blocks, offsets_fit_32_bits, spread, NARROW_INDICES_UP_TO};

    /// A small copy's depth halves until its grid has a block for each of 132 SMs (or one
    /// element a thread); larger copies keep the depth.
    #[test]
    fn small_copies_spread_over_every_sm() {
        assert_eq!(spread(8, 32768, 132), 1); // 5-D 8^5 f32: 128 blocks at one element
        assert_eq!(spread(8, 248832, 132), 4); // 12^5: 243 blocks at four
        assert_eq!(spread(8, 1 << 20, 132), 8); // 512 blocks at eight
        assert_eq!(spread(16, 1 << 20, 132), 16); // 256 blocks at sixteen
        assert_eq!(spread(4, 100, 132), 1);
        assert_eq!(spread(1, 10, 132), 1);
        for (unr, n) in [(16, 1000), (8, 70000), (2, 50000), (4, 1 << 24)] {
            let u = spread(unr, n, 132);
            assert!(u == 1 || grid_blocks(n, u) >= 132, "{unr} {n}: {u}");
            assert!(u == unr || grid_blocks(n, 2 * u) < 132, "{unr} {n}: {u}");
        }
    }

    /// The kernels' loop `for (b = blockIdx.x * chunk; b < n; b += gridDim.x * chunk)` in
    /// 32-bit indices never wraps: its last chunk's index plus the grid's step fits.
    #[test]
    fn narrow_indices_never_wrap_in_the_chunk_loop() {
        for per_thread in [1usize, 2, 4, 8, 16] {
            let chunk = 256 * per_thread as u64;
            for n in [1, 1000, NARROW_INDICES_UP_TO - 1, NARROW_INDICES_UP_TO] {
                let blocks = u64::from(grid_blocks(n, per_thread));
                let last = (n - 1) / chunk * chunk;
                assert!(
                    last + blocks * chunk <= u64::from(u32::MAX),
                    "{n} {per_thread}"
                );
                assert!(blocks * chunk >= n, "one pass covers every item");
            }
        }
        assert_eq!(grid_blocks(0, 4), 1);
        assert_eq!(grid_blocks(u64::MAX / 2, 16), i32::MAX as u32);
    }

    use stridekit_layout::{CopyPlan, Order, StridedLayout};

    #[test]
    fn offsets_narrow_to_32_bits_only_when_both_sides_fit() {
        let plan = |n: i64, step: i64| {
            let dst = StridedLayout::dense(&[n], 1, Order::C).unwrap();
            let src = StridedLayout::with_offset(&[n], &[step], 1, 0).unwrap();
            CopyPlan::new(&dst, &src).unwrap()
        };
        assert!(offsets_fit_32_bits(&plan(1 << 20, 3)));
        assert!(offsets_fit_32_bits(&plan((1 << 30) - 16, 2)));
        assert!(!offsets_fit_32_bits(&plan(1 << 30, 2)));
        assert!(!offsets_fit_32_bits(&plan(1 << 31, 1)));
    }
}
