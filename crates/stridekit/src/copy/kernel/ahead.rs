//! A new schedule's kernels compiled side by side. A copy planned as several launches
//! (whole tiles, their remainder slabs, elementwise remainders) may need several kernels
//! this process has not compiled yet, each an NVRTC compile of 15-60 ms; compiled one
//! after another they add up in the first copy's wait. Compiled ahead on a thread each,
//! the wait is about the slowest one's.

use super::{function, generic, sm_count, tiled, Variant};
use crate::runtime::Runtime;
use cudarc::driver::CudaStream;
use smallvec::SmallVec;
use std::sync::Arc;
use stridekit_layout::CopyStep;

/// Compiles (or loads from the disk cache) the kernels of `steps` that this process does
/// not hold yet, a thread each, when there are two or more. Only a warm-up: each launch
/// still asks for its kernel, so a kernel not foreseen here, a thread that cannot be
/// started or a compile that fails here is compiled, or reported, by the launch itself.
pub(super) fn compile_ahead(steps: &[CopyStep], stream: &Arc<CudaStream>) {
    const OP: &str = "strided copy kernel";
    let (Ok(runtime), Ok(sms)) = (Runtime::of_stream(OP, stream), sm_count(stream)) else {
        return;
    };
    let mut missing: SmallVec<[(usize, Variant); 4]> = SmallVec::new();
    for k in steps.iter().filter_map(|s| planned_kernel(s, sms)) {
        if !missing.contains(&k) && matches!(runtime.has_function(OP, k.1.key(k.0)), Ok(false)) {
            missing.push(k);
        }
    }
    let Some((last, others)) = missing.split_last().filter(|(_, o)| !o.is_empty()) else {
        return;
    };
    std::thread::scope(|s| {
        // The last kernel compiles on this thread; the others on threads of their own.
        let workers: SmallVec<[_; 4]> = others
            .iter()
            .filter_map(|&(isz, v)| {
                std::thread::Builder::new()
                    .name("stridekit-nvrtc".into())
                    .spawn_scoped(s, move || function(stream, isz, v).map(drop))
                    .ok()
            })
            .collect();
        let _ = function(stream, last.0, last.1);
        for w in workers {
            let _ = w.join();
        }
    });
}

/// Asks for the kernels of `steps` that this process does not hold yet, on this thread:
/// for an armed copy ([`crate::background_compile`]) each one missing from the disk
/// cache and the packs goes to a background thread at once, not only the first the steps
/// reach.
pub(super) fn request(steps: &[CopyStep], stream: &Arc<CudaStream>) {
    let Ok(sms) = sm_count(stream) else {
        return;
    };
    for (isz, v) in steps.iter().filter_map(|s| planned_kernel(s, sms)) {
        let _ = function(stream, isz, v);
    }
}

/// The kernel a step launches on a GPU of `sms` SMs, where the step alone tells: tiles
/// and elementwise copies (the steps that schedules of several launches are made of).
fn planned_kernel(step: &CopyStep, sms: u64) -> Option<(usize, Variant)> {
    match step {
        CopyStep::Tiled(t) if t.tiles() > 0 => Some((t.itemsize, tiled::kernel_of(t, sms))),
        CopyStep::Elementwise(p) => Some((p.itemsize, generic::kernel_of(p, sms))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridekit_layout::{CopyPlan, Order, StridedLayout};

    fn steps_of(shape: &[i64], isz: usize, axes: &[i64]) -> Vec<CopyStep> {
        let src = StridedLayout::dense(shape, isz, Order::C).unwrap();
        let dst = StridedLayout::dense(shape, isz, Order::Axes(axes)).unwrap();
        CopyPlan::new(&dst, &src)
            .unwrap()
            .schedule(0x10000, 0x20000)
            .into_vec()
    }

    /// Tiles whose remainder slab takes other words than the whole tiles: two kernels
    /// foreseen (the tile kernel at each word width), so a first copy compiles them side
    /// by side. (The slab has 1.08 M elements: a slab of 2^18 or fewer runs elementwise.)
    #[test]
    fn tiles_with_a_remainder_of_other_words_foresee_both_kernels() {
        let steps = steps_of(&[330, 3, 2, 13, 914, 21], 2, &[4, 0, 5, 2, 1, 3]);
        let kernels: Vec<_> = steps.iter().map(|s| planned_kernel(s, 132)).collect();
        assert_eq!(
            kernels,
            [
                Some((2, Variant::Tiled { read: 4, write: 2 })),
                Some((2, Variant::Tiled { read: 4, write: 4 }))
            ]
        );
    }

    /// Elementwise steps foresee the elementwise kernel; the other single-kernel steps
    /// (here a transpose) are left to their launch.
    #[test]
    fn elementwise_steps_are_foreseen_and_transposes_left_to_their_launch() {
        let steps = steps_of(&[97, 3, 101, 49], 2, &[2, 0, 3, 1]);
        // Halfword rows over two axes gathered from the source: the run kernel (a copy
        // past `SMALL_COPY` elements; smaller ones read element by element).
        assert!(
            matches!(
                planned_kernel(&steps[0], 132),
                Some((
                    2,
                    Variant::Runs {
                        gathered: 2,
                        vec: 16,
                        ..
                    }
                ))
            ),
            "{:?}",
            planned_kernel(&steps[0], 132)
        );
        let t = steps_of(&[512, 384], 4, &[1, 0]);
        assert!(matches!(t[..], [CopyStep::Transpose { .. }]), "{t:?}");
        assert_eq!(planned_kernel(&t[0], 132), None);
    }
}
