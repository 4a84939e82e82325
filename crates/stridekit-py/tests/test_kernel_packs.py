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
if os.environ["STRIDEKIT_BACKGROUND_COMPILE"] == "1":
    # Exits at once, while the kernels still compile: the exit waits for them.
    print("in the background:", stridekit.kernels_compiled_in_background())
else:
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


def _first_copies(tmp_path: Any, tag: str, pack: str, background: bool = False) -> str:
    """Runs CHILD in a fresh process with an empty kernel cache, its first copies waiting
    for their kernels or (``background``) not; its last line."""
    cache = tmp_path / f"cache-{tag}"
    cache.mkdir(mode=0o700)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k != "STRIDEKIT_KERNEL_PACKS"}
    env["STRIDEKIT_KERNEL_CACHE"] = str(cache)
    env["STRIDEKIT_BACKGROUND_COMPILE"] = "1" if background else "0"
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


def test_background_compiles_can_be_turned_off_and_waited_for() -> None:
    stridekit.wait_for_kernels()
    n = stridekit.kernels_compiled_in_background()
    stridekit.set_background_compile(False)
    stridekit.set_background_compile(True)
    stridekit.wait_for_kernels()
    assert stridekit.kernels_compiled_in_background() >= n


@pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")
def test_first_copies_run_while_their_kernels_compile(tmp_path: Any) -> None:
    # An empty cache, no pack: the first copies run on the fallback kernel (the same
    # bytes, checked in the child), their kernels go to background threads, and the
    # process exits cleanly while they compile.
    line = _first_copies(tmp_path, "background", "-", background=True)
    assert line.startswith("in the background: "), line
    assert int(line.split(": ")[1]) >= 2, line
    # The exit waited for those under way (those not started yet are dropped): the cache
    # holds what they compiled.
    assert len(os.listdir(tmp_path / "cache-background")) >= 1
