//! Every edge checked on the GPU: what an allocator hands back, misaligned addresses
//! from pointers and DLPack, and the context still usable after each refusal.

mod common;

use std::sync::Arc;
use stridekit::dlpack::{DLManagedTensorVersioned, DlpackTensor};
use stridekit::{
    Buffer, CopyOptions, CudaStream, DType, Device, DeviceMemoryResource, Error,
    HostMemoryResource, MemoryKind, MemoryResource, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

const N: usize = 1 << 20;

/// An allocator that misbehaves in one way.
enum Bad {
    /// Hands back half the bytes asked for.
    Short(DeviceMemoryResource),
    /// Hands back pageable host memory.
    Host,
    /// Hands back device memory 4 bytes into an allocation.
    Misaligned(DeviceMemoryResource),
}

impl MemoryResource for Bad {
    fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> stridekit::Result<Buffer> {
        match self {
            Bad::Short(mr) => mr.allocate(size / 2, stream),
            Bad::Host => HostMemoryResource::allocate_host(size),
            Bad::Misaligned(mr) => {
                let whole = mr.allocate(size + 16, stream)?;
                let ptr = whole.ptr() + 4;
                // SAFETY: `whole` owns size + 16 bytes from ptr - 4 and moves into the buffer.
                unsafe { Buffer::from_handle(ptr, size, whole) }
            }
        }
    }
    fn kind(&self) -> MemoryKind {
        match self {
            Bad::Host => MemoryKind::Host,
            _ => MemoryKind::Device,
        }
    }
    fn device_ordinal(&self) -> Option<usize> {
        Some(0)
    }
}

fn device_source(dev: &Device, stream: &Arc<CudaStream>) -> Buffer {
    let mut b = DeviceMemoryResource::new(dev)
        .unwrap()
        .allocate(N * 4, stream)
        .unwrap();
    b.copy_from_host(&common::random_bytes(N * 4, 77), stream)
        .unwrap();
    b
}

#[test]
#[ignore = "needs a CUDA device"]
fn allocator_results_are_checked_before_use() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let src = device_source(&dev, &stream);
    let square = StridedLayout::dense(&[1024, 1024], 4, Order::C).unwrap();
    let s = StridedMemoryView::from_buffer(&src, square.clone(), Some(DType::U32)).unwrap();
    // A transposed pageable destination: the copy packs through a device temporary.
    let mut host = vec![0xeeu32; N + 64];
    let guard = host[N..].to_vec();
    let cases = [
        (
            Bad::Short(DeviceMemoryResource::new(&dev).unwrap()),
            "a temporary must hold every byte",
        ),
        (
            Bad::Host,
            "must be memory that kernels of the stream's device reach",
        ),
        (
            Bad::Misaligned(DeviceMemoryResource::new(&dev).unwrap()),
            "must be 16-byte aligned",
        ),
    ];
    for (bad, rule) in cases {
        let opts = CopyOptions {
            allocator: Some(&bad),
            ..CopyOptions::default()
        };
        let mut d =
            StridedMemoryViewMut::from_slice_mut(&mut host[..N], square.permuted(&[1, 0]).unwrap())
                .unwrap();
        let e = d.copy_from_with(&s, Some(&stream), &opts).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        assert!(
            e.to_string().contains("the allocator of CopyOptions"),
            "{e}"
        );
        assert!(e.to_string().contains(rule), "{e}");
        assert_eq!(
            host[N..],
            guard[..],
            "bytes past the destination were written"
        );
    }
    // The context is fine: the same copy with the default allocator is right.
    let mut d =
        StridedMemoryViewMut::from_slice_mut(&mut host[..N], square.permuted(&[1, 0]).unwrap())
            .unwrap();
    d.copy_from(&s, Some(&stream)).unwrap();
    drop(d);
    let bytes = common::random_bytes(N * 4, 77);
    let want: Vec<u32> = bytemuck::cast_slice::<u8, u32>(&bytes).to_vec();
    for (i, j) in [(0usize, 0usize), (3, 700), (1023, 5)] {
        assert_eq!(host[j * 1024 + i], want[i * 1024 + j]);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn temporaries_from_mapped_pinned_and_managed_memory_are_accepted() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let src = device_source(&dev, &stream);
    let square = StridedLayout::dense(&[1024, 1024], 4, Order::C).unwrap();
    let s = StridedMemoryView::from_buffer(&src, square.clone(), Some(DType::U32)).unwrap();
    let bytes = common::random_bytes(N * 4, 77);
    let want: Vec<u32> = bytemuck::cast_slice::<u8, u32>(&bytes).to_vec();
    let pinned = stridekit::PinnedMemoryResource::new(&dev);
    let managed = stridekit::ManagedMemoryResource::new(&dev).unwrap();
    let resources: [(&dyn MemoryResource, &str); 2] = [(&pinned, "pinned"), (&managed, "managed")];
    for (mr, name) in resources {
        // A transposed pageable destination packs through a temporary of `mr`.
        let mut host = vec![0xeeu32; N];
        let opts = CopyOptions {
            allocator: Some(mr),
            ..CopyOptions::default()
        };
        let mut d =
            StridedMemoryViewMut::from_slice_mut(&mut host[..], square.permuted(&[1, 0]).unwrap())
                .unwrap();
        d.copy_from_with(&s, Some(&stream), &opts)
            .unwrap_or_else(|e| panic!("a {name} temporary was refused: {e}"));
        drop(d);
        for i in 0..1024 {
            for j in 0..1024 {
                assert_eq!(host[j * 1024 + i], want[i * 1024 + j], "{name} temporary");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn misaligned_device_addresses_are_refused_and_the_context_survives() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let src = device_source(&dev, &stream);
    let l = StridedLayout::dense(&[1024], 4, Order::C).unwrap();

    // A pointer 2 bytes into device memory, viewed as float32.
    let owner = device_source(&dev, &stream);
    let ptr = owner.ptr() + 2;
    // SAFETY: `owner` owns the bytes from ptr - 2 and moves into the buffer.
    let shifted = unsafe { Buffer::from_handle(ptr, 8192, owner) }.unwrap();
    let e = StridedMemoryView::from_buffer(&shifted, l.clone(), Some(DType::F32)).unwrap_err();
    assert!(
        e.to_string().contains("2 bytes past a multiple of 4"),
        "{e}"
    );
    // As bytes it is fine, and copies right.
    let bytes_view = StridedMemoryView::from_buffer(
        &shifted,
        StridedLayout::dense(&[4096], 1, Order::C).unwrap(),
        Some(DType::U8),
    )
    .unwrap();
    let mut out = vec![0u8; 4096];
    StridedMemoryViewMut::from_slice_mut(
        &mut out,
        StridedLayout::dense(&[4096], 1, Order::C).unwrap(),
    )
    .unwrap()
    .copy_from(&bytes_view, Some(&stream))
    .unwrap();
    assert_eq!(out[..], common::random_bytes(N * 4, 77)[2..4098]);

    // A DLPack tensor of float32 with byte_offset 2.
    let buf = DeviceMemoryResource::new(&dev)
        .unwrap()
        .allocate(8192, &stream)
        .unwrap();
    let t = StridedMemoryViewMut::from_owned_buffer(buf, l.clone(), Some(DType::F32))
        .unwrap()
        .into_dlpack()
        .unwrap();
    let raw: *mut DLManagedTensorVersioned = t.into_raw();
    // SAFETY: `raw` is the live tensor just exported; the field is plain data.
    unsafe { (*raw).dl_tensor.byte_offset = 2 };
    // SAFETY: a tensor stridekit made, handed back once.
    let t = unsafe { DlpackTensor::from_raw_versioned(raw) }.unwrap();
    // SAFETY: stridekit's own tensor; nobody else uses its memory.
    let e = unsafe { StridedMemoryView::from_dlpack(t) }.unwrap_err();
    assert!(
        e.to_string().contains("2 bytes past a multiple of 4"),
        "{e}"
    );

    // The context still works.
    let s = StridedMemoryView::from_buffer(&src, l, Some(DType::F32)).unwrap();
    let mut back = vec![0f32; 1024];
    StridedMemoryViewMut::from_slice_mut(
        &mut back,
        StridedLayout::dense(&[1024], 4, Order::C).unwrap(),
    )
    .unwrap()
    .copy_from(&s, Some(&stream))
    .unwrap();
    assert!(bytemuck::cast_slice::<f32, u8>(&back) == &common::random_bytes(N * 4, 77)[..4096]);
}
