# cython: language_level=3
"""TTM-chain kernel (tucker-lite-distribution §3 "TTM Component", Appendix A).

For the elements a rank owns under π_n, the contribution of element e with coordinate
(l_1..l_N) and value val is val · Kron(F_j[l_j, :] for j ≠ n, increasing j); the Kronecker
vector is laid out with the FIRST listed mode varying fastest (Appendix A: position
Σ_j c_j Π_{i<j} K_i), i.e. the column order of the mode-n unfolding Z_(n).  Contributions are
summed into the COMPACT local penultimate matrix ``out`` (R rows = the distinct mode-n slices
held here, K̂_n = Π_{j≠n} K_j columns).

The caller (``spbench.tucker.hooi.loop.TTMPlan``) groups the elements by compact row once:
``elems[row_ptr[r]:row_ptr[r+1]]`` are the elements of compact row r.  Threads split the rows
(OpenMP, dynamic schedule) so every row is written by one thread only; each thread has its own
scratch (``scratch_len``).  Per element the Kronecker product of all but the last participating
mode is built in place in the scratch (val folded in); the last mode is applied to CHUNK
elements at once as one BLAS dgemm into the output row (seen as a K_last × len matrix), which
turns the dominant 2·K̂_n FLOPs per element into matrix–matrix work.  dgemm is SciPy's
(``scipy.linalg.cython_blas``); the caller keeps BLAS single-threaded inside the OpenMP region.
No Python per element, no intermediate dense tensor.
"""
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy
from scipy.linalg.cython_blas cimport dgemm

import numpy as _np

# Elements per GEMM block (rows with fewer than GEMM_MIN elements use the direct loop).
cdef enum:
    CHUNK = 64
    GEMM_MIN = 4
CHUNK_SIZE = CHUNK


def scratch_len(kdims, int mode):
    """Doubles of per-thread scratch for ``mode``: CHUNK partial Kronecker rows (length
    K̂_n / K_last) plus CHUNK rows of the last factor (K_last), K_last the highest mode ≠ n."""
    ks = [int(k) for j, k in enumerate(kdims) if j != mode]
    nk = len(ks)
    klast = ks[nk - 1]
    length = 1
    for k in ks[:nk - 1]:
        length *= k
    return int(CHUNK) * (length + klast)


cdef inline int64_t _partial(const int64_t *coords, int64_t e, double v, int nmodes, int mode,
                             int last, double **fptr, const int64_t *kdim,
                             double *out) noexcept nogil:
    """out[0:len] = v · Kron(F_j[l_j, :], j ≠ mode, j < last), lowest mode fastest; returns len."""
    cdef int64_t c, k, length = 1, kj
    cdef int j
    cdef const double *frow
    cdef double s
    out[0] = v
    for j in range(last):
        if j == mode:
            continue
        kj = kdim[j]
        frow = fptr[j] + coords[e * nmodes + j] * kj
        k = kj - 1
        while k >= 1:                       # block k = out[0:length] * F_j[l_j, k], in place
            s = frow[k]
            for c in range(length):
                out[k * length + c] = out[c] * s
            k -= 1
        s = frow[0]
        for c in range(length):
            out[c] = out[c] * s
        length = length * kj
    return length


cdef void _row(const int64_t *coords, const double *values, const int64_t *elems,
               int64_t e0, int64_t e1, int nmodes, int mode,
               double **fptr, const int64_t *kdim, double *acc, double *scratch) noexcept nogil:
    """Accumulate the contributions of elems[e0:e1] into the output row ``acc``.

    Row ``acc`` seen as a row-major (K_last × len) matrix M: M += Cᵀ·S, S the partial
    Kronecker rows (one per element, val folded in), C the last factor's rows: one dgemm per
    CHUNK elements; short rows use the direct loop."""
    cdef int64_t i, t, e, c, k, length = 1, kj
    cdef int last = nmodes - 1 if mode != nmodes - 1 else nmodes - 2
    cdef int j, m, n, kk, ldc
    cdef const double *frow
    cdef double s, one = 1.0
    cdef double *S = scratch
    cdef double *C
    cdef char tn = b'N'
    cdef char tt = b'T'
    kj = kdim[last]
    for j in range(last):
        if j != mode:
            length *= kdim[j]
    C = scratch + CHUNK * length
    if e1 - e0 < GEMM_MIN:
        for i in range(e0, e1):
            e = elems[i]
            _partial(coords, e, values[e], nmodes, mode, last, fptr, kdim, S)
            frow = fptr[last] + coords[e * nmodes + last] * kj
            for k in range(kj):
                s = frow[k]
                for c in range(length):
                    acc[k * length + c] += S[c] * s
        return
    m = <int> length
    n = <int> kj
    ldc = <int> length
    i = e0
    while i < e1:
        kk = <int> (CHUNK if e1 - i > CHUNK else e1 - i)
        for t in range(kk):
            e = elems[i + t]
            _partial(coords, e, values[e], nmodes, mode, last, fptr, kdim, S + t * length)
            memcpy(C + t * kj, fptr[last] + coords[e * nmodes + last] * kj, kj * sizeof(double))
        dgemm(&tn, &tt, &m, &n, &kk, &one, S, &m, C, &n, &one, acc, &ldc)
        i += kk


def ttm_rows(const int64_t[:, ::1] coords, const double[::1] values, list factors, int mode,
             const int64_t[::1] row_ptr, const int64_t[::1] elems, double[:, ::1] out,
             double[:, ::1] scratch, int threads=1):
    """Compact penultimate matrix of ``mode``: ``out[r, :] = Σ_{e in row r} val(e)·Kron_n(e)``.

    ``coords`` (nnz, N) int64 C-contiguous, ``values`` (nnz,), ``factors`` N C-contiguous
    float64 matrices (L_j, K_j) (``factors[mode]`` is not read), ``row_ptr`` (R + 1,) and
    ``elems`` the element ids grouped by compact row, ``out`` (R, K̂_n) is overwritten,
    ``scratch`` (≥ threads, ≥ ``scratch_len(K, mode)``) per-thread work rows.  Indices are trusted (the plan built
    them); shapes are checked here once.
    """
    cdef int nmodes = coords.shape[1]
    cdef Py_ssize_t nrows = row_ptr.shape[0] - 1
    if nmodes < 2:
        raise ValueError("TTM needs a tensor with at least 2 modes")
    if not 0 <= mode < nmodes:
        raise ValueError(f"mode {mode} outside [0, {nmodes})")
    if len(factors) != nmodes:
        raise ValueError(f"{len(factors)} factor matrices for {nmodes} modes")
    if values.shape[0] != coords.shape[0]:
        raise ValueError("coords and values disagree on nnz")
    if nrows < 0 or out.shape[0] != nrows:
        raise ValueError(f"out has {out.shape[0]} rows, the plan {nrows}")
    if threads < 1:
        threads = 1
    cdef int64_t khat = 1
    kd = _np.zeros(nmodes, dtype=_np.int64)
    cdef int64_t[::1] kdim = kd
    keep = []
    cdef double[:, ::1] f
    cdef double **fptr = <double **> malloc(nmodes * sizeof(double *))
    if fptr == NULL:
        raise MemoryError()
    cdef int j
    try:
        for j in range(nmodes):
            if j == mode:
                fptr[j] = NULL
                kdim[j] = 0
                continue
            f = factors[j]
            keep.append(f)
            if f.shape[1] < 1:
                raise ValueError(f"factor {j} has no columns")
            kdim[j] = f.shape[1]
            fptr[j] = &f[0, 0]
            khat *= f.shape[1]
        if out.shape[1] != khat:
            raise ValueError(f"out has {out.shape[1]} columns, K̂_{mode} = {khat}")
        need = scratch_len(kd, mode)
        if nrows and (scratch.shape[0] < threads or scratch.shape[1] < need):
            raise ValueError(f"scratch must be at least ({threads}, {need}), got "
                             f"({scratch.shape[0]}, {scratch.shape[1]})")
        if row_ptr.shape[0] < 1 or row_ptr[nrows] > elems.shape[0]:
            raise ValueError("row_ptr does not fit elems")
        _run(coords, values, fptr, kdim, mode, row_ptr, elems, out, scratch, threads, khat)
    finally:
        free(fptr)


cdef void _run(const int64_t[:, ::1] coords, const double[::1] values, double **fptr,
               int64_t[::1] kdim, int mode, const int64_t[::1] row_ptr,
               const int64_t[::1] elems, double[:, ::1] out, double[:, ::1] scratch,
               int threads, int64_t khat) noexcept:
    cdef Py_ssize_t nrows = row_ptr.shape[0] - 1
    cdef Py_ssize_t r
    cdef int nmodes = coords.shape[1]
    cdef int tid
    if nrows == 0:
        return
    cdef const int64_t *cptr = &coords[0, 0] if coords.shape[0] else NULL
    cdef const double *vptr = &values[0] if values.shape[0] else NULL
    cdef const int64_t *eptr = &elems[0] if elems.shape[0] else NULL
    with nogil:
        if threads == 1:
            for r in range(nrows):
                memset(&out[r, 0], 0, khat * sizeof(double))
                _row(cptr, vptr, eptr, row_ptr[r], row_ptr[r + 1], nmodes, mode, fptr,
                     &kdim[0], &out[r, 0], &scratch[0, 0])
        else:
            for r in prange(nrows, num_threads=threads, schedule="dynamic", chunksize=16):
                tid = threadid()
                memset(&out[r, 0], 0, khat * sizeof(double))
                _row(cptr, vptr, eptr, row_ptr[r], row_ptr[r + 1], nmodes, mode, fptr,
                     &kdim[0], &out[r, 0], &scratch[tid, 0])
