"""NVRTC found without a toolkit: only the `nvidia-cuda-nvrtc` wheel, nothing on the loader path.

The copy runs in a child process inside a private mount namespace where every NVRTC
library the loader could find (through `ldconfig`, `LD_LIBRARY_PATH` or the toolkit's
folder) is covered by an empty file; the wheel's copy stays. Needs a GPU, root (for the
namespace), `unshare`, and the wheel.
"""
import glob
from typing import Any
import os
import shutil
import subprocess
import sys

import pytest

import stridekit

CHILD = r"""
import ctypes, sys
for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
    try:
        ctypes.CDLL(name)
    except OSError:
        continue
    sys.exit("the loader still finds " + name)
import numpy as np
import stridekit
from stridekit import Buffer, DeviceMemoryResource, StridedLayout, StridedMemoryView
rng = np.random.default_rng(7)
host = rng.integers(0, 256, size=(300, 500), dtype=np.uint8)
mr = DeviceMemoryResource(0)
src_buf = mr.allocate(host.nbytes)
dst_buf = mr.allocate(host.nbytes)
src = StridedMemoryView.from_buffer(src_buf, StridedLayout.dense((300, 500), 1), dtype=np.uint8)
src.copy_from(StridedMemoryView(host, -1))
dst = StridedMemoryView.from_buffer(dst_buf, StridedLayout.dense((500, 300), 1), dtype=np.uint8)
dst.copy_from(src.view(src.layout.permuted((1, 0))))
out = np.full((500, 300), 0xA5, dtype=np.uint8)
StridedMemoryView(out, -1).copy_from(dst)
assert out.tobytes() == np.ascontiguousarray(host.T).tobytes(), "wrong bytes"
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libnvrtc.so" in l]
print("nvrtc from", sorted(set(maps))[0] if maps else "nowhere")
"""


def _wheel_dir() -> "str | None":
    for site in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"):
            if glob.glob(os.path.join(site, sub, "libnvrtc.so.1*")):
                return os.path.join(site, sub)
    return None


def _loader_copies(wheel: str) -> "list[str]":
    """Every NVRTC file the loader could find, outside the wheel's folder."""
    found: "set[str]" = set()
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
        found.update(line.split("=>")[-1].strip() for line in out.splitlines() if "libnvrtc" in line)
    except OSError:
        pass
    dirs = os.environ.get("LD_LIBRARY_PATH", "").split(":") + [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
    ]
    for d in dirs:
        if d:
            found.update(glob.glob(os.path.join(d, "libnvrtc*.so*")))
    return sorted(f for f in found if os.path.exists(f) and not os.path.realpath(f).startswith(os.path.realpath(wheel)))


@pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")
def test_a_copy_compiles_its_kernel_with_only_the_nvrtc_wheel(tmp_path: Any) -> None:
    wheel = _wheel_dir()
    if wheel is None:
        pytest.skip("the nvidia-cuda-nvrtc wheel is not installed")
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a private mount namespace needs root and unshare")
    hide = _loader_copies(wheel)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    mounts = " && ".join(f"mount --bind /dev/null '{f}'" for f in hide) or "true"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "STRIDEKIT_NVRTC_PATH")}
    env["STRIDEKIT_KERNEL_CACHE"] = "off"  # compile, do not load a cached kernel
    r = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", f"{mounts} && exec {sys.executable} {script}"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nvrtc from " + wheel in r.stdout.replace(os.path.realpath(wheel), wheel), (hide, r.stdout)
