# cython: language_level=3
# Cython declarations of stridekit's C view (stridekit.h). A StridedMemoryView hands
# one out as a capsule, StridedMemoryView.as_c_view(); sk_view_of_capsule() opens it.
#
#     from stridekit cimport sk_view, sk_view_of_capsule
#     cdef const sk_view* v = sk_view_of_capsule(view.as_c_view())
#     for i in range(v.ndim): total *= v.shape[i]
#
# Compile with include_dirs=[stridekit.get_include()]. Nothing needs linking: calls go
# through the view's vtable (v.vtable.copy(dst, src, stream, blocking)), which belongs
# to the library copy that made the view.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uintptr_t
from cpython.pycapsule cimport PyCapsule_GetPointer

cdef extern from "stridekit.h":
    ctypedef struct DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes

    ctypedef int32_t sk_status

    int SK_OK
    int SK_ERR_INVALID
    int SK_ERR_NULL_POINTER
    int SK_ERR_READ_ONLY
    int SK_ERR_RELEASED
    int SK_ERR_UNSUPPORTED

    ctypedef struct sk_view

    ctypedef struct sk_vtable:
        uint32_t version
        uint32_t size
        const char* (*last_error)() noexcept nogil
        sk_status (*release)(sk_view*) noexcept nogil
        sk_status (*copy)(const sk_view*, const sk_view*, uintptr_t, int32_t) noexcept nogil
        sk_status (*copy_bits)(const sk_view*, const sk_view*, uintptr_t, int32_t) noexcept nogil
        sk_status (*required_size)(const sk_view*, int64_t*) noexcept nogil
        sk_status (*is_contiguous)(const sk_view*, uint8_t, bint*) noexcept nogil

    ctypedef struct sk_view:
        uintptr_t ptr          # address of element (0, ..., 0)
        int32_t ndim
        const int64_t* shape   # ndim extents
        const int64_t* strides # ndim strides, in elements
        int64_t itemsize
        DLDataType dtype       # code 0, bits 0, lanes 0 when unknown
        int32_t device_id      # -1: memory of no device
        bint device_accessible
        bint readonly
        void* owner
        const sk_vtable* vtable


cdef inline const sk_view* sk_view_of_capsule(object capsule) except NULL:
    """The sk_view in a capsule from StridedMemoryView.as_c_view(); valid while the
    capsule lives (keep a reference to it)."""
    return <const sk_view*>PyCapsule_GetPointer(capsule, b"stridekit.sk_view")
