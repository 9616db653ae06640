# cython: language_level=3
"""SpMP's level schedule and task graph (Park et al. 2014; sptrsv-elasticity §5.1, §6.5), parallel.

One call computes what SpMP's ``LevelSchedule::constructTaskGraph`` computes: the level sets of
G_A, each level cut into one task per thread by the cost of its rows, the point-to-point task
graph between threads and its approximate transitive reduction. The level sets are one O(nnz)
pass; the cuts, the task graph's out-edges (one scan of L's columns) and the reduction run over
OpenMP threads (``prange``), with per-thread stamp arrays allocated once, so the parallel loops
allocate nothing. The in-edges the reduction reads are the out-edges transposed (a pass over the
task edges, not a second scan of L's rows: half the graph's time on a 2.4M-nonzero stand-in).

Tasks are numbered as SpMP numbers them: thread by thread, each thread's non-empty tasks in
level order, so a thread's next task is ``id + 1``. Every edge runs between tasks of different
threads from a lower to a higher level.
"""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t

cnp.import_array()


cdef void cut_level(const int32_t *order, const int32_t *parent_ptr, const int32_t *child_ptr,
                    Py_ssize_t begin, Py_ssize_t end, int n_cores, int32_t *cut) noexcept nogil:
    """Cut one level's rows order[begin:end] (ids ascending) into ``n_cores`` tasks as SpMP does.

    Row cost = nonzeros of its row in L + Lᵀ (SpMP's ``PrefixSumCostFunction`` on the symmetric
    pattern); with b(k) the cost before position k and c = ⌈total / P⌉, thread t's task ends at
    the first k ≥ r with b(k) ≥ (t + 1)·c, and the search for t + 1 starts one row later (r + 1),
    so every thread whose turn comes before the level runs out gets at least one row.
    ``cut[t]`` = end of thread t's task (a position in ``order``).
    """
    cdef int64_t total = 0, per_thread, before
    cdef Py_ssize_t k, r, prev_end
    cdef int32_t row
    cdef int t
    for k in range(begin, end):
        row = order[k]
        total += 1 + (parent_ptr[row + 1] - parent_ptr[row]) + (child_ptr[row + 1] - child_ptr[row])
    per_thread = (total + n_cores - 1) // n_cores
    r = begin
    before = 0  # b(r) while r <= end
    prev_end = begin
    for t in range(n_cores):
        while r < end and before < (t + 1) * per_thread:
            row = order[r]
            before += 1 + (parent_ptr[row + 1] - parent_ptr[row]) + (child_ptr[row + 1] - child_ptr[row])
            r += 1
        prev_end = r if r < end else end
        cut[t] = <int32_t>prev_end
        if r < end:
            row = order[r]
            before += 1 + (parent_ptr[row + 1] - parent_ptr[row]) + (child_ptr[row + 1] - child_ptr[row])
        r += 1


cdef Py_ssize_t distinct_tasks(const int32_t *order, const int32_t *row_ptr, const int32_t *row_idx,
                               const int32_t *task_of_row, const int32_t *row_core, int32_t begin,
                               int32_t end, int32_t core, int64_t mark, int64_t *stamp,
                               int32_t *out) noexcept nogil:
    """The distinct tasks of threads other than ``core`` owning a neighbour (``row_idx``) of the
    rows order[begin:end], written to ``out``; returns how many. ``stamp`` (per thread) marks them."""
    cdef Py_ssize_t k, e, m = 0
    cdef int32_t row, other, nb
    for k in range(begin, end):
        row = order[k]
        for e in range(row_ptr[row], row_ptr[row + 1]):
            nb = row_idx[e]
            if row_core[nb] != core:
                other = task_of_row[nb]
                if stamp[other] != mark:
                    stamp[other] = mark
                    out[m] = other
                    m += 1
    return m


cdef Py_ssize_t reduce_children(int32_t task, int32_t *children, Py_ssize_t n_children,
                                const int64_t *inv_ptr, const int32_t *inv_idx, bint has_next,
                                int64_t mark, int64_t *stamp) noexcept nogil:
    """SpMP's approximate transitive reduction of one task's out-edges, in place; returns the kept.

    The edge task -> i is dropped when some k that ``task`` reaches in one step (a child, or the
    thread's next task) is a parent of i (one of i's other-thread parents, or the task before i
    on its thread): task -> k -> i implies it. Only the unreduced graph is read, so every task
    is handled independently.
    """
    cdef Py_ssize_t a, e, kept = 0
    cdef int32_t i
    cdef bint implied
    for a in range(n_children):
        stamp[children[a]] = mark
    if has_next:
        stamp[task + 1] = mark
    for a in range(n_children):
        i = children[a]
        implied = False
        for e in range(inv_ptr[i], inv_ptr[i + 1]):
            if stamp[inv_idx[e]] == mark:
                implied = True
                break
        if not implied:
            children[kept] = i
            kept += 1
    return kept


def level_task_graph(const int32_t[::1] parent_ptr, const int32_t[::1] parent_idx,
                     const int32_t[::1] child_ptr, const int32_t[::1] child_idx, int n_cores,
                     bint reduce, int threads):
    """SpMP's schedule of the DAG (parents/children CSR of G_A) on ``n_cores`` threads.

    Returns ``(level, core, parent_ptr, parent_idx)``: every row's level (its wavefront) and
    thread, and the task graph over the grid tasks s·P + p (level s, thread p) as parent lists
    (CSR, int32). With ``reduce`` the approximate transitive reduction is applied; without it a
    task's parents are all tasks of other threads owning a parent row. ``threads`` OpenMP threads
    do the parallel parts (the schedule does not depend on it).
    """
    cdef Py_ssize_t n = parent_ptr.shape[0] - 1
    if n_cores < 1 or threads < 1:
        raise ValueError(f"n_cores and threads must be >= 1, got {n_cores} and {threads}")
    if child_ptr.shape[0] != n + 1:
        raise ValueError(f"child_ptr must have {n + 1} entries, got {child_ptr.shape[0]}")
    cdef int P = n_cores
    level_arr = np.zeros(n, dtype=np.int32)
    core_arr = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] level = level_arr
    cdef int32_t[::1] core = core_arr
    cdef Py_ssize_t i, k, e, l, j
    cdef int32_t best, lv, n_levels = 0
    # level sets: longest path from a source, then rows bucketed by level (ids ascending)
    with nogil:
        for i in range(n):
            best = 0
            for e in range(parent_ptr[i], parent_ptr[i + 1]):
                lv = level[parent_idx[e]] + 1
                if lv > best:
                    best = lv
            level[i] = best
            if best + 1 > n_levels:
                n_levels = best + 1
    level_ptr_arr = np.zeros(n_levels + 1, dtype=np.int32)
    order_arr = np.empty(n, dtype=np.int32)
    cut_arr = np.empty(<Py_ssize_t>n_levels * P, dtype=np.int32)
    cdef int32_t[::1] level_ptr = level_ptr_arr
    cdef int32_t[::1] order = order_arr
    cdef int32_t[::1] cut = cut_arr
    with nogil:
        for i in range(n):
            level_ptr[level[i] + 1] += 1
        for l in range(n_levels):
            level_ptr[l + 1] += level_ptr[l]
        for i in range(n):
            order[level_ptr[level[i]]] = <int32_t>i
            level_ptr[level[i]] += 1
        for l in range(n_levels, 0, -1):
            level_ptr[l] = level_ptr[l - 1]
        if n_levels > 0:
            level_ptr[0] = 0
    cdef const int32_t *pp = &parent_ptr[0]
    cdef const int32_t *cp = &child_ptr[0]
    cdef const int32_t *ordp = &order[0] if n > 0 else NULL
    cdef int32_t *cutp = &cut[0] if n_levels > 0 else NULL
    with nogil:
        for l in prange(n_levels, num_threads=threads, schedule="dynamic", chunksize=16):
            cut_level(ordp, pp, cp, level_ptr[l], level_ptr[l + 1], P, cutp + l * P)
    # SpMP's task ids: thread by thread, its non-empty tasks in level order
    grid_task_arr = np.full(<Py_ssize_t>n_levels * P, -1, dtype=np.int32)
    cdef int32_t[::1] grid_task = grid_task_arr
    cdef Py_ssize_t n_tasks = 0
    cdef int p
    cdef int32_t start
    with nogil:
        for p in range(P):
            for l in range(n_levels):
                start = cut[l * P + p - 1] if p > 0 else level_ptr[l]
                if cut[l * P + p] > start:
                    grid_task[l * P + p] = <int32_t>n_tasks
                    n_tasks += 1
    task_begin_arr = np.empty(n_tasks, dtype=np.int32)
    task_end_arr = np.empty(n_tasks, dtype=np.int32)
    task_core_arr = np.empty(n_tasks, dtype=np.int32)
    task_grid_arr = np.empty(n_tasks, dtype=np.int32)
    task_of_row_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] task_begin = task_begin_arr
    cdef int32_t[::1] task_end = task_end_arr
    cdef int32_t[::1] task_core = task_core_arr
    cdef int32_t[::1] task_grid = task_grid_arr
    cdef int32_t[::1] task_of_row = task_of_row_arr
    cdef int32_t t
    with nogil:
        for l in range(n_levels):
            for p in range(P):
                t = grid_task[l * P + p]
                if t >= 0:
                    task_begin[t] = cut[l * P + p - 1] if p > 0 else level_ptr[l]
                    task_end[t] = cut[l * P + p]
                    task_core[t] = p
                    task_grid[t] = <int32_t>(l * P + p)
                    for k in range(task_begin[t], task_end[t]):
                        task_of_row[order[k]] = t
                        core[order[k]] = p
    # unreduced task graph: the distinct other-thread children of every task (out), in a buffer
    # sized by its rows' child counts; with ``reduce`` also its transpose (in), each task's list
    # led by the thread's previous task, then its parents from the highest level down: the
    # parents that most often imply an edge, so the reduction's search mostly stops at the first
    out_ptr_arr = np.zeros(n_tasks + 1, dtype=np.int64)
    cdef int64_t[::1] out_ptr = out_ptr_arr
    with nogil:
        for t in range(n_tasks):
            out_ptr[t + 1] = out_ptr[t]
            for k in range(task_begin[t], task_end[t]):
                out_ptr[t + 1] += child_ptr[order[k] + 1] - child_ptr[order[k]]
    out_idx_arr = np.empty(out_ptr[n_tasks] + 1, dtype=np.int32)
    out_len_arr = np.zeros(n_tasks + 1, dtype=np.int32)
    stamp_arr = np.full((threads, max(n_tasks, 1)), -1, dtype=np.int64)
    cdef int32_t[::1] out_idx = out_idx_arr
    cdef int32_t[::1] out_len = out_len_arr
    cdef int64_t[:, ::1] stamp = stamp_arr
    cdef int32_t *tor = &task_of_row[0] if n > 0 else NULL
    cdef int32_t *rcore = &core[0] if n > 0 else NULL
    cdef const int32_t *ci = &child_idx[0] if child_idx.shape[0] > 0 else NULL
    cdef int64_t *stamp0 = &stamp[0, 0]
    cdef Py_ssize_t width = stamp.shape[1]
    cdef int32_t *oi = &out_idx[0]
    with nogil:
        for j in prange(n_tasks, num_threads=threads, schedule="dynamic", chunksize=64):
            out_len[j] = <int32_t>distinct_tasks(ordp, cp, ci, tor, rcore, task_begin[j], task_end[j],
                                                 task_core[j], j, stamp0 + threadid() * width, oi + out_ptr[j])
    cdef int64_t[::1] in_ptr, in_fill
    cdef int32_t[::1] in_idx
    cdef int64_t *ipp
    cdef int32_t *iip
    if reduce:
        in_ptr_arr = np.zeros(n_tasks + 1, dtype=np.int64)
        in_fill_arr = np.empty(n_tasks + 1, dtype=np.int64)
        in_ptr = in_ptr_arr
        in_fill = in_fill_arr
        with nogil:
            for j in range(n_tasks):
                if j > 0 and task_core[j - 1] == task_core[j]:
                    in_ptr[j + 1] += 1
                for e in range(out_ptr[j], out_ptr[j] + out_len[j]):
                    in_ptr[out_idx[e] + 1] += 1
            for j in range(n_tasks):
                in_ptr[j + 1] += in_ptr[j]
            for j in range(n_tasks):
                in_fill[j] = in_ptr[j]
        in_idx_arr = np.empty(in_ptr_arr[n_tasks] + 1, dtype=np.int32)
        in_idx = in_idx_arr
        ipp = &in_ptr[0]
        iip = &in_idx[0]
        with nogil:
            for j in range(n_tasks):
                if j > 0 and task_core[j - 1] == task_core[j]:
                    in_idx[in_fill[j]] = <int32_t>(j - 1)
                    in_fill[j] += 1
            for l in range(n_levels - 1, -1, -1):  # parents from the highest level down
                for p in range(P):
                    t = grid_task[l * P + p]
                    if t >= 0:
                        for e in range(out_ptr[t], out_ptr[t] + out_len[t]):
                            k = out_idx[e]
                            in_idx[in_fill[k]] = t
                            in_fill[k] += 1
            for j in prange(n_tasks, num_threads=threads, schedule="dynamic", chunksize=64):
                out_len[j] = <int32_t>reduce_children(
                    <int32_t>j, oi + out_ptr[j], out_len[j], ipp, iip,
                    j + 1 < n_tasks and task_core[j + 1] == task_core[j], n_tasks + j,
                    stamp0 + threadid() * width)
    # parent lists of the grid tasks
    cdef Py_ssize_t n_grid = <Py_ssize_t>max(n_levels, 1) * P
    res_ptr_arr = np.zeros(n_grid + 1, dtype=np.int32)
    cdef int32_t[::1] res_ptr = res_ptr_arr
    cdef int64_t total = 0
    with nogil:
        for j in range(n_tasks):
            total += out_len[j]
            for e in range(out_ptr[j], out_ptr[j] + out_len[j]):
                res_ptr[task_grid[out_idx[e]] + 1] += 1
        for k in range(n_grid):
            res_ptr[k + 1] += res_ptr[k]
    res_idx_arr = np.empty(total, dtype=np.int32)
    fill_arr = res_ptr_arr[:-1].copy()
    cdef int32_t[::1] res_idx = res_idx_arr
    cdef int32_t[::1] fill = fill_arr
    with nogil:
        for j in range(n_tasks):
            for e in range(out_ptr[j], out_ptr[j] + out_len[j]):
                k = task_grid[out_idx[e]]
                res_idx[fill[k]] = task_grid[j]
                fill[k] += 1
    return level_arr, core_arr, res_ptr_arr, res_idx_arr
