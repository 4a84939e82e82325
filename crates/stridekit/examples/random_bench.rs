//! Copies at the memory roofline? 200 random layouts (fixed seed), each 64-128 MiB of
//! elements, device to device: `cargo run --release --example random_bench [N [FILE]]` on
//! a GPU (`random_bench --cases 2,16,26 [FILE]`: those cases only, `--cases tiled` those
//! whose schedule takes multi-axis tiles; `RANDOM_SEED=0x1234
//! random_bench ...`: another set of the same kind, for layouts nobody tuned for;
//! `RANDOM_MIB=1 random_bench ...`: cases of 1-2 MiB instead, where launches and round
//! trips weigh more than bandwidth; `RANDOM_TILE_BLOCKS=6 random_bench ...`: the tile
//! kernel at most 6 blocks an SM, `stridekit::set_tile_blocks_per_sm`;
//! `RANDOM_IMAGE_TILES=0 random_bench ...`: one-element byte tiles on the tile kernel
//! instead of the image tile kernel, `stridekit::set_image_tiles`; `random_bench
//! --plans [SMS]`: each case's schedule, without a GPU). With
//! FILE, every case (layouts, roofline bytes, time) is written there as JSON lines, for
//! `bench/random_compare.py` to time PyTorch on the same layouts.
//!
//! Each case is checked byte for byte (gaps of the destination included) against the
//! source's pattern on the host, on every core (`tests/common/pattern_check.rs`; a CPU
//! test in `cpu_copy.rs` holds it against the plain reference copy), then timed (median
//! of 5 device times, `examples/common/timing.rs`). Its roofline is the DRAM traffic it
//! cannot avoid - the 32-byte sectors its reads touch (counted row by row along the
//! source's smallest stride, capped by the source's span; broadcast axes read once) plus
//! the bytes it writes - moved at the bandwidth of a contiguous 1 GiB copy measured in
//! the same run. Efficiency = roofline time / measured time. Prints every case, then the
//! median, the 10th percentile and the ten worst.

use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
use stridekit::{
    CopyPlan, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

fn err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "random_bench",
        rule: e.to_string(),
    }
}

#[path = "../tests/common/pattern_check.rs"]
mod pattern_check;
#[path = "../tests/common/random_set.rs"]
mod random_set;
#[path = "common/roofline.rs"]
mod roofline;
#[path = "common/timing.rs"]
mod timing;

const FILL: &str = r#"
extern "C" __global__ void fill(unsigned int* p, unsigned long long words) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < words;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned int w = (unsigned int)i;
        p[i] = (w * 2654435761u) ^ (w >> 7) ^ 0x5bd1e995u;
    }
}
"#;

/// The bounds the engine plans with on a GPU of `sms` SMs.
fn engine_bounds(sms: u64) -> stridekit::ScheduleBounds {
    stridekit::ScheduleBounds::for_sms(stridekit::small_copy_elements(), sms)
}

/// An elementwise step by the kernel the engine runs it with
/// ([`stridekit::elementwise_kernel`]): `runs(wN)`, `gathered(wN,A)` (rows gathered over A
/// axes) or `elementwise(wN)`.
fn elementwise_label(p: &CopyPlan) -> String {
    let w = p.itemsize;
    match stridekit::elementwise_kernel(p) {
        stridekit::ElementwiseKernel::Runs => format!("runs(w{w})"),
        stridekit::ElementwiseKernel::GatheredRows { axes } => format!("gathered(w{w},{axes})"),
        stridekit::ElementwiseKernel::Elements => format!("elementwise(w{w})"),
    }
}

/// The schedule's steps on a GPU of `sms` SMs (as the engine plans them), e.g.
/// `tiled(r16,w4)+elementwise`.
/// For a byte tile written a byte at a time, the share of its image plan's written words
/// that are edge words (what decides whether the image tile kernel takes it).
fn edge_share(t: &stridekit::TilePlan) -> String {
    if t.itemsize != 1 || t.write_word != 1 {
        return String::new();
    }
    match stridekit::layout::ImageTile::of(t) {
        Some(i) => format!(
            ",edges {:.2}",
            i.edges.len() as f64 / (i.edges.len() + i.interior.len()).max(1) as f64
        ),
        None => String::new(),
    }
}

fn steps(plan: &CopyPlan, dptr: u64, sptr: u64, sms: u64) -> String {
    plan.schedule_with_bounds(dptr, sptr, engine_bounds(sms))
        .iter()
        .map(|s| match s {
            stridekit::CopyStep::Memcpy(_) => "memcpy".to_string(),
            stridekit::CopyStep::Elementwise(p) => elementwise_label(p),
            stridekit::CopyStep::Transpose { .. } => "transpose".to_string(),
            stridekit::CopyStep::Channels { plan, a, l } => {
                format!("channels({}x{})", plan.shape[*a], plan.shape[*l])
            }
            stridekit::CopyStep::ReversedChannels { plan, channels, .. } => {
                format!("reversed({})", plan.shape[*channels])
            }
            stridekit::CopyStep::Rows { plan } => {
                format!("rows({})", plan.shape[plan.ndim() - 1])
            }
            stridekit::CopyStep::Repeat { plan, outer } => {
                format!("repeat({})", plan.shape[*outer..].iter().product::<i64>())
            }
            stridekit::CopyStep::ReversedRows { plan } => {
                format!("reversed rows({})", plan.shape[plan.ndim() - 1])
            }
            stridekit::CopyStep::SmallMatrices { plan, a, l } => {
                format!("matrices({}x{})", plan.shape[*l], plan.shape[*a])
            }
            stridekit::CopyStep::Tiled(t) => format!(
                "tiled(v{},r{},w{}{})",
                t.volume(),
                t.read_word * t.itemsize,
                t.write_word * t.itemsize,
                edge_share(t)
            ),
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// The number in environment variable `name`, within `range` (`what` names its unit in the
/// error), or `default` where it is not set.
fn env_number(
    name: &str,
    range: std::ops::RangeInclusive<u64>,
    default: u64,
    what: &str,
) -> R<u64> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v.parse().ok().filter(|n| range.contains(n)).ok_or_else(|| {
            err(format!(
                "{name}={v}: expected {what} from {} to {}",
                range.start(),
                range.end()
            ))
        }),
    }
}

/// Each case's size: `RANDOM_MIB` to twice that MiB of elements (default 64, the
/// published set).
fn case_mib() -> R<u64> {
    env_number("RANDOM_MIB", 1..=1024, 64, "MiB")
}

/// The tile kernel's blocks an SM: `RANDOM_TILE_BLOCKS` where set (0: the engine's rule).
fn tile_blocks() -> R<usize> {
    Ok(env_number("RANDOM_TILE_BLOCKS", 0..=32, 0, "blocks an SM")? as usize)
}

/// The set's seed: `RANDOM_SEED` (decimal or `0x` hex) where set, else the published set's.
fn seed() -> R<u64> {
    match std::env::var("RANDOM_SEED") {
        Err(_) => Ok(random_set::SEED),
        Ok(v) => {
            let t = v.trim();
            let parsed = match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => t.parse(),
            };
            match parsed {
                Ok(s) if s != 0 => Ok(s),
                _ => Err(err(format!(
                    "RANDOM_SEED={v:?}: a seed is a nonzero integer, decimal or 0x hex"
                ))),
            }
        }
    }
}

/// The set's cases (of 200) whose schedule on a GPU of `sms` SMs holds a multi-axis tile
/// step, planned at 256-byte aligned bases as the benchmark's buffers are.
fn tiled_cases(seed: u64, mib: u64, sms: u64) -> R<Vec<usize>> {
    let bounds = engine_bounds(sms);
    let mut rng = random_set::Rng(seed);
    let mut cases = vec![];
    for case in 0..200 {
        let c = random_set::next_case(&mut rng, mib);
        let plan = CopyPlan::new(&c.dst, &c.src)?;
        let steps = plan.schedule_with_bounds(1 << 20, 1 << 20, bounds);
        if steps
            .iter()
            .any(|s| matches!(s, stridekit::CopyStep::Tiled(_)))
        {
            cases.push(case);
        }
    }
    Ok(cases)
}

/// The argument after `flag` when `flag` is the first argument ("" where none follows).
fn flag_value(flag: &str) -> Option<String> {
    let mut args = std::env::args().skip(1);
    (args.next().as_deref() == Some(flag)).then(|| args.next().unwrap_or_default())
}

/// The comma-separated case numbers after `flag` when it is the first argument.
fn case_list(flag: &str) -> Option<Vec<usize>> {
    flag_value(flag).map(|list| random_set::case_numbers(&list))
}

/// Each case's element size, schedule on a GPU of `sms` SMs (at 256-byte aligned bases,
/// as [`tiled_cases`] plans them) and layouts, one line a case: which cases of a set take
/// a kernel variant, without a GPU. A closed pipe (`random_bench --plans | head`) ends the listing quietly.
fn print_plans(seed: u64, mib: u64, sms: u64) -> R<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let mut rng = random_set::Rng(seed);
    for case in 0..200 {
        let c = random_set::next_case(&mut rng, mib);
        let plan = CopyPlan::new(&c.dst, &c.src)?;
        let line = writeln!(
            out,
            "case {case:3}: {} B [{}] src {} dst {}",
            c.src.itemsize(),
            steps(&plan, 1 << 20, 1 << 20, sms),
            c.src,
            c.dst
        );
        if line.is_err() {
            break;
        }
    }
    Ok(())
}

fn main() -> R<()> {
    // `random_bench --plans [SMS]`: each case's schedule on a GPU of SMS SMs (default 132,
    // the H100's and H200's), nothing run: no GPU needed (`RANDOM_SEED`, `RANDOM_MIB` apply).
    if let Some(sms) = flag_value("--plans") {
        let sms = match sms.as_str() {
            "" => 132,
            s => s.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                err(format!(
                    "random_bench --plans {s:?}: expected a count of SMs from 1"
                ))
            })?,
        };
        return print_plans(seed()?, case_mib()?, sms);
    }
    if !stridekit::cuda_available() {
        println!("random_bench needs a CUDA device");
        return Ok(());
    }
    // `random_bench --profile 2,16,175`: those cases' copies once each, nothing else (for
    // Nsight Compute: `ncu ... random_bench --profile 2`).
    let profile = case_list("--profile");
    // `random_bench --cases 2,16,26 [FILE]`: those cases only, measured as in a full run;
    // `--cases tiled`: the cases whose schedule takes multi-axis tiles (for a tile kernel's
    // A/B).
    let cases_arg = flag_value("--cases");
    let tiled_only = cases_arg.as_deref() == Some("tiled");
    let mut only = cases_arg.map(|list| random_set::case_numbers(&list));
    let seed = seed()?;
    let mib = case_mib()?;
    let blocks = tile_blocks()?;
    if blocks > 0 {
        println!("tile kernel at most {blocks} blocks an SM (RANDOM_TILE_BLOCKS)");
        stridekit::set_tile_blocks_per_sm(blocks);
    }
    if std::env::var("RANDOM_IMAGE_TILES").as_deref() == Ok("0") {
        println!("image tile kernel off (RANDOM_IMAGE_TILES=0)");
        stridekit::set_image_tiles(false);
    }
    if mib != 64 {
        println!(
            "random set of {mib}-{} MiB cases (the published set: 64-128)",
            2 * mib
        );
    }
    if seed != random_set::SEED {
        println!(
            "random set of seed {seed:#x} (the published set: {:#x})",
            random_set::SEED
        );
    }
    let dev = Device::open(0)?;
    let sms = dev.sm_count()? as u64;
    if tiled_only {
        let cases = tiled_cases(seed, mib, sms)?;
        println!("cases with multi-axis tiles ({}): {cases:?}", cases.len());
        only = Some(cases);
    }
    let n_cases: usize = match (&profile, &only) {
        (Some(p), _) | (None, Some(p)) => p.iter().max().map_or(0, |m| m + 1),
        (None, None) => std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(200),
    };
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let timer = timing::Timer::new(&dev, &stream)?;
    let fill = dev
        .compile_module("random_bench_fill", FILL)?
        .load_function("fill")
        .map_err(err)?;
    if let Some(p) = &profile {
        let mut rng = random_set::Rng(seed);
        for case in 0..n_cases {
            let random_set::Case {
                src: sl,
                dst: dl,
                src_bytes: sbytes,
                dst_bytes: dbytes,
            } = random_set::next_case(&mut rng, mib);
            if !p.contains(&case) {
                continue;
            }
            let sbuf = mr.allocate(sbytes.next_multiple_of(4), &stream)?;
            let mut dbuf = mr.allocate(dbytes, &stream)?;
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)?;
            dst.copy_from(&src, Some(&stream))?;
            stream.synchronize().map_err(err)?;
            println!("profiled case {case}: src {sl} dst {dl}");
        }
        return Ok(());
    }
    // The ceiling: a contiguous 1 GiB device copy.
    let gib = 1usize << 30;
    let (a, mut b) = (mr.allocate(gib, &stream)?, mr.allocate(gib, &stream)?);
    let flat = StridedLayout::dense(&[(gib / 4) as i64], 4, Order::C)?;
    let ceiling_ms = {
        let src = StridedMemoryView::from_buffer(&a, flat.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, flat.clone(), None)?;
        timer.device(10, || dst.copy_from(&src, Some(&stream)))?.ms
    };
    drop((a, b));
    let bw = 2.0 * gib as f64 / ceiling_ms / 1e6; // GB/s, read + write
    println!("ceiling: contiguous 1 GiB device copy {bw:.0} GB/s (read + write)");
    // What a destination with gaps costs: 256 MiB of f32 written to every other element
    // (stride 2), against the same bytes written densely.
    {
        let n = (1usize << 26) as i64;
        let (a, mut b) = (
            mr.allocate(4 * n as usize, &stream)?,
            mr.allocate(8 * n as usize, &stream)?,
        );
        let src =
            StridedMemoryView::from_buffer(&a, StridedLayout::dense(&[n], 4, Order::C)?, None)?;
        let gaps = StridedLayout::with_offset(&[n], &[2], 4, 0)?;
        let dense_ms = {
            let mut dst = StridedMemoryViewMut::from_buffer_mut(
                &mut b,
                StridedLayout::dense(&[n], 4, Order::C)?,
                None,
            )?;
            timer.device(10, || dst.copy_from(&src, Some(&stream)))?.ms
        };
        let gap_ms = {
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, gaps, None)?;
            timer.device(10, || dst.copy_from(&src, Some(&stream)))?.ms
        };
        println!(
            "partial sectors: 256 MiB f32 into every other element {gap_ms:.3} ms, densely {dense_ms:.3} ms ({:.2}x)",
            gap_ms / dense_ms
        );
    }
    let out_file = std::env::args().nth(if only.is_some() { 3 } else { 2 });
    let mut lines = String::new();
    let mut rng = random_set::Rng(seed);
    let mut results: Vec<(f64, String)> = vec![];
    let mut wrong = 0;
    let mut sector_effs: Vec<f64> = vec![];
    let mut pair_effs: Vec<f64> = vec![];
    // Per itemsize: sector-exact efficiency, device time and timed alone.
    let mut by_itemsize: std::collections::BTreeMap<usize, Vec<(f64, f64)>> = Default::default();
    for case in 0..n_cases {
        let random_set::Case {
            src: sl,
            dst: dl,
            src_bytes: sbytes,
            dst_bytes: dbytes,
        } = random_set::next_case(&mut rng, mib);
        if only.as_ref().is_some_and(|o| !o.contains(&case)) {
            continue;
        }
        let isz = sl.itemsize();
        let sbuf = mr.allocate(sbytes.next_multiple_of(4), &stream)?;
        let mut dbuf = mr.allocate(dbytes, &stream)?;
        let words = sbytes.div_ceil(4) as u64;
        let mut launch = stream.launch_builder(&fill);
        let p = sbuf.ptr();
        launch.arg(&p).arg(&words);
        // SAFETY: (u32*, u64) matches the kernel; the buffer holds `words` words.
        unsafe {
            launch.launch(LaunchConfig {
                grid_dim: (1024, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(err)?;
        dbuf.fill(pattern_check::POISON, &stream)?;
        let image0 = stridekit::image_tile_launches();
        {
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)?;
            dst.copy_from(&src, Some(&stream))?;
        }
        let image = stridekit::image_tile_launches() > image0;
        // Byte-exact check (destination gaps keep the poison).
        let mut got = vec![0u8; dbytes];
        dbuf.copy_to_host(&mut got, &stream)?;
        let plan = CopyPlan::new(&dl, &sl)?;
        let ok = pattern_check::exact(&got, &plan);
        if !ok {
            wrong += 1;
        }
        let (ms, alone_ms) = {
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)?;
            let ms = timer.device(5, || dst.copy_from(&src, Some(&stream)))?.ms;
            (ms, timer.alone(5, || dst.copy_from(&src, Some(&stream)))?)
        };
        let traffic = roofline::traffic(&sl);
        let eff = traffic as f64 / bw / 1e6 / ms;
        // The same with partially written sectors counted as DRAM does them: the sector
        // is read, merged and written back.
        // (Buffers are 256-byte aligned, so destination offsets are from an aligned base.)
        let (full, partial) = roofline::written_sectors(&dl);
        let sector_traffic = roofline::sector_exact_traffic(&sl, &dl);
        let eff_sectors = sector_traffic as f64 / bw / 1e6 / ms;
        sector_effs.push(eff_sectors);
        let eff_pairs =
            roofline::pair_traffic(&sl, &dl).map_or(eff_sectors, |t| t as f64 / bw / 1e6 / ms);
        pair_effs.push(eff_pairs);
        by_itemsize
            .entry(isz)
            .or_default()
            .push((eff_sectors, sector_traffic as f64 / bw / 1e6 / alone_ms));
        let line = format!(
            "case {case:3}: eff {eff:.2} (sector-exact {eff_sectors:.2}, 64-byte read pairs {eff_pairs:.2}, {:.0}% of written sectors partial; {ms:.5} ms, {:.0} MB moved){} [{}{}] src {sl} dst {dl}",
            100.0 * partial as f64 / (partial + full).max(1) as f64,
            traffic as f64 / 1e6,
            if ok { "" } else { " WRONG BYTES" },
            steps(&plan, dbuf.ptr(), sbuf.ptr(), sms),
            if image { ", image tiles" } else { "" }
        );
        println!("{line}");
        results.push((eff, line));
        let tuple = |v: &[i64]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        lines.push_str(&format!(
            "{{\"case\":{case},\"itemsize\":{isz},\"shape\":{},\"src_strides\":{},\"src_offset\":{},\"src_bytes\":{sbytes},\"dst_strides\":{},\"dst_offset\":{},\"dst_bytes\":{dbytes},\"traffic\":{traffic},\"sector_traffic\":{sector_traffic},\"ms\":{ms},\"eff\":{eff},\"exact\":{ok}}}\n",
            tuple(sl.shape()),
            tuple(sl.strides()),
            sl.slice_offset(),
            tuple(dl.strides()),
            dl.slice_offset(),
        ));
    }
    if let Some(path) = out_file {
        std::fs::write(&path, lines).map_err(err)?;
    }
    results.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = results.len();
    println!("\ncases: {n}, byte-exact: {}, wrong: {wrong}", n - wrong);
    println!("median efficiency: {:.2}", results[n / 2].0);
    println!("10th percentile: {:.2}", results[n / 10].0);
    sector_effs.sort_by(|x, y| x.total_cmp(y));
    println!(
        "with partially written sectors counted as read + write: median {:.2}, 10th percentile {:.2}",
        sector_effs[n / 2],
        sector_effs[n / 10]
    );
    pair_effs.sort_by(|x, y| x.total_cmp(y));
    println!(
        "with reads counted in 64-byte sector pairs (the DRAM's read granule): median {:.2}, 10th percentile {:.2}",
        pair_effs[n / 2],
        pair_effs[n / 10]
    );
    println!(
        "by itemsize (sector-exact; device time / timed alone): cases, median, 10th percentile"
    );
    for (isz, v) in &by_itemsize {
        let q = |f: fn(&(f64, f64)) -> f64| {
            let mut x: Vec<f64> = v.iter().map(f).collect();
            x.sort_by(|a, b| a.total_cmp(b));
            (x[x.len() / 2], x[x.len() / 10])
        };
        let (dm, d10) = q(|t| t.0);
        let (am, a10) = q(|t| t.1);
        println!(
            "  itemsize {isz:2}: {:3} cases, median {dm:.2} / {am:.2}, 10th percentile {d10:.2} / {a10:.2}",
            v.len()
        );
    }
    println!("ten worst:");
    for (_, l) in results.iter().take(10) {
        println!("  {l}");
    }
    if wrong > 0 {
        // A copy that moved the wrong bytes fails the run, whatever its speed.
        return Err(err(format!(
            "{wrong} of {n} cases copied wrong bytes (marked WRONG BYTES above)"
        )));
    }
    Ok(())
}
