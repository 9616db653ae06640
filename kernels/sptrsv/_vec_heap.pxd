# cython: language_level=3
"""Growable int64 vectors, binary min-heaps on them, sorted-run merging and int32 scratch arrays:
the C helpers the GrowLocal, ElasticDivide and HDagg kernels share (sptrsv-elasticity §3).

All inline (a header, no module of its own): ``from _vec_heap cimport ...`` (setup.py puts kernels/ on the include path).
"""
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy


ctypedef struct Vec:
    int64_t *data
    Py_ssize_t size
    Py_ssize_t cap



cdef inline bint vec_reserve(Vec *v, Py_ssize_t want) noexcept nogil:
    """Make room for `want` entries; False when realloc fails (the vector is left as it was)."""
    cdef Py_ssize_t cap
    cdef int64_t *p
    if want <= v.cap:
        return True
    cap = v.cap * 2 if v.cap > 0 else 16
    if cap < want:
        cap = want
    p = <int64_t *> realloc(v.data, cap * sizeof(int64_t))
    if p == NULL:
        return False
    v.data = p
    v.cap = cap
    return True


cdef inline bint vec_push(Vec *v, int64_t x) noexcept nogil:
    if v.size == v.cap and not vec_reserve(v, v.size + 1):
        return False
    v.data[v.size] = x
    v.size += 1
    return True


cdef inline bint vec_extend(Vec *dst, const Vec *src) noexcept nogil:
    if src.size == 0:
        return True
    if not vec_reserve(dst, dst.size + src.size):
        return False
    memcpy(dst.data + dst.size, src.data, src.size * sizeof(int64_t))
    dst.size += src.size
    return True


cdef inline bint vec_copy(Vec *dst, const Vec *src) noexcept nogil:
    dst.size = 0
    return vec_extend(dst, src)


cdef inline void vec_swap(Vec *a, Vec *b) noexcept nogil:
    cdef Vec t = a[0]
    a[0] = b[0]
    b[0] = t


cdef inline void sift_down(int64_t *h, Py_ssize_t size, Py_ssize_t i) noexcept nogil:
    cdef int64_t x = h[i]
    cdef Py_ssize_t c
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and h[c + 1] < h[c]:
            c += 1
        if h[c] >= x:
            break
        h[i] = h[c]
        i = c
    h[i] = x


cdef inline bint heap_push(Vec *v, int64_t x) noexcept nogil:
    """Min-heap push."""
    cdef Py_ssize_t i, parent
    cdef int64_t *h
    if not vec_push(v, x):
        return False
    h = v.data
    i = v.size - 1
    while i > 0:
        parent = (i - 1) >> 1
        if h[parent] <= x:
            break
        h[i] = h[parent]
        i = parent
    h[i] = x
    return True


cdef inline int64_t heap_pop(Vec *v) noexcept nogil:
    """Min-heap pop (the heap must not be empty)."""
    cdef int64_t top = v.data[0]
    v.size -= 1
    if v.size > 0:
        v.data[0] = v.data[v.size]
        sift_down(v.data, v.size, 0)
    return top


cdef inline void heapify(Vec *v) noexcept nogil:
    cdef Py_ssize_t i
    if v.size < 2:
        return
    i = (v.size - 2) >> 1
    while i >= 0:
        sift_down(v.data, v.size, i)
        i -= 1



cdef inline int cmp_int32(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const int32_t *> a)[0]
    cdef int32_t y = (<const int32_t *> b)[0]
    return (x > y) - (x < y)



cdef inline Py_ssize_t merge_sorted(const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb,
                                    int32_t *out) noexcept nogil:
    """Merge two ascending runs into `out` (which must not alias either); returns the length."""
    cdef Py_ssize_t i = 0, j = 0, k = 0
    while i < na and j < nb:
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < na:
        out[k] = a[i]
        i += 1
        k += 1
    while j < nb:
        out[k] = b[j]
        j += 1
        k += 1
    return k


cdef inline Vec *vecs_new(Py_ssize_t count):
    cdef Vec *v = <Vec *> malloc(max(count, 1) * sizeof(Vec))
    cdef Py_ssize_t i
    if v == NULL:
        raise MemoryError()
    for i in range(count):
        v[i].data = NULL
        v[i].size = 0
        v[i].cap = 0
    return v


cdef inline void vecs_free(Vec *v, Py_ssize_t count) noexcept:
    cdef Py_ssize_t i
    if v == NULL:
        return
    for i in range(count):
        free(v[i].data)
    free(v)


cdef inline int32_t *ints_new(Py_ssize_t count):
    cdef int32_t *p = <int32_t *> malloc(max(count, 1) * sizeof(int32_t))
    if p == NULL:
        raise MemoryError()
    return p


cdef inline int check_arguments(Py_ssize_t n, const int32_t[::1] child_ptr, const int64_t[::1] weights,
                                int32_t[::1] core_out, int32_t[::1] step_out, int n_cores, int64_t sync_cost,
                                int64_t min_superstep_size) except -1:
    """The checks GrowLocal and ElasticDivide share: ValueError naming the argument."""
    if n < 1:
        raise ValueError(f"the DAG needs at least one vertex, got n = {n}")
    if child_ptr.shape[0] != n + 1 or weights.shape[0] != n:
        raise ValueError(f"child_ptr must have n + 1 = {n + 1} and weights n = {n} entries, got "
                         f"{child_ptr.shape[0]} and {weights.shape[0]}")
    if core_out.shape[0] != n or step_out.shape[0] != n:
        raise ValueError(f"core_out and step_out must have n = {n} entries")
    if n_cores < 1:
        raise ValueError(f"n_cores must be >= 1, got {n_cores}")
    if sync_cost < 0:
        raise ValueError(f"sync_cost must be >= 0, got {sync_cost}")
    if min_superstep_size < 1:
        raise ValueError(f"min_superstep_size must be >= 1, got {min_superstep_size}")
    return 0
