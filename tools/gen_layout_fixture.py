#!/usr/bin/env python3
"""Records StridedLayout conformance cases from cuda.core's own implementation.

Needs `pip install "cuda-core[cu13]"` (no GPU required). Writes
crates/stridekit-layout/tests/fixtures/layout_cases.jsonl, which
crates/stridekit-layout/tests/conformance.rs replays.

Each line: {"base": {...} | null, "op": name, "args": {...}, "ok": bool,
"result": ..., "error": "...", "note": "..."}. A "note" marks the few places
where stridekit deliberately differs (see README.md, "Differences from cuda.core").
"""

import json
import os
import random
import sys

from cuda.core._layout import _StridedLayout as L

I64_MAX = 2**63 - 1
SEED = 20261122
OUT = os.path.join(
    os.path.dirname(__file__), "..", "crates", "stridekit-layout", "tests", "fixtures", "layout_cases.jsonl"
)


def fits(v):
    return -(2**63) <= v <= I64_MAX


def sk_valid(shape, strides, itemsize, offset):
    """stridekit's construction rule: every byte offset must fit in an i64."""
    if itemsize <= 0 or len(shape) > 64 or any(e < 0 for e in shape):
        return False
    vol = 1
    for e in shape:
        vol *= e
    if not fits(vol):
        return False
    lo = hi = offset
    for e, s in zip(shape, strides):
        if not fits(s * itemsize):
            return False
        if e == 0:
            continue
        span = s * (e - 1)
        if span < 0:
            lo += span
        else:
            hi += span
        if not fits(span) or not fits(lo) or not fits(hi):
            return False
    if vol == 0:
        lo, hi = 0, -1
    return all(fits(v * itemsize) and fits(v * itemsize + itemsize) for v in (offset, lo, hi))


def as_dict(l):
    strides = l.strides
    if strides is None:
        strides = L.dense(l.shape, l.itemsize).strides
    return {"shape": list(l.shape), "strides": list(strides), "itemsize": l.itemsize, "offset": l.slice_offset}


def layout_result(l):
    d = as_dict(l)
    if not sk_valid(d["shape"], d["strides"], d["itemsize"], d["offset"]):
        raise OverflowError("result overflows i64 byte offsets (stridekit rejects)")
    return d


def props(l):
    try:
        req = l.required_size_in_bytes()
    except ValueError:
        req = None
    return {
        "ndim": l.ndim,
        "volume": l.volume,
        "stride_order": list(l.stride_order),
        "is_unique": l.is_unique,
        "is_contiguous_c": l.is_contiguous_c,
        "is_contiguous_f": l.is_contiguous_f,
        "is_contiguous_any": l.is_contiguous_any,
        "is_dense": l.is_dense,
        "offset_bounds": list(l.offset_bounds),
        "strides_in_bytes": list(l.strides_in_bytes or as_dict(l)["strides"]),
        "slice_offset_in_bytes": l.slice_offset_in_bytes,
        "flattened_axis_mask": l.flattened_axis_mask(),
        "required_size_in_bytes": req,
    }


def py_slices(spec):
    out = []
    for s in spec:
        out.append(s if isinstance(s, int) else slice(*s))
    return tuple(out)


def build_base(base):
    l = L(tuple(base["shape"]), tuple(base["strides"]), base["itemsize"], divide_strides=base.get("bytes", False))
    if base.get("pre") is not None:
        l = l[py_slices(base["pre"])]
    return l


def run(base, op, args):
    if op == "dense":
        return layout_result(L.dense(tuple(args["shape"]), args["itemsize"], args["order"] if isinstance(args["order"], str) else tuple(args["order"])))
    if not sk_valid(base["shape"], [s // base["itemsize"] if base.get("bytes") else s for s in base["strides"]], base["itemsize"], 0):
        raise OverflowError("base layout overflows i64 byte offsets (stridekit rejects at construction)")
    l = build_base(base)
    d = as_dict(l)
    if not sk_valid(d["shape"], d["strides"], d["itemsize"], d["offset"]):
        raise OverflowError("layout overflows i64 byte offsets (stridekit rejects at construction)")
    if op == "new":
        return layout_result(l)
    if op == "props":
        return props(l)
    if op == "dense_like":
        o = args["order"]
        return layout_result(L.dense_like(l, o if isinstance(o, str) else tuple(o)))
    if op == "reshaped":
        return layout_result(l.reshaped(tuple(args["shape"])))
    if op == "permuted":
        return layout_result(l.permuted(tuple(args["axes"])))
    if op == "flattened":
        return layout_result(l.flattened(args["start"], args["end"]))
    if op == "flattened_mask":
        return layout_result(l.flattened(mask=args["mask"]))
    if op == "flattened_all":
        return layout_result(l.flattened())
    if op == "squeezed":
        return layout_result(l.squeezed())
    if op == "unsqueezed":
        return layout_result(l.unsqueezed(tuple(args["axes"])))
    if op == "broadcast_to":
        return layout_result(l.broadcast_to(tuple(args["shape"])))
    if op == "repacked":
        return layout_result(l.repacked(args["itemsize"], data_ptr=args["data_ptr"], axis=args["axis"], keep_dim=args["keep_dim"]))
    if op == "max_compatible_itemsize":
        return l.max_compatible_itemsize(max_itemsize=args["max_itemsize"], data_ptr=args["data_ptr"], axis=args["axis"])
    if op == "sliced":
        return layout_result(l[py_slices(args["slices"])])
    raise AssertionError(op)


R = random.Random(SEED)


def rand_shape(maxdim=5, maxext=5):
    nd = R.randint(0, maxdim)
    return [R.choice([0, 1, 1, 2, 3, 4, maxext]) if R.random() < 0.15 else R.randint(1, maxext) for _ in range(nd)]


def rand_base():
    shape = rand_shape()
    nd = len(shape)
    itemsize = R.choice([1, 2, 4, 8, 16, 3])
    kind = R.random()
    if kind < 0.45:
        perm = list(range(nd))
        R.shuffle(perm)
        strides = L.dense(tuple(shape), 1, tuple(perm)).strides
        strides = list(strides)
        if R.random() < 0.3 and nd:
            i = R.randrange(nd)
            strides[i] *= R.choice([2, 3, -1, -2])
        if R.random() < 0.15 and nd:
            strides[R.randrange(nd)] = 0
    elif kind < 0.9:
        strides = [R.randint(-24, 24) for _ in range(nd)]
    else:
        strides = [R.choice([1, -1, 3, 2**40, 2**61, 2**62, -(2**62), I64_MAX // 3]) for _ in range(nd)]
        shape = [R.choice([1, 2, 3, 2**20, 2**40, 2**62]) for _ in range(nd)]
    base = {"shape": shape, "strides": strides, "itemsize": itemsize}
    if R.random() < 0.1 and all(fits(s * itemsize + 1) for s in strides):
        base["bytes"] = True
        base["strides"] = [s * itemsize + (R.choice([0, 0, 0, 1]) if itemsize > 1 else 0) for s in strides]
    if R.random() < 0.3 and nd:
        base["pre"] = rand_slices(shape, allow_int=False)
    return base


def rand_slices(shape, allow_int=True):
    n = R.randint(0, len(shape) + (1 if R.random() < 0.05 else 0))
    out = []
    for i in range(n):
        e = shape[i] if i < len(shape) else 3
        if allow_int and R.random() < 0.25:
            out.append(R.randint(-e - 1, e))
        else:
            def b():
                return None if R.random() < 0.3 else R.randint(-e - 2, e + 2)
            step = R.choice([None, 1, 1, 2, 3, -1, -1, -2, -3, 0] if allow_int else [None, 1, 2, -1, -2, 3])
            out.append([b(), b(), step])
    return out


def rand_perm(nd, bad=0.1):
    p = list(range(nd))
    R.shuffle(p)
    p = [a - nd if R.random() < 0.2 else a for a in p]
    if R.random() < bad and nd:
        r = R.random()
        if r < 0.3:
            p[0] = p[-1] if nd > 1 else nd
        elif r < 0.6:
            p = p[:-1]
        else:
            p[R.randrange(nd)] = R.choice([nd, -nd - 1])
    return p


def rand_args(op, base):
    shape = base["shape"] if base else []
    nd = len(shape)
    try:
        l = build_base(base)
        shape, nd = list(l.shape), l.ndim
    except Exception:
        pass
    if op == "dense":
        s = rand_shape()
        if R.random() < 0.05 and s:
            s[0] = -1
        o = R.choice(["C", "F", "P"])
        return {"shape": s, "itemsize": R.choice([1, 2, 4, 8]), "order": rand_perm(len(s)) if o == "P" else o}
    if op == "dense_like":
        o = R.choice(["K", "C", "F", "P"])
        return {"order": rand_perm(nd) if o == "P" else o}
    if op == "reshaped":
        vol = 1
        for e in shape:
            vol *= e
        if R.random() < 0.7 and 0 < vol < 100000:
            # a factorisation of the volume
            new, rest = [], vol
            while rest > 1 and len(new) < 5:
                f = R.choice([d for d in range(1, rest + 1) if rest % d == 0][:6])
                new.append(f)
                rest //= f
            if rest > 1:
                new.append(rest)
            for _ in range(R.randint(0, 2)):
                new.insert(R.randint(0, len(new)), 1)
            R.shuffle(new) if R.random() < 0.2 else None
            if new and R.random() < 0.3:
                new[R.randrange(len(new))] = -1
        else:
            new = rand_shape(4, 6)
            if new and R.random() < 0.2:
                new[R.randrange(len(new))] = R.choice([-1, -2])
        return {"shape": new}
    if op == "permuted":
        return {"axes": rand_perm(nd, 0.15)}
    if op == "flattened":
        return {"start": R.randint(-nd - 1, nd), "end": R.randint(-nd - 1, nd)}
    if op == "flattened_mask":
        return {"mask": R.randrange(0, 2 ** max(nd + 1, 1)) if R.random() < 0.9 else R.randrange(0, 2**64)}
    if op == "unsqueezed":
        k = R.randint(1, 3)
        return {"axes": [R.randint(-(nd + k) - 1, nd + k) for _ in range(k)]}
    if op == "broadcast_to":
        new = [R.choice([e, e, 1, 2, 3]) if e == 1 else R.choice([e, e, e, 1, e + 1]) for e in shape]
        lead = [R.randint(0, 4) for _ in range(R.randint(0, 2))]
        if R.random() < 0.05 and new:
            new = new[1:]
        return {"shape": lead + new}
    if op == "repacked":
        return {
            "itemsize": R.choice([1, 2, 4, 8, 16, 32, 0, 3, 6, 12]),
            "data_ptr": R.choice([0, 0, 0, 2, 4, 8, 16, 256, 6]),
            "axis": R.randint(-nd - 1, nd) if R.random() < 0.3 else -1,
            "keep_dim": R.random() < 0.7,
        }
    if op == "max_compatible_itemsize":
        return {
            "max_itemsize": R.choice([16, 16, 8, 32, 64, 12, 24, 1, 0, 3]),
            "data_ptr": R.choice([0, 0, 2, 4, 8, 16, 24, 6]),
            "axis": R.randint(-nd - 1, nd) if R.random() < 0.3 else -1,
        }
    if op == "sliced":
        return {"slices": rand_slices(shape)}
    return {}


OPS = {
    "new": 300,
    "props": 900,
    "dense": 250,
    "dense_like": 250,
    "reshaped": 600,
    "permuted": 250,
    "flattened": 300,
    "flattened_mask": 250,
    "flattened_all": 200,
    "squeezed": 200,
    "unsqueezed": 250,
    "broadcast_to": 300,
    "repacked": 500,
    "max_compatible_itemsize": 300,
    "sliced": 700,
}


def merge_test_overflows(base):
    """cuda.core raises OverflowError when stride * extent of a merge test overflows;
    stridekit answers "not mergeable". Such cases are tested in the Rust unit tests."""
    try:
        l = build_base(base)
    except Exception:
        return False
    st = as_dict(l)["strides"]
    return any(not fits(s * e) for s, e in zip(st, l.shape))


def record(base, op, args):
    case = {"base": base, "op": op, "args": args}
    if op.startswith("flattened") or op == "props":
        if merge_test_overflows(base):
            return None
    if op == "repacked" and base is not None:
        new, old = args["itemsize"], base["itemsize"]
        if new > 0 and new % old and old % new:
            case["note"] = "divergence: cuda.core 1.2 repacks to an itemsize that neither divides nor is a multiple of the old one, changing the byte size; stridekit rejects it"
            case.update(ok=False, error="itemsize neither divides nor is a multiple")
            return case
    try:
        case["result"] = run(base, op, args)
        case["ok"] = True
    except (ValueError, OverflowError, TypeError) as e:
        case["ok"] = False
        case["error"] = f"{type(e).__name__}: {e}"
        if "stridekit rejects" in str(e):
            case["note"] = "divergence: stridekit checks i64 byte offsets when a layout is made; cuda.core fails later, on use"
    return case


def main():
    cases = []
    for op, n in OPS.items():
        for _ in range(n):
            base = None if op == "dense" else rand_base()
            case = record(base, op, rand_args(op, base))
            if case is not None:
                cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    ok = sum(c["ok"] for c in cases)
    print(f"{len(cases)} cases ({ok} accepted, {len(cases) - ok} rejected) -> {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
