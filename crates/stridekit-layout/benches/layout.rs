//! Common layout operations on a 4-D layout. Run: `cargo bench -p stridekit-layout`.
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use stridekit_layout::{s, CopyPlan, Order, StridedLayout};

fn bench(c: &mut Criterion) {
    let shape = [64i64, 256, 64, 64];
    let l = StridedLayout::dense(&shape, 4, Order::C).expect("dense");
    let t = l.permuted(&[0, 2, 3, 1]).expect("permuted");
    c.bench_function("clone (baseline)", |b| b.iter(|| black_box(&l).clone()));
    c.bench_function("dense", |b| {
        b.iter(|| StridedLayout::dense(black_box(&shape), 4, Order::C))
    });
    c.bench_function("permuted", |b| {
        b.iter(|| black_box(&l).permuted(black_box(&[0, 2, 3, 1])))
    });
    c.bench_function("sliced", |b| {
        b.iter(|| black_box(&l).sliced(s![.., 1..200;3, ..;-1, 5]))
    });
    c.bench_function("reshaped", |b| {
        b.iter(|| black_box(&l).reshaped(black_box(&[64, 16, 16, -1])))
    });
    c.bench_function("flattened", |b| b.iter(|| black_box(&l).flattened(0, -1)));
    c.bench_function("to_dense(K)", |b| {
        b.iter(|| black_box(&t).to_dense(Order::K))
    });
    c.bench_function("broadcast_to", |b| {
        b.iter(|| black_box(&l).broadcast_to(black_box(&[8, 64, 256, 64, 64])))
    });
    // The host-side planning of a small copy (what `copy_from` adds before the driver).
    let d = StridedLayout::dense(&[256, 256], 4, Order::C).expect("dense");
    let tr = d.permuted(&[1, 0]).expect("permuted");
    let v = StridedLayout::dense(&[1024], 4, Order::C).expect("dense");
    c.bench_function("plan + schedule, contiguous 4 KiB", |b| {
        b.iter(|| CopyPlan::new(black_box(&v), black_box(&v)).map(|p| p.schedule(0, 0)))
    });
    c.bench_function("plan + schedule, 256x256 f32 transpose", |b| {
        b.iter(|| CopyPlan::new(black_box(&d), black_box(&tr)).map(|p| p.schedule(0, 0)))
    });
    let nhwc = StridedLayout::dense(&[8, 64, 64, 3], 1, Order::C)
        .and_then(|x| x.permuted(&[0, 3, 1, 2]))
        .expect("permuted");
    let nchw = StridedLayout::dense(&[8, 3, 64, 64], 1, Order::C).expect("dense");
    c.bench_function(
        "plan + schedule, NCHW->NHWC C = 3 u8 (multi-axis tiles)",
        |b| b.iter(|| CopyPlan::new(black_box(&nhwc), black_box(&nchw)).map(|p| p.schedule(0, 0))),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
