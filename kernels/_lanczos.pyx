# cython: language_level=3
"""Golub–Kahan–Lanczos steps of ``spbench.tucker.lanczos.lanczos_svd`` compiled, for one process
that holds the whole matrix Z (tucker-lite-distribution §3, Figure 4 at P = 1): the same steps,
classical Gram–Schmidt twice on both bases, as BLAS-2 calls (dgemv, ddot) with no Python between
them. A breakdown (α or β ≈ 0) hands the step back to the Python loop, which draws the random
replacement vector as it always does.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_GetName
from libc.math cimport sqrt

ctypedef void (*dgemv_t)(char *trans, int *m, int *n, double *alpha, double *a, int *lda, double *x,
                         int *incx, double *beta, double *y, int *incy) noexcept nogil
ctypedef double (*ddot_t)(int *n, double *x, int *incx, double *y, int *incy) noexcept nogil

cdef dgemv_t _dgemv = NULL
cdef ddot_t _ddot = NULL

cdef enum:
    DONE_ = 0
    LEFT_ = 1
    RIGHT_ = 2

#: what ``gkl_steps`` returns as its status
DONE, LEFT_BREAKDOWN, RIGHT_BREAKDOWN = DONE_, LEFT_, RIGHT_


def _load_blas():
    """Resolve dgemv and ddot from scipy's cython_blas capsules once."""
    global _dgemv, _ddot
    if _dgemv != NULL:
        return
    import scipy.linalg.cython_blas as cb
    cap = cb.__pyx_capi__["dgemv"]
    _dgemv = <dgemv_t> PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))
    cap = cb.__pyx_capi__["ddot"]
    _ddot = <ddot_t> PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))


cdef inline void _gemv(char trans, int m, int n, double alpha, const double *a, int lda, const double *x,
                       double beta, double *y) noexcept nogil:
    cdef int one = 1
    _dgemv(&trans, &m, &n, &alpha, <double *> a, &lda, <double *> x, &one, &beta, y, &one)


cdef inline double _dot(int n, const double *x, const double *y) noexcept nogil:
    cdef int one = 1
    return _ddot(&n, <double *> x, &one, <double *> y, &one)


cdef double _cgs2(const double *basis, int rows, int k, double *w, double *c, double *c2) noexcept nogil:
    """w ⟂ the first k columns of ``basis`` (column-major, ``rows`` rows) by classical Gram–Schmidt
    twice; c = the coefficients of both passes; returns ‖w‖² as ‖w₁‖² − ‖c₂‖²."""
    cdef int i
    cdef double ww
    if k == 0:
        return _dot(rows, w, w)
    _gemv(b'T', rows, k, 1.0, basis, rows, w, 0.0, c)
    _gemv(b'N', rows, k, -1.0, basis, rows, c, 1.0, w)
    _gemv(b'T', rows, k, 1.0, basis, rows, w, 0.0, c2)
    ww = _dot(rows, w, w)
    _gemv(b'N', rows, k, -1.0, basis, rows, c2, 1.0, w)
    ww -= _dot(k, c2, c2)
    for i in range(k):
        c[i] += c2[i]
    return ww if ww > 0.0 else 0.0


def gkl_steps(const double[:, ::1] Z, double[::1, :] U, double[::1, :] V, double[:, ::1] B, int start,
              double anorm, double beta, double[::1] work):
    """Steps j = start … ncv − 1 (ncv = U's columns) of the bidiagonalization of Z (m × n):
    u_j = (Z v_j − U B[:, j]) / α_j, v_{j+1} = (Zᵀ u_j − V ·) / β_j, both orthogonalized by CGS
    twice against their bases. ``work``: at least m + n + 2·(ncv + 1) doubles.

    Returns (j, status, anorm, beta, steps): status DONE (j = ncv), LEFT_BREAKDOWN (step j's left
    vector broke down: nothing of step j is written; the caller runs it) or RIGHT_BREAKDOWN (u_j
    and B[:, j] written, v_{j+1} left to the caller); ``steps`` completed queries pairs."""
    cdef int m = Z.shape[0]
    cdef int n = Z.shape[1]
    cdef int ncv = U.shape[1]
    cdef int j, i, done = 0
    cdef int status = DONE_
    cdef double alpha, a2, b2, cn
    cdef double *w
    cdef double *wv
    cdef double *c
    cdef double *c2
    if U.shape[0] != m or V.shape[0] != n or V.shape[1] < ncv + 1 or B.shape[0] < ncv or B.shape[1] < ncv:
        raise ValueError("gkl_steps: U (m × ncv), V (n × ncv + 1) and B (ncv × ncv) must match Z (m × n)")
    if work.shape[0] < m + n + 2 * (ncv + 1):
        raise ValueError(f"gkl_steps: work needs {m + n + 2 * (ncv + 1)} doubles")
    if start >= ncv:
        return start, DONE, anorm, beta, 0
    _load_blas()
    w = &work[0]
    wv = w + m
    c = wv + n
    c2 = c + ncv + 1
    j = start
    with nogil:
        while j < ncv:
            _gemv(b'T', n, m, 1.0, &Z[0, 0], n, &V[0, j], 0.0, w)          # Z·v_j (Z row-major)
            alpha = sqrt(_cgs2(&U[0, 0], m, j, w, c, c2))
            cn = sqrt(_dot(j, c, c)) if j else 0.0
            a2 = anorm
            if alpha > a2:
                a2 = alpha
            if cn > a2:
                a2 = cn
            if alpha <= 1e-13 * (a2 if a2 > 1e-300 else 1e-300):
                status = LEFT_
                break
            anorm = a2
            for i in range(j):
                B[i, j] = c[i]
            B[j, j] = alpha
            for i in range(m):
                U[i, j] = w[i] / alpha
            _gemv(b'N', n, m, 1.0, &Z[0, 0], n, &U[0, j], 0.0, wv)         # Zᵀ·u_j
            beta = sqrt(_cgs2(&V[0, 0], n, j + 1, wv, c, c2))
            done += 1
            b2 = anorm if anorm > beta else beta
            anorm = b2
            if beta <= 1e-13 * (b2 if b2 > 1e-300 else 1e-300):
                status = RIGHT_
                break
            for i in range(n):
                V[i, j + 1] = wv[i] / beta
            j += 1
    return j, status, anorm, beta, done
