"""NCCL alone under compute-sanitizer: a control for `scripts/gpu-test sanitize` on two GPUs.

PyTorch's own NCCL sends a 64 MiB float32 tensor from GPU 0 to GPU 1 and back (two
processes, `torch.distributed` send/recv), with no stridekit code in the process. Run it
under memcheck to see whether NCCL's send/recv kernel is reported without stridekit:

    compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
        python3 bench/nccl_memcheck_control.py
"""
import sys

import torch
import torch.distributed as dist

from two_ranks import spawn_two


def rank_main(rank: int) -> None:
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=dev)
    n = 16 << 20
    x = torch.arange(n, device=dev, dtype=torch.float32) + rank
    y = torch.empty(n, device=dev, dtype=torch.float32)
    for _ in range(2):
        if rank == 0:
            dist.send(x, 1)
            dist.recv(y, 1)
        else:
            dist.recv(y, 0)
            dist.send(x, 0)
    torch.cuda.synchronize()
    want = torch.arange(n, device=dev, dtype=torch.float32) + (1 - rank)
    ok = bool(torch.equal(y, want))
    print(f"rank {rank}: received {'exact' if ok else 'WRONG'}", flush=True)
    dist.destroy_process_group()
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    spawn_two(rank_main, 29541, "NCCL between two GPUs")
