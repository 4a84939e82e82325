//! Typed access to host views in place: `as_slice` / `as_slice_mut`, and the one element
//! trait (`Element`) every typed entry point checks against the view's dtype.

use half::{bf16, f16};
use stridekit::{s, DType, Element, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

#[test]
fn every_element_type_maps_to_one_dtype_of_its_size() {
    fn check<T: Element>(d: DType) {
        assert_eq!(T::DTYPE, d);
        assert_eq!(d.itemsize(), std::mem::size_of::<T>(), "{d:?}");
    }
    check::<u8>(DType::U8);
    check::<i8>(DType::I8);
    check::<u16>(DType::U16);
    check::<i16>(DType::I16);
    check::<u32>(DType::U32);
    check::<i32>(DType::I32);
    check::<u64>(DType::U64);
    check::<i64>(DType::I64);
    check::<f16>(DType::F16);
    check::<bf16>(DType::BF16);
    check::<f32>(DType::F32);
    check::<f64>(DType::F64);
    check::<[f32; 2]>(DType::Complex64);
    check::<[f64; 2]>(DType::Complex128);
}

#[test]
fn contiguous_views_are_slices_in_place_of_every_dtype() {
    let h: Vec<f16> = (0..24).map(|i| f16::from_f32(i as f32 * 0.5)).collect();
    let v = StridedMemoryView::from_slice(&h, &[4, 6]).unwrap();
    assert_eq!(
        v.as_slice::<f16>().unwrap().as_ptr(),
        h.as_ptr(),
        "in place"
    );
    // A row range with an offset is still contiguous.
    let rows = v.view(v.layout().sliced(s![1..3]).unwrap(), None).unwrap();
    assert_eq!(rows.as_slice::<f16>().unwrap(), &h[6..18]);
    // Same size, other dtype: refused (bf16 is not f16, u16 is not f16).
    for e in [
        rows.as_slice::<bf16>().unwrap_err(),
        rows.as_slice::<u16>().unwrap_err(),
    ] {
        assert!(e.to_string().contains("never reinterprets"), "{e}");
    }
    let c: Vec<[f64; 2]> = (0..6).map(|i| [i as f64, -(i as f64)]).collect();
    let cv = StridedMemoryView::from_slice(&c, &[2, 3]).unwrap();
    assert_eq!(cv.as_slice::<[f64; 2]>().unwrap(), &c[..]);
    assert!(cv.as_slice::<[f32; 2]>().is_err(), "other size");
    // Empty views are empty slices.
    let e = v.view(v.layout().sliced(s![2..2]).unwrap(), None).unwrap();
    assert!(e.as_slice::<f16>().unwrap().is_empty());
}

#[test]
fn gaps_reversals_and_broadcasts_are_not_slices() {
    let data: Vec<i32> = (0..24).collect();
    let v = StridedMemoryView::from_slice(&data, &[4, 6]).unwrap();
    let cases = [
        v.layout().sliced(s![.., 1..]).unwrap(), // gaps between rows
        v.layout().sliced(s![..;-1]).unwrap(),   // reversed rows
        v.layout().permuted(&[1, 0]).unwrap(),   // column-major
        StridedLayout::new(&[3, 6], &[0, 1], 4).unwrap(), // broadcast rows
    ];
    for l in cases {
        let t = v.view(l.clone(), None).unwrap();
        let e = t.as_slice::<i32>().unwrap_err();
        assert!(
            e.to_string().contains("not row-major contiguous"),
            "{l}: {e}"
        );
        // The copy route still reads them.
        assert_eq!(t.to_vec::<i32>().unwrap().len(), l.volume());
    }
}

#[test]
fn misaligned_first_elements_are_refused() {
    // f32 elements that start one byte into 4-byte aligned memory.
    let words = vec![0u32; 16];
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    let v = StridedMemoryView::from_slice(&bytes[1..], &[60]).unwrap();
    let odd = StridedLayout::new(&[4], &[1], 4).unwrap();
    // Either the view itself is refused, or a typed read of it is; never a misaligned &[f32].
    if let Ok(t) = v.view(odd, Some(DType::F32)) {
        let e = t.as_slice::<f32>().unwrap_err();
        assert!(e.to_string().contains("not aligned"), "{e}");
    }
    let mut w = StridedMemoryViewMut::from_vec(vec![0u32; 8], &[8]).unwrap();
    w.as_slice_mut::<u32>().unwrap()[7] = 0xDEAD_BEEF;
    assert!(w.as_slice_mut::<f32>().is_err(), "u32 is not f32");
    assert_eq!(w.as_view().to_vec::<u32>().unwrap()[7], 0xDEAD_BEEF);
}
