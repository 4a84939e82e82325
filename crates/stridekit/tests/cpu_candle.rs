//! candle interop (feature `candle`): CPU tensors of any layout in, exact; views out.
#![cfg(feature = "candle")]

use candle_core::{DType as C, Device, Tensor};
use stridekit::{s, DType, StridedMemoryView, StridedMemoryViewMut};

fn flat<T: candle_core::WithDType>(t: &Tensor) -> Vec<T> {
    t.flatten_all().unwrap().to_vec1::<T>().unwrap()
}

#[test]
fn candle_tensors_of_every_layout_are_viewed_in_place_and_copied_out() {
    let base = Tensor::arange(0f32, 60., &Device::Cpu)
        .unwrap()
        .reshape((3, 4, 5))
        .unwrap();
    let cases = [
        base.clone(),
        base.transpose(0, 2).unwrap(),
        base.narrow(1, 1, 2).unwrap(),
        base.narrow(2, 3, 2).unwrap().transpose(0, 1).unwrap(),
        base.narrow(0, 1, 1)
            .unwrap()
            .broadcast_as((4, 4, 5))
            .unwrap(),
    ];
    for t in &cases {
        let want: Vec<f32> = flat(t);
        let got = StridedMemoryView::with_candle(t, |v| {
            assert_eq!(v.dtype(), Some(DType::F32));
            assert_eq!(
                v.shape(),
                t.dims().iter().map(|&e| e as i64).collect::<Vec<_>>()
            );
            v.to_vec::<f32>()
        })
        .unwrap();
        assert_eq!(got, want);
        // An owned copy, and back to candle.
        let owned = StridedMemoryViewMut::from_candle(t).unwrap();
        assert_eq!(owned.as_view().as_slice::<f32>().unwrap(), &want[..]);
        let back = owned.as_view().to_candle().unwrap();
        assert_eq!((back.dims(), back.dtype()), (t.dims(), C::F32));
        assert_eq!(flat::<f32>(&back), want);
    }
}

#[test]
fn views_of_any_layout_become_candle_tensors() {
    let data: Vec<u32> = (0..24).collect();
    let v = StridedMemoryView::from_slice(&data, &[2, 3, 4]).unwrap();
    let t = v
        .view(
            v.layout()
                .permuted(&[2, 0, 1])
                .unwrap()
                .sliced(s![..;-1])
                .unwrap(),
            Some(DType::U32),
        )
        .unwrap();
    let c = t.to_candle().unwrap();
    assert_eq!(c.dims(), &[4, 2, 3]);
    assert_eq!(flat::<u32>(&c), t.to_vec::<u32>().unwrap());
    // A view without a dtype, or with one candle lacks, is refused.
    let raw = v.clone().without_dtype();
    assert!(raw
        .to_candle()
        .unwrap_err()
        .to_string()
        .contains("no dtype"));
    let bytes: Vec<u16> = vec![0; 4];
    let c64 = StridedMemoryView::from_slice(&[[0f32; 2]; 2], &[2]).unwrap();
    assert!(c64
        .to_candle()
        .unwrap_err()
        .to_string()
        .contains("candle has no Complex64"));
    let _ = bytes;
    // Half precision and 64-bit integers round-trip.
    for dt in [C::F16, C::BF16, C::I64, C::U8] {
        let t = Tensor::arange(0f32, 6., &Device::Cpu)
            .unwrap()
            .to_dtype(dt)
            .unwrap()
            .reshape((2, 3))
            .unwrap()
            .t()
            .unwrap();
        let owned = StridedMemoryViewMut::from_candle(&t).unwrap();
        let back = owned.as_view().to_candle().unwrap();
        assert_eq!(back.dtype(), dt);
        assert_eq!(
            flat::<f32>(&back.to_dtype(C::F32).unwrap()),
            flat::<f32>(&t.to_dtype(C::F32).unwrap())
        );
    }
}
