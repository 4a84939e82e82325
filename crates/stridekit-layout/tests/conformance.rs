//! Replays the cases recorded from cuda.core 1.2 (tools/gen_layout_fixture.py): every case
//! must give the same layout or value, or be rejected where cuda.core rejected it.

mod common;

use common::offsets;
use serde_json::Value;
use stridekit_layout::{Order, RepackOptions, SliceArg, StridedLayout};

const CASES: &str = include_str!("fixtures/layout_cases.jsonl");

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("i64"))
        .collect()
}

fn slices(v: &Value) -> Vec<SliceArg> {
    v.as_array()
        .expect("slices")
        .iter()
        .map(|s| match s {
            Value::Number(n) => SliceArg::Index(n.as_i64().expect("index")),
            Value::Array(a) => SliceArg::Range {
                start: a[0].as_i64(),
                stop: a[1].as_i64(),
                step: a[2].as_i64().unwrap_or(1),
            },
            other => panic!("bad slice {other}"),
        })
        .collect()
}

fn order(v: &Value) -> (Option<char>, Vec<i64>) {
    match v {
        Value::String(s) => (s.chars().next(), vec![]),
        other => (None, ints(other)),
    }
}

fn with_order<R>(v: &Value, f: impl FnOnce(Order<'_>) -> R) -> R {
    let (c, axes) = order(v);
    f(match c {
        Some('K') => Order::K,
        Some('C') => Order::C,
        Some('F') => Order::F,
        _ => Order::Axes(&axes),
    })
}

fn layout_json(l: &StridedLayout) -> Value {
    serde_json::json!({
        "shape": l.shape(), "strides": l.strides(),
        "itemsize": l.itemsize(), "offset": l.slice_offset(),
    })
}

fn build_base(b: &Value) -> Result<StridedLayout, String> {
    let shape = ints(&b["shape"]);
    let strides = ints(&b["strides"]);
    let itemsize = b["itemsize"].as_u64().expect("itemsize") as usize;
    let l = if b["bytes"].as_bool() == Some(true) {
        StridedLayout::from_byte_strides(&shape, &strides, itemsize)
    } else {
        StridedLayout::new(&shape, &strides, itemsize)
    }
    .map_err(|e| e.to_string())?;
    match b.get("pre") {
        Some(p) if !p.is_null() => l.sliced(&slices(p)).map_err(|e| e.to_string()),
        _ => Ok(l),
    }
}

fn props(l: &StridedLayout) -> Value {
    serde_json::json!({
        "ndim": l.ndim(),
        "volume": l.volume(),
        "stride_order": l.stride_order().to_vec(),
        "is_unique": l.is_unique(),
        "is_contiguous_c": l.is_contiguous_c(),
        "is_contiguous_f": l.is_contiguous_f(),
        "is_contiguous_any": l.is_contiguous_any(),
        "is_dense": l.is_dense(),
        "offset_bounds": [l.min_offset(), l.max_offset()],
        "strides_in_bytes": l.strides_in_bytes().to_vec(),
        "slice_offset_in_bytes": l.slice_offset_in_bytes(),
        "flattened_axis_mask": l.flattened_axis_mask(),
        "required_size_in_bytes": l.required_size_in_bytes().ok(),
    })
}

fn run(case: &Value) -> Result<Value, String> {
    let op = case["op"].as_str().expect("op");
    let a = &case["args"];
    let e = |e: stridekit_layout::LayoutError| e.to_string();
    if op == "dense" {
        let shape = ints(&a["shape"]);
        let isz = a["itemsize"].as_u64().expect("itemsize") as usize;
        return with_order(&a["order"], |o| StridedLayout::dense(&shape, isz, o))
            .map(|l| layout_json(&l))
            .map_err(e);
    }
    let l = build_base(&case["base"])?;
    let out = match op {
        "new" => l.clone(),
        "props" => return Ok(props(&l)),
        "dense_like" => with_order(&a["order"], |o| l.to_dense(o)).map_err(e)?,
        "reshaped" => l.reshaped(&ints(&a["shape"])).map_err(e)?,
        "permuted" => l.permuted(&ints(&a["axes"])).map_err(e)?,
        "flattened" => l
            .flattened(a["start"].as_i64().unwrap(), a["end"].as_i64().unwrap())
            .map_err(e)?,
        "flattened_mask" => l
            .flattened_by_mask(a["mask"].as_u64().unwrap())
            .map_err(e)?,
        "flattened_all" => l.flattened_all().map_err(e)?,
        "squeezed" => l.squeezed(),
        "unsqueezed" => l.unsqueezed(&ints(&a["axes"])).map_err(e)?,
        "broadcast_to" => l.broadcast_to(&ints(&a["shape"])).map_err(e)?,
        "repacked" => {
            let isz = a["itemsize"].as_u64().unwrap() as usize;
            let opts = RepackOptions {
                data_ptr: a["data_ptr"].as_u64().unwrap(),
                axis: a["axis"].as_i64().unwrap(),
                keep_dim: a["keep_dim"].as_bool().unwrap(),
            };
            l.repacked_with(isz, opts).map_err(e)?
        }
        "max_compatible_itemsize" => {
            let r = l
                .max_compatible_itemsize(
                    a["max_itemsize"].as_u64().unwrap() as usize,
                    a["data_ptr"].as_u64().unwrap(),
                    a["axis"].as_i64().unwrap(),
                )
                .map_err(e)?;
            return Ok(Value::from(r));
        }
        "sliced" => l.sliced(&slices(&a["slices"])).map_err(e)?,
        other => panic!("unknown op {other}"),
    };
    Ok(layout_json(&out))
}

#[test]
fn replays_every_recorded_cuda_core_case() {
    let mut failures = Vec::new();
    let mut count = 0;
    let mut improved = 0;
    for (line_no, line) in CASES.lines().enumerate() {
        let case: Value = serde_json::from_str(line).expect("fixture line is JSON");
        count += 1;
        let got = run(&case);
        let ok = case["ok"].as_bool().expect("ok");
        let matches = match (&got, ok) {
            (Ok(v), true) => *v == case["result"],
            (Err(_), false) => true,
            (Ok(_), false) => {
                let deliberate = reshape_through_unit_axis(&case);
                improved += usize::from(deliberate);
                deliberate
            }
            _ => false,
        };
        if !matches {
            failures.push(format!(
                "line {}: {line}\n    stridekit: {got:?}",
                line_no + 1
            ));
        }
    }
    assert!(count >= 3000, "fixture has only {count} cases");
    println!("{improved} reshapes through extent-1 axes accepted where cuda.core refuses them");
    assert!(
        failures.is_empty(),
        "{} of {count} cases differ from cuda.core:\n{}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn rejections_carry_a_message_naming_the_operation() {
    // Every rejection the fixture records must produce a non-empty message from stridekit.
    for line in CASES.lines() {
        let case: Value = serde_json::from_str(line).expect("JSON");
        if case["ok"] == Value::Bool(false) {
            if let Err(msg) = run(&case) {
                assert!(msg.contains(':') && msg.len() > 20, "terse message: {msg}");
            }
        }
    }
}

/// The one deliberate difference: cuda.core refuses a reshape when an extent-1 axis with
/// an unrelated stride sits between axes that merge; stridekit skips such axes (they are
/// never stepped along). Accepted only if the base has an extent-1 axis and the result
/// walks exactly the base's elements in row-major order.
fn reshape_through_unit_axis(case: &Value) -> bool {
    if case["op"] != "reshaped" {
        return false;
    }
    let Ok(base) = build_base(&case["base"]) else {
        return false;
    };
    if !base.shape().contains(&1) {
        return false;
    }
    let shape: Vec<i64> = case["args"]["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|v| v.as_i64().expect("extent"))
        .collect();
    match base.reshaped(&shape) {
        Ok(r) => offsets(&r) == offsets(&base),
        Err(_) => false,
    }
}
