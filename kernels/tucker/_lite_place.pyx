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


def stage_one(const int64_t[::1] sizes, int64_t nparts, int64_t limit, int64_t[::1] loads):
    """Figure 8's stage 1 on the non-empty slices sorted by (size, id): slice t goes whole to
    t mod P while that keeps its load within ``limit``; returns t̂, the first slice that does not
    (the slice count if all do), with ``loads[p]`` (zeroed on entry) = p's stage-1 elements."""
    cdef Py_ssize_t t, m = sizes.shape[0], t_hat = sizes.shape[0]
    cdef int64_t p
    with nogil:
        for t in range(m):
            p = t % nparts
            if loads[p] + sizes[t] > limit:
                t_hat = t
                break
            loads[p] += sizes[t]
    return t_hat


def stage_two(const int64_t[::1] ids, const int64_t[::1] sizes, Py_ssize_t t_hat, int64_t nparts,
              int32_t[::1] stage1_owner, int32_t[::1] slice_k, int64_t[::1] start_by_id, int64_t[::1] start2):
    """The per-slice decisions :func:`place` reads, from stage 1's t̂: ``stage1_owner[id]`` = t mod P
    for the stage-1 slices; the stage-2 slices numbered by increasing id (``slice_k``) with
    ``start2[k]``, their first position in the stage-2 element stream (slices in sorted order).
    ``stage1_owner`` and ``slice_k`` hold −1 on entry; ``start_by_id`` is scratch (one per slice)."""
    cdef Py_ssize_t t, l, m = ids.shape[0], L = slice_k.shape[0]
    cdef int64_t acc = 0
    cdef int32_t k = 0
    with nogil:
        for t in range(t_hat):
            stage1_owner[ids[t]] = <int32_t>(t % nparts)
        for t in range(t_hat, m):
            slice_k[ids[t]] = 0
            start_by_id[ids[t]] = acc
            acc += sizes[t]
        for l in range(L):
            if slice_k[l] >= 0:
                slice_k[l] = k
                start2[k] = start_by_id[l]
                k += 1
