# cython: language_level=3
"""TTM over a compressed-sparse-fiber layout (tucker-lite-distribution §8: the CSF strategy of
its reference [26]; the element-wise form of Appendix A is ``_ttm``).

Tree of one mode n (``spbench.tucker.hooi.csf.CSFPlan``): level 0 = the mode-n slices held (one per
compact output row), level k = the distinct index prefixes over the modes ``order[0..k]``,
level d = N − 1 = the nonzeros.  ``ptr[k][i]:ptr[k][i+1]`` are the children of node i of level
k, ``ids[k]`` the factor row of each level-k node (its index in mode ``order[k]``).

Bottom-up with every partial Kronecker product formed once per tree node:
t(fiber of level d−1) = Σ_leaves val · F_{order[d]}[row]  (K_d·(2·leaves − 1) flops), and for
k < d−1, t(node) = Σ_children F_{order[k+1]}[row_c] ⊗ t(c), one dgemm (SciPy's ``cython_blas``)
per block of children (rows of the factor gathered, the children's t stacked) or direct loops for a few children.
t(slice) is the output row with ``order[1]`` slowest … ``order[d]`` fastest; when that differs
from the unfolding's column order (lowest mode fastest) it is scattered through ``perm``.
Threads take whole slices (OpenMP, dynamic): each output row has one writer, no atomics.
"""
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemm

import numpy as np

cdef enum:
    PARALLEL_MIN = 65536       # fewer elements are sorted and gathered in one thread (start-up would dominate)

cdef enum:
    MAXLEV = 16         # modes at most
    GEMM_MIN = 4        # fewer children: direct outer products
    CHUNK_MAX = 128     # children per dgemm block
    BLOCK_DOUBLES = 16384


cdef struct Tree:
    int d                               # levels below the root
    const int32_t *ptr[MAXLEV]          # ptr[k], k < d
    const int32_t *ids[MAXLEV]          # ids[k], 1 <= k <= d
    const double *vals
    const double *fac[MAXLEV]           # factor of level k's mode, 1 <= k <= d
    int64_t kdim[MAXLEV]                # its K
    int64_t width[MAXLEV]               # length of t at level k: prod of kdim[k+1..d]
    int64_t chunk[MAXLEV]               # children per block at level k (k < d - 1)
    int64_t off[MAXLEV]                 # scratch offset of level k's block; off[d] = root buffer


def layout(kdims_by_level):
    """(chunk, offsets, doubles) of the per-thread scratch for K listed by level (index 0 =
    the root's mode, unused): a block of ``chunk[k]`` child rows and factor rows per level
    k < d − 1, then one row of K̂ for the root."""
    ks = [int(k) for k in kdims_by_level]
    d = len(ks) - 1
    width = [1] * (d + 1)
    for k in range(d - 1, -1, -1):
        width[k] = width[k + 1] * ks[k + 1]
    chunk, off, total = [0] * (d + 1), [0] * (d + 1), 0
    for k in range(d - 1):
        row = width[k + 1] + ks[k + 1]
        chunk[k] = max(GEMM_MIN, min(CHUNK_MAX, BLOCK_DOUBLES // row))
        off[k] = total
        total += chunk[k] * row
    off[d] = total
    return chunk, off, total + width[0]


cdef void _flush(const double *T, const double *G, int64_t nb, int64_t w, int64_t kk,
                 double *out, bint first) noexcept nogil:
    """out (kk × w, row-major) += Gᵀ·T for nb stacked child rows T (nb × w) and factor rows G
    (nb × kk); ``first``: out is overwritten (its first child's product is written, not added)."""
    cdef int64_t b, c, a
    cdef double s
    cdef const double *t
    cdef double *o
    cdef int m, n, k
    cdef double one = 1.0
    cdef double beta = 0.0 if first else 1.0
    cdef char tn = b'N'
    cdef char tt = b'T'
    if nb < GEMM_MIN:
        for b in range(nb):
            t = T + b * w
            for c in range(kk):
                s = G[b * kk + c]
                o = out + c * w
                if first and b == 0:
                    for a in range(w):
                        o[a] = s * t[a]
                else:
                    for a in range(w):
                        o[a] += s * t[a]
        return
    m = <int> w
    n = <int> kk
    k = <int> nb
    dgemm(&tn, &tt, &m, &n, &k, &one, <double *> T, &m, <double *> G, &n, &beta, out, &m)


cdef void _node(const Tree *tr, int k, int64_t i, double *out, double *scratch) noexcept nogil:
    """out[0:width[k]] = t(node i of level k), overwritten."""
    cdef int64_t lo = tr.ptr[k][i]
    cdef int64_t hi = tr.ptr[k][i + 1]
    cdef int64_t j, q, kk, w, nb, cap
    cdef const double *f
    cdef double v
    cdef double *T
    cdef double *G
    cdef bint first = True
    if k == tr.d - 1:                       # children are nonzeros: the fiber's leaf sum
        kk = tr.kdim[tr.d]
        v = tr.vals[lo]
        f = tr.fac[tr.d] + <int64_t> tr.ids[tr.d][lo] * kk
        for q in range(kk):
            out[q] = v * f[q]
        for j in range(lo + 1, hi):
            v = tr.vals[j]
            f = tr.fac[tr.d] + <int64_t> tr.ids[tr.d][j] * kk
            for q in range(kk):
                out[q] += v * f[q]
        return
    kk = tr.kdim[k + 1]
    w = tr.width[k + 1]
    cap = tr.chunk[k]
    T = scratch + tr.off[k]
    G = T + cap * w
    nb = 0
    for j in range(lo, hi):
        _node(tr, k + 1, j, T + nb * w, scratch)
        memcpy(G + nb * kk, tr.fac[k + 1] + <int64_t> tr.ids[k + 1][j] * kk, kk * sizeof(double))
        nb += 1
        if nb == cap:
            _flush(T, G, nb, w, kk, out, first)
            first = False
            nb = 0
    if nb:
        _flush(T, G, nb, w, kk, out, first)


cdef void _slice(const Tree *tr, int64_t r, double *zrow, const int64_t *perm,
                 double *scratch) noexcept nogil:
    cdef int64_t q
    cdef double *buf
    if perm == NULL:
        _node(tr, 0, r, zrow, scratch)
        return
    buf = scratch + tr.off[tr.d]
    _node(tr, 0, r, buf, scratch)
    for q in range(tr.width[0]):
        zrow[perm[q]] = buf[q]


def ttm_csf(list ptr, list ids, const double[::1] vals, list factors, const int64_t[::1] perm,
            double[:, ::1] out, double[:, ::1] scratch, int threads=1):
    """``out[r, :]`` = TTM row of slice r of the tree (see the module docstring).

    ``ptr``: d int32 arrays (level 0..d−1); ``ids``: d + 1 int32 arrays (entry 0 unused);
    ``factors``: d + 1 C-contiguous float64 matrices by level (entry 0 unused); ``perm``:
    empty, or the output column of every position of the level-ordered row (length K̂);
    ``scratch``: (≥ threads, ≥ ``layout(K by level)[2]``).  Indices are trusted (the plan
    built them); shapes are checked here once.
    """
    cdef Tree tr
    cdef int d = len(ptr)
    cdef int k
    cdef int64_t nrows = out.shape[0]
    cdef const int32_t[::1] p
    cdef const int32_t[::1] ix
    cdef const double[:, ::1] f
    if d < 1 or d >= MAXLEV or len(ids) != d + 1 or len(factors) != d + 1:
        raise ValueError(f"a tree of 2 to {MAXLEV} levels needs d ptr, d + 1 ids and factors")
    if threads < 1:
        threads = 1
    keep = []
    tr.d = d
    tr.kdim[0] = 1
    for k in range(d):
        p = ptr[k]
        keep.append(p)
        tr.ptr[k] = &p[0]
    if ptr[0].shape[0] != nrows + 1:
        raise ValueError(f"out has {nrows} rows, the tree {ptr[0].shape[0] - 1} slices")
    for k in range(1, d + 1):
        ix = ids[k]
        f = factors[k]
        keep.append(ix)
        keep.append(f)
        if f.shape[1] < 1:
            raise ValueError(f"level {k}'s factor has no columns")
        tr.ids[k] = &ix[0] if ix.shape[0] else NULL
        tr.fac[k] = &f[0, 0] if f.shape[0] else NULL
        tr.kdim[k] = f.shape[1]
    tr.vals = &vals[0] if vals.shape[0] else NULL
    chunk, off, need = layout([tr.kdim[k] for k in range(d + 1)])
    tr.width[d] = 1
    for k in range(d - 1, -1, -1):
        tr.width[k] = tr.width[k + 1] * tr.kdim[k + 1]
    for k in range(d + 1):
        tr.chunk[k] = chunk[k]
        tr.off[k] = off[k]
    if out.shape[1] != tr.width[0]:
        raise ValueError(f"out has {out.shape[1]} columns, the tree's K̂ is {tr.width[0]}")
    if perm.shape[0] not in (0, tr.width[0]):
        raise ValueError(f"perm has {perm.shape[0]} entries, expected 0 or {tr.width[0]}")
    if nrows and (scratch.shape[0] < threads or scratch.shape[1] < need):
        raise ValueError(f"scratch must be at least ({threads}, {need}), got "
                         f"({scratch.shape[0]}, {scratch.shape[1]})")
    if nrows == 0:
        return
    _run(&tr, nrows, &out[0, 0], &perm[0] if perm.shape[0] else NULL, &scratch[0, 0],
         scratch.shape[1], threads)


cdef void _run(const Tree *tr, int64_t nrows, double *out, const int64_t *perm, double *scratch,
               int64_t sstride, int threads) noexcept:
    cdef int64_t r
    cdef int64_t width = tr.width[0]
    cdef int tid
    with nogil:
        if threads == 1:
            for r in range(nrows):
                _slice(tr, r, out + r * width, perm, scratch)
        else:
            for r in prange(nrows, num_threads=threads, schedule="dynamic", chunksize=16):
                tid = threadid()
                _slice(tr, r, out + r * width, perm, scratch + tid * sstride)


# ---- Building a tree (``spbench.tucker.hooi.csf.CSFPlan.from_columns``) ----------------------------
# Counting sorts over int32 keys (O(nnz + mode length) per level, no int64 keys, no comparison
# sort), then one sequential pass over the sorted level columns that emits every level's nodes.
# Keys come gathered in the order being refined, so every pass reads them sequentially.

cdef struct Cols:
    int n
    const int32_t *base[MAXLEV]
    Py_ssize_t step[MAXLEV]


cdef int _cols(list cols, Cols *c, list keep) except -1:
    cdef const int32_t[:] v
    cdef int k
    if len(cols) > MAXLEV:
        raise ValueError(f"at most {MAXLEV} columns")
    c.n = len(cols)
    for k in range(c.n):
        v = cols[k]
        keep.append(v)
        c.base[k] = &v[0] if v.shape[0] else NULL
        c.step[k] = v.strides[0] // <Py_ssize_t> sizeof(int32_t)
    return 0


ctypedef fused item_t:
    int32_t
    double


def gather(const item_t[:] src, const int32_t[::1] idx, item_t[::1] out, int threads=1):
    """``out[i] = src[idx[i]]`` (int32 positions: numpy's fancy indexing would cast them to
    intp chunk by chunk, about twice as slow), on ``threads`` threads."""
    cdef int64_t i, m = idx.shape[0]
    if out.shape[0] != m:
        raise ValueError("idx and out differ in length")
    with nogil:
        if threads <= 1 or m < PARALLEL_MIN:
            for i in range(m):
                out[i] = src[idx[i]]
        else:
            for i in prange(m, num_threads=threads, schedule="static"):
                out[i] = src[idx[i]]


def stable_order(const int32_t[:] key, int64_t nkeys, const int32_t[::1] perm, int32_t[::1] out,
                 int64_t[::1] counts, int threads=1):
    """``out`` = ``perm`` (the identity when it is empty) stably reordered by key, ``key[i]`` being
    the key of ``perm[i]`` (in [0, nkeys)): one counting-sort pass. ``counts`` (≥ nkeys + 1
    entries) ends with the end of every key's run: ``counts[c]`` = elements with key ≤ c. With
    ``threads`` > 1 (and at least as many elements as keys) each thread counts and places a
    contiguous share, its offsets per key after the earlier threads' (so the order stays stable):
    ``threads`` × (nkeys + 1) int32 counts more."""
    cdef int64_t m = out.shape[0]
    cdef int64_t i, c, s
    cdef bint ident = perm.shape[0] == 0
    if not ident and perm.shape[0] != m:
        raise ValueError("perm and out differ in length")
    if key.shape[0] != m or counts.shape[0] < nkeys + 1:
        raise ValueError("key and out differ in length, or counts is shorter than nkeys + 1")
    if threads > 1 and m >= PARALLEL_MIN and nkeys <= m:
        _stable_order_threads(key, nkeys, perm, out, counts, threads)
        return
    with nogil:
        for c in range(nkeys + 1):
            counts[c] = 0
        for i in range(m):
            counts[key[i] + 1] += 1
        s = 0
        for c in range(nkeys + 1):
            s += counts[c]
            counts[c] = s
        for i in range(m):
            c = key[i]
            out[counts[c]] = <int32_t> (i if ident else perm[i])
            counts[c] += 1


cdef void _stable_order_threads(const int32_t[:] key, int64_t nkeys, const int32_t[::1] perm,
                                int32_t[::1] out, int64_t[::1] counts, int threads):
    """:func:`stable_order` on ``threads`` threads (its docstring)."""
    cdef int64_t m = out.shape[0]
    cdef int64_t share = (m + threads - 1) // threads
    cdef int32_t[:, ::1] at = np.zeros((threads, nkeys), dtype=np.int32)
    cdef bint ident = perm.shape[0] == 0
    cdef int t
    cdef int64_t i, c, lo, hi, s
    cdef int32_t v
    with nogil:
        for t in prange(threads, num_threads=threads, schedule="static", chunksize=1):
            lo = t * share
            hi = min(m, lo + share)
            for i in range(lo, hi):
                at[t, key[i]] += 1
        s = 0
        for c in range(nkeys):                   # each key's run: thread 0's share first, then 1's, ...
            for t in range(threads):
                v = at[t, c]
                at[t, c] = <int32_t> s
                s += v
        for t in prange(threads, num_threads=threads, schedule="static", chunksize=1):
            lo = t * share
            hi = min(m, lo + share)
            for i in range(lo, hi):
                c = key[i]
                out[at[t, c]] = <int32_t> (i if ident else perm[i])
                at[t, c] += 1
        for c in range(nkeys):                   # the last thread's offsets end every key's run
            counts[c] = at[threads - 1, c]
        counts[nkeys] = m


def distinct_pairs(const int32_t[:] col, const int64_t[::1] ends, int32_t[::1] last):
    """(roots, distinct (root, col) pairs) of elements grouped by root: root r holds the positions
    ``ends[r − 1] .. ends[r]`` of ``col`` (:func:`stable_order`'s counts); ``last`` is scratch of
    ≥ (largest col + 1) entries."""
    cdef int64_t r, i, lo = 0, pairs = 0, roots = 0
    cdef int32_t c
    if ends.shape[0] and ends[ends.shape[0] - 1] > col.shape[0]:
        raise ValueError("ends beyond the column")
    with nogil:
        for i in range(last.shape[0]):
            last[i] = -1
        for r in range(ends.shape[0]):
            if ends[r] > lo:
                roots += 1
            for i in range(lo, ends[r]):
                c = col[i]
                if last[c] != r:
                    last[c] = <int32_t> r
                    pairs += 1
            lo = ends[r]
    return roots, pairs


cdef inline int _first_change(const Cols *c, int64_t i, int d) noexcept nogil:
    """The first level k < d where sorted elements i − 1 and i differ (d: the same prefix)."""
    cdef int k
    for k in range(d):
        if c.base[k][i * c.step[k]] != c.base[k][(i - 1) * c.step[k]]:
            return k
    return d


cdef void _walk(const Cols *c, int64_t m, int64_t *count, int32_t *rows, int32_t **pp,
                int32_t **ip) noexcept nogil:
    """One pass over the sorted elements: ``count[k]`` = nodes of level k < d = c.n; with ``rows``
    (not NULL) also every node's index and first child (see :func:`tree_fill`)."""
    cdef int d = c.n
    cdef int k, first
    cdef int64_t i
    for k in range(d):
        count[k] = 0
    for i in range(m):
        first = 0 if i == 0 else _first_change(c, i, d)
        for k in range(first, d):
            if rows != NULL:
                if k == 0:
                    rows[count[0]] = c.base[0][i * c.step[0]]
                else:
                    ip[k][count[k]] = c.base[k][i * c.step[k]]
                pp[k][count[k]] = <int32_t> (count[k + 1] if k + 1 < d else i)
            count[k] += 1
    if rows != NULL:
        for k in range(d):
            pp[k][count[k]] = <int32_t> (count[k + 1] if k + 1 < d else m)


def tree_nodes(list cols):
    """Nodes of levels 0 .. d − 1 of the tree of elements sorted by their level columns ``cols``
    (levels 0 .. d − 1, level 0 slowest)."""
    cdef Cols c
    keep = []
    _cols(cols, &c, keep)
    cdef int64_t m = len(cols[0]) if c.n else 0
    cdef int64_t nodes[MAXLEV]
    with nogil:
        _walk(&c, m, nodes, NULL, NULL, NULL)
    return [int(nodes[k]) for k in range(c.n)]


def tree_fill(list cols, int32_t[::1] rows, list ptr, list ids):
    """Fill a tree of elements sorted by ``cols`` (levels 0 .. d − 1) whose node counts
    :func:`tree_nodes` gave: ``rows`` (level-0 indices), ``ptr[k]`` (k < d, nodes + 1 entries:
    first child, then the total; level d − 1 points at leaf positions) and ``ids[k]``
    (1 ≤ k < d; entry 0 unused)."""
    cdef Cols c
    keep = []
    _cols(cols, &c, keep)
    cdef int d = c.n
    cdef int k
    cdef int64_t m = len(cols[0]) if d else 0
    cdef int64_t count[MAXLEV]
    cdef int32_t *pp[MAXLEV]
    cdef int32_t *ip[MAXLEV]
    cdef int32_t[::1] v
    cdef int32_t dummy = 0
    if d < 1 or len(ptr) != d or len(ids) < d:
        raise ValueError("ptr or ids do not match the columns")
    for k in range(d):
        v = ptr[k]
        keep.append(v)
        pp[k] = &v[0]
    ip[0] = NULL
    for k in range(1, d):
        v = ids[k]
        keep.append(v)
        ip[k] = &v[0] if v.shape[0] else NULL
    with nogil:
        _walk(&c, m, count, &rows[0] if rows.shape[0] else &dummy, pp, ip)
