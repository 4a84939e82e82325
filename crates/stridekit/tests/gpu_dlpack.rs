//! DLPack exchange on a real GPU: device, pinned and managed memory out and back in,
//! copies through imported views, contradictions caught, and producer/consumer streams.

mod common;

use common::{filled, naive_copy, random_bytes};
use dlpark::allocation::dynamic::Initialized;
use dlpark::ffi::{DLDevice, DLDeviceType, DLManagedTensorVersioned};
use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
use stridekit::stream::{wait_for_producer, StreamOrder, StreamValue};
use stridekit::{
    DType, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryKind, MemoryResource, Order,
    PinnedMemoryResource, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

#[test]
#[ignore = "needs a CUDA device"]
fn device_pinned_and_managed_memory_go_out_and_come_back() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let kinds: Vec<(Box<dyn MemoryResource>, DLDeviceType, MemoryKind)> = vec![
        (
            Box::new(DeviceMemoryResource::new(&dev).unwrap()),
            DLDeviceType::CUDA,
            MemoryKind::Device,
        ),
        (
            Box::new(PinnedMemoryResource::new(&dev)),
            DLDeviceType::CUDAHOST,
            MemoryKind::PinnedHost,
        ),
        (
            Box::new(ManagedMemoryResource::new(&dev).unwrap()),
            DLDeviceType::CUDAMANAGED,
            MemoryKind::Managed,
        ),
    ];
    let (rows, cols) = (37i64, 53i64);
    for (seed, (mr, dl_type, kind)) in kinds.into_iter().enumerate() {
        let data = random_bytes((rows * cols * 4) as usize, 11 + seed as u64);
        let buf = filled(mr.as_ref(), &data, &stream);
        let dense = StridedLayout::dense(&[rows, cols], 4, Order::C).unwrap();
        let t = dense
            .permuted(&[1, 0])
            .unwrap()
            .sliced(stridekit::s![..;-1, 1..])
            .unwrap();
        let view =
            StridedMemoryViewMut::from_owned_buffer(buf, t.clone(), Some(DType::F32)).unwrap();
        let tensor = view.into_dlpack().unwrap();
        {
            // SAFETY: the tensor owns its metadata while it lives.
            let dl = unsafe { tensor.tensor() };
            assert_eq!(dl.device.device_type, dl_type, "{kind:?}");
            assert_eq!(dl.device.device_id, 0);
        }
        // SAFETY: the tensor came from stridekit; nothing else writes the memory.
        let back = unsafe { StridedMemoryView::from_dlpack(tensor) }.unwrap();
        assert_eq!(back.kind(), kind);
        assert_eq!(back.layout().strides(), t.strides());
        // Copy through the imported view into a poisoned host array, byte-exact.
        let out_l = StridedLayout::dense(t.shape(), 4, Order::F).unwrap();
        let mut host = random_bytes(data.len(), 99);
        let want = naive_copy(&host, &out_l, &data, &t);
        {
            let u8l = StridedLayout::dense(&[host.len() as i64], 1, Order::C).unwrap();
            let mut dst = StridedMemoryViewMut::from_slice_mut(&mut host, u8l)
                .unwrap()
                .without_dtype()
                .into_view_mut(out_l.clone(), None)
                .unwrap();
            dst.copy_from(&back, Some(&stream)).unwrap();
        }
        assert!(host == want, "{kind:?}: copy through the imported view");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_transposing_copy_between_two_imported_device_tensors() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let (r, c) = (129i64, 67i64);
    let src_bytes = random_bytes((r * c * 2) as usize, 5);
    let poison = random_bytes((r * c * 2) as usize, 6);
    let dense = StridedLayout::dense(&[r, c], 2, Order::C).unwrap();
    let a = StridedMemoryViewMut::from_owned_buffer(
        filled(&mr, &src_bytes, &stream),
        dense.clone(),
        Some(DType::F16),
    )
    .unwrap()
    .into_read_only()
    .to_dlpack()
    .unwrap();
    let fl = StridedLayout::dense(&[r, c], 2, Order::F).unwrap();
    let b = StridedMemoryViewMut::from_owned_buffer(
        filled(&mr, &poison, &stream),
        fl.clone(),
        Some(DType::F16),
    )
    .unwrap()
    .into_dlpack()
    .unwrap();
    // SAFETY: both tensors came from stridekit; nothing else touches them.
    let src = unsafe { StridedMemoryView::from_dlpack(a) }.unwrap();
    // SAFETY: as above; `b` is the only handle of its memory.
    let mut dst = unsafe { StridedMemoryViewMut::from_dlpack(b) }.unwrap();
    dst.copy_from(&src, Some(&stream)).unwrap();
    let out = dst.into_read_only();
    let mut got = random_bytes(poison.len(), 7);
    {
        let hl = StridedLayout::dense(&[got.len() as i64], 1, Order::C).unwrap();
        let mut h = StridedMemoryViewMut::from_slice_mut(&mut got, hl).unwrap();
        let raw = out
            .without_dtype()
            .view(
                StridedLayout::dense(&[poison.len() as i64], 1, Order::C).unwrap(),
                None,
            )
            .unwrap();
        h.copy_from(&raw, Some(&stream)).unwrap();
    }
    assert!(got == naive_copy(&poison, &fl, &src_bytes, &dense));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_device_type_that_contradicts_the_driver_is_refused() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    // A "CUDA" tensor over pageable host memory.
    let a = ndarray::Array1::<f32>::from_elem(16, 1.5);
    let mut init: Initialized<DLManagedTensorVersioned> = Box::new(a).try_into().unwrap();
    init.set_device(DLDevice {
        device_type: DLDeviceType::CUDA,
        device_id: 0,
    });
    // SAFETY: a complete descriptor (only its device type lies, which is the point).
    let t = unsafe { init.finish() };
    // A CUDA device type is taken at its word when the view is made (no driver call)
    // and checked before the memory's first use: a copy, a host read, a descriptor.
    // SAFETY: nobody else touches the array.
    let v = unsafe { StridedMemoryView::from_dlpack(t) }.unwrap();
    let e = first_use_error(&v, &stream);
    assert!(
        e.contains("declares device type 2 (CUDA)") && e.contains("pageable host memory"),
        "{e}"
    );
    let tma =
        stridekit::tma::TensorMapDescriptor::tiled(&v, &stridekit::tma::TiledOptions::new(&[16]))
            .unwrap_err()
            .to_string();
    assert!(tma.contains("pageable host memory"), "{tma}");
    // A "CPU" tensor over device memory, and a CUDA tensor on the wrong device.
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let l = StridedLayout::dense(&[64], 4, Order::C).unwrap();
    for (ty, id, words) in [
        (DLDeviceType::CPU, 0, "declares device type 1 (CPU)"),
        (
            DLDeviceType::CUDA,
            1,
            "(device_id 1) but the driver reports device memory of device Some(0)",
        ),
    ] {
        let v = StridedMemoryViewMut::from_owned_buffer(
            mr.allocate(256, &stream).unwrap(),
            l.clone(),
            Some(DType::U32),
        )
        .unwrap();
        let t = v.into_dlpack().unwrap();
        let raw = t.into_raw();
        // SAFETY: `raw` is the live tensor we just made; rewrite its device, then own it again.
        let t = unsafe {
            (*raw).dl_tensor.device = DLDevice {
                device_type: ty,
                device_id: id,
            };
            stridekit::DlpackTensor::from_raw_versioned(raw).unwrap()
        };
        // SAFETY: nobody else touches the buffer.
        let made = unsafe { StridedMemoryView::from_dlpack(t) };
        let e = match (ty, made) {
            // CPU tensors are checked when the view is made.
            (DLDeviceType::CPU, made) => made.unwrap_err().to_string(),
            (_, made) => first_use_error(&made.unwrap(), &stream),
        };
        assert!(e.contains(words), "{e}");
    }
}

/// The error of a view's first use: a copy into host memory, after which a second copy
/// fails the same way (a refused declaration is never cached as checked).
fn first_use_error(
    v: &StridedMemoryView<'_>,
    stream: &std::sync::Arc<stridekit::CudaStream>,
) -> String {
    assert_eq!(v.layout().itemsize(), 4);
    let mut host = vec![0u32; v.layout().volume()];
    let hl = StridedLayout::dense(v.shape(), 4, Order::C).unwrap();
    let mut h = StridedMemoryViewMut::from_slice_mut(&mut host, hl).unwrap();
    let raw = v.clone().without_dtype();
    let e = h.copy_from(&raw, Some(stream)).unwrap_err().to_string();
    let again = h.copy_from(&raw, Some(stream)).unwrap_err().to_string();
    assert_eq!(e, again);
    e
}

const SLOW: &str = r#"
extern "C" __global__ void slow_fill(unsigned int* p, unsigned long long n, unsigned int seed, long long spin) {
    long long t0 = clock64();
    while (clock64() - t0 < spin) { }
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        p[i] = (unsigned int)(i * 2654435761ull) ^ seed;
    }
}
"#;

#[test]
#[ignore = "needs a CUDA device"]
fn the_consumer_stream_sees_a_slow_producers_writes() {
    let dev = Device::open(0).unwrap();
    let producer = dev.new_stream().unwrap();
    let consumer = dev.new_stream().unwrap();
    let m = dev.compile_module("dlpack_test_kernels", SLOW).unwrap();
    let f = m.load_function("slow_fill").unwrap();
    let n = 1usize << 20;
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    for (round, seed) in [0x5a5a_1234u32, 0x0bad_cafe].into_iter().enumerate() {
        let mut buf = mr.allocate(n * 4, &producer).unwrap();
        buf.fill(0xee, &producer).unwrap();
        producer.synchronize().unwrap();
        let (p, len, spin) = (buf.ptr(), n as u64, 200_000_000i64);
        let mut l = producer.launch_builder(&f);
        l.arg(&p).arg(&len).arg(&seed).arg(&spin);
        let cfg = LaunchConfig {
            grid_dim: (256, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: (u32*, u64, u32, i64) matches the kernel; the buffer holds n u32.
        unsafe { l.launch(cfg) }.unwrap();
        // Round 0 orders with explicit handles, round 1 with the consumer on the legacy stream.
        let value = if round == 0 {
            StreamValue::Handle(consumer.cu_stream() as usize)
        } else {
            StreamValue::LegacyDefault
        };
        // SAFETY: the handle is `consumer`'s, alive for the whole test.
        let StreamOrder::On(consumer_side) = (unsafe { value.resolve_handle(0) }).unwrap() else {
            panic!("a stream value resolved to no stream")
        };
        wait_for_producer(&producer, &consumer_side).unwrap();
        let mut out = vec![0u32; n];
        let on = if round == 0 {
            consumer.clone()
        } else {
            dev.default_stream()
        };
        let view = StridedMemoryView::from_buffer(
            &buf,
            StridedLayout::dense(&[n as i64], 4, Order::C).unwrap(),
            Some(DType::U32),
        )
        .unwrap();
        let mut dst = StridedMemoryViewMut::from_slice_mut(
            &mut out,
            StridedLayout::dense(&[n as i64], 4, Order::C).unwrap(),
        )
        .unwrap();
        dst.copy_from(&view, Some(&on)).unwrap();
        drop(dst);
        let bad = (0..n)
            .filter(|&i| out[i] != (i as u64 * 2654435761u64) as u32 ^ seed)
            .count();
        assert_eq!(
            bad, 0,
            "round {round}: the consumer read before the producer wrote"
        );
        producer.synchronize().unwrap();
    }
}
