"""cuda.core's managed prefetch timings, to print beside examples/managed_bench.rs.

Run on the GPU machine: python3 bench/managed_compare.py
Same shape as the Rust benchmark: 64 managed ranges of 64 KiB, host-side time of
ManagedBuffer.prefetch (64 calls) and utils.prefetch_batch (one call), median of 50.
"""
import time

from cuda.core import Device, Host, ManagedMemoryResource
from cuda.core.utils import prefetch_batch

RANGES, BYTES, ROUNDS = 64, 64 << 10, 50

dev = Device(0)
dev.set_current()
stream = dev.create_stream()
mr = ManagedMemoryResource()
bufs = [mr.allocate(BYTES, stream=stream) for _ in range(RANGES)]


def med(v):
    v = sorted(v)
    return v[len(v) // 2]


for name, src, dst in [("host -> device", Host(), dev), ("device -> host", dev, Host())]:
    batch, single = [], []
    for _ in range(ROUNDS):
        prefetch_batch(stream, bufs, src)
        stream.sync()
        t = time.perf_counter()
        prefetch_batch(stream, bufs, dst)
        batch.append((time.perf_counter() - t) * 1e6)
        stream.sync()
        for b in bufs:
            b.prefetch(src, stream=stream)
        stream.sync()
        t = time.perf_counter()
        for b in bufs:
            b.prefetch(dst, stream=stream)
        single.append((time.perf_counter() - t) * 1e6)
        stream.sync()
    print(f"cuda.core {name}: prefetch_batch {med(batch):.1f} µs, 64x ManagedBuffer.prefetch {med(single):.1f} µs host-side")

for b in bufs:
    b.prefetch(dev, stream=stream)
stream.sync()
t = time.perf_counter()
for _ in range(100):
    bufs[0].prefetch(dev, stream=stream)
print(f"cuda.core one ManagedBuffer.prefetch, pages resident: {(time.perf_counter() - t) * 1e4:.2f} µs host-side")
stream.sync()
