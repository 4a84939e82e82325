# cython: language_level=3
"""Reads stridekit views from Cython through the C view, with no Python call per element."""

from libc.stdint cimport int32_t, int64_t

from stridekit cimport sk_view, sk_view_of_capsule


def describe(capsule):
    """(shape, strides, itemsize, readonly, device_id) of the view in `capsule`."""
    cdef const sk_view* v = sk_view_of_capsule(capsule)
    shape = [v.shape[i] for i in range(v.ndim)]
    strides = [v.strides[i] for i in range(v.ndim)]
    return shape, strides, v.itemsize, bool(v.readonly), v.device_id


def sum_int32_2d(capsule):
    """The sum of a 2-D host int32 view, walked through its strides in a C loop."""
    cdef const sk_view* v = sk_view_of_capsule(capsule)
    if v.ndim != 2 or v.itemsize != 4 or v.device_accessible and v.device_id >= 0:
        raise ValueError("a 2-D host view of 4-byte elements is needed")
    cdef const int32_t* first = <const int32_t*>v.ptr
    cdef int64_t rows = v.shape[0], cols = v.shape[1]
    cdef int64_t s0 = v.strides[0], s1 = v.strides[1]
    cdef int64_t i, j
    cdef long long total = 0
    with nogil:
        for i in range(rows):
            for j in range(cols):
                total += first[i * s0 + j * s1]
    return total
