//! Helpers shared by the layout test files (included with `mod common;`).
#![allow(dead_code)]

use stridekit_layout::StridedLayout;

/// Every element's offset (in elements), in row-major index order.
pub fn offsets(l: &StridedLayout) -> Vec<i64> {
    let mut out = Vec::with_capacity(l.volume());
    if l.volume() == 0 {
        return out;
    }
    let mut idx = vec![0i64; l.ndim()];
    loop {
        out.push(l.slice_offset() + idx.iter().zip(l.strides()).map(|(i, s)| i * s).sum::<i64>());
        let mut ax = l.ndim();
        loop {
            if ax == 0 {
                return out;
            }
            ax -= 1;
            idx[ax] += 1;
            if idx[ax] < l.shape()[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
}
