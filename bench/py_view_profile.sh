#!/usr/bin/env bash
# Where the host time of a view goes: perf's flat profile of 2 million views of a CuPy
# array (stream_ptr=-1), made and dropped. Run on the GPU machine with the wheel on
# PYTHONPATH: bench/py_view_profile.sh [cupy|torch]
set -euo pipefail
what=${1:-cupy}
cat > /tmp/view_loop.py <<PY
import stridekit, cupy as cp, torch
x = cp.zeros((1024, 1024), cp.float32) if "$what" == "cupy" else torch.zeros((1024, 1024), device="cuda")
V = stridekit.StridedMemoryView
for _ in range(2_000_000):
    V(x, -1)
PY
perf record -F 2000 -o /tmp/view.perf python /tmp/view_loop.py 2>/dev/null >/dev/null
perf report -i /tmp/view.perf --no-children --sort dso,symbol 2>/dev/null | grep -v '^#' | grep '%' | head -50
