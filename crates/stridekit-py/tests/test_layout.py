"""StridedLayout from Python: every recorded cuda.core case (errors included), and a live
comparison with cuda.core's own class when cuda-core is installed."""

from typing import Any
import json
import random

import pytest

from conftest import FIXTURE
from stridekit import StridedLayout as L

# The few cases where stridekit differs from cuda.core on purpose (README: "Differences
# from cuda.core, on purpose"); the Rust conformance test checks their results in detail.
DELIBERATE = {"reshaped"}


def build(base: Any) -> Any:
    l = L(tuple(base["shape"]), tuple(base["strides"]), base["itemsize"], divide_strides=base.get("bytes", False))
    if base.get("pre") is not None:
        l = l[tuple(s if isinstance(s, int) else slice(*s) for s in base["pre"])]
    return l


def as_dict(l: Any) -> Any:
    return {"shape": list(l.shape), "strides": list(l.strides), "itemsize": l.itemsize, "offset": l.slice_offset}


def run(base: Any, op: Any, args: Any) -> Any:
    if op == "dense":
        o = args["order"]
        return as_dict(L.dense(tuple(args["shape"]), args["itemsize"], o if isinstance(o, str) else tuple(o)))
    l = build(base)
    if op == "new":
        return as_dict(l)
    if op == "props":
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
            "strides_in_bytes": list(l.strides_in_bytes),
            "slice_offset_in_bytes": l.slice_offset_in_bytes,
            "flattened_axis_mask": l.flattened_axis_mask(),
            "required_size_in_bytes": req,
        }
    if op == "dense_like":
        o = args["order"]
        return as_dict(L.dense_like(l, o if isinstance(o, str) else tuple(o)))
    if op == "reshaped":
        return as_dict(l.reshaped(tuple(args["shape"])))
    if op == "permuted":
        return as_dict(l.permuted(tuple(args["axes"])))
    if op == "flattened":
        return as_dict(l.flattened(args["start"], args["end"]))
    if op == "flattened_mask":
        return as_dict(l.flattened(mask=args["mask"]))
    if op == "flattened_all":
        return as_dict(l.flattened())
    if op == "squeezed":
        return as_dict(l.squeezed())
    if op == "unsqueezed":
        return as_dict(l.unsqueezed(tuple(args["axes"])))
    if op == "broadcast_to":
        return as_dict(l.broadcast_to(tuple(args["shape"])))
    if op == "repacked":
        return as_dict(l.repacked(args["itemsize"], data_ptr=args["data_ptr"], axis=args["axis"], keep_dim=args["keep_dim"]))
    if op == "max_compatible_itemsize":
        return l.max_compatible_itemsize(max_itemsize=args["max_itemsize"], data_ptr=args["data_ptr"], axis=args["axis"])
    if op == "sliced":
        return as_dict(l[tuple(s if isinstance(s, int) else slice(*s) for s in args["slices"])])
    raise AssertionError(op)


def cases() -> Any:
    with open(FIXTURE) as f:
        return [json.loads(line) for line in f]


def test_every_recorded_cuda_core_case_replays() -> None:
    agree = differ = 0
    for c in cases():
        try:
            got, ok = run(c["base"], c["op"], c["args"]), True
        except (ValueError, TypeError, OverflowError, IndexError) as e:
            got, ok = repr(e), False
        if ok == c["ok"] and (not ok or got == c["result"]):
            agree += 1
            continue
        differ += 1
        assert c["op"] in DELIBERATE, f"{c['op']} {c['base']} {c['args']}: cuda.core {c.get('result', c.get('error'))}, stridekit {got}"
    assert differ <= 3 and agree > 5400, (agree, differ)


def test_slicing_repr_and_errors() -> None:
    l = L.dense((5, 3, 4), 2, "C")
    assert l.strides == (12, 4, 1)
    v = l[1:3, ::-1, 2]
    assert (v.shape, v.strides, v.slice_offset) == ((2, 3), (12, -4), 22)
    assert repr(v) == "StridedLayout(shape=(2, 3), strides=(12, -4), itemsize=2, slice_offset=22)"
    assert L.dense((4, 5), 4, "F").strides == (1, 4)
    assert L((2, 3), None, 8).strides == (3, 1)
    assert l == L.dense((5, 3, 4), 2) and hash(l) == hash(L.dense((5, 3, 4), 2))
    with pytest.raises(ValueError, match="no view without a copy|cannot"):
        l.permuted((2, 0, 1)).reshaped((20, 3))
    with pytest.raises(ValueError):
        l[::0]
    with pytest.raises(ValueError):
        L.dense((2, 2), 4, "Q")
    with pytest.raises(TypeError):
        l["a"]  # type: ignore[index]
    with pytest.raises(ValueError):
        l.permuted((0, 0, 1))


def test_live_against_cuda_core_when_installed() -> None:
    core = pytest.importorskip("cuda.core._layout")
    C = core._StridedLayout
    rng = random.Random(7)
    for _ in range(300):
        nd = rng.randint(0, 4)
        shape = tuple(rng.randint(1, 5) for _ in range(nd))
        isz = rng.choice([1, 2, 4, 8])
        perm = list(range(nd))
        rng.shuffle(perm)
        a, b = L.dense(shape, isz, tuple(perm)), C.dense(shape, isz, tuple(perm))
        assert a.strides == tuple(b.strides or C.dense(shape, isz).strides)
        assert (a.is_contiguous_c, a.is_unique, a.volume) == (b.is_contiguous_c, b.is_unique, b.volume)
