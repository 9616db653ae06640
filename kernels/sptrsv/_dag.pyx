# cython: language_level=3
"""DAG helpers for SpTrSV (sptrsv-elasticity §2.1): wavefront levels of a lower-triangular CSR."""
import numpy as np

from libc.stdint cimport int32_t


def levels(const int32_t[::1] indptr, const int32_t[::1] indices):
    """Wavefront index of every row: longest path from a source in G_A (Eq. 2.3), O(nnz)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    out = np.zeros(max(n, 0), dtype=np.int32)
    cdef int32_t[::1] lev = out
    cdef Py_ssize_t i, k
    cdef int32_t j, best
    with nogil:
        for i in range(n):
            best = 0
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if 0 <= j < i and lev[j] + 1 > best:
                    best = lev[j] + 1
            lev[i] = best
    return out
