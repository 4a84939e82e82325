"""stridekit.dist: the checks that need no GPU here (CI); on a GPU (skipped elsewhere),
PyTorch tensors of any layout moved between ranks of one process on threads and through
NCCL with one rank, byte for byte, and mismatches raising on every rank."""

import threading
from typing import Any, Callable, List

import pytest

import stridekit
from stridekit import dist

gpu = pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")


def test_bad_ids_and_worlds_are_errors_not_crashes() -> None:
    with pytest.raises(ValueError, match="128 bytes, not 3"):
        dist.Communicator(b"abc", 0, 1)
    with pytest.raises(ValueError, match="at least one rank"):
        dist.local_world([])
    if not stridekit.cuda_available:
        with pytest.raises(stridekit.CUDAError):
            dist.local_world([0])


def test_nccl_version_or_a_clear_error() -> None:
    try:
        major, minor, _ = dist.nccl_version()
    except stridekit.CUDAError as e:  # no NCCL on this machine
        assert "libnccl" in str(e)
        with pytest.raises(stridekit.CUDAError, match="libnccl"):
            dist.nccl_unique_id()
    else:
        assert (major, minor) >= (2, 18)


def on_ranks(comms: List[Any], f: Callable[[Any], Any]) -> List[Any]:
    out: List[Any] = [None] * len(comms)

    def run(i: int) -> None:
        try:
            out[i] = f(comms[i])
        except Exception as e:  # noqa: BLE001 - reported per rank
            out[i] = e

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(comms))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


@gpu
def test_torch_tensors_of_any_layout_between_local_ranks() -> None:
    torch: Any = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    a = torch.randint(0, 2**31 - 1, (300, 200), generator=g, dtype=torch.int32).cuda()
    sent = a.t()[::2, 1:]  # transposed and sliced

    def rank(c: Any) -> Any:
        if c.rank == 0:
            dist.send(c, sent, 1)
            return None
        out = torch.full((300, 200), -1, dtype=torch.int32, device="cuda")
        dst = out.t()[::2, 1:]  # a strided destination of the same shape
        dist.recv(c, dst, 0)
        torch.cuda.synchronize()
        return dst.cpu()

    res = on_ranks(dist.local_world([0, 0]), rank)
    assert not isinstance(res[0], Exception), res[0]
    assert torch.equal(res[1], sent.cpu())


@gpu
def test_unordered_transfers_run_on_stridekits_stream_and_are_done_on_return() -> None:
    # stream=-1: no ordering with the caller's streams; the transfer runs on stridekit's
    # own stream and is waited for before the call returns, so the bytes are there
    # without a synchronization.
    torch: Any = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(9)
    a = torch.randint(0, 255, (129, 67), generator=g, dtype=torch.uint8).cuda()
    torch.cuda.synchronize()
    sent = a.t()[1:, ::2]  # (66, 65), transposed and strided

    def rank(c: Any) -> Any:
        if c.rank == 0:
            dist.send(c, sent, 1, stream=-1)
            return None
        out = torch.full((65, 67), 7, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        dst = out.t()[1:, :]  # (66, 65), strided
        dist.recv(c, dst, 0, stream=-1)
        return dst.cpu()

    res = on_ranks(dist.local_world([0, 0]), rank)
    assert not isinstance(res[0], Exception), res[0]
    assert not isinstance(res[1], Exception), res[1]
    assert torch.equal(res[1], sent.cpu())


@gpu
def test_all_to_all_and_redistribute_between_local_ranks() -> None:
    torch: Any = pytest.importorskip("torch")
    n = 3
    shape = (7, 12, 5)
    whole = torch.arange(7 * 12 * 5, dtype=torch.float64, device="cuda").reshape(shape)

    def rank(c: Any) -> Any:
        r = c.rank
        # Rank r sends a (p + 2, r + 1) transposed tensor to rank p.
        sends = [torch.full((r + 1, p + 2), float(10 * r + p), device="cuda").t() for p in range(n)]
        recvs = [torch.zeros((r + 2, p + 1), device="cuda") for p in range(n)]
        dist.all_to_all(c, sends, recvs)
        # Parts in other memory orders on both sides.
        src = torch.chunk(whole, n, dim=0)[r].permute(2, 0, 1).contiguous().permute(1, 2, 0)
        after = torch.chunk(whole, n, dim=1)[r].shape
        dst = torch.zeros(tuple(reversed(after)), dtype=torch.float64, device="cuda").permute(2, 1, 0)
        dist.redistribute(c, shape, 0, 1, src, dst)
        torch.cuda.synchronize()
        return [x.cpu() for x in recvs], dst.cpu()

    res = on_ranks(dist.local_world([0] * n), rank)
    for r, got in enumerate(res):
        assert not isinstance(got, Exception), got
        recvs, part = got
        for p in range(n):
            assert torch.equal(recvs[p], torch.full((r + 2, p + 1), float(10 * p + r))), (r, p)
        assert torch.equal(part, torch.chunk(whole, n, dim=1)[r].cpu())


@gpu
def test_one_view_cannot_receive_twice_in_a_batch() -> None:
    torch: Any = pytest.importorskip("torch")
    (comm,) = dist.local_world([0])
    src = stridekit.StridedMemoryView.from_any_interface(torch.ones(8, device="cuda"), -1)
    dst = stridekit.StridedMemoryView.from_any_interface(torch.zeros(8, device="cuda"), -1)
    with pytest.raises(ValueError, match="already writes"):
        dist.batch(comm, [(src, 0), (src, 0)], [(dst, 0), (dst, 0)])


@gpu
def test_transfers_in_pieces_between_local_ranks() -> None:
    torch: Any = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(9)
    a = torch.randint(0, 2**31 - 1, (512, 384), generator=g, dtype=torch.int32).cuda()

    def rank(c: Any, piece: Any) -> Any:
        if c.rank == 0:
            dist.send(c, a, 1, piece_bytes=piece)
            return None
        out = torch.full((384, 512), -1, dtype=torch.int32, device="cuda")
        dst = out.t()  # received transposed: unpacked, piece by piece
        dist.recv(c, dst, 0, piece_bytes=piece)
        torch.cuda.synchronize()
        return dst.cpu()

    # 768 KiB in pieces of at least 64 KiB: eight pieces.
    res = on_ranks(dist.local_world([0, 0]), lambda c: rank(c, 64 << 10))
    assert not isinstance(res[0], Exception), res[0]
    assert torch.equal(res[1], a.cpu())
    # Ranks cutting a transfer otherwise both raise; a piece of 0 bytes raises.
    res = on_ranks(dist.local_world([0, 0]), lambda c: rank(c, 64 << 10 if c.rank else 1 << 30))
    for r in res:
        assert isinstance(r, ValueError) and "piece" in str(r), r
    with pytest.raises(ValueError, match="0 bytes"):
        dist.send(dist.local_world([0])[0], a, 0, piece_bytes=0)


@gpu
def test_mismatched_ranks_both_raise() -> None:
    torch: Any = pytest.importorskip("torch")

    def rank(c: Any) -> Any:
        if c.rank == 0:
            dist.send(c, torch.ones((4, 6), device="cuda"), 1)
        else:
            dist.recv(c, torch.ones((6, 4), device="cuda"), 0)

    res = on_ranks(dist.local_world([0, 0]), rank)
    for r in res:
        assert isinstance(r, ValueError) and "extents differ" in str(r), r


@gpu
def test_nccl_one_rank_sends_to_itself() -> None:
    torch: Any = pytest.importorskip("torch")
    try:
        dist.nccl_version()
    except stridekit.CUDAError:
        pytest.skip("no NCCL here")
    comm = dist.Communicator(dist.nccl_unique_id(), 0, 1, device_id=0)
    assert (comm.rank, comm.size, comm.device_id) == (0, 1, 0)
    a = torch.randn(513, 257, device="cuda", dtype=torch.float32)
    b = torch.full((257, 513), float("nan"), device="cuda")
    c = torch.full((257, 513), float("nan"), device="cuda")
    dist.batch(comm, [(a.t(), 0), (a.t(), 0)], [(b, 0), (c, 0)], self_through_transport=True)
    torch.cuda.synchronize()
    assert torch.equal(b, a.t()) and torch.equal(c, a.t())
