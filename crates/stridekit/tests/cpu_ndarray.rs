//! ndarray interop (feature `ndarray`): arrays of every layout in and out, byte-exact.
#![cfg(feature = "ndarray")]

use ndarray::{s, Array2, Array3, ArrayViewD, Axis};
use stridekit::{s as sk, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

#[test]
fn arrays_of_every_stride_become_views_and_copy_exactly() {
    let a = Array3::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
    let cases = [
        a.view(),
        a.slice(s![.., ..;-1, ..]),
        a.slice(s![1..;2, .., ..;-3]),
        a.view().permuted_axes([2, 0, 1]),
        a.slice(s![.., 2..2, ..]),
    ];
    for src in cases {
        let v = StridedMemoryView::from_array(src.view()).unwrap();
        assert_eq!(
            v.shape(),
            src.shape().iter().map(|&e| e as i64).collect::<Vec<_>>()
        );
        let want: Vec<i32> = src.iter().copied().collect();
        assert_eq!(v.to_vec::<i32>().unwrap(), want);
        // Into an F-ordered destination array, and back through as_array.
        use ndarray::ShapeBuilder;
        let mut out = ndarray::ArrayD::<i32>::from_elem(ndarray::IxDyn(src.shape()).f(), -7);
        let mut d = StridedMemoryViewMut::from_array_mut(out.view_mut()).unwrap();
        d.copy_from(&v, None).unwrap();
        assert_eq!(d.as_array::<i32>().unwrap(), src.into_dyn());
        drop(d);
        assert_eq!(out, src.into_dyn());
    }
    // Broadcast (zero) strides read fine.
    let row = ndarray::Array1::from_vec(vec![1.5f64, 2.5, 3.5]);
    let b = row.broadcast((4, 3)).unwrap();
    let v = StridedMemoryView::from_array(b).unwrap();
    assert_eq!(v.layout().strides(), &[0, 1]);
    assert_eq!(v.to_vec::<f64>().unwrap()[9..], [1.5, 2.5, 3.5]);
}

#[test]
fn views_of_any_layout_become_arrays_in_place() {
    let data: Vec<u16> = (0..60).collect();
    let v = StridedMemoryView::from_slice(&data, &[3, 4, 5]).unwrap();
    let l = v
        .layout()
        .permuted(&[2, 0, 1])
        .unwrap()
        .sliced(sk![..;-2, .., 1..;2])
        .unwrap();
    let t = v.view(l, Some(stridekit::DType::U16)).unwrap();
    let a: ArrayViewD<'_, u16> = t.as_array().unwrap();
    assert_eq!(a.shape(), &[3, 3, 2]);
    assert_eq!(
        a.iter().copied().collect::<Vec<_>>(),
        t.to_vec::<u16>().unwrap()
    );
    assert_eq!(
        a.as_ptr(),
        &data[4 + 5] as *const u16,
        "in place, not a copy"
    );
    // Element types are checked: size and dtype.
    assert!(t
        .as_array::<i16>()
        .unwrap_err()
        .to_string()
        .contains("never reinterprets"));
    assert!(t.as_array::<u32>().is_err());
    // A writable view as a writable array.
    let mut m = StridedMemoryViewMut::from_vec(vec![0f32; 6], &[2, 3]).unwrap();
    {
        let mut w = m.as_array_mut::<f32>().unwrap();
        w[[1, 2]] = 4.0;
        w.invert_axis(Axis(0));
        w[[1, 0]] = 9.0;
    }
    assert_eq!(
        m.as_view().to_vec::<f32>().unwrap(),
        [9., 0., 0., 0., 0., 4.]
    );
    // A broadcast writable view is refused as a mutable array.
    let mut one = [0u8; 3];
    let bl = StridedLayout::new(&[4, 3], &[0, 1], 1).unwrap();
    let mut bv = StridedMemoryViewMut::from_slice_mut(&mut one, bl).unwrap();
    assert!(bv
        .as_array_mut::<u8>()
        .unwrap_err()
        .to_string()
        .contains("one address per element"));
    // Empty views give empty arrays.
    let e = StridedMemoryView::from_slice(&data[..0], &[0, 4]).unwrap();
    assert_eq!(e.as_array::<u16>().unwrap().shape(), &[0, 4]);
    let _ = Array2::<u8>::zeros((1, 1));
    let _ = Order::C;
}
