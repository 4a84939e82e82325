"""The timing the benchmark scripts share: the median of CUDA-event-timed runs.

As in the Rust benchmarks (`crates/stridekit/examples/common/timing.rs`), each run is
queued behind a read-only pass over 256 MiB: the GPU is still busy when the host has
queued the timed call, so its host work never shows as idle GPU time, and the 50 MB L2
cache holds none of the data (every byte comes from DRAM). `gpu_ms(fn, queued=False)`
times each run alone on an idle GPU instead.
"""
import torch

_flush = None


def _queue_flush():
    global _flush
    if _flush is None:
        _flush = torch.ones(1 << 26, dtype=torch.float32, device="cuda")
    # A reduction reads every byte and writes one value.
    _flush.amax()


def _wait_for_stridekit_kernels():
    """stridekit's first copies of a class run on its fallback kernel while their own
    compile in the background: the timed runs use their own (a no-op where stridekit is
    not loaded or nothing compiles)."""
    import sys

    sk = sys.modules.get("stridekit")
    if sk is not None and hasattr(sk, "wait_for_kernels"):
        sk.wait_for_kernels()


def gpu_ms(fn, reps=20, warmup=3, queued=True):
    """Median milliseconds of `fn` on the current stream, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    _wait_for_stridekit_kernels()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if queued:
            _queue_flush()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
