"""Strided tensors between ranks: sends, receives, all-to-all and redistribution of views
of any layout, over NCCL or between ranks of one process.

A tensor may be a ``StridedMemoryView`` or anything with DLPack or the CUDA Array
Interface (a PyTorch, CuPy or JAX array): it is viewed first, ordered on the transfer's
stream. A view that is dense in row-major order on the communicator's device travels in
place; any other is packed (or unpacked) by stridekit's copy engine in one pass. Before
any byte moves, the ranks swap a small header per transfer (extents, itemsize, element
type): a mismatch raises on every rank involved, never hangs. A transfer of at least twice
``piece_bytes`` (default 64 MiB) whose receiver unpacks it moves in up to eight pieces,
each unpacked while the next arrives; both ranks must give the same ``piece_bytes``.

NCCL::

    uid = stridekit.dist.nccl_unique_id() if rank == 0 else None
    uid = share_somehow(uid)                         # 128 bytes: MPI, a file, torch.distributed
    comm = stridekit.dist.Communicator(uid, rank, size, device_id=local_gpu)
    stridekit.dist.send(comm, x.t(), peer=1, stream=s)      # no .contiguous() first

Ranks of one process (threads; for tests and single-process multi-GPU programs)::

    ranks = stridekit.dist.local_world([0, 0, 0, 0])        # four ranks on GPU 0
"""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Tuple

from ._stridekit import Communicator, local_world, nccl_unique_id, nccl_version
from ._stridekit import batch as _batch
from ._stridekit import redistribute as _redistribute
from . import StridedMemoryView

__all__ = [
    "Communicator",
    "all_to_all",
    "batch",
    "local_world",
    "nccl_unique_id",
    "nccl_version",
    "recv",
    "redistribute",
    "send",
]


def _view(obj: Any, stream: Any) -> StridedMemoryView:
    if isinstance(obj, StridedMemoryView):
        return obj
    return StridedMemoryView.from_any_interface(obj, stream)


def _posted(pairs: Iterable[Tuple[Any, int]], stream: Any) -> List[Tuple[StridedMemoryView, int]]:
    """``(tensor, peer)`` pairs as ``(view, peer)``, each viewed on ``stream``."""
    return [(_view(t, stream), p) for t, p in pairs]


def batch(
    comm: Communicator,
    sends: Sequence[Tuple[Any, int]] = (),
    recvs: Sequence[Tuple[Any, int]] = (),
    stream: Any = None,
    *,
    self_through_transport: bool = False,
    piece_bytes: Optional[int] = None,
) -> None:
    """Posts every ``(tensor, peer)`` of ``sends`` and ``recvs`` and moves them in one
    group on ``stream``: the k-th send of a rank to a peer meets the k-th receive of that
    peer from it. Transfers of a rank to itself are one copy unless
    ``self_through_transport`` (NCCL's send to oneself). ``piece_bytes``: the least bytes
    of a piece a large transfer is cut into (None: 64 MiB; 0 raises)."""
    _batch(
        comm,
        _posted(sends, stream),
        _posted(recvs, stream),
        stream,
        self_through_transport,
        False,
        piece_bytes,
    )


def send(
    comm: Communicator,
    tensor: Any,
    peer: int,
    stream: Any = None,
    *,
    piece_bytes: Optional[int] = None,
) -> None:
    """Sends ``tensor`` (any layout) to ``peer``, which calls ``recv`` with a tensor of the
    same shape, itemsize and element type (and the same ``piece_bytes``)."""
    batch(comm, [(tensor, peer)], [], stream, piece_bytes=piece_bytes)


def recv(
    comm: Communicator,
    tensor: Any,
    peer: int,
    stream: Any = None,
    *,
    piece_bytes: Optional[int] = None,
) -> None:
    """Receives from ``peer`` into ``tensor`` (any layout, writable)."""
    batch(comm, [], [(tensor, peer)], stream, piece_bytes=piece_bytes)


def all_to_all(
    comm: Communicator,
    sends: Sequence[Any],
    recvs: Sequence[Any],
    stream: Any = None,
    *,
    piece_bytes: Optional[int] = None,
) -> None:
    """Every rank sends ``sends[r]`` to rank ``r`` and receives rank ``r``'s into
    ``recvs[r]`` (one tensor per rank on each side, any layouts). Every rank calls it."""
    _batch(
        comm,
        _posted(((t, r) for r, t in enumerate(sends)), stream),
        _posted(((t, r) for r, t in enumerate(recvs)), stream),
        stream,
        False,
        True,
        piece_bytes,
    )


def redistribute(
    comm: Communicator,
    shape: Sequence[int],
    from_axis: int,
    to_axis: int,
    src: Any,
    dst: Any,
    stream: Any = None,
    *,
    piece_bytes: Optional[int] = None,
) -> None:
    """A tensor of global ``shape`` split along ``from_axis`` over the ranks (as
    ``torch.chunk`` cuts it) becomes the same tensor split along ``to_axis``: ``src`` is
    this rank's part before, ``dst`` its part after, both in any layout. The permute is
    fused into the pack and the unpack. Every rank calls it."""
    _redistribute(
        comm,
        list(shape),
        from_axis,
        to_axis,
        _view(src, stream),
        _view(dst, stream),
        stream,
        piece_bytes,
    )
