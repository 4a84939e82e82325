"""A Cython extension built against ``stridekit.get_include()`` reads a view's shape,
strides and elements through its C view (``as_c_view``), in C loops. Skipped when Cython
or setuptools is missing, unless STRIDEKIT_REQUIRE_CYTHON=1 (CI sets it)."""

import importlib
import os
import sys
import tempfile
from typing import Any, Iterator

import numpy as np
import pytest

import stridekit
from required import required

HERE = os.path.dirname(os.path.abspath(__file__))


def _require(module: str) -> Any:
    return required(module, "STRIDEKIT_REQUIRE_CYTHON")


@pytest.fixture(scope="module")
def read_view() -> Iterator[Any]:
    cython_build = _require("Cython.Build")
    setuptools = _require("setuptools")
    inc = stridekit.get_include()
    with tempfile.TemporaryDirectory() as tmp:
        ext = setuptools.Extension(
            "read_view", [os.path.join(HERE, "cython", "read_view.pyx")], include_dirs=[inc]
        )
        modules = cython_build.cythonize(
            [ext], include_path=[inc], quiet=True, build_dir=tmp, compiler_directives={"language_level": 3}
        )
        dist = setuptools.Distribution({"ext_modules": modules, "script_name": "setup.py"})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = tmp
        cmd.build_temp = tmp
        dist.run_command("build_ext")
        sys.path.insert(0, tmp)
        try:
            yield importlib.import_module("read_view")
        finally:
            sys.path.remove(tmp)


def test_cython_reads_shape_strides_and_elements_in_c(read_view: Any) -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(-(2**20), 2**20, size=(37, 53), dtype=np.int32)
    for x in (a, a.T, a[3:30:4, ::-3], np.broadcast_to(a[0], (5, 53))):
        v = stridekit.StridedMemoryView(x)
        cap = v.as_c_view()
        shape, strides, itemsize, readonly, device = read_view.describe(cap)
        assert (tuple(shape), tuple(strides), itemsize) == (v.shape, v.strides, 4)
        assert (readonly, device) == (v.readonly, -1)
        assert read_view.sum_int32_2d(cap) == int(x.astype(np.int64).sum())


def test_cython_refuses_a_capsule_of_another_kind(read_view: Any) -> None:
    with pytest.raises(ValueError):
        read_view.describe(object())
