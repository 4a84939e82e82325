"""Two processes, one GPU each, for the benchmarks and checks that need two GPUs."""
import os
import sys

import torch
import torch.multiprocessing as mp


def spawn_two(fn, port: int, what: str) -> None:
    """Runs `fn(rank)` in two fresh processes on GPUs 0 and 1 (their rendezvous on
    `port`), or says that `what` is skipped and exits where fewer than two GPUs are
    visible. Call it under `if __name__ == "__main__":`: each process imports the script."""
    n = torch.cuda.device_count()
    if n < 2:
        print(f"{what}: skipped ({n} GPU visible)")
        sys.exit(0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    mp.spawn(fn, nprocs=2)
