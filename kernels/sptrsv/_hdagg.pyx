# cython: language_level=3
"""HDagg hot loops (Zarebavani et al. 2022): sparsification, tree-based grouping, level gluing.

Used by ``spbench.sptrsv.schedulers.hdagg``; see there for the algorithm and how each step
matches the original implementation.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport log2
from libc.stdint cimport int32_t, int64_t
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cnp.import_array()


def sparsified_children(int32_t n, const int32_t[::1] child_ptr, const int32_t[::1] child_idx):
    """Children of every vertex after HDagg's partial sparsification, as CSR (sorted).

    1. Cliques: a maximal run of columns first..last whose columns below the run are identical
       and which is dense inside (a supernode) becomes the chain first -> first+1 -> ... -> last;
       only the run's last column keeps its children outside the run.
    2. Two hops: on that graph, an edge i -> j is dropped when a child k of i also has child j.
    Every dropped edge is implied by a kept path through levels between its ends, so the
    wavefront levels and the connected components of any range of levels are unchanged.
    """
    chain_arr = np.zeros(n, dtype=np.int8)
    cdef signed char[::1] chain = chain_arr  # 1: in a clique and not its last column
    cdef int32_t first = 0, last, diff, row, m_first, m_last
    cdef bint same
    with nogil:
        while first < n:
            last = first + 1
            while last < n:
                diff = last - first
                m_first = child_ptr[first + 1] - child_ptr[first]
                m_last = child_ptr[last + 1] - child_ptr[last]
                if m_first + 1 - diff != m_last + 1:
                    break
                # column first, from its entry `diff` on, equals column last (diagonal included)
                same = child_idx[child_ptr[first] + diff - 1] == last
                row = 0
                while same and row < m_last:
                    same = child_idx[child_ptr[first] + diff + row] == child_idx[child_ptr[last] + row]
                    row += 1
                if not same:
                    break
                chain[last - 1] = 1
                last += 1
            first = last
    nc_ptr_arr = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] nc_ptr = nc_ptr_arr
    cdef int32_t i, k
    cdef int64_t a, b, ea, eb
    for i in range(n):
        nc_ptr[i + 1] = nc_ptr[i] + (1 if chain[i] else child_ptr[i + 1] - child_ptr[i])
    nc_idx_arr = np.empty(nc_ptr[n], dtype=np.int32)
    cdef int32_t[::1] nc_idx = nc_idx_arr
    keep_arr = np.ones(nc_ptr[n], dtype=np.int8)
    cdef signed char[::1] keep = keep_arr
    with nogil:
        for i in range(n):
            if chain[i]:
                nc_idx[nc_ptr[i]] = i + 1
            else:
                for a in range(child_ptr[i], child_ptr[i + 1]):
                    nc_idx[nc_ptr[i] + a - child_ptr[i]] = child_idx[a]
        for i in range(n):
            for a in range(nc_ptr[i], nc_ptr[i + 1]):
                k = nc_idx[a]
                # merge i's children with k's: drop i -> j for every common child j
                ea, b, eb = nc_ptr[i], nc_ptr[k], nc_ptr[k + 1]
                while ea < nc_ptr[i + 1] and b < eb:
                    if nc_idx[ea] == nc_idx[b]:
                        keep[ea] = 0
                        ea += 1
                        b += 1
                    elif nc_idx[ea] < nc_idx[b]:
                        ea += 1
                    else:
                        b += 1
    sp_ptr_arr = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] sp_ptr = sp_ptr_arr
    with nogil:
        for i in range(n):
            sp_ptr[i + 1] = sp_ptr[i]
            for a in range(nc_ptr[i], nc_ptr[i + 1]):
                sp_ptr[i + 1] += keep[a]
    return sp_ptr_arr, np.ascontiguousarray(nc_idx_arr[keep_arr.view(bool)])


def tree_groups(int32_t n, const int64_t[::1] sp_ptr, const int32_t[::1] sp_idx):
    """Tree-based grouping on the sparsified children; returns (group, group_level), int32.

    A vertex with exactly one child joins that child's group, so a group is an in-tree whose
    root (0 or >= 2 children, the group's largest id) is its only vertex with edges leaving it.
    Groups are numbered by their smallest vertex id (the original's order of groups);
    ``group_level`` is the longest path to each group in the group DAG.
    """
    root_arr = np.empty(n, dtype=np.int32)
    group_arr = np.full(n, -1, dtype=np.int32)
    cdef int32_t[::1] root = root_arr
    cdef int32_t[::1] group = group_arr
    cdef int32_t i, g = 0, k
    cdef int64_t a
    with nogil:
        for i in range(n - 1, -1, -1):
            root[i] = root[sp_idx[sp_ptr[i]]] if sp_ptr[i + 1] - sp_ptr[i] == 1 else i
        for i in range(n):
            if group[root[i]] < 0:
                group[root[i]] = g
                g += 1
            group[i] = group[root[i]]
    level_arr = np.zeros(g, dtype=np.int32)
    cdef int32_t[::1] level = level_arr
    with nogil:
        # roots in increasing id are a topological order of the group DAG
        for i in range(n):
            if root[i] != i:
                continue
            for a in range(sp_ptr[i], sp_ptr[i + 1]):
                k = group[sp_idx[a]]
                if level[k] < level[group[i]] + 1:
                    level[k] = level[group[i]] + 1
    return group_arr, level_arr


cdef inline int32_t _find(int32_t[::1] uf, int32_t p) noexcept nogil:
    cdef int32_t r = p, t
    while uf[r] != r:
        r = uf[r]
    while uf[p] != r:
        t = uf[p]
        uf[p] = r
        p = t
    return r


def glue(const int32_t[::1] level_ptr, const int32_t[::1] edge_ptr, const int32_t[::1] edge_src,
         const int32_t[::1] edge_dst, const int32_t[::1] pos_level, const double[::1] cost, int cores,
         double threshold, double deadline=0.0):
    """Glue consecutive levels into windows and bin-pack each window, as the original's HDAGG().

    Groups are given by position p (level order, then group number): level l holds positions
    ``level_ptr[l]:level_ptr[l+1]``; ``edge_src/dst[edge_ptr[l]:edge_ptr[l+1]]`` are the group
    edges, as positions, whose child is on level l.  A window [lb, ub) grows one level at a time;
    each attempt finds its connected components (ordered by their first position), packs them
    onto the cores and adds the packing's divergence Σ_{i<e} (c_i/C)·log2((c_i/C)·e) to a sum
    kept over the window's attempts; the window takes the level while that running sum stays
    < threshold.  e, the effective cores, is the first level's width when it is narrower than
    ``cores``, and ``cores`` again once a wider level joins; a core among them with no work
    makes the sum NaN, which ends the window.  Packing: fewer components than cores, one per
    core; else a core takes components while its load is below (cost not yet placed) / (cores not
    yet filled), the last core takes the rest.  Returns (step, core) per position, int32.

    ``deadline`` > 0: a CLOCK_MONOTONIC time (``time.monotonic()``) checked before every attempt;
    past it the gluing stops and (None, None) is returned (a time budget for a superlinear run).
    """
    cdef Py_ssize_t n_pos = cost.shape[0]
    cdef int n_levels = <int>level_ptr.shape[0] - 1
    step_arr = np.zeros(n_pos, dtype=np.int32)
    core_arr = np.zeros(n_pos, dtype=np.int32)
    uf_arr = np.arange(n_pos, dtype=np.int32)
    part_arr = np.zeros(n_pos, dtype=np.int32)     # a root's part number
    pcost_arr = np.zeros(n_pos, dtype=np.float64)  # a part's cost
    pcore_arr = np.zeros(n_pos, dtype=np.int32)    # a part's core
    load_arr = np.zeros(max(cores, 1), dtype=np.float64)
    cdef int32_t[::1] step = step_arr
    cdef int32_t[::1] core = core_arr
    cdef int32_t[::1] uf = uf_arr
    cdef int32_t[::1] part = part_arr
    cdef double[::1] pcost = pcost_arr
    cdef int32_t[::1] pcore = pcore_arr
    cdef double[::1] load = load_arr
    cdef int lb = 0, ub, computed, prev_ub, cand, eff, width, attempt, tid, n_steps = 0, l
    cdef Py_ssize_t k, p, n_parts, q
    cdef int32_t ra, rb
    cdef double total, per_core, placed, dkl, f
    cdef bint done, accepted, late = False
    cdef timespec now
    with nogil:
        while lb < n_levels and not late:
            ub = lb + 1
            computed = lb
            prev_ub = 0
            cand = lb + 1
            dkl = 0.0
            eff = cores
            attempt = 0
            done = False
            while not done:
                if deadline > 0.0:
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    if now.tv_sec + 1e-9 * now.tv_nsec > deadline:
                        late = True
                        break
                attempt += 1
                width = level_ptr[ub] - level_ptr[ub - 1]
                if ub - lb == 1 and width < cores:
                    eff = width
                elif width > eff:
                    eff = cores
                # components of [lb, ub): union the edges of the levels not yet added
                for l in range(computed, ub):
                    for p in range(level_ptr[l], level_ptr[l + 1]):
                        uf[p] = <int32_t>p
                for l in range(computed, ub):
                    for k in range(edge_ptr[l], edge_ptr[l + 1]):
                        if pos_level[edge_src[k]] < lb:
                            continue
                        ra = _find(uf, edge_src[k])
                        rb = _find(uf, edge_dst[k])
                        if ra < rb:
                            uf[rb] = ra
                        elif rb < ra:
                            uf[ra] = rb
                n_parts = 0
                total = 0.0
                for p in range(level_ptr[lb], level_ptr[ub]):
                    if _find(uf, <int32_t>p) == p:
                        part[p] = <int32_t>n_parts
                        pcost[n_parts] = 0.0
                        n_parts += 1
                for p in range(level_ptr[lb], level_ptr[ub]):
                    pcost[part[uf[p]]] += cost[p]
                    total += cost[p]
                # pack the parts in order onto the cores
                for tid in range(cores):
                    load[tid] = 0.0
                if n_parts < cores:
                    for q in range(n_parts):
                        load[q] = pcost[q]
                        pcore[q] = <int32_t>q
                else:
                    per_core = total / cores
                    placed = 0.0
                    tid = 1
                    q = 0
                    while q < n_parts:
                        if load[tid - 1] < per_core:
                            load[tid - 1] += pcost[q]
                            pcore[q] = tid - 1
                            q += 1
                        else:
                            placed += load[tid - 1]
                            per_core = (total - placed) / (cores - tid)
                            tid += 1
                            if tid == cores:
                                load[cores - 1] = total - placed
                                while q < n_parts:
                                    pcore[q] = cores - 1
                                    q += 1
                for tid in range(eff):
                    f = load[tid]
                    f = f / total
                    dkl += f * log2(f * eff)
                computed = ub
                accepted = dkl < threshold  # False for NaN
                if accepted or attempt == 1:
                    for p in range(level_ptr[lb], level_ptr[ub]):
                        step[p] = n_steps
                        core[p] = pcore[part[uf[p]]]
                if accepted:
                    cand = ub
                    ub = min(ub + 1, n_levels)
                    if prev_ub == ub:
                        done = True
                    prev_ub = ub
                else:
                    done = True
            n_steps += 1
            lb = cand
    if late:
        return None, None
    return step_arr, core_arr
