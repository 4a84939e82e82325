//! Error messages name the operation, the values and the rule; overflow never panics.

use stridekit_layout::{s, LayoutError, Order, SliceArg, StridedLayout, MAX_NDIM};

#[test]
fn reshape_names_the_axes_that_cannot_merge() {
    let l = StridedLayout::dense(&[5, 3, 4], 1, Order::F).unwrap();
    let err = l.reshaped(&[20, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "reshape (5,3,4) -> (20,3): axes 0..1 cannot merge: stride[0]=1 != stride[1]*shape[1]=15; no view without a copy exists"
    );
    let err = l.reshaped(&[7, -1]).unwrap_err().to_string();
    assert!(
        err.starts_with("reshape (5,3,4) -> (7,-1): volume 60 is not divisible"),
        "{err}"
    );
    let err = l.reshaped(&[-1, -1]).unwrap_err().to_string();
    assert!(err.contains("at most one extent may be -1"), "{err}");
}

#[test]
fn construction_rejections_name_the_rule() {
    let e = StridedLayout::new(&[2, -3], &[1, 1], 4)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("extent -3 at axis 1 of (2,-3) is negative"),
        "{e}"
    );
    let e = StridedLayout::new(&[2, 3], &[1], 4)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("strides has 1 entries but the layout has 2 dimensions"),
        "{e}"
    );
    let e = StridedLayout::new(&[2], &[1], 0).unwrap_err().to_string();
    assert!(e.contains("itemsize 0 is invalid"), "{e}");
    let e = StridedLayout::from_byte_strides(&[2, 3], &[12, 3], 4)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("byte stride 3 at axis 1 is not a multiple of the itemsize 4"),
        "{e}"
    );
    let shape = vec![1i64; MAX_NDIM + 1];
    let e = StridedLayout::new(&shape, &shape, 1).unwrap_err();
    assert!(matches!(e, LayoutError::TooManyDims { ndim: 65, .. }));
    assert!(StridedLayout::new(&shape[..MAX_NDIM], &shape[..MAX_NDIM], 1).is_ok());
}

#[test]
fn overflow_is_an_error_not_a_panic() {
    assert!(matches!(
        StridedLayout::new(&[1 << 62, 4], &[4, 1], 1),
        Err(LayoutError::Overflow { .. })
    ));
    assert!(StridedLayout::new(&[3], &[1 << 62], 4).is_err());
    assert!(StridedLayout::dense(&[i64::MAX, 2], 1, Order::C).is_err());
    let l = StridedLayout::new(&[2, 2], &[-(1 << 62), 1 << 62], 1).unwrap();
    // stride * extent overflows in the merge test: the axes simply do not merge.
    assert_eq!(l.flattened_axis_mask(), 0);
    assert_eq!(l.flattened_all().unwrap(), l);
    let big = StridedLayout::new(&[1 << 40], &[1 << 20], 1).unwrap();
    assert!(big.sliced(s![..;1 << 30]).is_ok());
    assert!(big.sliced(s![..;1 << 45]).is_err());
    assert_eq!(big.unsqueezed(&[0]).unwrap().strides(), &[1 << 60, 1 << 20]);
}

#[test]
fn repack_rejects_itemsizes_that_do_not_divide() {
    // cuda.core 1.2 returns a layout with a different byte size here; stridekit refuses.
    let l = StridedLayout::dense(&[6], 2, Order::C).unwrap();
    let e = l.repacked(3).unwrap_err().to_string();
    assert!(
        e.contains("not a multiple of the current itemsize 2"),
        "{e}"
    );
    let l = StridedLayout::dense(&[6], 4, Order::C).unwrap();
    assert!(l
        .repacked(6)
        .unwrap_err()
        .to_string()
        .contains("not a multiple"));
    let l = StridedLayout::dense(&[6], 6, Order::C).unwrap();
    assert!(l
        .repacked(4)
        .unwrap_err()
        .to_string()
        .contains("does not divide the current itemsize 6"));
    let e = StridedLayout::dense(&[2, 4], 4, Order::C)
        .unwrap()
        .repacked_with(
            8,
            stridekit_layout::RepackOptions {
                data_ptr: 4,
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("data pointer 0x4 is not aligned to the new itemsize 8"),
        "{e}"
    );
}

#[test]
fn slicing_errors_and_macro_forms() {
    let l = StridedLayout::dense(&[5, 3, 4], 2, Order::C).unwrap();
    assert!(l
        .sliced(s![7])
        .unwrap_err()
        .to_string()
        .contains("index 7 at axis 0 is out of range for extent 5"));
    assert!(l
        .sliced(s![..;0])
        .unwrap_err()
        .to_string()
        .contains("step 0 at axis 0"));
    assert!(l
        .sliced(s![1, 1, 1, 1])
        .unwrap_err()
        .to_string()
        .contains("4 slices given for a 3-d layout"));
    let v = l.sliced(s![1..3, ..;-1, 2]).unwrap();
    assert_eq!(
        (v.shape(), v.strides(), v.slice_offset()),
        (&[2, 3][..], &[12, -4][..], 22)
    );
    assert_eq!(l.sliced(s![-1..]).unwrap().slice_offset(), 48);
    assert_eq!(l.sliced(s![..2]).unwrap().shape(), &[2, 3, 4]);
    assert_eq!(l.sliced(s![.., 1usize]).unwrap().shape(), &[5, 4]);
    assert_eq!(l.sliced(s![]).unwrap(), l);
    assert_eq!(
        l.sliced(&[SliceArg::ALL, SliceArg::Index(-1)])
            .unwrap()
            .slice_offset(),
        8
    );
    // An empty range zeroes every stride.
    let e = l.sliced(s![2..2]).unwrap();
    assert_eq!((e.shape(), e.strides()), (&[0, 3, 4][..], &[0, 0, 0][..]));
}

#[test]
fn display_shows_every_field() {
    let l = StridedLayout::dense(&[2, 4], 4, Order::C)
        .unwrap()
        .sliced(s![1..])
        .unwrap();
    assert_eq!(
        l.to_string(),
        "StridedLayout(shape=(1,4), strides=(4,1), itemsize=4, offset=4)"
    );
    assert_eq!(format!("{l:?}"), l.to_string());
    let one = StridedLayout::dense(&[3], 1, Order::C).unwrap();
    assert_eq!(
        one.to_string(),
        "StridedLayout(shape=(3,), strides=(1,), itemsize=1, offset=0)"
    );
}

#[test]
fn axis_errors_name_the_valid_range() {
    let l = StridedLayout::dense(&[2, 3], 1, Order::C).unwrap();
    let e = l.permuted(&[1, 1]).unwrap_err().to_string();
    assert!(e.contains("axis 1 appears more than once in (1,1)"), "{e}");
    let e = l.permuted(&[0, 2]).unwrap_err().to_string();
    assert_eq!(
        e,
        "permute: axis 2 is out of range for a 2-d layout; valid axes are -2..=1"
    );
    let e = l.broadcast_to(&[2, 4]).unwrap_err().to_string();
    assert!(
        e.contains("extent 3 at axis 1 is neither 1 nor the target extent 4"),
        "{e}"
    );
    let e = l.broadcast_to(&[3]).unwrap_err().to_string();
    assert!(
        e.contains("the target has 1 axes, fewer than the layout's 2"),
        "{e}"
    );
    let e = l.to_dense(Order::Axes(&[0])).unwrap_err().to_string();
    assert!(e.contains("stride order has 1 entries"), "{e}");
    let e = StridedLayout::new(&[2, 1], &[-3, 1], 1)
        .unwrap()
        .required_size_in_bytes()
        .unwrap_err()
        .to_string();
    assert!(e.contains("min_offset -3 is negative"), "{e}");
}
