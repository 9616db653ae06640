# cython: language_level=3
"""Lite's element placement (tucker-lite §6.1, Figure 8) for a block of elements in storage order.

A stage-1 slice goes whole to its processor; the elements of a stage-2 slice, in storage order,
take consecutive positions of the stage-2 element stream (``start2[k]`` + the elements of slice k
seen before), and a position's processor is the bin of ``bounds`` holding it. ``seen`` is
updated in place, so consecutive blocks continue where the previous one stopped (a stream of
chunks; under MPI it starts at the Exscan of the earlier ranks' counts). One pass, nogil.
"""
from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t


def place(const index_t[::1] index, const int32_t[::1] stage1_owner, const int32_t[::1] slice_k,
          const int64_t[::1] start2, const int64_t[::1] bounds, int64_t[::1] seen, int32_t[::1] out):
    """``out[e]``: the processor of element e (see the module docstring)."""
    cdef Py_ssize_t e, m = index.shape[0], nb = bounds.shape[0]
    cdef Py_ssize_t lo, hi, mid
    cdef int64_t l, pos
    cdef int32_t o, k
    with nogil:
        for e in range(m):
            l = index[e]
            o = stage1_owner[l]
            if o >= 0:
                out[e] = o
                continue
            k = slice_k[l]
            pos = start2[k] + seen[k]
            seen[k] += 1
            lo, hi = 0, nb            # the last bound <= pos: bounds[lo] <= pos < bounds[hi]
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if bounds[mid] <= pos:
                    lo = mid
                else:
                    hi = mid
            out[e] = <int32_t>lo
