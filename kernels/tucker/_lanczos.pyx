# cython: language_level=3
"""Golub–Kahan–Lanczos steps of ``spbench.tucker.hooi.lanczos.lanczos_svd`` compiled, for one process
that holds the whole matrix Z (tucker-lite-distribution §3, Figure 4 at P = 1): the same steps as
BLAS-2 calls (dgemv, ddot from SciPy's ``cython_blas``) with no Python between them. Both bases are fully reorthogonalized by
classical Gram–Schmidt, the second pass under the DGKS test (made only when the first pass shrank
the vector below 1/√2 of its norm; "twice is enough") where the Python steps always make it: the
same vectors to rounding, fewer passes over the bases. A breakdown (α or β ≈ 0) hands the step back
to the Python loop, which draws the random replacement vector as it always does.
"""
from libc.math cimport fabs, sqrt
from scipy.linalg.cython_blas cimport ddot, dgemm, dgemv
from scipy.linalg.cython_lapack cimport dgesdd

cdef enum:
    DONE_ = 0
    LEFT_ = 1
    RIGHT_ = 2

#: what ``gkl_steps`` returns as its status
DONE, LEFT_BREAKDOWN, RIGHT_BREAKDOWN = DONE_, LEFT_, RIGHT_


cdef inline void _gemv(char trans, int m, int n, double alpha, const double *a, int lda, const double *x,
                       double beta, double *y) noexcept nogil:
    cdef int one = 1
    dgemv(&trans, &m, &n, &alpha, <double *> a, &lda, <double *> x, &one, &beta, y, &one)


cdef inline double _dot(int n, const double *x, const double *y) noexcept nogil:
    cdef int one = 1
    return ddot(&n, <double *> x, &one, <double *> y, &one)


cdef double _cgs2(const double *basis, int rows, int k, double *w, double *c, double *c2) noexcept nogil:
    """w ⟂ the first k columns of ``basis`` (column-major, ``rows`` rows) by classical Gram–Schmidt
    with the DGKS test (Daniel, Gragg, Kaufman, Stewart 1976, "twice is enough"): the second pass
    only when the first left less than 1/√2 of ‖w‖; c = the coefficients of the passes made;
    returns ‖w‖², after a second pass as ‖w₁‖² − ‖c₂‖²."""
    cdef int i
    cdef double w0, ww
    if k == 0:
        return _dot(rows, w, w)
    w0 = _dot(rows, w, w)
    _gemv(b'T', rows, k, 1.0, basis, rows, w, 0.0, c)
    _gemv(b'N', rows, k, -1.0, basis, rows, c, 1.0, w)
    ww = _dot(rows, w, w)
    if ww >= 0.5 * w0:
        return ww
    _gemv(b'T', rows, k, 1.0, basis, rows, w, 0.0, c2)
    _gemv(b'N', rows, k, -1.0, basis, rows, c2, 1.0, w)
    ww -= _dot(k, c2, c2)
    for i in range(k):
        c[i] += c2[i]
    return ww if ww > 0.0 else 0.0


def gkl_steps(const double[:, ::1] Z, double[::1, :] U, double[::1, :] V, double[:, ::1] B, int start,
              double anorm, double beta, double[::1] work):
    """Steps j = start … ncv − 1 (ncv = U's columns) of the bidiagonalization of Z (m × n):
    u_j = (Z v_j − U B[:, j]) / α_j, v_{j+1} = (Zᵀ u_j − V ·) / β_j, both orthogonalized by CGS
    against their bases (second pass by the DGKS test). ``work``: at least m + n + 2·(ncv + 1) doubles.

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


def ritz_work(int ncv):
    """(doubles, ints) of work :func:`ritz_vectors` needs for an ncv-step run."""
    return 3 * ncv * ncv + ncv + 4 * ncv * ncv + 7 * ncv + 64 * ncv, 8 * ncv


def ritz_vectors(double[::1, :] U, double[::1, :] V, const double[:, ::1] B, double beta, double tol,
                 double[:, ::1] Uk, double[:, ::1] Vk, double[::1] s, double[::1] rel, double[::1] work,
                 int[::1] iwork):
    """The end of a ``lanczos: paper`` run at one process, compiled like its steps: B = P Σ Qᵀ by
    LAPACK dgesdd (as numpy's svd: B in column order, full P and Qᵀ), Uk = U·P[:, :nsv] and
    Vk = V[:, :ncv]·Q[:, :nsv] by dgemm (nsv = Uk's columns), s = the nsv leading σ and rel their
    relative residuals β_k·|P[k−1, i]|/σ_i (0 where σ_i = 0). Returns (info, nconv): dgesdd's info
    and the leading triplets of all ncv with rel ≤ tol."""
    cdef int m = U.shape[0]
    cdef int ncv = U.shape[1]
    cdef int n = V.shape[0]
    cdef int nsv = Uk.shape[1]
    cdef int i, r, info = 0, lwork, nconv = 0
    cdef double one = 1.0, zero = 0.0, res, sig
    cdef double *Bf
    cdef double *P
    cdef double *QT
    cdef double *sv
    cdef double *lw
    nd, ni = ritz_work(ncv)
    if B.shape[0] < ncv or B.shape[1] < ncv or V.shape[1] < ncv or Uk.shape[0] != m or Vk.shape[0] != n \
            or Vk.shape[1] != nsv or s.shape[0] < nsv or rel.shape[0] < nsv or nsv > ncv:
        raise ValueError("ritz_vectors: U (m × ncv), V (n × ncv + 1), B (ncv × ncv), Uk (m × nsv), Vk (n × nsv)")
    if work.shape[0] < nd or iwork.shape[0] < ni:
        raise ValueError(f"ritz_vectors: work needs {nd} doubles and {ni} ints")
    Bf = &work[0]
    P = Bf + ncv * ncv
    QT = P + ncv * ncv
    sv = QT + ncv * ncv
    lw = sv + ncv
    lwork = work.shape[0] - 3 * ncv * ncv - ncv
    with nogil:
        for r in range(ncv):
            for i in range(ncv):
                Bf[i + r * ncv] = B[i, r]
        dgesdd(b'A', &ncv, &ncv, Bf, &ncv, sv, P, &ncv, QT, &ncv, lw, &lwork, &iwork[0], &info)
        if info == 0:
            # Ukᵀ (nsv × m, column order) = P[:, :nsv]ᵀ Uᵀ;  Vkᵀ = Qᵀ[:nsv, :] V[:, :ncv]ᵀ
            dgemm(b'T', b'T', &nsv, &m, &ncv, &one, P, &ncv, &U[0, 0], &m, &zero, &Uk[0, 0], &nsv)
            dgemm(b'N', b'T', &nsv, &n, &ncv, &one, QT, &ncv, &V[0, 0], &n, &zero, &Vk[0, 0], &nsv)
            for i in range(ncv):
                sig = sv[i] if sv[i] > 1e-300 else 1e-300
                res = beta * fabs(P[ncv - 1 + i * ncv]) / sig
                if i < nsv:
                    s[i] = sv[i]
                    rel[i] = res if sv[i] > 0.0 else 0.0
                if nconv == i and res <= tol:
                    nconv += 1
    return info, nconv
