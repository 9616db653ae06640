# cython: language_level=3
"""Incomplete Cholesky with fixed fill per column: Eigen 3.4's ``IncompleteCholesky::factorize``.

Lin & Moré (1999), as Eigen 3.4 implements it: left-looking, one
column j at a time, on the lower triangle stored by columns (CSC, diagonal first in each
column). Column j gathers its original entries plus the updates of every earlier column k with
an entry in row j; those columns sit in a FIFO linked list per row (Eigen's ``listCol``), and
``first[k]`` points at column k's next unused entry (the smallest row index still ahead, swapped
to the front as Eigen's ``updateList`` does). The diagonal is updated right-looking when a column
is finished. Of the gathered entries the p largest in magnitude are kept, p = the column's
original off-diagonal count (Eigen's ``QuickSplit``), so nnz is preserved exactly.

Eigen quirk kept on purpose (``reset_dropped=False``): only the kept rows' pattern markers are
cleared, so a row dropped from column j is never again created as fill in a later column (its
update lands in a stale work slot). ``reset_dropped=True`` clears every marker (textbook).

The Python side (``spbench.datasets.transforms.ichol``) orders, scales and shifts; this module
runs the attempts: a non-positive pivot doubles the shift and restarts from the saved matrix.
"""
from libc.math cimport fabs, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy


cdef inline void _push(int64_t col, int32_t row, int64_t* head, int64_t* tail, int64_t* nxt) noexcept nogil:
    """Append column ``col`` to the FIFO list of row ``row`` (Eigen: listCol[row].push_back(col))."""
    nxt[col] = -1
    if tail[row] < 0:
        head[row] = col
    else:
        nxt[tail[row]] = col
    tail[row] = col


cdef inline void _update_list(const int64_t* colptr, int32_t* rowidx, double* vals, int64_t col, int64_t jk,
                              int64_t* first, int64_t* head, int64_t* tail, int64_t* nxt) noexcept nogil:
    """Eigen's updateList: bring column ``col``'s smallest row at or after ``jk`` to ``jk``, queue it there."""
    cdef int64_t i, minpos
    cdef int32_t tmp_i
    cdef double tmp_v
    if jk >= colptr[col + 1]:
        return
    minpos = jk
    for i in range(jk + 1, colptr[col + 1]):
        if rowidx[i] < rowidx[minpos]:
            minpos = i
    if rowidx[minpos] != rowidx[jk]:
        tmp_i = rowidx[jk]; rowidx[jk] = rowidx[minpos]; rowidx[minpos] = tmp_i
        tmp_v = vals[jk]; vals[jk] = vals[minpos]; vals[minpos] = tmp_v
    first[col] = jk
    _push(col, rowidx[jk], head, tail, nxt)


cdef inline void _quick_split(double* row, int32_t* ind, int64_t n, int64_t ncut) noexcept nogil:
    """Eigen's QuickSplit: partial sort so the ``ncut`` largest |row| come first (no-op if ncut ∉ [1, n])."""
    cdef int64_t mid, first, last, j
    cdef double abskey, tv
    cdef int32_t ti
    ncut -= 1
    first = 0
    last = n - 1
    if ncut < first or ncut > last:
        return
    while True:
        mid = first
        abskey = fabs(row[mid])
        for j in range(first + 1, last + 1):
            if fabs(row[j]) > abskey:
                mid += 1
                tv = row[mid]; row[mid] = row[j]; row[j] = tv
                ti = ind[mid]; ind[mid] = ind[j]; ind[j] = ti
        tv = row[mid]; row[mid] = row[first]; row[first] = tv
        ti = ind[mid]; ind[mid] = ind[first]; ind[first] = ti
        if mid > ncut:
            last = mid - 1
        elif mid < ncut:
            first = mid + 1
        if mid == ncut:
            break


cdef int _attempt(const int64_t* colptr, int32_t* rowidx, double* vals, Py_ssize_t n, double shift,
                  int64_t* first, int64_t* head, int64_t* tail, int64_t* nxt,
                  double* col_vals, int32_t* col_irow, int64_t* col_pattern, bint reset_dropped) noexcept nogil:
    """One factorization with diagonal ``shift``; returns -1 on success, else the failing column."""
    cdef Py_ssize_t j, i
    cdef int64_t k, knext, jk, p, col_nnz, cpt, pos
    cdef int32_t l
    cdef double diag, v_j_jk, rdiag
    for i in range(n):
        head[i] = -1
        tail[i] = -1
        col_pattern[i] = -1
    for j in range(n):
        vals[colptr[j]] += shift
    for j in range(n):
        diag = vals[colptr[j]]
        col_nnz = 0
        for pos in range(colptr[j] + 1, colptr[j + 1]):
            l = rowidx[pos]
            col_vals[col_nnz] = vals[pos]
            col_irow[col_nnz] = l
            col_pattern[l] = col_nnz
            col_nnz += 1
        k = head[j]
        while k >= 0:
            knext = nxt[k]
            jk = first[k]
            v_j_jk = vals[jk]
            jk += 1
            for pos in range(jk, colptr[k + 1]):
                l = rowidx[pos]
                if col_pattern[l] < 0:
                    col_vals[col_nnz] = vals[pos] * v_j_jk
                    col_irow[col_nnz] = l
                    col_pattern[l] = col_nnz
                    col_nnz += 1
                else:
                    col_vals[col_pattern[l]] -= vals[pos] * v_j_jk
            _update_list(colptr, rowidx, vals, k, jk, first, head, tail, nxt)
            k = knext
        if diag <= 0:
            return <int>j
        rdiag = sqrt(diag)
        vals[colptr[j]] = rdiag
        for pos in range(col_nnz):
            col_vals[pos] /= rdiag
            vals[colptr[col_irow[pos]]] -= col_vals[pos] * col_vals[pos]
        p = colptr[j + 1] - colptr[j] - 1
        _quick_split(col_vals, col_irow, col_nnz, p)
        cpt = 0
        for pos in range(colptr[j] + 1, colptr[j + 1]):
            vals[pos] = col_vals[cpt]
            rowidx[pos] = col_irow[cpt]
            col_pattern[col_irow[cpt]] = -1
            cpt += 1
        if reset_dropped:
            for pos in range(cpt, col_nnz):
                col_pattern[col_irow[pos]] = -1
        _update_list(colptr, rowidx, vals, j, colptr[j] + 1, first, head, tail, nxt)
    return -1


def factorize(const int64_t[::1] colptr, int32_t[::1] rowidx, double[::1] vals, double shift,
              double initial_shift=1e-3, int max_tries=10, bint reset_dropped=False):
    """Factor in place the scaled lower triangle (CSC: ``colptr``, ``rowidx``, ``vals``, diagonal first).

    ``shift`` is the first diagonal shift (0 unless the scaled diagonal has a value <= 0); on a
    non-positive pivot the arrays are restored and the shift becomes max(initial_shift, 2 shift),
    at most ``max_tries`` attempts in all (Eigen: 10). Returns (ok, shift of the last attempt,
    attempts); on success
    ``rowidx``/``vals`` hold the factor by columns (diagonal first, other rows unsorted).
    """
    cdef Py_ssize_t n = colptr.shape[0] - 1
    cdef Py_ssize_t nnz = vals.shape[0]
    if rowidx.shape[0] != nnz or n < 0 or colptr[n] != nnz:
        raise ValueError("factorize: colptr, rowidx and vals do not describe one CSC matrix")
    import numpy as np
    saved_v = np.array(vals, copy=True)
    saved_r = np.array(rowidx, copy=True)
    cdef double[::1] sv = saved_v
    cdef int32_t[::1] sr = saved_r
    m = max(n, 1)
    cdef int64_t[::1] first = np.zeros(m, dtype=np.int64)
    cdef int64_t[::1] head = np.zeros(m, dtype=np.int64)
    cdef int64_t[::1] tail = np.zeros(m, dtype=np.int64)
    cdef int64_t[::1] nxt = np.zeros(m, dtype=np.int64)
    cdef double[::1] col_vals = np.zeros(m, dtype=np.float64)
    cdef int32_t[::1] col_irow = np.zeros(m, dtype=np.int32)
    cdef int64_t[::1] col_pattern = np.zeros(m, dtype=np.int64)
    cdef int attempts = 0
    cdef int failed = -1
    if n == 0:
        return True, shift, 0
    with nogil:
        while attempts < max_tries:
            attempts += 1
            failed = _attempt(&colptr[0], &rowidx[0] if nnz else NULL, &vals[0] if nnz else NULL, n, shift,
                              &first[0], &head[0], &tail[0], &nxt[0], &col_vals[0], &col_irow[0],
                              &col_pattern[0], reset_dropped)
            if failed < 0 or attempts == max_tries:
                break
            shift = initial_shift if 2 * shift < initial_shift else 2 * shift
            if nnz:
                memcpy(&vals[0], &sv[0], nnz * sizeof(double))
                memcpy(&rowidx[0], &sr[0], nnz * sizeof(int32_t))
    return failed < 0, shift, attempts
