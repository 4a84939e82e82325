"""The timing the benchmark scripts share: the median of CUDA-event-timed runs."""
import torch


def gpu_ms(fn, reps=20, warmup=3):
    """Median milliseconds of `fn` on the current stream, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
