//! Every class of the copy schedule on a real GPU, byte for byte against the host
//! reference (poisoned destinations, random sources, gaps included): named layouts that
//! each stress one kernel path, and the randomized set of `examples/random_bench.rs`.

mod common;

use common::random_set::{next_case, Rng, SEED};
use common::{copy_between, dense_c as c, permuted_c};
use std::sync::Arc;
use stridekit::{
    s, CopyPlan, CopyStep, CudaStream, Device, DeviceMemoryResource, HostMemoryResource,
    MemoryResource, StridedLayout,
};

/// The device, with small copies kept on the kernels these tests are about: tiles and
/// gathered rows at any size (`set_small_copy_elements(0)`, for the whole process; every
/// copy is exact either way, and `gpu_copy` tests the default). The tests' own schedules
/// are planned alike (`schedule_with_small_copy(.., 0)`).
fn open_device() -> Device {
    stridekit::set_small_copy_elements(0);
    Device::open(0).unwrap()
}

/// Copies `sl` into `dl` on the device; `None` when byte-exact, else what went wrong.
fn run(
    mr: &DeviceMemoryResource,
    stream: &Arc<CudaStream>,
    sl: &StridedLayout,
    dl: &StridedLayout,
    seed: u64,
) -> Option<String> {
    copy_between(mr, mr, stream, sl, dl, seed).map(|e| {
        let steps = CopyPlan::new(dl, sl)
            .unwrap()
            .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        format!("{e}; steps {steps:?}")
    })
}

fn kind(s: &CopyStep) -> &'static str {
    match s {
        CopyStep::Memcpy(_) => "memcpy",
        CopyStep::Elementwise(_) => "elementwise",
        CopyStep::Transpose { .. } => "transpose",
        CopyStep::Tiled(_) => "tiled",
        CopyStep::Channels { .. } => "channels",
        CopyStep::ReversedChannels { .. } => "reversed",
        CopyStep::Rows { .. } => "rows",
        CopyStep::ReversedRows { .. } => "reversed rows",
        CopyStep::Repeat { .. } => "repeat",
        CopyStep::SmallMatrices { .. } => "matrices",
    }
}

/// (name, source, destination, the kind of the schedule's first step)
type Named = (&'static str, StridedLayout, StridedLayout, &'static str);

/// Layouts that each stress one path of the schedule.
fn named_cases() -> Vec<Named> {
    let t = permuted_c;
    vec![
        (
            "u8 transpose, 4-byte words",
            t(&[768, 1024], 1, &[1, 0]),
            c(&[1024, 768], 1),
            "transpose",
        ),
        (
            "u16 transpose, 4-byte words",
            t(&[640, 1024], 2, &[1, 0]),
            c(&[1024, 640], 2),
            "transpose",
        ),
        (
            "u8 4097 x 301: odd rows, element tiles",
            t(&[301, 4097], 1, &[1, 0]),
            c(&[4097, 301], 1),
            "transpose",
        ),
        (
            "f16 4097 x 3001",
            t(&[3001, 4097], 2, &[1, 0]),
            c(&[4097, 3001], 2),
            "transpose",
        ),
        (
            "f32 4097 x 3001",
            t(&[3001, 4097], 4, &[1, 0]),
            c(&[4097, 3001], 4),
            "transpose",
        ),
        (
            "u8 (4096, 8) from its transpose: eight channels interleaved",
            t(&[8, 4096], 1, &[1, 0]),
            c(&[4096, 8], 1),
            "channels",
        ),
        (
            "RGB interleaved -> planar, u8",
            t(&[480, 640, 3], 1, &[2, 0, 1]),
            c(&[3, 480, 640], 1),
            "channels",
        ),
        (
            "RGB planar -> interleaved, u8",
            t(&[3, 480, 640], 1, &[1, 2, 0]),
            c(&[480, 640, 3], 1),
            "channels",
        ),
        (
            "NCHW -> NHWC, C = 3, u8",
            c(&[8, 3, 64, 64], 1),
            c(&[8, 64, 64, 3], 1).permuted(&[0, 3, 1, 2]).unwrap(),
            "channels",
        ),
        (
            "5-D permutation f32",
            t(&[16, 12, 10, 14, 18], 4, &[4, 2, 0, 3, 1]),
            c(&[18, 10, 16, 14, 12], 4),
            "tiled",
        ),
        (
            "6-D permutation f64",
            t(&[6, 5, 7, 4, 6, 5], 8, &[5, 4, 3, 2, 1, 0]),
            c(&[5, 6, 4, 7, 5, 6], 8),
            "tiled",
        ),
        (
            "inner flip f32",
            c(&[512, 1000], 4).sliced(s![.., ..;-1]).unwrap(),
            c(&[512, 1000], 4),
            "elementwise",
        ),
        (
            "f16 [1:, 1:] (misaligned)",
            c(&[1025, 1027], 2).sliced(s![1.., 1..]).unwrap(),
            c(&[1024, 1026], 2),
            "rows",
        ),
        (
            "both sides strided",
            c(&[1000, 900], 4).sliced(s![..;2, ..;3]).unwrap(),
            c(&[1500, 600], 4).sliced(s![..;3, ..;2]).unwrap(),
            "elementwise",
        ),
        (
            "batched 32 x 8 f16 transposes",
            t(&[4096, 32, 8], 2, &[0, 2, 1]),
            c(&[4096, 8, 32], 2),
            "matrices",
        ),
        (
            "16-byte elements, 4-D permutation",
            t(&[9, 33, 17, 20], 16, &[2, 0, 3, 1]),
            c(&[17, 9, 20, 33], 16),
            "tiled",
        ),
        (
            "u8 rows of 57 bytes from odd-aligned planes: word transpose tiles 45% full, multi-axis tiles",
            c(&[57, 4001], 1).sliced(s![.., 1..]).unwrap().permuted(&[1, 0]).unwrap(),
            c(&[4000, 57], 1),
            "tiled",
        ),
        (
            "16-byte elements, short axes, every read in its own sector",
            t(&[9, 5, 7, 6], 16, &[3, 1, 2, 0]),
            c(&[6, 5, 7, 9], 16),
            "tiled",
        ),
        (
            "16-byte elements, short axes, a warp's reads gathered from runs of 6",
            t(&[9, 5, 7, 6], 16, &[2, 0, 3, 1]),
            c(&[7, 9, 6, 5], 16),
            "elementwise",
        ),
        (
            "f64 planes into (n, 3, 3) blocks with gaps (random case 11)",
            t(&[3, 400, 3, 3], 8, &[1, 2, 3, 0]),
            c(&[400, 3, 6, 3], 8).sliced(s![.., .., ..3, ..]).unwrap(),
            "elementwise",
        ),
        (
            "broadcast into a permuted destination",
            c(&[1, 300, 5], 4).broadcast_to(&[64, 300, 5]).unwrap(),
            c(&[5, 64, 300], 4).permuted(&[1, 2, 0]).unwrap(),
            "elementwise",
        ),
        (
            "f32 transpose, flipped source rows",
            t(&[700, 900], 4, &[1, 0]).sliced(s![..;-1, ..]).unwrap(),
            c(&[900, 700], 4),
            "tiled",
        ),
        (
            "u8 transpose from an odd offset",
            t(&[512, 1000], 1, &[1, 0]).sliced(s![1.., ..]).unwrap(),
            c(&[999, 512], 1),
            "transpose",
        ),
    ]
}

/// The schedules themselves need no GPU: checked in every CI run.
#[test]
fn named_cases_take_the_expected_kernels() {
    let mut wrong = Vec::new();
    for (name, sl, dl, first) in named_cases() {
        let steps = CopyPlan::new(&dl, &sl)
            .unwrap()
            .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        if kind(&steps[0]) != first {
            wrong.push(format!("{name}: {} ({steps:?})", kind(&steps[0])));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_schedule_class_copies_exactly() {
    let dev = open_device();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let mut failures = vec![];
    for (i, (name, sl, dl, _)) in named_cases().iter().enumerate() {
        if let Some(e) = run(&mr, &stream, sl, dl, i as u64 + 1) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_randomized_set_copies_exactly() {
    let dev = open_device();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let mut rng = Rng(SEED);
    let mut failures = vec![];
    for case in 0..200u64 {
        // The benchmark's generator at 1-2 MiB a case (the benchmark: 64-128 MiB).
        let k = next_case(&mut rng, 1);
        if let Some(e) = run(&mr, &stream, &k.src, &k.dst, case + 100) {
            failures.push(format!("case {case}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 200 wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pageable_host_copies_cross_many_staging_chunks() {
    let dev = open_device();
    let stream = dev.new_stream().unwrap();
    let device = DeviceMemoryResource::new(&dev).unwrap();
    let host = HostMemoryResource;
    let t = |shape: &[i64], isz: usize| c(shape, isz).permuted(&[1, 0]).unwrap();
    let mut failures = vec![];
    // (name, source, destination, source on the host): 20-50 MB each, so that several
    // 8 MiB chunks (with element counts that do not divide them) move per copy.
    let cases: Vec<(&str, StridedLayout, StridedLayout, bool)> = vec![
        (
            "H2D transposed span",
            t(&[3001, 4003], 4),
            c(&[4003, 3001], 4),
            true,
        ),
        (
            "H2D sparse rows, packed",
            c(&[9000, 3001], 2).sliced(s![..;3, ..]).unwrap(),
            c(&[3000, 3001], 2),
            true,
        ),
        (
            "H2D sparse 16-byte elements, flipped",
            c(&[2000, 1500], 16).sliced(s![..;-3, ..;2]).unwrap(),
            c(&[667, 750], 16),
            true,
        ),
        (
            "D2H into a transposed span",
            c(&[4003, 3001], 4),
            t(&[3001, 4003], 4),
            false,
        ),
        (
            "D2H into rows with gaps",
            c(&[3000, 3001], 2),
            c(&[9000, 3001], 2).sliced(s![..;3, ..]).unwrap(),
            false,
        ),
        (
            "D2H into a padded transposed u8 view",
            c(&[5000, 7001], 1),
            c(&[7003, 5000], 1)
                .sliced(s![..7001, ..])
                .unwrap()
                .permuted(&[1, 0])
                .unwrap(),
            false,
        ),
    ];
    for (i, (name, sl, dl, h2d)) in cases.iter().enumerate() {
        let (smr, dmr): (&dyn MemoryResource, &dyn MemoryResource) = if *h2d {
            (&host, &device)
        } else {
            (&device, &host)
        };
        if let Some(e) = copy_between(smr, dmr, &stream, sl, dl, 40 + i as u64) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Copies on the device, each checked byte for byte; what differs is collected and
/// reported at the end, with how many copies ran.
struct Exact {
    mr: DeviceMemoryResource,
    stream: Arc<CudaStream>,
    failures: Vec<String>,
    count: u64,
}

impl Exact {
    fn new() -> Self {
        let dev = open_device();
        Exact {
            mr: DeviceMemoryResource::new(&dev).unwrap(),
            stream: dev.new_stream().unwrap(),
            failures: Vec::new(),
            count: 0,
        }
    }

    fn check(&mut self, src: &StridedLayout, dst: &StridedLayout) {
        self.count += 1;
        if let Some(e) = run(&self.mr, &self.stream, src, dst, self.count) {
            self.failures.push(e);
        }
    }

    fn assert_all(self, what: &str) {
        assert!(
            self.failures.is_empty(),
            "{} of {} {what} differ:\n{}",
            self.failures.len(),
            self.count,
            self.failures.join("\n")
        );
    }
}

/// The transposes of 1- and 2-byte elements that the word transpose runs: a `cols x rows`
/// view of a `rows x cols` block whose rows start `soff` elements into a parent with an
/// odd pitch, into a block of a parent whose rows start `doff` elements in (so that the
/// first element of either side sits at any byte alignment), rows flipped when `flip`.
fn word_case(
    isz: usize,
    (rows, cols): (i64, i64),
    soff: i64,
    doff: i64,
    flip: bool,
) -> (StridedLayout, StridedLayout) {
    let sp = c(&[rows, cols + 16 + 5], isz);
    let block = sp.sliced(s![.., soff..soff + cols]).unwrap();
    let block = if flip {
        block.sliced(s![..;-1, ..]).unwrap()
    } else {
        block
    };
    let src = block.permuted(&[1, 0]).unwrap();
    let dst = c(&[cols, rows + 16 + 3], isz)
        .sliced(s![.., doff..doff + rows])
        .unwrap();
    (src, dst)
}

/// (rows, cols) of the word transpose tests: sizes whose last tiles hold one row or one
/// column, and sizes with whole tiles (128 source bytes by 128 / isz rows) between partial
/// ones; every first tile at least 80% full, as the schedule wants for this kernel
/// (emptier ones take the multi-axis tiles).
fn word_sizes(isz: usize) -> [(i64, i64); 5] {
    if isz == 1 {
        [(129, 257), (257, 129), (193, 131), (131, 300), (257, 300)]
    } else {
        [(65, 129), (129, 65), (97, 67), (67, 200), (257, 300)]
    }
}

#[test]
fn word_transpose_cases_are_scheduled_as_transposes() {
    for isz in [1usize, 2] {
        for (rows, cols) in word_sizes(isz) {
            let (src, dst) = word_case(isz, (rows, cols), 3, 5, false);
            let steps =
                CopyPlan::new(&dst, &src)
                    .unwrap()
                    .schedule_with_small_copy(1 << 20, 1 << 20, 0);
            assert_eq!(kind(&steps[0]), "transpose", "{src} -> {dst}: {steps:?}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn word_transposes_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        // Every byte alignment of the source's first element, each with another of the
        // destination's, at every size of `word_sizes`.
        for s in 0..16 / isz as i64 {
            let d = (s * 7 + 3) % (16 / isz as i64);
            for (rows, cols) in word_sizes(isz) {
                for flip in [false, true] {
                    let (src, dst) = word_case(isz, (rows, cols), s, d, flip);
                    x.check(&src, &dst);
                }
            }
        }
        // Batches: (batch, rows, cols) blocks transposed per batch, odd extents.
        for (b, rows, cols) in [(3i64, 67i64, 45i64), (5, 32, 97)] {
            let src = c(&[b, rows, cols], isz).permuted(&[0, 2, 1]).unwrap();
            x.check(&src, &c(&[b, cols, rows], isz));
        }
    }
    x.assert_all("word transposes");
}

#[test]
#[ignore = "needs a CUDA device"]
fn word_transposes_into_rows_that_start_16_byte_aligned_are_exact() {
    // Sources whose rows start at every byte alignment, into dense destinations whose
    // rows all start 16-byte aligned (the kernel stores whole 16-byte chunks there):
    // whole tiles, a partial last tile along either axis, rows flipped.
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for s in 0..16 / isz as i64 {
            for (rows, cols) in [(320i64, 300i64), (256 + 16, 129), (144, 512 + 3)] {
                for flip in [false, true] {
                    let parent = c(&[rows, cols + s], isz);
                    let block = parent.sliced(s![.., s..s + cols]).unwrap();
                    let block = if flip {
                        block.sliced(s![..;-1, ..]).unwrap()
                    } else {
                        block
                    };
                    let src = block.permuted(&[1, 0]).unwrap();
                    let dst = c(&[cols, rows], isz);
                    assert_eq!((rows * isz as i64) % 16, 0);
                    x.check(&src, &dst);
                }
            }
        }
    }
    x.assert_all("word transposes into 16-byte aligned rows");
}

/// `len` elements of a dense 1-D parent starting `off` elements in, as `shape` (C order).
fn at_offset(isz: usize, off: i64, shape: &[i64]) -> StridedLayout {
    let n: i64 = shape.iter().product();
    c(&[n + off + 16], isz)
        .sliced(s![off..off + n])
        .unwrap()
        .reshaped(shape)
        .unwrap()
}

#[test]
fn channel_cases_are_scheduled_as_channels() {
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4, 8, 16] {
            let src = at_offset(isz, 3, &[1000, ch]).permuted(&[1, 0]).unwrap();
            let dst = at_offset(isz, 5, &[ch, 1000]);
            // Deinterleaving reads pixels up to 8 bytes apart through the channel kernel.
            if ch * isz as i64 <= 8 {
                let steps = CopyPlan::new(&dst, &src).unwrap().schedule_with_small_copy(
                    1 << 20,
                    1 << 20,
                    0,
                );
                assert_eq!(kind(&steps[0]), "channels", "{src} -> {dst}: {steps:?}");
            }
            // Interleaving: any channel count up to 16.
            let steps =
                CopyPlan::new(&src, &dst)
                    .unwrap()
                    .schedule_with_small_copy(1 << 20, 1 << 20, 0);
            assert_eq!(kind(&steps[0]), "channels", "{dst} -> {src}: {steps:?}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn channel_transposes_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4, 5, 8, 16] {
            // Pixel counts around the tile and its edges.
            for pixels in [64i64, 1000, 1024 / isz as i64 + 1, 3001] {
                let s = (pixels + ch) % 16;
                let d = (pixels * 7 + ch) % 16;
                // Interleaved -> planar, and back.
                let inter = at_offset(isz, s, &[pixels, ch]).permuted(&[1, 0]).unwrap();
                x.check(&inter, &at_offset(isz, d, &[ch, pixels]));
                let inter_dst = at_offset(isz, d, &[pixels, ch]).permuted(&[1, 0]).unwrap();
                x.check(&at_offset(isz, s, &[ch, pixels]), &inter_dst);
            }
        }
        // Every start of either side, 0 to 15 bytes in (three channels, a partial tile).
        for s in 0..16 / isz as i64 {
            let d = (s * 5 + 3) % (16 / isz as i64);
            let inter = at_offset(isz, s, &[1000, 3]).permuted(&[1, 0]).unwrap();
            x.check(&inter, &at_offset(isz, d, &[3, 1000]));
            let inter_dst = at_offset(isz, d, &[1000, 3]).permuted(&[1, 0]).unwrap();
            x.check(&at_offset(isz, s, &[3, 1000]), &inter_dst);
        }
        // Pixels with a gap (RGBA read as RGB planes), and batches (NHWC <-> NCHW).
        let rgba = c(&[3001, 4], isz).sliced(s![.., 0..3]).unwrap();
        x.check(&rgba.permuted(&[1, 0]).unwrap(), &c(&[3, 3001], isz));
        let nhwc = c(&[3, 37, 41, 3], isz).permuted(&[0, 3, 1, 2]).unwrap();
        x.check(&nhwc, &c(&[3, 3, 37, 41], isz));
        let to_nhwc = c(&[3, 37, 41, 3], isz).permuted(&[0, 3, 1, 2]).unwrap();
        x.check(&c(&[3, 3, 37, 41], isz), &to_nhwc);
    }
    x.assert_all("channel transposes");
}

/// Channels picked out of pixels up to 8 bytes apart (every channel count and pixel
/// step the deinterleaving kernel takes), off 16-byte alignment so that the group kernel
/// leaves them to it. Four byte channels out of 8-byte pixels failed to load their
/// kernel (its tile took more shared memory than a block may declare).
#[test]
#[ignore = "needs a CUDA device"]
fn channels_out_of_pixels_with_gaps_are_exact() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        let max_step = 8 / isz as i64;
        for step in 2..=max_step {
            for ch in 2..=step {
                for pixels in [1000i64, 8193] {
                    let src = at_offset(isz, 1, &[pixels, step])
                        .sliced(s![.., 0..ch])
                        .unwrap()
                        .permuted(&[1, 0])
                        .unwrap();
                    let dst = at_offset(isz, 3, &[ch, pixels]);
                    let steps = CopyPlan::new(&dst, &src).unwrap().schedule_with_small_copy(
                        1 << 20,
                        1 << 20,
                        0,
                    );
                    assert_eq!(kind(&steps[0]), "channels", "{src} -> {dst}: {steps:?}");
                    x.check(&src, &dst);
                }
            }
        }
    }
    x.assert_all("channels out of pixels with gaps");
}

/// Channel layouts whose every plane and batch starts on 16 bytes: `batches` batches of
/// `pixels` pixels of `ch` channels, `(interleaved, planar)`; the planes padded to a
/// multiple of 16 bytes (plus one more 16-byte chunk), the interleaved batches to 16 bytes
/// past a multiple of 16, both first elements `skip` 16-byte chunks into their parents.
fn grouped_case(
    isz: usize,
    ch: i64,
    pixels: i64,
    batches: i64,
    skip: i64,
) -> (StridedLayout, StridedLayout) {
    let g = 16 / isz as i64;
    let pad = (pixels + g - 1) / g * g + g;
    let inter = c(&[batches + 1, pad, ch], isz)
        .sliced(s![1.., 0..pixels, ..])
        .unwrap();
    let planar = c(&[batches + 1, ch, pad], isz)
        .sliced(s![1.., .., 0..pixels])
        .unwrap();
    let (inter, planar) = if skip == 0 {
        (inter, planar)
    } else {
        // Both views shifted `skip` chunks (`skip * g` elements) into a larger parent.
        let shift = |l: StridedLayout| {
            let off = l.slice_offset() + skip * g;
            StridedLayout::with_offset(l.shape(), l.strides(), isz, off).unwrap()
        };
        (shift(inter), shift(planar))
    };
    (inter.permuted(&[0, 2, 1]).unwrap(), planar)
}

#[test]
fn channel_layouts_on_16_bytes_take_the_group_kernel() {
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4] {
            for (pixels, batches) in [(256 / isz as i64, 1i64), (1000, 3), (9216, 2)] {
                let (inter, planar) = grouped_case(isz, ch, pixels, batches, 1);
                for (src, dst) in [(&inter, &planar), (&planar, &inter)] {
                    let plan = CopyPlan::new(dst, src).unwrap();
                    let steps = plan.schedule_with_small_copy(1 << 20, 1 << 20, 0);
                    assert_eq!(kind(&steps[0]), "channels", "{src} -> {dst}: {steps:?}");
                    let axes = plan.channel_transpose_axes().unwrap();
                    assert!(
                        plan.channel_groups_aligned(axes, 1 << 20, 1 << 20),
                        "{src} -> {dst}"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn channel_transposes_in_aligned_groups_are_exact() {
    // Both directions, 2 to 4 channels: pixel counts with a partial last group, a partial
    // last warp, one short batch (one warp a block) and whole blocks; padded planes and
    // batches; first elements on and one chunk past the parents' starts.
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4] {
            for (pixels, batches) in [
                (256 / isz as i64, 1i64),
                (300, 3),
                (1000, 2),
                (4096 + 8, 1),
                (9216, 3),
                (16 * 32 * 3 + 5, 2),
            ] {
                for skip in [0i64, 1] {
                    let (inter, planar) = grouped_case(isz, ch, pixels, batches, skip);
                    x.check(&inter, &planar);
                    x.check(&planar, &inter);
                }
            }
        }
    }
    x.assert_all("channel transposes in aligned groups");
}

/// One channel `ch` of `batches` images of `h x w` pixels, `step` elements a pixel, into
/// a dense array.
fn picked_case(
    isz: usize,
    (batches, h, w): (i64, i64, i64),
    step: i64,
    ch: i64,
) -> (StridedLayout, StridedLayout) {
    let src = c(&[batches, h, w, step], isz)
        .sliced(s![.., .., .., ch])
        .unwrap();
    (src, c(&[batches, h, w], isz))
}

#[test]
fn picked_channels_at_16_bytes_take_the_group_kernel() {
    for isz in [1usize, 2] {
        for step in [2i64, 3, 4] {
            for shape in [(1i64, 37i64, 41i64), (2, 64, 64)] {
                let (src, dst) = picked_case(isz, shape, step, 0);
                let steps = CopyPlan::new(&dst, &src).unwrap().schedule_with_small_copy(
                    1 << 20,
                    1 << 20,
                    0,
                );
                assert_eq!(kind(&steps[0]), "channels", "{src} -> {dst}: {steps:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn picked_channels_and_pixels_with_gaps_are_exact() {
    // One channel out of 2 to 4 a pixel (the first one in aligned groups, the others
    // elementwise), whole and partial groups and warps; x[::step] of a source that ends
    // at its last element (the gap after the last pixel is outside its memory); RGBA
    // read as RGB planes into padded planes.
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for step in [2i64, 3, 4] {
            for shape in [
                (1i64, 37i64, 41i64),
                (2, 64, 64),
                (1, 1, 300),
                (3, 16, 32 * 16 + 1),
            ] {
                for ch in 0..step {
                    let (src, dst) = picked_case(isz, shape, step, ch);
                    x.check(&src, &dst);
                }
            }
            for n in [4096i64, 4096 + 5, 16 * 32 * 3 + 1] {
                let src = c(&[(n - 1) * step + 1], isz).sliced(s![..;step]).unwrap();
                x.check(&src, &c(&[n], isz));
            }
        }
        for pixels in [1000i64, 1024 + 7] {
            let rgba = c(&[2, pixels, 4], isz)
                .sliced(s![.., .., 0..3])
                .unwrap()
                .permuted(&[0, 2, 1])
                .unwrap();
            let planes = c(&[2, 3, 1040], isz).sliced(s![.., .., 0..pixels]).unwrap();
            x.check(&rgba, &planes);
        }
    }
    x.assert_all("picked channels and pixels with gaps");
}

#[test]
fn reversed_channels_are_scheduled_as_such() {
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4, 16] {
            let src = at_offset(isz, 3, &[1000, ch])
                .sliced(s![.., ..;-1])
                .unwrap();
            let dst = at_offset(isz, 5, &[1000, ch]);
            let steps =
                CopyPlan::new(&dst, &src)
                    .unwrap()
                    .schedule_with_small_copy(1 << 20, 1 << 20, 0);
            assert_eq!(kind(&steps[0]), "reversed", "{src} -> {dst}: {steps:?}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn reversed_channels_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4, 5, 16] {
            for pixels in [64i64, 1000, 4096 / isz as i64 + 1, 5003] {
                let s = (pixels + ch) % 16;
                let d = (pixels * 5 + ch) % 16;
                let src = at_offset(isz, s, &[pixels, ch])
                    .sliced(s![.., ..;-1])
                    .unwrap();
                x.check(&src, &at_offset(isz, d, &[pixels, ch]));
            }
        }
        // Batches: (4, 37, 41, 3) RGB -> BGR.
        let src = c(&[4, 37, 41, 3], isz)
            .sliced(s![.., .., .., ..;-1])
            .unwrap();
        x.check(&src, &c(&[4, 37, 41, 3], isz));
    }
    x.assert_all("channel reversals");
}

/// Rows of `row` elements starting `s` elements into a parent with an odd pitch, into rows
/// starting `d` elements into another: both sides' rows contiguous, at any alignment.
fn rows_case(isz: usize, rows: i64, row: i64, s: i64, d: i64) -> (StridedLayout, StridedLayout) {
    let src = c(&[rows, row + 16 + 7], isz)
        .sliced(s![.., s..s + row])
        .unwrap();
    let dst = c(&[rows, row + 16 + 3], isz)
        .sliced(s![.., d..d + row])
        .unwrap();
    (src, dst)
}

#[test]
fn shifted_rows_are_scheduled_as_rows() {
    for isz in [1usize, 2, 4] {
        let (src, dst) = rows_case(isz, 5, 1000, 1, 2);
        let steps =
            CopyPlan::new(&dst, &src)
                .unwrap()
                .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        assert_eq!(kind(&steps[0]), "rows", "{src} -> {dst}: {steps:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn shifted_rows_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2, 4] {
        let per = 16 / isz as i64;
        for s in 0..per {
            let d = (s * 7 + 3) % per;
            // Rows of one partial tile, of exactly one 8 KiB tile and one byte more,
            // and of several tiles.
            for row in [129 / isz as i64 + 1, 8192 / isz as i64, 8193, 20001] {
                let (src, dst) = rows_case(isz, 3, row, s, d);
                x.check(&src, &dst);
            }
        }
        // Rows in a batch of batches, a broadcast source and a flipped row order.
        let src = c(&[4, 5, 1000], isz).sliced(s![.., .., 1..]).unwrap();
        x.check(&src, &c(&[4, 5, 999], isz));
        let src = c(&[1, 1001], isz)
            .sliced(s![.., 1..])
            .unwrap()
            .broadcast_to(&[6, 1000])
            .unwrap();
        x.check(&src, &c(&[6, 1000], isz));
        let src = c(&[7, 1001], isz).sliced(s![..;-1, 1..]).unwrap();
        x.check(&src, &c(&[7, 1000], isz));
    }
    x.assert_all("shifted rows");
}

/// `rows` rows of `row` elements read backwards: the source's rows start `s` elements
/// into rows padded past 16 bytes, the destination's `d` elements in.
fn reversed_rows_case(
    isz: usize,
    rows: i64,
    row: i64,
    s: i64,
    d: i64,
) -> (StridedLayout, StridedLayout) {
    let (src, dst) = rows_case(isz, rows, row, s, d);
    (src.sliced(s![.., ..;-1]).unwrap(), dst)
}

/// The reversed-rows copies of `isz`-byte elements the GPU test checks: rows of 128 bytes
/// (the shortest taken), of an odd length inside one tile, of exactly one 32 KiB tile and
/// one element more, and of several tiles with a partial last one, at every element-aligned start of the source (the
/// destination's start moving with it); a whole array reversed (one long row, odd length
/// and start); rows in a batch of batches with the batch order flipped too; a broadcast
/// source row into padded destination rows.
fn reversed_rows_cases(isz: usize) -> Vec<(StridedLayout, StridedLayout)> {
    let mut cases = Vec::new();
    let per = 16 / isz as i64;
    for s in 0..per {
        let d = (s * 7 + 3) % per;
        let tile = 32768 / isz as i64;
        for row in [128 / isz as i64, 4099, tile, tile + 1, 70001] {
            cases.push(reversed_rows_case(isz, 3, row, s, d));
        }
    }
    let n = 100_003;
    let all = c(&[n + 5], isz)
        .sliced(s![3..n + 3])
        .unwrap()
        .sliced(s![..;-1])
        .unwrap();
    cases.push((all, c(&[n], isz)));
    let batches = c(&[4, 5, 1000], isz).sliced(s![..;-1, .., ..;-1]).unwrap();
    cases.push((batches, c(&[4, 5, 1000], isz)));
    let broadcast = c(&[1, 1000], isz)
        .sliced(s![.., ..;-1])
        .unwrap()
        .broadcast_to(&[6, 1000])
        .unwrap();
    // Into padded rows: into a dense destination the row is a repeated pattern.
    let padded = c(&[6, 1010], isz).sliced(s![.., ..1000]).unwrap();
    cases.push((broadcast, padded));
    cases
}

#[test]
fn reversed_rows_are_scheduled_as_such() {
    for isz in [1usize, 2] {
        for (src, dst) in reversed_rows_cases(isz) {
            let steps =
                CopyPlan::new(&dst, &src)
                    .unwrap()
                    .schedule_with_small_copy(1 << 20, 1 << 20, 0);
            assert_eq!(
                kind(&steps[0]),
                "reversed rows",
                "{src} -> {dst}: {steps:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn reversed_rows_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        for (src, dst) in reversed_rows_cases(isz) {
            x.check(&src, &dst);
        }
    }
    // 16 and 8 starts of five row lengths, three other cases of each size.
    assert_eq!(x.count, (16 + 8) * 5 + 2 * 3, "copies checked");
    x.assert_all("reversed rows");
}

#[test]
fn small_matrix_batches_are_scheduled_as_such() {
    for (isz, b, m, n) in [
        (1usize, 8192i64, 16i64, 48i64),
        (2, 1000, 32, 8),
        (2, 777, 16, 16),
        (4, 999, 16, 16),
        (4, 50, 8, 64),
        (4, 3, 2, 2),
    ] {
        let src = c(&[b, m, n], isz).permuted(&[0, 2, 1]).unwrap();
        let dst = c(&[b, n, m], isz);
        let steps =
            CopyPlan::new(&dst, &src)
                .unwrap()
                .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        assert_eq!(kind(&steps[0]), "matrices", "{src} -> {dst}: {steps:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn small_matrix_batches_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2, 4] {
        // Matrices of (m, n): rows of the destination a whole number of 4-byte words;
        // batches that do not fill the last tile; starts at every element offset.
        for (m, n) in [
            (16i64, 48i64),
            (48, 16),
            (8, 32),
            (3, 4),
            (64, 64),
            (5, 12),
            (16, 16),
            (64, 8),
            (2, 7),
        ] {
            if (m * isz as i64) % 4 != 0 {
                continue;
            }
            for b in [1i64, 7, 1001] {
                let s = (b + m) % (16 / isz as i64);
                let d = (b * 3 + n) % (16 / isz as i64);
                let src = at_offset(isz, s, &[b, m, n]).permuted(&[0, 2, 1]).unwrap();
                x.check(&src, &at_offset(isz, d, &[b, n, m]));
            }
        }
    }
    // More runs of 4-byte matrices than the grid has warps: each warp takes several.
    let src = c(&[20001, 16, 16], 4).permuted(&[0, 2, 1]).unwrap();
    x.check(&src, &c(&[20001, 16, 16], 4));
    x.assert_all("small-matrix batches");
}

/// Rows of `len` elements, `rows` of them: the source's row steps `ss` elements (a
/// negative step walks it backwards) from `s` elements into a parent with an odd pitch,
/// the destination's steps `ds` from `d` elements in; with `broadcast`, every source row
/// is the same one (a cached source: the elementwise kernel whatever the row length).
fn runs_case(
    isz: usize,
    (rows, len): (i64, i64),
    (ss, s): (i64, i64),
    (ds, d): (i64, i64),
    broadcast: bool,
) -> (StridedLayout, StridedLayout) {
    let side = |step: i64, off: i64, pad: i64, n: i64| {
        let span = step.abs() * (len - 1) + 1;
        let v = c(&[n, off + span + pad], isz)
            .sliced(s![.., off..off + span;step.abs()])
            .unwrap();
        if step < 0 {
            v.sliced(s![.., ..;-1]).unwrap()
        } else {
            v
        }
    };
    let src = if broadcast {
        side(ss, s, 7, 1).broadcast_to(&[rows, len]).unwrap()
    } else {
        side(ss, s, 7, rows)
    };
    (src, side(ds, d, 3, rows))
}

/// The run kernel's cases and their neighbours: rows shorter than a group and longer,
/// sources read forwards, backwards or strided, destinations with and without gaps,
/// every start alignment, broadcast sources.
fn runs_cases() -> Vec<(StridedLayout, StridedLayout)> {
    let mut out = Vec::new();
    for isz in [1usize, 2, 4] {
        let per = 16 / isz as i64;
        for len in (1..=20).chain([37, 300, 1001]) {
            for (i, (ss, ds, broadcast)) in [
                (5, 1, false),
                (-1, 1, false),
                (-3, 1, true),
                (1, 2, false),
                (1, -2, true),
                (3, 2, false),
                (2, 3, true),
                (1, 1, true),
                (-1, 1, true),
                (1, 3, true),
            ]
            .into_iter()
            .enumerate()
            {
                let s = (len + 3 * i as i64) % per;
                let d = (len * 5 + i as i64) % per;
                out.push(runs_case(isz, (9, len), (ss, s), (ds, d), broadcast));
            }
        }
    }
    out
}

/// The run kernel's rows (`ElementRuns`) of the elementwise steps of `cases`.
fn run_kernel_rows(
    cases: Vec<(StridedLayout, StridedLayout)>,
) -> Vec<stridekit::layout::ElementRuns> {
    let mut out = Vec::new();
    for (src, dst) in cases {
        let plan = CopyPlan::new(&dst, &src).unwrap();
        for step in plan.schedule_with_small_copy(1 << 20, 1 << 20, 0) {
            if let CopyStep::Elementwise(p) = step {
                out.extend(p.element_runs());
            }
        }
    }
    out
}

#[test]
fn elementwise_byte_runs_take_the_run_kernel_forwards_and_backwards() {
    let mut by_direction = std::collections::BTreeMap::new();
    for r in run_kernel_rows(runs_cases()) {
        if let Some(step) = r.source_step() {
            *by_direction.entry(step).or_insert(0) += 1;
        }
    }
    assert_eq!(by_direction.len(), 2, "{by_direction:?}");
    assert!(by_direction.values().all(|&n| n >= 15), "{by_direction:?}");
}

/// The elementwise copies around the byte runs (`ElementRuns`), byte for byte: rows
/// shorter than a group and longer, every start alignment, reversed and broadcast
/// sources, and the strided sides and wider elements that keep one element a thread.
#[test]
#[ignore = "needs a CUDA device"]
fn elementwise_runs_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for (src, dst) in runs_cases() {
        x.check(&src, &dst);
    }
    x.assert_all("elementwise runs");
}

/// Bytes and halfwords gathered along rows of several axes (`ElementRuns::row`): pixels of `ch`
/// channels written interleaved from padded planes (read forwards, or the channels
/// backwards),
/// rows of pixels dense or `gap` bytes apart in the destination, every start alignment.
fn gathered_rows_cases() -> Vec<(StridedLayout, StridedLayout)> {
    let mut out = Vec::new();
    for isz in [1usize, 2] {
        // Start offsets over a 16-byte group's elements.
        let per = 16 / isz as i64;
        for ch in [2i64, 3, 4, 5] {
            for w in [5i64, 7, 16, 33, 100] {
                for gap in 0..3i64 {
                    for (i, reversed) in [false, true].into_iter().enumerate() {
                        let s = (w + ch + 2 * i as i64) % per;
                        let d = (w * 3 + gap + i as i64) % per;
                        let rows = 6;
                        let planes = StridedLayout::with_offset(
                            &[rows, w, ch],
                            &[w + 1, 1, rows * (w + 1) + 1],
                            isz,
                            s,
                        )
                        .unwrap();
                        let planes = if reversed {
                            planes.sliced(s![.., .., ..;-1]).unwrap()
                        } else {
                            planes
                        };
                        let pixels = StridedLayout::with_offset(
                            &[rows, w, ch],
                            &[w * ch + gap, ch, 1],
                            isz,
                            d,
                        )
                        .unwrap();
                        out.push((planes, pixels));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn gathered_rows_take_the_run_kernel_over_several_axes() {
    let mut by_axes = std::collections::BTreeMap::new();
    for r in run_kernel_rows(gathered_rows_cases()) {
        if r.source_step().is_none() {
            *by_axes.entry(r.row.len()).or_insert(0) += 1;
        }
    }
    assert!(by_axes.get(&2).is_some_and(|&n| n >= 20), "{by_axes:?}");
    assert!(by_axes.get(&3).is_some_and(|&n| n >= 10), "{by_axes:?}");
}

/// The gathered rows above, byte for byte (poisoned destination, random source).
#[test]
#[ignore = "needs a CUDA device"]
fn gathered_rows_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for (src, dst) in gathered_rows_cases() {
        x.check(&src, &dst);
    }
    x.assert_all("gathered rows");
}

/// A (63, 200, 55) copy of f32 into rows of 63 elements 64 apart (no divisor of 63 keeps
/// 16-byte words aligned), `s` and `d` elements into their memory.
fn word_multiple_case(s: i64, d: i64) -> (StridedLayout, StridedLayout) {
    let shape = [63, 200, 55];
    let src = StridedLayout::with_offset(&shape, &[112, 14560, 2], 4, s).unwrap();
    let dst = StridedLayout::with_offset(&shape, &[1, 3520, 64], 4, d).unwrap();
    (src, dst)
}

#[test]
fn tiles_over_odd_rows_keep_word_multiples_on_the_16_byte_grid() {
    let (src, dst) = word_multiple_case(0, 0);
    let steps = CopyPlan::new(&dst, &src)
        .unwrap()
        .schedule_with_small_copy(1 << 20, 1 << 20, 0);
    let CopyStep::Tiled(t) = &steps[0] else {
        panic!("{steps:?}")
    };
    assert_eq!(t.write_word * t.itemsize, 16, "{t:?}");
    assert!(steps.len() > 1, "{steps:?}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn tiles_with_word_multiple_extents_and_their_remainders_are_exact() {
    let mut x = Exact::new();
    // On the 16-byte grid (16-byte words and a remainder slab) and off it, both sides.
    for (s, d) in [(0, 0), (1, 0), (0, 1), (3, 2), (4, 4)] {
        let (src, dst) = word_multiple_case(s, d);
        x.check(&src, &dst);
    }
    x.assert_all("tiles with word-multiple extents");
}

/// Multi-axis tiles whose runs start anywhere: scaled-down layouts of the random set's
/// worst cases, both first elements `s` and `d` elements past 16-byte alignment: (source,
/// destination).
fn run_tile_cases(s: i64, d: i64) -> Vec<(StridedLayout, StridedLayout)> {
    let l = |shape: &[i64], strides: &[i64], isz: usize, off: i64| {
        StridedLayout::with_offset(shape, strides, isz, off).unwrap()
    };
    let n = 40i64;
    let len = 2000i64;
    vec![
        // Bytes, case 106: a dense source with one axis flipped (1323-byte runs) into
        // 98-byte destination runs, four axes permuted.
        (
            l(&[49, 3, n, 3, 9], &[27, 1, 4131, -1377, 3], 1, 2754 + s),
            l(&[49, 3, n, 3, 9], &[1, -147, 3969, 49, 441], 1, 294 + d),
        ),
        // Bytes, case 63: a row read backwards (64-byte tile runs) into 135-byte runs 138
        // bytes apart.
        (
            l(
                &[3, 45, len],
                &[2 * len + 2, -3 * (2 * len + 2), -1],
                1,
                132 * (2 * len + 2) + len - 1 + s,
            ),
            l(&[3, 45, len], &[1, 3, 138], 1, d),
        ),
        // Halfwords, case 99: (55, 53) blocks transposed out of padded planes, 106- and
        // 110-byte runs.
        (
            l(&[70, 19, 55, 53], &[54, 56 * 3782, 3782, 1], 2, s),
            l(&[70, 19, 55, 53], &[1045, 55, 1, 70 * 1045], 2, d),
        ),
        // 4-byte elements, case 123: rows read backwards into 45 of every 47 elements of
        // three interleaved planes.
        (
            l(&[45, 3000, 3], &[3001, -1, 3001 * 45], 4, 2999 + s),
            l(&[45, 3000, 3], &[-1, 141, 47], 4, 44 + d),
        ),
    ]
}

#[test]
fn run_tile_cases_take_multi_axis_tiles() {
    for (src, dst) in run_tile_cases(3, 5) {
        let steps =
            CopyPlan::new(&dst, &src)
                .unwrap()
                .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        assert_eq!(kind(&steps[0]), "tiled", "{src} -> {dst}: {steps:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn run_tiles_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2, 4] {
        // Every element-aligned start of the source, the destination's another.
        let per_chunk = 16 / isz as i64;
        for s in 0..per_chunk {
            let d = (s * 7 + 3) % per_chunk;
            for (src, dst) in run_tile_cases(s, d) {
                if src.itemsize() == isz {
                    x.check(&src, &dst);
                }
            }
        }
    }
    assert_eq!(x.count, 16 * 2 + 8 + 4, "every layout at every start");
    x.assert_all("run tiles");
}

/// Patterns repeated into a dense destination of `isz`-byte elements that starts `d`
/// elements past 16-byte alignment: (source, destination). A constant fill, rows of 3
/// and of a flipped 129, case 117's row (25 elements every third, each written three
/// times), an 8 KiB row read every other element, two broadcast axes over a strided
/// row, and a copy of 6 elements. (16-byte elements go elementwise.)
fn repeat_cases(isz: usize, d: i64) -> Vec<(StridedLayout, StridedLayout)> {
    let l = |shape: &[i64], strides: &[i64], off: i64| {
        StridedLayout::with_offset(shape, strides, isz, off).unwrap()
    };
    let row = 8192 / isz as i64;
    let wide = l(&[40, row], &[0, 2], 1);
    [
        l(&[1000, 37], &[0, 0], 5),
        l(&[5000, 3], &[0, 1], 1),
        l(&[300, 129], &[0, -1], 200),
        l(&[4000, 25, 3], &[0, 3, 0], 2),
        wide,
        l(&[7, 9, 50], &[0, 0, 2], 3),
        l(&[2, 3], &[0, 1], 0),
    ]
    .into_iter()
    .map(|src| {
        let dst = at_offset(isz, d, src.shape());
        (src, dst)
    })
    .collect()
}

#[test]
fn repeated_patterns_are_scheduled_as_such() {
    for isz in [1usize, 2, 4, 8, 16] {
        for d in [0, 1] {
            for (src, dst) in repeat_cases(isz, d) {
                let steps = CopyPlan::new(&dst, &src).unwrap().schedule_with_small_copy(
                    1 << 20,
                    1 << 20,
                    0,
                );
                assert_eq!(steps.len(), 1, "{src} -> {dst}: {steps:?}");
                let repeat = kind(&steps[0]) == "repeat";
                assert_eq!(repeat, isz < 16, "{src} -> {dst}: {steps:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn repeated_patterns_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2, 4, 8, 16] {
        for d in 0..16 / isz as i64 {
            for (src, dst) in repeat_cases(isz, d) {
                x.check(&src, &dst);
            }
        }
    }
    assert_eq!(
        x.count,
        7 * (16 + 8 + 4 + 2 + 1),
        "every pattern at every start"
    );
    x.assert_all("repeated patterns");
}

/// Tiles of one-element reads of 1- and 2-byte elements with fewer elements than a block
/// has threads, or a last row of reads that only some threads fill (the kernel has each
/// such thread repeat its first element instead of testing every load), with axes either
/// side walks backwards (offsets counted from a tile's lowest element), the first
/// elements `s` and `d` elements past 16-byte alignment: (source, destination).
fn short_tile_cases(isz: usize, s: i64, d: i64) -> Vec<(StridedLayout, StridedLayout)> {
    let l = |shape: &[i64], strides: &[i64], off: i64| {
        StridedLayout::with_offset(shape, strides, isz, off).unwrap()
    };
    vec![
        // One tile of 5 x 7 x 3 = 105 elements: 151 of the 256 threads hold none.
        (
            l(&[5, 7, 3], &[1, 5, 35], s),
            l(&[5, 7, 3], &[-21, 3, -1], 4 * 21 + 2 + d),
        ),
        // One tile of 15 x 11 x 3 = 495: one full row of reads and 239 of another.
        (
            l(&[15, 11, 3], &[-1, 45, 15], 14 + s),
            l(&[15, 11, 3], &[33, -3, 1], 30 + d),
        ),
        // Many tiles, each ending in a part row: a flipped (37, 51) block transposed in
        // each of 40 planes, planes read backwards too.
        (
            l(
                &[40, 37, 51],
                &[-37 * 51, 1, -37],
                39 * 37 * 51 + 50 * 37 + s,
            ),
            l(&[40, 37, 51], &[37 * 51, -51, 1], 36 * 51 + d),
        ),
    ]
}

#[test]
fn short_tiles_of_small_elements_read_one_element_a_load() {
    for isz in [1usize, 2] {
        for (i, (src, dst)) in short_tile_cases(isz, 3, 5).into_iter().enumerate() {
            let steps =
                CopyPlan::new(&dst, &src)
                    .unwrap()
                    .schedule_with_small_copy(1 << 20, 1 << 20, 0);
            let CopyStep::Tiled(t) = &steps[0] else {
                panic!("{src} -> {dst}: {steps:?}")
            };
            assert_eq!(t.read_word, 1, "{src} -> {dst}: {t:?}");
            assert_ne!(t.volume() % 256, 0, "{src} -> {dst}: {t:?}");
            // The first fits in one tile smaller than a block; the third takes many.
            match i {
                0 => assert!(t.volume() < 256, "{t:?}"),
                2 => assert!(t.tiles() > 1, "{t:?}"),
                _ => {}
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn short_tiles_of_small_elements_are_exact_at_every_start_alignment() {
    let mut x = Exact::new();
    for isz in [1usize, 2] {
        let per_chunk = 16 / isz as i64;
        for s in 0..per_chunk {
            let d = (s * 5 + 1) % per_chunk;
            for (src, dst) in short_tile_cases(isz, s, d) {
                x.check(&src, &dst);
            }
        }
    }
    assert_eq!(x.count, (16 + 8) * 3, "every layout at every start");
    x.assert_all("short tiles of one-element reads");
}

/// Tiles of 1-, 2- and 4-byte elements read in words, sized so that a block's threads
/// hold 1, 2, up to 4 or up to 8 read words of a tile: every tile loop the kernel compiles
/// (`tile_loop` in `tile_copy.cu`, picked per launch) runs. A dense source read along its
/// last axis, into a destination whose middle axis is fastest with a gap after each of its
/// rows; the first elements `s` and `d` elements past 16-byte alignment: (element bytes,
/// the read words a thread holds at `s = d = 0`, source, destination).
fn depth_cases(s: i64, d: i64) -> Vec<(usize, usize, StridedLayout, StridedLayout)> {
    let case = |isz: usize, per: usize, [c, b, a]: [i64; 3]| {
        let src = StridedLayout::with_offset(&[c, b, a], &[b * a, a, 1], isz, s).unwrap();
        let dst = StridedLayout::with_offset(&[c, b, a], &[(b + 1) * a, 1, b + 1], isz, d).unwrap();
        (isz, per, src, dst)
    };
    vec![
        case(1, 1, [300, 24, 80]),
        case(1, 2, [600, 13, 100]),
        case(1, 4, [600, 9, 130]),
        case(1, 8, [2, 129, 100]),
        case(2, 1, [300, 200, 8]),
        case(2, 2, [300, 17, 100]),
        case(2, 4, [300, 13, 130]),
        case(2, 8, [300, 17, 130]),
        case(4, 1, [2, 3, 3]),
        case(4, 2, [300, 129, 8]),
        case(4, 4, [300, 9, 130]),
        case(4, 8, [1000, 17, 33]),
    ]
}

/// The tile loop a launch runs: the fewest of 1, 2, 4 or 8 read words a thread that hold
/// the tile's reads on 256 threads.
fn loop_depth(t: &stridekit::TilePlan) -> usize {
    (t.volume() / t.read_word).div_ceil(256).next_power_of_two()
}

#[test]
fn depth_cases_run_every_tile_loop() {
    for (isz, per, src, dst) in depth_cases(0, 0) {
        let steps =
            CopyPlan::new(&dst, &src)
                .unwrap()
                .schedule_with_small_copy(1 << 20, 1 << 20, 0);
        let CopyStep::Tiled(t) = &steps[0] else {
            panic!("{src} -> {dst}: {steps:?}")
        };
        // Reads in words, or one-element reads of 4 bytes: not the one-element byte and
        // halfword loop, which always runs its full depth.
        assert!(t.read_word > 1 || isz == 4, "{src} -> {dst}: {t:?}");
        assert_eq!(loop_depth(t), per, "{src} -> {dst}: {t:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tile_loops_of_every_depth_are_exact() {
    /// Puts the engine's own rule back however the test ends.
    struct EngineRule;
    impl Drop for EngineRule {
        fn drop(&mut self) {
            stridekit::set_tile_blocks_per_sm(0);
        }
    }
    let mut x = Exact::new();
    // One block an SM: a block walks several tiles of a launch (the pipelined loop),
    // not one. Every copy is exact at any limit (a test beside this one only runs slower).
    stridekit::set_tile_blocks_per_sm(1);
    let _rule = EngineRule;
    for (s, d) in [(0, 0), (1, 3), (3, 0), (0, 2)] {
        for (_, _, src, dst) in depth_cases(s, d) {
            x.check(&src, &dst);
        }
    }
    assert_eq!(x.count, 4 * 12, "every layout at every start");
    x.assert_all("tile loops of every depth");
}
