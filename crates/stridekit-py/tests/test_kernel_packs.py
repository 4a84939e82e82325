"""Kernel packs: the copy engine's kernels compiled ahead of time, found before NVRTC."""
import os
import subprocess
import sys
from typing import Any

import pytest

import stridekit

CHILD = r"""
import os, sys
import numpy as np
import stridekit
from stridekit import DeviceMemoryResource, StridedLayout, StridedMemoryView
if sys.argv[1] != "-":
    stridekit.add_kernel_pack(sys.argv[1])
rng = np.random.default_rng(11)
mr = DeviceMemoryResource(0)
for dtype, shape in ((np.uint8, (300, 500)), (np.float32, (257, 129))):
    host = rng.integers(0, 256, size=shape[0] * shape[1] * np.dtype(dtype).itemsize, dtype=np.uint8)
    host = host.view(dtype).reshape(shape)
    isz = host.itemsize
    src = StridedMemoryView.from_buffer(mr.allocate(host.nbytes), StridedLayout.dense(shape, isz), dtype=dtype)
    src.copy_from(StridedMemoryView(host, -1))
    dst = StridedMemoryView.from_buffer(
        mr.allocate(host.nbytes), StridedLayout.dense(shape[::-1], isz), dtype=dtype)
    dst.copy_from(src.view(src.layout.permuted((1, 0))))
    out = np.frombuffer(b"\xa5" * host.nbytes, dtype=dtype).reshape(shape[::-1]).copy()
    StridedMemoryView(out, -1).copy_from(dst)
    assert out.tobytes() == np.ascontiguousarray(host.T).tobytes(), "wrong bytes"
print("compiled and cached:", len(os.listdir(os.environ["STRIDEKIT_KERNEL_CACHE"])))
"""


def test_unknown_architectures_are_refused(tmp_path: Any) -> None:
    with pytest.raises(stridekit.CUDAError, match="6.1"):
        stridekit.precompile_kernels(tmp_path / "pack", (6, 1))
    assert not (tmp_path / "pack").exists()


def test_a_pack_inside_the_package_is_added_when_present(tmp_path: Any) -> None:
    assert stridekit._add_package_pack(str(tmp_path)) is None
    (tmp_path / "kernels").mkdir()
    assert stridekit._add_package_pack(str(tmp_path)) == str(tmp_path / "kernels")


def _first_copies(tmp_path: Any, tag: str, pack: str) -> str:
    """Runs CHILD in a fresh process with an empty kernel cache; its last line."""
    cache = tmp_path / f"cache-{tag}"
    cache.mkdir(mode=0o700)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k != "STRIDEKIT_KERNEL_PACKS"}
    env["STRIDEKIT_KERNEL_CACHE"] = str(cache)
    r = subprocess.run([sys.executable, str(script), pack], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")
def test_first_copies_load_their_kernels_from_a_pack(tmp_path: Any) -> None:
    pack = tmp_path / "pack"
    done = stridekit.precompile_kernels(pack)
    assert done["failed"] == [] and done["kernels"] > 500 and done["bytes"] > 0, done
    # Without the pack, the first copies compile their kernels (and cache them) ...
    assert _first_copies(tmp_path, "none", "-") != "compiled and cached: 0"
    # ... with it, they load them: nothing compiled, nothing cached, the same bytes.
    assert _first_copies(tmp_path, "pack", str(pack)) == "compiled and cached: 0"
