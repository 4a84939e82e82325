"""tools/cuda_core_tests.py on a small stand-in for a cuda-python checkout: imports
rewritten to stridekit's, every test run, failures sorted by cause."""
import subprocess
import sys
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).resolve().parents[3] / "tools" / "cuda_core_tests.py"

UTILS = '''
import numpy as np
import pytest
from cuda.core.utils import StridedMemoryView
from cuda.core._layout import _StridedLayout


def test_view_dtype():
    v = StridedMemoryView.from_any_interface(np.zeros(3, np.float32), stream_ptr=-1)
    assert v.dtype == np.float32


def test_layout_strides_none():
    assert _StridedLayout.dense((2, 3), 4).strides is None


def test_message():
    with pytest.raises(ValueError, match="words cuda.core would use"):
        _StridedLayout.dense((2, 3), 4).permuted((0, 0))
'''

LAYOUT = '''
from cuda.core.experimental._layout import StridedLayout


def test_dense():
    assert StridedLayout.dense((2, 3), 4).shape == (2, 3)
'''


def test_the_runner_rewrites_imports_and_sorts_failures(tmp_path: Any) -> None:
    tests = tmp_path / "cuda_core" / "tests"
    (tests / "helpers").mkdir(parents=True)
    (tests / "test_utils.py").write_text(UTILS)
    (tests / "test_strided_layout.py").write_text(LAYOUT)
    (tests / "helpers" / "layout.py").write_text("")
    report = tmp_path / "report.md"
    r = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path), "--report", str(report)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
    text = report.read_text()
    assert "| `test_utils::test_view_dtype` | 1 | - | 0 |" in text
    assert "| `test_strided_layout::test_dense` | 1 | - | 0 |" in text
    assert "| `test_utils::test_layout_strides_none` | 0 | explicit strides 1 | 0 |" in text
    assert "| `test_utils::test_message` | 0 | message wording 1 | 0 |" in text
