"""Owners of foreign memory that give it back when the last buffer of it is gone."""

from typing import Any


class ReturnToResource:
    """Holds memory that ``mr`` allocated; when released (after the buffer and the GPU
    work queued on it are done), calls ``mr.deallocate(ptr, size, stream=stream)``."""

    __slots__ = ("mr", "ptr", "size", "stream")

    def __init__(self, mr: Any, ptr: int, size: int, stream: Any) -> None:
        if not callable(getattr(mr, "deallocate", None)):
            raise TypeError(
                f"Buffer.from_handle: mr must have deallocate(ptr, size, *, stream); "
                f"{type(mr).__name__} has none"
            )
        self.mr = mr
        self.ptr = ptr
        self.size = size
        self.stream = stream

    def __del__(self) -> None:
        mr = getattr(self, "mr", None)  # None when __init__ refused the resource
        if mr is not None:
            mr.deallocate(self.ptr, self.size, stream=self.stream)
