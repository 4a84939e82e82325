//! Helpers shared by the layout test files (included with `mod common;`).
#![allow(dead_code)]

use stridekit_layout::StridedLayout;

/// Every index of `shape`, in row-major order.
pub fn indices(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    if shape.contains(&0) {
        return out;
    }
    let mut idx = vec![0i64; shape.len()];
    loop {
        out.push(idx.clone());
        let mut ax = shape.len();
        loop {
            if ax == 0 {
                return out;
            }
            ax -= 1;
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
}

/// Every element's offset (in elements), in row-major index order.
pub fn offsets(l: &StridedLayout) -> Vec<i64> {
    indices(l.shape())
        .iter()
        .map(|idx| l.slice_offset() + idx.iter().zip(l.strides()).map(|(i, s)| i * s).sum::<i64>())
        .collect()
}
