"""NCCL alone under compute-sanitizer, both ranks in one process: the control for
`gpu_dist_multi`'s NCCL checks, whose two ranks are threads of one process.

`bench/nccl_memcheck_control.py` runs NCCL's send/recv in two processes (PyTorch's
`torch.distributed`); this one makes both communicators in one process with
`ncclCommInitAll` (CuPy's NCCL binding) and sends 64 MiB from GPU 0 to GPU 1 and back in
one group, with no stridekit code in the process:

    compute-sanitizer --tool memcheck --report-api-errors no \
        python3 bench/nccl_memcheck_inprocess.py [--async-pool] [--threads]

With `--async-pool` the buffers come from the devices' stream-ordered memory pools
(`cudaMallocFromPoolAsync`, CuPy's `MemoryAsyncPool`), as stridekit's
`DeviceMemoryResource` allocates them; without, from `cudaMalloc` (CuPy's default pool).
With `--threads` each rank makes its communicator with `ncclCommInitRank` and sends on a
thread of its own, as `gpu_dist_multi`'s ranks do; without, `ncclCommInitAll` and one
group from one thread.
"""
import sys

import cupy as cp


def send_recv(nccl, c, x, y, s, peer: int, n: int) -> None:
    c.send(x.data.ptr, n, nccl.NCCL_FLOAT32, peer, s.ptr)
    c.recv(y.data.ptr, n, nccl.NCCL_FLOAT32, peer, s.ptr)


def run_on_threads(nccl, bufs, n: int) -> None:
    """Each rank on a thread of its own: `ncclCommInitRank`, then two rounds of one group."""
    import threading

    uid = nccl.get_unique_id()
    errors = []

    def rank_main(rank: int) -> None:
        try:
            with cp.cuda.Device(rank):
                c = nccl.NcclCommunicator(2, uid, rank)
                x, y, s = bufs[rank]
                for _ in range(2):
                    nccl.groupStart()
                    send_recv(nccl, c, x, y, s, 1 - rank, n)
                    nccl.groupEnd()
                s.synchronize()
        except Exception as e:  # reported below, the other rank may be waiting
            errors.append(f"rank {rank}: {e}")

    ts = [threading.Thread(target=rank_main, args=(r,)) for r in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))


def main() -> None:
    if cp.cuda.runtime.getDeviceCount() < 2:
        print("nccl_memcheck_inprocess: skipped (fewer than 2 GPUs)")
        return
    from cupy.cuda import nccl

    if "--async-pool" in sys.argv[1:]:
        cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    threads = "--threads" in sys.argv[1:]
    n = 16 << 20
    bufs = []
    for rank in range(2):
        with cp.cuda.Device(rank):
            x = cp.arange(n, dtype=cp.float32) + rank
            y = cp.empty(n, dtype=cp.float32)
            s = cp.cuda.Stream(non_blocking=True)
            bufs.append((x, y, s))
    if threads:
        run_on_threads(nccl, bufs, n)
    else:
        comms = nccl.NcclCommunicator.initAll([0, 1])
        for _ in range(2):
            nccl.groupStart()
            for rank, c in enumerate(comms):
                x, y, s = bufs[rank]
                send_recv(nccl, c, x, y, s, 1 - rank, n)
            nccl.groupEnd()
    ok = True
    for rank in range(2):
        x, y, s = bufs[rank]
        with cp.cuda.Device(rank):
            s.synchronize()
            want = cp.arange(n, dtype=cp.float32) + (1 - rank)
            exact = bool((y.view(cp.uint32) == want.view(cp.uint32)).all())
        print(f"rank {rank}: received {'exact' if exact else 'WRONG'}")
        ok &= exact
    print(f"NCCL {nccl.get_version()}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
