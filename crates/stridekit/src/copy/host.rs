//! Strided copies done by the CPU.

use stridekit_layout::CopyPlan;

/// Copies every element of `plan` from `src` to `dst` (byte addresses of offset 0).
///
/// Callers guarantee that both sides are host-readable/writable for every offset the plan
/// reaches (views validate their layouts against their memory) and that the spans do not
/// overlap.
pub(crate) fn copy(plan: &CopyPlan, dst: u64, src: u64) {
    if plan.volume == 0 {
        return;
    }
    let isz = plan.itemsize as i64;
    let nd = plan.ndim();
    let (mut d, mut s) = (plan.dst_offset * isz, plan.src_offset * isz);
    if nd == 0 {
        element(dst, d, src, s, plan.itemsize);
        return;
    }
    let inner = nd - 1;
    let (n_in, ds_in, ss_in) = (
        plan.shape[inner],
        plan.dst_strides[inner] * isz,
        plan.src_strides[inner] * isz,
    );
    // The inner axis is a run of bytes when both sides step by one element.
    let run = ds_in == isz && ss_in == isz;
    let mut idx = vec![0i64; inner];
    loop {
        if run {
            element(dst, d, src, s, (n_in * isz) as usize);
        } else {
            let (mut dd, mut sd) = (d, s);
            for _ in 0..n_in {
                element(dst, dd, src, sd, plan.itemsize);
                dd += ds_in;
                sd += ss_in;
            }
        }
        // Odometer over the outer axes.
        let mut ax = inner;
        loop {
            if ax == 0 {
                return;
            }
            ax -= 1;
            idx[ax] += 1;
            d += plan.dst_strides[ax] * isz;
            s += plan.src_strides[ax] * isz;
            if idx[ax] < plan.shape[ax] {
                break;
            }
            d -= plan.dst_strides[ax] * isz * plan.shape[ax];
            s -= plan.src_strides[ax] * isz * plan.shape[ax];
            idx[ax] = 0;
        }
    }
}

fn element(dst: u64, d: i64, src: u64, s: i64, bytes: usize) {
    // SAFETY: see `copy`: both offsets lie within validated, non-overlapping host spans.
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.wrapping_add_signed(s) as *const u8,
            dst.wrapping_add_signed(d) as *mut u8,
            bytes,
        )
    }
}
