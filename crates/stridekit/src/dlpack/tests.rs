//! CPU tests of the DLPack exchange (host memory; no GPU needed).

use crate::dlpack::{check_dltensor, dtype_from_dlpack, DlpackTensor};
use crate::{
    DType, Error, MemoryKind, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};
use dlpark::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLPackVersion, DLTensor,
};
use dlpark::DlpackFlags;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A producer's tensor, built by hand so that every field can be wrong on purpose.
struct Producer {
    data: Vec<u8>,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    deletes: Arc<AtomicUsize>,
}

struct Raw {
    managed: DLManagedTensorVersioned,
    legacy: DLManagedTensor,
    producer: Producer,
}

unsafe extern "C" fn delete_versioned(t: *mut DLManagedTensorVersioned) {
    // SAFETY: `manager_ctx` is the Box<Raw> leaked by `Spec::versioned`, deleted once.
    let raw = unsafe { Box::from_raw((*t).manager_ctx as *mut Raw) };
    raw.producer.deletes.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn delete_legacy(t: *mut DLManagedTensor) {
    // SAFETY: as above, for the legacy struct.
    let raw = unsafe { Box::from_raw((*t).manager_ctx as *mut Raw) };
    raw.producer.deletes.fetch_add(1, Ordering::SeqCst);
}

fn empty_tensor() -> DLTensor {
    DLTensor {
        data: std::ptr::null_mut(),
        device: DLDevice {
            device_type: DLDeviceType::CPU,
            device_id: 0,
        },
        ndim: 0,
        dtype: DLDataType {
            code: DLDataTypeCode::UINT,
            bits: 8,
            lanes: 1,
        },
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}

#[derive(Clone)]
struct Spec {
    bytes: usize,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    dtype: DLDataType,
    device: DLDevice,
    byte_offset: u64,
    flags: DlpackFlags,
    major: u32,
    ndim: Option<i32>,
    null_data: bool,
}

fn spec(shape: &[i64], dtype: DType) -> Spec {
    let n: i64 = shape.iter().product();
    let (code, bits, lanes) = dtype.dlpack();
    Spec {
        bytes: n as usize * dtype.itemsize(),
        shape: shape.to_vec(),
        strides: None,
        dtype: DLDataType {
            code: DLDataTypeCode(code),
            bits,
            lanes,
        },
        device: DLDevice {
            device_type: DLDeviceType::CPU,
            device_id: 0,
        },
        byte_offset: 0,
        flags: DlpackFlags::empty(),
        major: 1,
        ndim: None,
        null_data: false,
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

impl Spec {
    fn build(&self, deletes: &Arc<AtomicUsize>) -> Box<Raw> {
        let mut raw = Box::new(Raw {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: self.major,
                    minor: 3,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags: self.flags,
                dl_tensor: empty_tensor(),
            },
            legacy: DLManagedTensor {
                dl_tensor: empty_tensor(),
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy),
            },
            producer: Producer {
                data: pattern(self.bytes),
                shape: self.shape.clone(),
                strides: self.strides.clone(),
                deletes: deletes.clone(),
            },
        });
        let ctx = &mut *raw as *mut Raw as *mut c_void;
        let p = &mut raw.producer;
        let mut t = empty_tensor();
        t.data = if self.null_data {
            std::ptr::null_mut()
        } else {
            p.data.as_mut_ptr() as *mut c_void
        };
        t.shape = p.shape.as_mut_ptr();
        t.ndim = self.ndim.unwrap_or(p.shape.len() as i32);
        t.strides = p
            .strides
            .as_mut()
            .map_or(std::ptr::null_mut(), |s| s.as_mut_ptr());
        t.dtype = self.dtype;
        t.device = self.device;
        t.byte_offset = self.byte_offset;
        raw.managed.dl_tensor = t;
        raw.managed.manager_ctx = ctx;
        raw.legacy.dl_tensor = t;
        raw.legacy.manager_ctx = ctx;
        raw
    }

    /// The versioned tensor, owned by a `DlpackTensor` (or an error, deleter called).
    fn versioned(&self, deletes: &Arc<AtomicUsize>) -> crate::Result<DlpackTensor> {
        let raw = Box::leak(self.build(deletes));
        // SAFETY: a live tensor whose deleter frees `raw` once.
        unsafe { DlpackTensor::from_raw_versioned(&mut raw.managed) }
    }

    fn legacy(&self, deletes: &Arc<AtomicUsize>) -> crate::Result<DlpackTensor> {
        let raw = Box::leak(self.build(deletes));
        // SAFETY: as above.
        unsafe { DlpackTensor::from_raw_legacy(&mut raw.legacy) }
    }

    fn import(&self) -> (crate::Result<StridedMemoryView<'static>>, Arc<AtomicUsize>) {
        let n = Arc::new(AtomicUsize::new(0));
        // SAFETY: nobody writes the producer's bytes.
        let r = self
            .versioned(&n)
            .and_then(|t| unsafe { StridedMemoryView::from_dlpack(t) });
        (r, n)
    }
}

fn naive(bytes: &[u8], l: &StridedLayout, first: i64) -> Vec<u8> {
    let isz = l.itemsize() as i64;
    let mut out = Vec::new();
    let offs = crate::dlpack::tests::offsets(l);
    for o in offs {
        let b = (first + o * isz) as usize;
        out.extend_from_slice(&bytes[b..b + isz as usize]);
    }
    out
}

/// Element offsets in row-major index order.
fn offsets(l: &StridedLayout) -> Vec<i64> {
    let mut out = vec![0i64];
    for (&n, &s) in l.shape().iter().zip(l.strides()) {
        out = out
            .iter()
            .flat_map(|&o| (0..n).map(move |i| o + i * s))
            .collect();
    }
    out
}

fn bytes_of(v: &StridedMemoryView<'_>) -> Vec<u8> {
    // Read as raw elements: typed reads never reinterpret a known dtype.
    let v = v.clone().without_dtype();
    let isz = v.layout().itemsize();
    match isz {
        1 => v.to_vec::<u8>().unwrap(),
        2 => bytemuck::cast_slice(&v.to_vec::<u16>().unwrap()).to_vec(),
        4 => bytemuck::cast_slice(&v.to_vec::<u32>().unwrap()).to_vec(),
        8 => bytemuck::cast_slice(&v.to_vec::<u64>().unwrap()).to_vec(),
        16 => bytemuck::cast_slice(&v.to_vec::<[f64; 2]>().unwrap()).to_vec(),
        _ => unreachable!(),
    }
}

#[test]
fn imports_honour_strides_offsets_and_null_strides_for_every_dtype() {
    for &d in DType::all() {
        let isz = d.itemsize() as i64;
        // C-contiguous by NULL strides.
        let s = spec(&[3, 4], d);
        let (v, n) = s.import();
        let v = v.unwrap();
        assert_eq!(
            (v.dtype(), v.shape(), v.layout().strides()),
            (Some(d), &[3, 4][..], &[4, 1][..])
        );
        assert_eq!(v.kind(), MemoryKind::Host);
        assert_eq!(bytes_of(&v), pattern(12 * isz as usize), "{d:?}");
        drop(v);
        assert_eq!(n.load(Ordering::SeqCst), 1);
        // Transposed, flipped, with a byte offset: elements reach below the first one.
        let mut s = spec(&[4, 3], d);
        s.bytes = (16 * isz) as usize;
        s.strides = Some(vec![1, -4]);
        s.byte_offset = (8 * isz) as u64 + isz as u64; // element 0 at element 9
        let (v, n) = s.import();
        let v = v.unwrap();
        let want = naive(
            &pattern(s.bytes),
            &StridedLayout::new(&[4, 3], &[1, -4], isz as usize).unwrap(),
            9 * isz,
        );
        assert_eq!(bytes_of(&v), want, "{d:?}");
        drop(v);
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn unknown_whole_byte_types_have_no_dtype_but_the_right_itemsize() {
    let mut s = spec(&[5], DType::U8);
    // A code from a DLPack newer than stridekit knows.
    s.dtype = DLDataType {
        code: DLDataTypeCode(99),
        bits: 8,
        lanes: 1,
    };
    let (v, _) = s.import();
    let v = v.unwrap();
    assert_eq!((v.dtype(), v.layout().itemsize()), (None, 1));
    // DLPack 1.1's narrow float kinds are named.
    let mut s = spec(&[5], DType::U8);
    s.dtype = DLDataType {
        code: DLDataTypeCode::FLOAT8_E3M4,
        bits: 8,
        lanes: 1,
    };
    assert_eq!(s.import().0.unwrap().dtype(), Some(DType::F8E3M4));
    let mut s = spec(&[2], DType::U64);
    s.dtype = DLDataType {
        code: DLDataTypeCode::OPAQUEHANDLE,
        bits: 64,
        lanes: 1,
    };
    let (v, _) = s.import();
    assert_eq!(v.unwrap().layout().itemsize(), 8);
    let (d, n) = dtype_from_dlpack(
        "t",
        DLDataType {
            code: DLDataTypeCode::BFLOAT,
            bits: 16,
            lanes: 1,
        },
    )
    .unwrap();
    assert_eq!((d, n), (Some(DType::BF16), 2));
}

#[test]
fn the_deleter_runs_once_when_the_last_derived_view_is_gone() {
    let n = Arc::new(AtomicUsize::new(0));
    let s = spec(&[4, 4], DType::F32);
    // SAFETY: nobody else touches the producer's bytes.
    let v = unsafe { StridedMemoryView::from_dlpack(s.versioned(&n).unwrap()) }.unwrap();
    let t = v.view(v.layout().permuted(&[1, 0]).unwrap(), None).unwrap();
    let clones: Vec<_> = (0..3).map(|_| t.clone()).collect();
    // Re-exported: the consumer's tensor holds the memory too.
    let again = t.to_dlpack().unwrap();
    drop(v);
    drop(t);
    drop(clones);
    assert_eq!(
        n.load(Ordering::SeqCst),
        0,
        "a derived view or export still lives"
    );
    // SAFETY: the tensor came from stridekit in this test; nobody else holds its memory.
    let back = unsafe { StridedMemoryView::from_dlpack(again) }.unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 0);
    drop(back);
    assert_eq!(n.load(Ordering::SeqCst), 1);
    // Legacy tensors too.
    let n = Arc::new(AtomicUsize::new(0));
    // SAFETY: a test tensor whose memory this test owns and nobody else touches.
    let v = unsafe { StridedMemoryViewMut::from_dlpack(s.legacy(&n).unwrap()) }.unwrap();
    assert_eq!(v.imported_flags(), Some(DlpackFlags::empty()));
    let r = v.into_read_only();
    let r2 = r.clone();
    drop(r);
    assert_eq!(n.load(Ordering::SeqCst), 0);
    drop(r2);
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn read_only_and_is_copied_flags_are_visible_and_enforced() {
    let mut s = spec(&[8], DType::U8);
    s.flags = DlpackFlags::READ_ONLY | DlpackFlags::IS_COPIED;
    let n = Arc::new(AtomicUsize::new(0));
    // SAFETY: as above.
    let e = unsafe { StridedMemoryViewMut::from_dlpack(s.versioned(&n).unwrap()) }.unwrap_err();
    assert!(
        e.to_string()
            .contains("READ_ONLY; import it as a read-only StridedMemoryView"),
        "{e}"
    );
    assert_eq!(
        n.load(Ordering::SeqCst),
        1,
        "the refused tensor is released"
    );
    let (v, _) = s.import();
    let v = v.unwrap();
    let f = v.imported_flags().unwrap();
    assert!(f.contains(DlpackFlags::READ_ONLY) && f.contains(DlpackFlags::IS_COPIED));
    // A read-only view exports READ_ONLY; a writable one exports writable.
    assert!(v
        .to_dlpack()
        .unwrap()
        .flags()
        .contains(DlpackFlags::READ_ONLY));
    let w = StridedMemoryViewMut::from_vec(vec![1u8; 4], &[4]).unwrap();
    assert!(!w
        .into_dlpack()
        .unwrap()
        .flags()
        .contains(DlpackFlags::READ_ONLY));
}

#[test]
fn dyn_view_takes_its_access_from_the_read_only_flag() {
    use crate::view::DynView;
    let mut s = spec(&[8], DType::U8);
    let n = Arc::new(AtomicUsize::new(0));
    // SAFETY: the spec's memory lives until its deleter runs, and nobody else touches it.
    let w = unsafe { DynView::from_dlpack(s.versioned(&n).unwrap()) }.unwrap();
    assert!(
        !w.is_read_only(),
        "a tensor without READ_ONLY gives a writable view"
    );
    s.flags = DlpackFlags::READ_ONLY;
    // SAFETY: as above.
    let r = unsafe { DynView::from_dlpack(s.versioned(&n).unwrap()) }.unwrap();
    assert!(
        r.is_read_only(),
        "a READ_ONLY tensor gives a read-only view"
    );
    assert_eq!(bytes_of(&w.as_view()), bytes_of(&r.as_view()));
    drop((w, r));
    assert_eq!(n.load(Ordering::SeqCst), 2, "both tensors are released");
}

/// Every rejection: a clear error, and the producer's deleter called exactly once.
#[test]
fn rejections_release_the_tensor_and_say_why() {
    let base = spec(&[2, 3], DType::F32);
    let cases: Vec<(Spec, &str)> = vec![
        ({ let mut s = base.clone(); s.dtype.bits = 4; s.dtype.code = DLDataTypeCode::FLOAT4_E2M1FN; s }, "sub-byte packed types are not supported"),
        ({ let mut s = base.clone(); s.dtype.lanes = 4; s }, "has 4 lanes; only scalar types"),
        ({ let mut s = base.clone(); s.major = 2; s }, "DLPack major version 2; stridekit reads major version 1 (the producer's deleter has been called)"),
        ({ let mut s = base.clone(); s.null_data = true; s }, "has 6 elements but a null data pointer"),
        ({ let mut s = base.clone(); s.ndim = Some(65); s }, "ndim 65; it must be in [0, 64]"),
        ({ let mut s = base.clone(); s.ndim = Some(-1); s }, "ndim -1"),
        ({ let mut s = base.clone(); s.device.device_type = DLDeviceType::ROCM; s }, "device type 10 (ROCM) is not one stridekit can reach"),
        ({ let mut s = base.clone(); s.shape = vec![2, -3]; s }, "-3"),
        ({ let mut s = base.clone(); s.byte_offset = (1 << 63) + 4; s }, "beyond the highest address a layout can reach"),
        ({ let mut s = base.clone(); s.byte_offset = u64::MAX - 2; s }, "overflows the address space"),
    ];
    for (s, words) in cases {
        let (r, n) = s.import();
        let e = r.expect_err(words);
        assert!(e.to_string().contains(words), "{e} (wanted: {words})");
        assert!(
            matches!(e, Error::Invalid { .. } | Error::Layout(_)),
            "{e:?}"
        );
        assert_eq!(n.load(Ordering::SeqCst), 1, "{words}: deleter calls");
    }
    // An empty tensor may have a null data pointer.
    let mut s = spec(&[0, 3], DType::F32);
    s.null_data = true;
    let (v, n) = s.import();
    assert_eq!(v.unwrap().layout().volume(), 0);
    assert_eq!(n.load(Ordering::SeqCst), 1);
    // Null pointers.
    // SAFETY: a null pointer is what is tested; it is refused before any read.
    let e = unsafe { DlpackTensor::from_raw_versioned(std::ptr::null_mut()) }
        .err()
        .unwrap();
    assert!(e.to_string().contains("pointer is null"), "{e}");
    // SAFETY: as above.
    let e = unsafe { DlpackTensor::from_raw_legacy(std::ptr::null_mut()) }
        .err()
        .unwrap();
    assert!(e.to_string().contains("pointer is null"), "{e}");
}

#[test]
fn a_64_dimensional_tensor_imports() {
    let shape = vec![1i64; 64];
    let mut s = spec(&shape, DType::U16);
    s.strides = Some((0..64).map(|i| i as i64 + 1).collect());
    let (v, _) = s.import();
    let v = v.unwrap();
    assert_eq!(v.layout().ndim(), 64);
    assert_eq!(v.to_vec::<u16>().unwrap().len(), 1);
}

#[test]
fn exports_round_trip_permuted_sliced_and_flipped_views_both_abis() {
    let data: Vec<u32> = (0..60).map(|i| i * 3 + 1).collect();
    let owned = StridedMemoryViewMut::from_vec(data.clone(), &[3, 4, 5])
        .unwrap()
        .into_read_only();
    let layouts = [
        owned.layout().permuted(&[2, 0, 1]).unwrap(),
        owned.layout().sliced(crate::s![1.., ..;-2, 3]).unwrap(),
        owned.layout().sliced(crate::s![..;-1, 1..3, ..;2]).unwrap(),
    ];
    for l in layouts {
        let v = owned.view(l.clone(), None).unwrap();
        let want = v.to_vec::<u32>().unwrap();
        let t = v.to_dlpack().unwrap();
        {
            // SAFETY: the tensor is alive and unchanged while `dl` is read.
            let dl = unsafe { t.tensor() };
            assert_eq!(dl.byte_offset, 0);
            assert_eq!(dl.device.device_type, DLDeviceType::CPU);
            assert_eq!(dl.dtype, crate::dlpack::dtype_to_dlpack(DType::U32));
        }
        // SAFETY: the tensor came from stridekit in this test; nobody else holds its memory.
        let back = unsafe { StridedMemoryView::from_dlpack(t) }.unwrap();
        assert_eq!(back.layout().strides(), l.strides());
        assert_eq!(back.to_vec::<u32>().unwrap(), want, "{l}");
        // A read-only view never leaves as legacy DLPack (no READ_ONLY flag there)...
        let e = match v.to_dlpack_legacy() {
            Ok(_) => panic!("a read-only view left as legacy DLPack"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("cannot be exported as legacy DLPack"), "{e}");
        // ...a writable one does, and comes back.
        let w = StridedMemoryViewMut::from_vec(data.clone(), &[3, 4, 5])
            .unwrap()
            .into_view_mut(l.clone(), None)
            .unwrap();
        let legacy = w.into_dlpack_legacy().unwrap();
        // SAFETY: as above.
        let back = unsafe { StridedMemoryView::from_dlpack(legacy) }.unwrap();
        assert_eq!(back.to_vec::<u32>().unwrap(), want, "{l} (legacy)");
    }
    // No dtype: exported as unsigned integers of the itemsize.
    let raw = owned
        .clone()
        .without_dtype()
        .view(StridedLayout::dense(&[30], 8, Order::C).unwrap(), None)
        .unwrap();
    let t = raw.to_dlpack().unwrap();
    assert_eq!(
        // SAFETY: the tensor is alive for the read.
        unsafe { t.tensor() }.dtype,
        DLDataType {
            code: DLDataTypeCode::UINT,
            bits: 64,
            lanes: 1
        }
    );
}

/// A real client: ndarray arrays through dlpark's ndarray interop, in and out.
#[test]
fn ndarray_in_transposed_copy_ndarray_out() {
    use dlpark::allocation::dynamic::Initialized;
    use dlpark::TryFromDlpack;
    let a = ndarray::Array2::<f64>::from_shape_fn((5, 7), |(i, j)| (i * 10 + j) as f64 + 0.5);
    let init: Initialized<DLManagedTensorVersioned> = Box::new(a.clone()).try_into().unwrap();
    // SAFETY: the tensor wraps an array this test owns.
    let tensor = unsafe { init.finish() };
    // SAFETY: as above: nobody else holds its memory.
    let src = unsafe { StridedMemoryView::from_dlpack(tensor) }.unwrap();
    assert_eq!(src.dtype(), Some(DType::F64));
    // Destination: a (5, 7) view over column-major storage.
    let f = StridedLayout::dense(&[5, 7], 8, Order::F).unwrap();
    let mut dst = StridedMemoryViewMut::from_vec(vec![-1.0f64; 35], &[35])
        .unwrap()
        .into_view_mut(f, Some(DType::F64))
        .unwrap();
    dst.copy_from(&src, None).unwrap();
    let out = dst.into_dlpack().unwrap();
    // SAFETY: the export is alive for the view, and nobody writes it meanwhile.
    let view = unsafe { ndarray::ArrayViewD::<f64>::try_from_dlpack(&out, ()) }.unwrap();
    assert_eq!(view.shape(), &[5, 7]);
    assert_eq!(view.strides(), &[1, 5]);
    assert_eq!(view, a.into_dyn());
}

#[test]
fn checked_facts_are_what_the_view_reports_and_refusals_are_the_same() {
    // A tensor checked without building its layout (`check_dltensor`, what the Python
    // views do before their view is made) describes what the view made of it reports.
    let mut cases = vec![spec(&[3, 4], DType::F32), spec(&[0, 5], DType::U8)];
    let mut flipped = spec(&[4, 3], DType::I16);
    flipped.bytes = 32;
    flipped.strides = Some(vec![1, -4]);
    flipped.byte_offset = 18;
    cases.push(flipped);
    let mut gapped = spec(&[2, 3, 2], DType::F64);
    gapped.bytes = 8 * 40;
    gapped.strides = Some(vec![20, -6, 2]);
    gapped.byte_offset = 8 * 12;
    cases.push(gapped);
    cases.push(spec(&[], DType::F16));
    for s in &cases {
        let n = Arc::new(AtomicUsize::new(0));
        let t = s.versioned(&n).unwrap();
        let f = check_dltensor("test", t.tensor()).unwrap();
        // SAFETY: nobody writes the producer's bytes.
        let v = unsafe { StridedMemoryView::from_dlpack(t) }.unwrap();
        let l = v.layout();
        let first = v
            .ptr()
            .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
        assert_eq!(
            (f.dtype, f.itemsize, f.volume, f.kind, f.device_id()),
            (v.dtype(), l.itemsize(), l.volume(), v.kind(), v.device_id()),
            "{:?}",
            s.shape
        );
        if l.volume() > 0 {
            assert_eq!(
                (f.first, f.base, f.size),
                (first, v.ptr(), v.size()),
                "{:?}",
                s.shape
            );
        }
    }
    let base = spec(&[2, 3], DType::F32);
    let refused = [
        {
            let mut s = base.clone();
            s.null_data = true;
            s
        },
        {
            let mut s = base.clone();
            s.ndim = Some(65);
            s
        },
        {
            let mut s = base.clone();
            s.shape = vec![2, -3];
            s
        },
        {
            let mut s = base.clone();
            s.strides = Some(vec![i64::MAX, 1]);
            s
        },
        {
            let mut s = base.clone();
            s.byte_offset = u64::MAX - 2;
            s
        },
        {
            let mut s = base.clone();
            s.device.device_type = DLDeviceType::ROCM;
            s
        },
        // Pinned memory (declared, checked at first use) a byte past f32 alignment.
        {
            let mut s = base.clone();
            s.device.device_type = DLDeviceType::CUDAHOST;
            s.bytes += 4;
            s.byte_offset = 1;
            s
        },
    ];
    for s in refused {
        let n = Arc::new(AtomicUsize::new(0));
        let t = s.versioned(&n).unwrap();
        let checked = check_dltensor("test", t.tensor())
            .map(|_| ())
            .map_err(|e| e.to_string());
        // SAFETY: as above.
        let made = unsafe { StridedMemoryView::from_dlpack(t) }
            .map(|_| ())
            .map_err(|e| e.to_string());
        let (c, m) = (checked.unwrap_err(), made.unwrap_err());
        // The same rule refuses both (the operation named differs).
        assert_eq!(
            c.split_once(": ").map(|p| p.1),
            m.split_once(": ").map(|p| p.1),
            "{c} / {m}"
        );
    }
}
