#!/usr/bin/env python3
"""Runs cuda.core's own tests of its memory-view layer against stridekit.

    python3 tools/cuda_core_tests.py PATH/TO/cuda-python [--report FILE.md] [-- PYTEST ARGS]

From a checkout of NVIDIA/cuda-python it takes `cuda_core/tests/test_utils.py`
(StridedMemoryView), `cuda_core/tests/test_strided_layout.py` (StridedLayout) and
`cuda_core/tests/helpers/layout.py`, rewrites only their imports of the view and layout
classes to stridekit's (`cuda.core.utils` -> `stridekit.utils`, `cuda.core._layout`'s
layout class -> `stridekit.StridedLayout`; `Device`, memory resources and streams stay
cuda.core's) and one pytest spelling newer pytest rejects (a parametrize name with a
trailing comma); its own conftest gives the tests cuda.core's `Device` with a memory
resource whose `allocate(size)` needs no stream (what newer cuda.core accepts; 1.2
requires one), runs them with pytest in a temporary directory, and prints the outcome of
every test group with each failure sorted by cause. Nothing of cuda-python is copied into
this repository. With `--report`, the same tables are written as Markdown.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REWRITES = [
    (r"from cuda\.core(?:\.experimental)?\.utils import", "from stridekit.utils import"),
    (
        r"from cuda\.core(?:\.experimental)?\._layout import (?:_?StridedLayout) as (\w+)",
        r"from stridekit import StridedLayout as \1",
    ),
    (
        r"from cuda\.core(?:\.experimental)?\._layout import (_?StridedLayout)\b",
        r"from stridekit import StridedLayout as \1",
    ),
]

CONFTEST = '''
import pytest

try:
    import cuda.core as _core
except ImportError:  # pragma: no cover
    _core = None


class _Resource:
    """A cuda.core memory resource whose allocate() takes no stream, as the newer
    cuda.core the test files are written for allows (the device's default stream)."""

    def __init__(self, mr, device):
        self._mr, self._device = mr, device

    def allocate(self, size, stream=None):
        return self._mr.allocate(size, stream=stream if stream is not None else self._device.default_stream)

    def __getattr__(self, name):
        return getattr(self._mr, name)


class _Device:
    """cuda.core's Device, with the allocate() above on its memory resource."""

    def __init__(self, *args, **kwargs):
        self._d = _Original(*args, **kwargs)

    @property
    def memory_resource(self):
        return _Resource(self._d.memory_resource, self._d)

    def __getattr__(self, name):
        return getattr(self._d, name)


if _core is not None:
    _Original = _core.Device
    _core.Device = _Device


@pytest.fixture
def init_cuda():
    if _core is None:
        pytest.skip("cuda.core is not installed (its Device sets up the tests)")
    d = _Device()
    d.set_current()
    yield d


@pytest.fixture
def deinit_cuda():
    yield
'''

# (cause, what it means, pattern on the failure's message and text); first match wins.
CAUSES = [
    (
        "cuda.core version",
        "the test file calls a newer cuda.core API than the one installed (allocate() without a stream): it fails before stridekit is reached",
        r"needs keyword-only argument stream|got an unexpected keyword argument",
    ),
    (
        "explicit strides",
        "StridedLayout.strides is always a tuple (cuda.core's private class gives None for C order); deliberate",
        r"strides(_in_bytes)? is None|assert \(?None|strides_in_bytes is None|expect_strides_none",
    ),
    ("private _layout", "the tests read cuda.core's private `view._layout`", r"'_layout'|\._layout\b"),
    (
        "host device_id",
        "device_id of host memory is -1, as cuda.core documents; its tests expect the device's",
        r"device_id ==",
    ),
    (
        "cuda.core internals",
        "the tests call cuda.core's own internals (monkeypatching its modules, cast_to_3_tuple)",
        r"cuda\.core\._|_memoryview|monkeypatch|no_ml_dtypes",
    ),
    (
        "strides not a multiple of the itemsize",
        "stridekit raises ValueError when such a view is made; cuda.core makes it and raises when `strides` is read",
        r"strides must be divisible by itemsize|is not a multiple of the itemsize",
    ),
    ("message wording", "same exception type, other words", r"Regex pattern did not match"),
    ("no exception", "cuda.core raises where stridekit accepts", r"DID NOT RAISE"),
    ("deprecation warning", "cuda.core deprecates the constructor; stridekit keeps it", r"DeprecationWarning|deprecated_call|WarningsChecker|DID NOT WARN"),
]


# Not an import, and not what is tested: a parametrize name with a trailing comma
# (`"in_arr,"`), which pytest 8.4 and later reads as a tuple of names.
COMPAT = [(r'parametrize\(\s*"(\w+),"', r'parametrize("\1"')]


def rewrite(text: str) -> str:
    for pat, rep in REWRITES + COMPAT:
        text = re.sub(pat, rep, text)
    return text


FILES = ["test_utils.py", "test_strided_layout.py"]


def prepare(checkout: Path, into: Path, files: list[str]) -> None:
    tests = checkout / "cuda_core" / "tests"
    for name in files:
        src = tests / name
        if not src.exists():
            sys.exit(f"{src} is missing: give the root of a cuda-python checkout")
        (into / name).write_text(rewrite(src.read_text()))
    (into / "helpers").mkdir()
    (into / "helpers" / "__init__.py").write_text("")
    layout = tests / "helpers" / "layout.py"
    if layout.exists():
        (into / "helpers" / "layout.py").write_text(rewrite(layout.read_text()))
    (into / "conftest.py").write_text(CONFTEST)


def cause_of(text: str) -> str:
    for name, _, pat in CAUSES:
        if re.search(pat, text):
            return name
    return "other"


def run(checkout: Path, files: list[str], pytest_args: list[str]) -> tuple[dict, collections.Counter]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        prepare(checkout, d, files)
        xml = d / "report.xml"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(d), env.get("PYTHONPATH", "")])
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *pytest_args],
            cwd=d,
            env=env,
        )
        if not xml.exists():
            sys.exit("pytest wrote no report (a collection error?)")
        groups: dict = collections.defaultdict(lambda: collections.Counter())
        causes: collections.Counter = collections.Counter()
        for case in ET.parse(xml).getroot().iter("testcase"):
            file = (case.get("classname") or "").split(".")[0]
            group = f"{file}::{(case.get('name') or '').split('[')[0]}"
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            if bad is not None:
                c = cause_of((bad.get("message") or "") + "\n" + (bad.text or ""))
                groups[group]["failed: " + c] += 1
                causes[c] += 1
            elif case.find("skipped") is not None:
                groups[group]["skipped"] += 1
                causes["(skipped)"] += 1
            else:
                groups[group]["passed"] += 1
                causes["(passed)"] += 1
        return groups, causes


def tables(groups: dict, causes: collections.Counter) -> str:
    out = ["| test group | passed | failed (by cause) | skipped |", "| --- | ---: | --- | ---: |"]
    for g in sorted(groups):
        c = groups[g]
        failed = ", ".join(f"{k[8:]} {v}" for k, v in sorted(c.items()) if k.startswith("failed: "))
        out.append(f"| `{g}` | {c['passed']} | {failed or '-'} | {c['skipped']} |")
    out += ["", "| outcome or cause of failure | tests | meaning |", "| --- | ---: | --- |"]
    meaning = {name: m for name, m, _ in CAUSES}
    meaning["other"] = "not sorted: read the test's output"
    for k, v in causes.most_common():
        out.append(f"| {k} | {v} | {meaning.get(k, '')} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", type=Path, help="root of a cuda-python checkout")
    ap.add_argument("--report", type=Path, help="write the tables as Markdown here")
    ap.add_argument("--only", choices=FILES, help="run one of the two files")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    a, extra = ap.parse_known_args()
    pytest_args = [x for x in [*a.pytest_args, *extra] if x != "--"]
    groups, causes = run(a.checkout.resolve(), [a.only] if a.only else FILES, pytest_args)
    text = tables(groups, causes)
    print(text)
    if a.report:
        a.report.write_text(text)


if __name__ == "__main__":
    main()
