"""PyTorch beside `examples/dist_bench.rs`, on the same GPU and the same layouts.

    python3 bench/dist_compare.py              # one GPU: parts 1 and 2
    python3 bench/dist_compare.py --two-gpus   # two GPUs: part 3

1. A transposed 8192 x 8192 f32 tensor (256 MiB) sent to oneself as PyTorch users must:
   `.contiguous()`, `all_to_all_single` over NCCL with one rank, then a copy into the
   destination's layout; each run alone on the GPU (as the Rust side times its runs).
2. The rows -> columns redistribution of a (8192, 16384) f32 tensor over four ranks, as
   DTensor changes the shard dimension (pytorch #148868): per rank
   `x.reshape(r, n, c).movedim(1, 0).contiguous()`, the all-to-all (here the block copies
   between the ranks' buffers on the one GPU, which is what the in-process ranks of the
   Rust side do), and a copy into the destination's layout where it is not row-major.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

from timing import gpu_ms
from two_ranks import spawn_two

# The sends timed: (label, source transposed, destination transposed).
SEND_LAYOUTS = [
    ("row-major -> row-major", False, False),
    ("transposed -> row-major", True, False),
    ("row-major -> transposed", False, True),
    ("transposed -> transposed", True, True),
]


def two_gpus_rank(rank: int) -> None:
    """Part 3 on one of two processes: the cases of `dist_bench`'s two-GPU table."""
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=dev)
    side = 16384
    a = torch.randn(side, side, device=dev)
    b = torch.empty(side, side, device=dev)

    def wall_ms(fn, reps=10):
        for _ in range(2):
            fn()
        out = []
        for _ in range(reps):
            torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            dist.barrier()
            out.append((time.perf_counter() - t0) * 1e3)
        out.sort()
        return out[len(out) // 2]

    rows = []
    for layouts, sf, df in SEND_LAYOUTS:
        name = f"send {layouts}"
        src = a.t() if sf else a
        dst = b.t() if df else b

        def run():
            if rank == 0:
                dist.send(src.contiguous(), 1)
            else:
                wire = torch.empty(side, side, device=dev)
                dist.recv(wire, 0)
                dst.copy_(wire)

        rows.append((name, wall_ms(run)))
    # rows -> columns over two ranks, as DTensor changes the shard dimension.
    part = a[: side // 2]
    out = torch.empty(2, side // 2, side // 2, device=dev)

    def redistribute():
        packed = part.reshape(side // 2, 2, side // 2).movedim(1, 0).contiguous()
        dist.all_to_all_single(out, packed)
        out.view(side, side // 2)

    rows.append(("redistribute rows -> columns, row-major parts", wall_ms(redistribute)))
    if rank == 0:
        base = rows[0][1]
        print("\n## two GPUs, PyTorch + NCCL, 1 GiB f32 (16384 x 16384)\n")
        print("| case | ms | GB/s (bytes once) | vs contiguous NCCL |")
        print("| --- | ---: | ---: | ---: |")
        for name, ms in rows:
            print(f"| {name} | {ms:.3f} | {side * side * 4 / ms / 1e6:.0f} | {base / ms:.2f} |")
    dist.destroy_process_group()


def one_gpu() -> None:
    """Parts 1 and 2 on GPU 0."""
    torch.manual_seed(0)
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name()} | PyTorch {torch.__version__} | NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}")

    print("\n## self-send of 256 MiB f32 through NCCL (one rank)\n")
    print("| source -> destination | ms | GB/s (bytes once) |")
    print("| --- | ---: | ---: |")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    n = 8192
    base = torch.randn(n, n, device=dev)
    for name, sf, df in SEND_LAYOUTS:
        src = base.t() if sf else base
        dst = torch.empty(n, n, device=dev).t() if df else torch.empty(n, n, device=dev)
        wire = torch.empty(n * n, device=dev)

        def run():
            packed = src.contiguous().view(-1)
            dist.all_to_all_single(wire, packed)
            dst.copy_(wire.view(n, n))

        ms = gpu_ms(run, queued=False)
        print(f"| {name} | {ms:.3f} | {n * n * 4 / ms / 1e6:.0f} |")
    dist.destroy_process_group()

    print("\n## redistribute rows -> columns, (8192, 16384) f32, 4 ranks on one GPU\n")
    print("| parts before -> after | ms | GB/s (tensor bytes once) |")
    print("| --- | ---: | ---: |")
    R, C, N = 8192, 16384, 4
    r, c = R // N, C // N
    for name, sf, df in [
        ("row-major -> row-major", False, False),
        ("column-major -> row-major", True, False),
        ("row-major -> column-major", False, True),
    ]:
        srcs = [torch.randn(C, r, device=dev).t() if sf else torch.randn(r, C, device=dev) for _ in range(N)]
        dsts = [torch.empty(c, R, device=dev).t() if df else torch.empty(R, c, device=dev) for _ in range(N)]
        outs = [torch.empty(N, r, c, device=dev) for _ in range(N)]

        def run():
            packed = [x.reshape(r, N, c).movedim(1, 0).contiguous() for x in srcs]
            for p in range(N):  # the all-to-all: block p of rank q goes to rank p, slot q
                for q in range(N):
                    outs[p][q].copy_(packed[q][p])
            for p in range(N):
                y = outs[p].view(R, c)
                if df:
                    dsts[p].copy_(y)

        ms = gpu_ms(run, reps=10, queued=False)
        print(f"| {name} | {ms:.3f} | {R * C * 4 / ms / 1e6:.0f} |")


# Part 3 spawns its ranks as fresh interpreters that import this file: only the first
# process runs the benchmark.
if __name__ == "__main__":
    if "--two-gpus" in sys.argv:
        spawn_two(two_gpus_rank, 29534, "two GPUs")
        sys.exit(0)
    one_gpu()
