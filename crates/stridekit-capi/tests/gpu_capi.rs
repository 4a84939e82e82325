//! The C ABI's TMA descriptor against the Rust API's, byte for byte, on a real GPU.

use stridekit::tma::{Swizzle, TiledOptions};
use stridekit::{
    DType, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView,
};
use stridekit_capi::*;

#[test]
#[ignore = "needs a CUDA device"]
fn the_c_descriptor_is_the_rust_descriptor() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let buf = DeviceMemoryResource::new(&dev)
        .unwrap()
        .allocate(512 * 256 * 2, &stream)
        .unwrap();
    let layout = StridedLayout::dense(&[512, 256], 2, Order::C).unwrap();
    let view = StridedMemoryView::from_buffer(&buf, layout, Some(DType::BF16)).unwrap();
    let rust = view
        .as_tensor_map(&TiledOptions::new(&[64, 64]).swizzle(Swizzle::B128))
        .unwrap();
    let shape = [512i64, 256];
    let dtype = stridekit::dlpack::dtype_to_dlpack(DType::BF16);
    let mut v = std::mem::MaybeUninit::<sk_view>::uninit();
    // SAFETY: valid arrays and out-pointer; the buffer outlives the view (released below).
    let s = unsafe {
        sk_view_from_ptr(
            buf.ptr() as usize,
            2,
            shape.as_ptr(),
            std::ptr::null(),
            2,
            dtype,
            true,
            std::ptr::null_mut(),
            None,
            v.as_mut_ptr(),
        )
    };
    assert_eq!(s, SK_OK);
    // SAFETY: initialised by the successful call.
    let mut v = unsafe { v.assume_init() };
    let opts = sk_tma_options {
        swizzle: 128,
        interleave: 0,
        l2_promotion: 0,
        oob_fill_nan: 0,
        element_strides: std::ptr::null(),
    };
    let mut out = [0u8; 128];
    // SAFETY: a live view, 2 box extents, readable options, 128 writable bytes.
    let s = unsafe { sk_tensor_map_tiled(&v, 2, [64u32, 64].as_ptr(), &opts, out.as_mut_ptr()) };
    assert_eq!(s, SK_OK);
    // SAFETY: the map is 128 bytes of plain data.
    let theirs = unsafe { std::slice::from_raw_parts(rust.as_raw() as *const _ as *const u8, 128) };
    assert_eq!(&out[..], theirs);
    // SAFETY: the live view, released once.
    assert_eq!(unsafe { sk_view_release(&mut v) }, SK_OK);
}
