//! TMA descriptors in real Hopper kernels: NVRTC-compiled kernels load tiles with
//! `cp.async.bulk.tensor` into shared memory (mbarrier completion) and write them out;
//! every result is compared byte for byte with a host reference.

mod common;

use common::{random_bytes, Rng};
use std::sync::Arc;
use stridekit::cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use stridekit::tma::{
    Im2colOptions, Im2colWideOptions, OobFill, Swizzle, TensorMapDescriptor, TiledOptions,
};
use stridekit::{
    Buffer, DType, Device, DeviceMemoryResource, Error, MemoryResource, StridedLayout,
    StridedMemoryView,
};

const KERNELS: &str = r#"
struct __align__(64) CUtensorMap { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ bool try_wait(unsigned bar, unsigned phase) {
    unsigned ok;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(bar), "r"(phase) : "memory");
    return ok != 0;
}

// Shared memory aligned to 1024 bytes (the 128-byte swizzle repeats every 1024).
__device__ __forceinline__ unsigned char* aligned_smem(unsigned char* smem) {
    unsigned a = smem_u32(smem);
    return smem + ((1024u - (a & 1023u)) & 1023u);
}

__device__ __forceinline__ void start(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap tmap, unsigned char* out,
                                    int rank, int c0, int c1, int c2, int c3, int c4, unsigned bytes) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bar;
    unsigned char* tile = aligned_smem(smem_raw);
    unsigned b = smem_u32(&bar), dst = smem_u32(tile);
    unsigned long long map = reinterpret_cast<unsigned long long>(&tmap);
    if (threadIdx.x == 0) {
        start(b, bytes);
        switch (rank) {
        case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];"
                             :: "r"(dst), "l"(map), "r"(b), "r"(c0) : "memory"); break;
        case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                             :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1) : "memory"); break;
        case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                             :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2) : "memory"); break;
        case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];"
                             :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory"); break;
        default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
                             :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4) : "memory"); break;
        }
    }
    __syncthreads();
    while (!try_wait(b, 0)) {}
    for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = tile[i];
}

extern "C" __global__ void tma_im2col(const __grid_constant__ CUtensorMap tmap, unsigned char* out, int rank,
                                      int c0, int c1, int c2, int c3, unsigned short o0, unsigned short o1,
                                      unsigned bytes) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bar;
    unsigned char* tile = aligned_smem(smem_raw);
    unsigned b = smem_u32(&bar), dst = smem_u32(tile);
    unsigned long long map = reinterpret_cast<unsigned long long>(&tmap);
    if (threadIdx.x == 0) {
        start(b, bytes);
        if (rank == 3) {
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2], {%6};"
                         :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "h"(o0) : "memory");
        } else {
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};"
                         :: "r"(dst), "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(o0), "h"(o1) : "memory");
        }
    }
    __syncthreads();
    while (!try_wait(b, 0)) {}
    for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = tile[i];
}
"#;

struct Gpu {
    dev: Device,
    stream: Arc<CudaStream>,
    mr: DeviceMemoryResource,
}

fn gpu() -> Option<Gpu> {
    let dev = Device::open(0).expect("a CUDA device");
    if dev.compute_capability().unwrap() < (9, 0) {
        eprintln!("skipping: TMA needs compute capability 9.0");
        return None;
    }
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    Some(Gpu { dev, stream, mr })
}

impl Gpu {
    fn upload(&self, bytes: &[u8]) -> Buffer {
        let mut b = self.mr.allocate(bytes.len(), &self.stream).unwrap();
        b.copy_from_host(bytes, &self.stream).unwrap();
        b
    }

    /// Runs `kernel` with the descriptor and returns the `bytes` it wrote, out of a
    /// poisoned buffer.
    fn run(
        &self,
        kernel: &str,
        tmap: &TensorMapDescriptor<'_>,
        ints: &[i32],
        offs: Option<[u16; 2]>,
        bytes: usize,
    ) -> Vec<u8> {
        let m = self
            .dev
            .compile_module("tma_test_kernels", KERNELS)
            .unwrap();
        let f = m.load_function(kernel).unwrap();
        let mut out = self.mr.allocate(bytes, &self.stream).unwrap();
        out.fill(0xCD, &self.stream).unwrap();
        let smem = bytes as u32 + 1024;
        if smem > 48 * 1024 {
            f.set_attribute(
                stridekit::cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
            .unwrap();
        }
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: smem,
        };
        let optr = out.ptr();
        let nbytes = bytes as u32;
        let mut l = self.stream.launch_builder(&f);
        l.arg(tmap).arg(&optr);
        for v in ints {
            l.arg(v);
        }
        let (o0, o1);
        if let Some(o) = offs {
            (o0, o1) = (o[0], o[1]);
            l.arg(&o0).arg(&o1);
        }
        l.arg(&nbytes);
        // SAFETY: the arguments match the kernel's parameters in order and type; the
        // tensor map describes live device memory; `out` holds `bytes` bytes.
        unsafe { l.launch(cfg) }.unwrap();
        let mut host = vec![0u8; bytes];
        out.copy_to_host(&mut host, &self.stream).unwrap();
        host
    }

    /// Loads the tile at `start` (view order) and compares it with the host reference.
    #[allow(clippy::too_many_arguments)]
    fn check_tile(
        &self,
        tmap: &TensorMapDescriptor<'_>,
        mem: &[u8],
        l: &StridedLayout,
        start: &[i64],
        boxd: &[u32],
        es: &[u32],
        what: &str,
    ) {
        let (want, _) = tile_reference(mem, l, start, boxd, es);
        let got = self.tile(tmap, start, want.len());
        assert!(
            got == want,
            "{what}: box {boxd:?} es {es:?} start {start:?}: {}",
            first_difference(&got, &want)
        );
    }

    fn tile(
        &self,
        tmap: &TensorMapDescriptor<'_>,
        start_view_order: &[i64],
        bytes: usize,
    ) -> Vec<u8> {
        let rank = start_view_order.len();
        let mut ints = vec![rank as i32, 0, 0, 0, 0, 0];
        for (k, &s) in start_view_order.iter().rev().enumerate() {
            ints[1 + k] = s as i32;
        }
        self.run("tma_tile", tmap, &ints, None, bytes)
    }
}

/// What a tiled load must deliver: ceil(box/es) elements per axis, row-major, each from
/// `start + i * es` or the fill when outside the tensor.
fn tile_reference(
    mem: &[u8],
    l: &StridedLayout,
    start: &[i64],
    boxd: &[u32],
    es: &[u32],
) -> (Vec<u8>, Vec<bool>) {
    let isz = l.itemsize();
    let n: Vec<i64> = boxd
        .iter()
        .zip(es)
        .map(|(&b, &e)| (b as i64 + e as i64 - 1) / e as i64)
        .collect();
    let total: i64 = n.iter().product();
    let (mut out, mut oob) = (vec![], vec![]);
    for lin in 0..total {
        let mut rem = lin;
        let mut idx = vec![0i64; n.len()];
        for k in (0..n.len()).rev() {
            idx[k] = rem % n[k];
            rem /= n[k];
        }
        let mut off = l.slice_offset();
        let mut inside = true;
        for k in 0..n.len() {
            let x = start[k] + idx[k] * es[k] as i64;
            if x < 0 || x >= l.shape()[k] {
                inside = false;
            }
            off += x * l.strides()[k];
        }
        if inside {
            let b = (off as usize) * isz;
            out.extend_from_slice(&mem[b..b + isz]);
        } else {
            out.extend(std::iter::repeat_n(0u8, isz));
        }
        oob.push(!inside);
    }
    (out, oob)
}

/// Rounds the innermost coordinate down to a multiple of 16 bytes: the hardware traps
/// (CUDA_ERROR_ILLEGAL_INSTRUCTION) on a tiled load whose inner start is not aligned.
fn aligned_start(mut start: Vec<i64>, isz: usize) -> Vec<i64> {
    let step = (16 / isz).max(1) as i64;
    if let Some(last) = start.last_mut() {
        *last = last.div_euclid(step) * step;
    }
    start
}

fn dense(shape: &[i64], isz: usize) -> StridedLayout {
    StridedLayout::dense(shape, isz, stridekit::Order::C).unwrap()
}

fn first_difference(got: &[u8], want: &[u8]) -> String {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        Some(i) => format!(
            "first difference at byte {i}: got {:#04x}, want {:#04x}",
            got[i], want[i]
        ),
        None => format!("lengths {} vs {}", got.len(), want.len()),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tiles_of_ranks_1_to_5_match_the_host_reference() {
    let Some(g) = gpu() else { return };
    let cases: Vec<(Vec<i64>, Vec<u32>, usize, DType)> = vec![
        (vec![1000], vec![64], 4, DType::F32),
        (vec![37, 48], vec![16, 8], 4, DType::F32),
        (vec![5, 9, 24], vec![4, 4, 8], 2, DType::F16),
        (vec![3, 4, 7, 32], vec![2, 3, 4, 16], 1, DType::U8),
        (vec![2, 3, 4, 5, 8], vec![2, 2, 3, 4, 8], 8, DType::F64),
    ];
    let mut rng = Rng(42);
    for (shape, boxd, isz, dtype) in cases {
        let l = dense(&shape, isz);
        let data = random_bytes(l.required_size_in_bytes().unwrap(), rng.next());
        let buf = g.upload(&data);
        let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(dtype)).unwrap();
        let tmap = view.as_tensor_map(&TiledOptions::new(&boxd)).unwrap();
        assert_eq!(tmap.device_ordinal(), 0);
        assert_eq!(tmap.inner_coordinate_multiple(), (16 / isz).max(1));
        let es = vec![1u32; shape.len()];
        // Inside, at the far edge (crossing it), and before the start (negative coordinates).
        let starts: Vec<Vec<i64>> = vec![
            shape.iter().map(|_| 0).collect(),
            shape
                .iter()
                .zip(&boxd)
                .map(|(&s, &b)| s - b as i64 / 2)
                .collect(),
            boxd.iter().map(|&b| -(b as i64) / 2).collect(),
            shape.iter().map(|&s| rng.below(s as u64) as i64).collect(),
        ];
        for start in starts {
            let start = aligned_start(start, isz);
            g.check_tile(
                &tmap,
                &data,
                &l,
                &start,
                &boxd,
                &es,
                &format!("shape {shape:?}"),
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_fill_marks_out_of_bounds_elements() {
    let Some(g) = gpu() else { return };
    let l = dense(&[20, 28], 4);
    let vals: Vec<f32> = (0..20 * 28).map(|i| i as f32 * 0.25 + 1.0).collect();
    let data: Vec<u8> = bytemuck::cast_slice(&vals).to_vec();
    let buf = g.upload(&data);
    let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::F32)).unwrap();
    let boxd = [16u32, 16];
    for fill in [OobFill::Zero, OobFill::Nan] {
        let tmap = view
            .as_tensor_map(&TiledOptions::new(&boxd).oob_fill(fill))
            .unwrap();
        let start = [12i64, -4];
        let (want, oob) = tile_reference(&data, &l, &start, &boxd, &[1, 1]);
        let got = g.tile(&tmap, &start, want.len());
        let got_f: &[f32] = bytemuck::cast_slice(&got);
        let want_f: &[f32] = bytemuck::cast_slice(&want);
        assert!(oob.iter().any(|&o| o) && oob.iter().any(|&o| !o));
        for (i, &o) in oob.iter().enumerate() {
            match (o, fill) {
                (true, OobFill::Nan) => {
                    assert!(got_f[i].is_nan(), "element {i}: {} is not NaN", got_f[i])
                }
                _ => assert_eq!(
                    got_f[i].to_bits(),
                    want_f[i].to_bits(),
                    "element {i} with {fill:?}"
                ),
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn element_strides_skip_elements() {
    let Some(g) = gpu() else { return };
    let l = dense(&[6, 30, 40], 4);
    let data = random_bytes(l.required_size_in_bytes().unwrap(), 7);
    let buf = g.upload(&data);
    let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::U32)).unwrap();
    for es in [[2u32, 3, 1], [1, 8, 1], [3, 1, 1]] {
        let boxd = [6u32, 24, 8];
        let tmap = view
            .as_tensor_map(&TiledOptions::new(&boxd).element_strides(&es))
            .unwrap();
        for start in [[0i64, 0, 0], [1, 10, 36]] {
            g.check_tile(&tmap, &data, &l, &start, &boxd, &es, "element strides");
        }
    }
}

/// The byte offset in shared memory where the byte at tile offset `o` lands.
fn swizzled(o: usize, span: usize) -> usize {
    let mask = span / 16 - 1;
    o ^ (((o >> 7) & mask) << 4)
}

#[test]
#[ignore = "needs a CUDA device"]
fn swizzle_modes_match_the_host_pattern() {
    let Some(g) = gpu() else { return };
    let l = dense(&[64, 256], 1);
    let data = random_bytes(l.required_size_in_bytes().unwrap(), 9);
    let buf = g.upload(&data);
    let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::U8)).unwrap();
    for (sw, span) in [
        (Swizzle::B32, 32usize),
        (Swizzle::B64, 64),
        (Swizzle::B128, 128),
    ] {
        let boxd = [32u32, span as u32];
        let tmap = view
            .as_tensor_map(&TiledOptions::new(&boxd).swizzle(sw))
            .unwrap();
        let start = [5i64, 16];
        let (plain, _) = tile_reference(&data, &l, &start, &boxd, &[1, 1]);
        let mut want = vec![0u8; plain.len()];
        for (o, &b) in plain.iter().enumerate() {
            want[swizzled(o, span)] = b;
        }
        let got = g.tile(&tmap, &start, want.len());
        assert!(got == want, "{sw:?}: {}", first_difference(&got, &want));
        assert_ne!(got, plain, "{sw:?} must move bytes");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn replace_address_points_at_a_second_tensor() {
    let Some(g) = gpu() else { return };
    let l = dense(&[48, 64], 2);
    let a = random_bytes(l.required_size_in_bytes().unwrap(), 11);
    let b = random_bytes(l.required_size_in_bytes().unwrap(), 12);
    let (ba, bb) = (g.upload(&a), g.upload(&b));
    let va = StridedMemoryView::from_buffer(&ba, l.clone(), Some(DType::F16)).unwrap();
    let vb = StridedMemoryView::from_buffer(&bb, l.clone(), Some(DType::BF16)).unwrap();
    let boxd = [16u32, 32];
    let mut tmap = TensorMapDescriptor::tiled(&va, &TiledOptions::new(&boxd)).unwrap();
    let start = [8i64, 40];
    let copy = tmap.clone();
    let one = [1, 1];
    g.check_tile(&tmap, &a, &l, &start, &boxd, &one, "first tensor");
    tmap.replace_address(&vb).unwrap();
    assert_eq!(tmap.address(), bb.ptr());
    g.check_tile(&tmap, &b, &l, &start, &boxd, &one, "after replace_address");
    // The clone still points at the first tensor.
    g.check_tile(&copy, &a, &l, &start, &boxd, &one, "the clone");
    // A view of another shape is refused.
    let other = StridedMemoryView::from_buffer(&bb, dense(&[64, 48], 2), Some(DType::F16)).unwrap();
    let e = tmap.replace_address(&other).unwrap_err();
    assert!(e.to_string().contains("they must match"), "{e}");
    // A misaligned view is refused before the driver.
    let shifted = StridedMemoryView::from_buffer(
        &bb,
        StridedLayout::with_offset(&[47, 64], &[64, 1], 2, 3).unwrap(),
        Some(DType::F16),
    )
    .unwrap();
    let va47 = StridedMemoryView::from_buffer(&ba, dense(&[47, 64], 2), Some(DType::F16)).unwrap();
    let mut t2 = TensorMapDescriptor::tiled(&va47, &TiledOptions::new(&boxd)).unwrap();
    let e = t2.replace_address(&shifted).unwrap_err();
    assert!(
        e.to_string().contains("6 bytes past a 16-byte boundary"),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn sliced_views_with_offset_and_padded_stride() {
    let Some(g) = gpu() else { return };
    // A 40 x 52 f32 matrix stored with rows padded to 64 elements, viewed from (3, 4).
    let base = StridedLayout::new(&[40, 52], &[64, 1], 4).unwrap();
    let data = random_bytes(40 * 64 * 4, 13);
    let buf = g.upload(&data);
    let sliced = base.sliced(stridekit::s![3..37, 4..52]).unwrap();
    assert_eq!(sliced.slice_offset(), 3 * 64 + 4);
    let view = StridedMemoryView::from_buffer(&buf, sliced.clone(), Some(DType::F32)).unwrap();
    let boxd = [8u32, 32];
    let tmap = view.as_tensor_map(&TiledOptions::new(&boxd)).unwrap();
    assert_eq!(tmap.address(), buf.ptr() + (3 * 64 + 4) * 4);
    for start in [[0i64, 0], [30, 20], [-3, -4]] {
        g.check_tile(&tmap, &data, &sliced, &start, &boxd, &[1, 1], "sliced");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn views_with_permuted_outer_axes() {
    let Some(g) = gpu() else { return };
    // A 3-D view with a permuted outer pair still reads the right elements.
    let l3 = dense(&[4, 6, 16], 4);
    let data3 = random_bytes(l3.required_size_in_bytes().unwrap(), 14);
    let b3 = g.upload(&data3);
    let p = l3.permuted(&[1, 0, 2]).unwrap();
    let v3 = StridedMemoryView::from_buffer(&b3, p.clone(), Some(DType::F32)).unwrap();
    let t3 = v3.as_tensor_map(&TiledOptions::new(&[4, 3, 16])).unwrap();
    g.check_tile(
        &t3,
        &data3,
        &p,
        &[2, 1, 0],
        &[4, 3, 16],
        &[1, 1, 1],
        "permuted",
    );
}

/// im2col as the hardware walks it: pixels along W inside the bounding box, wrapping to
/// the next H row, then the next image; each pixel reads `channels` from
/// (n, h + off_h, w + off_w, c..), zero outside.
#[allow(clippy::too_many_arguments)]
fn im2col_reference(
    mem: &[u8],
    l: &StridedLayout,
    start: &[i64],
    lower: &[i32],
    upper: &[i32],
    offsets: &[i64],
    channels: usize,
    pixels: usize,
) -> Vec<u8> {
    let shape = l.shape();
    let rank = shape.len();
    let spatial = rank - 2;
    let isz = l.itemsize();
    let mut pos: Vec<i64> = start[..rank - 1].to_vec();
    let c0 = start[rank - 1];
    let mut out = vec![];
    for _ in 0..pixels {
        for c in 0..channels as i64 {
            let mut idx: Vec<i64> = pos.clone();
            for s in 0..spatial {
                idx[1 + s] += offsets[s];
            }
            idx.push(c0 + c);
            let inside = idx.iter().zip(shape).all(|(&x, &e)| x >= 0 && x < e);
            if inside {
                let off =
                    l.slice_offset() + idx.iter().zip(l.strides()).map(|(x, s)| x * s).sum::<i64>();
                out.extend_from_slice(&mem[off as usize * isz..(off as usize + 1) * isz]);
            } else {
                out.extend(std::iter::repeat_n(0u8, isz));
            }
        }
        // Advance along W, wrapping within the bounding box, then H, then N.
        let mut k = spatial;
        loop {
            if k == 0 {
                pos[0] += 1;
                break;
            }
            let s = k - 1;
            let hi = shape[1 + s] - 1 + upper[s] as i64;
            pos[k] += 1;
            if pos[k] <= hi {
                break;
            }
            pos[k] = lower[s] as i64;
            k -= 1;
        }
    }
    out
}

fn run_im2col(
    g: &Gpu,
    tmap: &TensorMapDescriptor<'_>,
    start: &[i64],
    offsets: &[i64],
    bytes: usize,
) -> Vec<u8> {
    let rank = start.len();
    let mut ints = vec![rank as i32, 0, 0, 0, 0];
    for (k, &s) in start.iter().rev().enumerate() {
        ints[1 + k] = s as i32;
    }
    let mut o = [0u16; 2];
    for (k, &v) in offsets.iter().rev().enumerate() {
        o[k] = v as i16 as u16;
    }
    g.run("tma_im2col", tmap, &ints, Some(o), bytes)
}

/// One im2col load of `pixels` pixels of `channels` f32 channels, against the host walk.
#[allow(clippy::too_many_arguments)]
fn check_im2col(
    g: &Gpu,
    shape: &[i64],
    lower: &[i32],
    upper: &[i32],
    start: &[i64],
    offsets: &[i64],
    channels: u32,
    pixels: u32,
    seed: u64,
) {
    let l = dense(shape, 4);
    let data = random_bytes(l.required_size_in_bytes().unwrap(), seed);
    let buf = g.upload(&data);
    let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::F32)).unwrap();
    let opts = Im2colOptions::new(lower, upper, channels, pixels);
    let tmap = TensorMapDescriptor::im2col(&view, &opts).unwrap();
    let want = im2col_reference(
        &data,
        &l,
        start,
        lower,
        upper,
        offsets,
        channels as usize,
        pixels as usize,
    );
    let got = run_im2col(g, &tmap, start, offsets, want.len());
    assert!(got == want, "{shape:?}: {}", first_difference(&got, &want));
}

#[test]
#[ignore = "needs a CUDA device"]
fn im2col_row_without_wrapping() {
    let Some(g) = gpu() else { return };
    // NWC: 2 images of 64 pixels with 8 channels; 32 pixels from w = -2, filter offset 1.
    check_im2col(&g, &[2, 64, 8], &[-2], &[-2], &[1, -2, 0], &[1], 8, 32, 21);
}

#[test]
#[ignore = "needs a CUDA device"]
fn im2col_wraps_rows_and_images() {
    let Some(g) = gpu() else { return };
    // NHWC: 2 images of 5 x 6 pixels with 8 channels, padding 1, 3 x 3 filter, offset
    // (2, 1); 64 pixels run past the rows of the first image into the second.
    check_im2col(
        &g,
        &[2, 5, 6, 8],
        &[-1, -1],
        &[-1, -1],
        &[0, -1, -1, 0],
        &[2, 1],
        8,
        64,
        22,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn descriptor_rejections_on_the_device() {
    let Some(g) = gpu() else { return };
    let buf = g.mr.allocate(64 * 64 * 4, &g.stream).unwrap();
    let view = StridedMemoryView::from_buffer(&buf, dense(&[64, 64], 4), Some(DType::F32)).unwrap();
    // im2col-wide needs compute capability 10.0: a clear Unsupported on Hopper.
    let nhwc =
        StridedMemoryView::from_buffer(&buf, dense(&[1, 4, 64, 16], 4), Some(DType::F32)).unwrap();
    let r = TensorMapDescriptor::im2col_wide(
        &nhwc,
        &Im2colWideOptions::new(0, 0, 16, 64).swizzle(Swizzle::B64),
    );
    if g.dev.compute_capability().unwrap() < (10, 0) {
        match r {
            Err(Error::Unsupported { reason, .. }) => {
                assert!(reason.contains("needs 10.0"), "{reason}")
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
    // A transposed view: the error says which permutation fixes it.
    let t = view
        .view(view.layout().permuted(&[1, 0]).unwrap(), Some(DType::F32))
        .unwrap();
    let e = t.as_tensor_map(&TiledOptions::new(&[16, 16])).unwrap_err();
    assert!(e.to_string().contains("permuted by [1, 0]"), "{e}");
    // Pageable host memory cannot be read by TMA.
    let host = vec![0f32; 64 * 64];
    let hv = StridedMemoryView::from_slice(&host, &[64, 64]).unwrap();
    let e = hv.as_tensor_map(&TiledOptions::new(&[16, 16])).unwrap_err();
    assert!(e.to_string().contains("which the GPU cannot read"), "{e}");
    // Swizzle too narrow for the box, element stride of 9: ours, not the driver's.
    for o in [
        TiledOptions::new(&[16, 32]).swizzle(Swizzle::B64),
        TiledOptions::new(&[16, 16]).element_strides(&[9, 1]),
    ] {
        assert!(matches!(view.as_tensor_map(&o), Err(Error::Invalid { .. })));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn descriptors_from_a_thread_without_a_current_context() {
    let Some(g) = gpu() else { return };
    let l = dense(&[32, 64], 4);
    let data = random_bytes(l.required_size_in_bytes().unwrap(), 31);
    let (a, b) = (g.upload(&data), g.upload(&data));
    let va = StridedMemoryView::from_buffer(&a, l.clone(), Some(DType::F32)).unwrap();
    let vb = StridedMemoryView::from_buffer(&b, l.clone(), Some(DType::F32)).unwrap();
    let tmap = std::thread::scope(|s| {
        s.spawn(|| {
            let mut t = va.as_tensor_map(&TiledOptions::new(&[8, 16])).unwrap();
            t.replace_address(&vb).unwrap();
            t
        })
        .join()
        .unwrap()
    });
    g.check_tile(&tmap, &data, &l, &[4, 8], &[8, 16], &[1, 1], "fresh thread");
}

#[test]
#[ignore = "needs a CUDA device"]
fn tiles_load_from_pinned_host_memory() {
    let Some(g) = gpu() else { return };
    let (shape, boxd) = (vec![40i64, 64], vec![16u32, 32]);
    let l = dense(&shape, 4);
    let data = random_bytes(l.required_size_in_bytes().unwrap(), 77);
    let pinned = stridekit::PinnedMemoryResource::new(&g.dev);
    let mut buf = stridekit::MemoryResource::allocate(&pinned, data.len(), &g.stream).unwrap();
    buf.copy_from_host(&data, &g.stream).unwrap();
    let view = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::F32)).unwrap();
    assert_eq!(
        view.device_id(),
        0,
        "pinned memory knows the device it is mapped to"
    );
    let tmap = view.as_tensor_map(&TiledOptions::new(&boxd)).unwrap();
    assert_eq!(tmap.device_ordinal(), 0);
    for start in [vec![0, 0], vec![24, 32], vec![-8, 40]] {
        g.check_tile(&tmap, &data, &l, &start, &boxd, &[1, 1], "pinned");
    }
    // Registered host memory (cuMemHostRegister) through Buffer::from_handle, too.
    let mut reg = vec![0u8; data.len() + 4096];
    let off = (reg.as_ptr() as usize).next_multiple_of(4096) - reg.as_ptr() as usize;
    reg[off..off + data.len()].copy_from_slice(&data);
    let p = reg[off..].as_mut_ptr();
    // SAFETY: `p` holds data.len() bytes of `reg`, which outlives the registration.
    let r =
        unsafe { stridekit::cudarc::driver::sys::cuMemHostRegister_v2(p.cast(), data.len(), 0) };
    assert_eq!(r, stridekit::cudarc::driver::sys::CUresult::CUDA_SUCCESS);
    {
        // SAFETY: the registered bytes stay valid until unregistered below, after the views go.
        let b = unsafe { Buffer::from_handle(p as u64, data.len(), ()) }.unwrap();
        assert_eq!(b.kind(), stridekit::MemoryKind::PinnedHost);
        let v = StridedMemoryView::from_buffer(&b, l.clone(), Some(DType::F32)).unwrap();
        let tmap = v.as_tensor_map(&TiledOptions::new(&boxd)).unwrap();
        g.check_tile(&tmap, &data, &l, &[8, 16], &boxd, &[1, 1], "registered");
    }
    // SAFETY: `p` was registered above and nothing uses it any more.
    let r = unsafe { stridekit::cudarc::driver::sys::cuMemHostUnregister(p.cast()) };
    assert_eq!(r, stridekit::cudarc::driver::sys::CUresult::CUDA_SUCCESS);
}
