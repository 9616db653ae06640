# cython: language_level=3
"""HDagg hot loops (Zarebavani et al. 2022): tree-based grouping and the level gluing.

Used by ``spbench.sptrsv.schedulers.hdagg``; see there for the algorithm and our choices.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport log2
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport qsort

from _vec_heap cimport cmp_int32

cnp.import_array()


def tree_groups(int32_t n, const int32_t[::1] parent_ptr, const int32_t[::1] parent_idx):
    """Group of every vertex after partial sparsification and tree-based grouping.

    Sparsification drops every edge j -> i that has a 2-hop path j -> k -> i (k a parent of i).
    A vertex with exactly one remaining child joins that child's group, so each group is an
    in-tree whose root (the vertex with 0 or >= 2 remaining children) has the largest id.  Groups
    are numbered in increasing root id, which is a topological order of the group DAG.
    Returns int32 group ids.
    """
    stamp_arr = np.full(n, -1, dtype=np.int32)
    kids_arr = np.zeros(n, dtype=np.int32)
    only_arr = np.full(n, -1, dtype=np.int32)
    group_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] stamp = stamp_arr
    cdef int32_t[::1] kids = kids_arr      # remaining (sparsified) children
    cdef int32_t[::1] only = only_arr      # the child, when kids == 1
    cdef int32_t[::1] group = group_arr
    cdef int32_t i, j, k, g
    cdef int64_t a, c
    with nogil:
        for i in range(n):
            for a in range(parent_ptr[i], parent_ptr[i + 1]):
                k = parent_idx[a]
                for c in range(parent_ptr[k], parent_ptr[k + 1]):
                    stamp[parent_idx[c]] = i
            for a in range(parent_ptr[i], parent_ptr[i + 1]):
                j = parent_idx[a]
                if stamp[j] != i:
                    kids[j] += 1
                    only[j] = i
        # roots get ids in increasing vertex order; others inherit from their single child
        g = 0
        for i in range(n):
            if kids[i] != 1:
                group[i] = g
                g += 1
        for i in range(n - 1, -1, -1):
            if kids[i] == 1:
                group[i] = group[only[i]]
    return group_arr


cdef inline int32_t _find(int32_t[::1] uf, int32_t g) noexcept nogil:
    cdef int32_t r = g, t
    while uf[r] != r:
        r = uf[r]
    while uf[g] != r:
        t = uf[g]
        uf[g] = r
        g = t
    return r


def glue(const int32_t[::1] level_ptr, const int32_t[::1] level_groups,
         const int32_t[::1] edge_ptr, const int32_t[::1] edge_src, const int32_t[::1] edge_dst,
         const int32_t[::1] group_level, const int64_t[::1] cost, int cores,
         double threshold):
    """Glue consecutive levels of the group DAG into windows and bin-pack each window.

    ``level_groups[level_ptr[l]:level_ptr[l+1]]``: groups of level l; ``edge_src/dst[edge_ptr[l]:
    edge_ptr[l+1]]``: group edges whose child is on level l.  A window [lb, ub) grows one level at
    a time; its connected components (edges inside the window), in order of their smallest group
    id, are bin-packed onto the cores: a core takes components until its load reaches
    target = (cost not yet placed) / (cores not yet filled).  With loads c_i and total C the
    divergence is Σ_i (c_i/C)·log2((c_i/C)·cores) (0 when balanced); the window keeps the next
    level while the divergence stays < threshold (a single level is always accepted).
    Returns (step, core) per group, int32.
    """
    cdef Py_ssize_t n_groups = cost.shape[0]
    cdef int n_levels = <int>level_ptr.shape[0] - 1
    step_arr = np.zeros(n_groups, dtype=np.int32)
    core_arr = np.zeros(n_groups, dtype=np.int32)
    uf_arr = np.arange(n_groups, dtype=np.int32)
    ccost_arr = np.zeros(n_groups, dtype=np.int64)
    ccore_arr = np.zeros(n_groups, dtype=np.int32)
    roots_arr = np.empty(n_groups, dtype=np.int32)
    loads_arr = np.zeros(cores, dtype=np.int64)
    cdef int32_t[::1] step = step_arr
    cdef int32_t[::1] core = core_arr
    cdef int32_t[::1] uf = uf_arr
    cdef int64_t[::1] ccost = ccost_arr
    cdef int32_t[::1] ccore = ccore_arr
    cdef int32_t[::1] roots = roots_arr
    cdef int64_t[::1] loads = loads_arr
    cdef int lb = 0, ub, l, p, n_steps = 0
    cdef Py_ssize_t k, n_roots
    cdef int32_t g, r, ra, rb
    cdef int64_t total, remaining, load
    cdef double target, div, f
    cdef bint accept
    with nogil:
        while lb < n_levels:
            ub = lb
            while ub < n_levels:
                # add level ub
                for k in range(level_ptr[ub], level_ptr[ub + 1]):
                    g = level_groups[k]
                    uf[g] = g
                for k in range(edge_ptr[ub], edge_ptr[ub + 1]):
                    if group_level[edge_src[k]] < lb:
                        continue
                    ra = _find(uf, edge_src[k])
                    rb = _find(uf, edge_dst[k])
                    if ra < rb:
                        uf[rb] = ra
                    elif rb < ra:
                        uf[ra] = rb
                ub += 1
                # components of [lb, ub), their costs, in order of their smallest group id
                n_roots = 0
                total = 0
                for k in range(level_ptr[lb], level_ptr[ub]):
                    g = level_groups[k]
                    r = _find(uf, g)
                    if r == g:
                        roots[n_roots] = g
                        n_roots += 1
                        ccost[g] = 0
                for k in range(level_ptr[lb], level_ptr[ub]):
                    g = level_groups[k]
                    ccost[uf[g]] += cost[g]
                    total += cost[g]
                qsort(&roots[0], n_roots, sizeof(int32_t), cmp_int32)
                # bin-pack in order; target recomputed per core
                for p in range(cores):
                    loads[p] = 0
                p = 0
                remaining = total
                target = <double>remaining / cores
                for k in range(n_roots):
                    r = roots[k]
                    ccore[r] = p
                    loads[p] += ccost[r]
                    if loads[p] >= target and p < cores - 1:
                        remaining -= loads[p]
                        p += 1
                        target = <double>remaining / (cores - p)
                div = 0.0
                if total > 0:
                    for p in range(cores):
                        if loads[p] > 0:
                            f = <double>loads[p] / total
                            div += f * log2(f * cores)
                accept = ub == lb + 1 or div < threshold
                if not accept:
                    ub -= 1
                    break
                for k in range(level_ptr[lb], level_ptr[ub]):
                    g = level_groups[k]
                    step[g] = n_steps
                    core[g] = ccore[uf[g]]
            n_steps += 1
            lb = ub
    return step_arr, core_arr
