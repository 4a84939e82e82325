use stridekit::{Device, DeviceMemoryResource, ManagedMemoryResource, MemoryResource};

// A ManagedBuffer gives no `&mut Buffer`: swapping device memory into it cannot compile.
fn main() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mut managed = ManagedMemoryResource::new(&dev).unwrap().allocate(4096, &stream).unwrap();
    let mut device = DeviceMemoryResource::new(&dev).unwrap().allocate(4096, &stream).unwrap();
    std::mem::swap(&mut *managed, &mut device);
}
