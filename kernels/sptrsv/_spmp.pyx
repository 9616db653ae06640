# cython: language_level=3
"""SpMP's level schedule and task graph (Park et al. 2014; sptrsv-elasticity §5.1, §6.5), parallel.

One call computes what SpMP's ``LevelSchedule::constructTaskGraph`` computes: the level sets of
G_A, each level cut into one task per thread by the cost of its rows, the point-to-point task
graph between threads and its approximate transitive reduction. The level sets are one O(nnz)
pass; the cuts, the task graph and the reduction run over OpenMP threads (``prange``), with
per-thread stamp arrays allocated once, so the parallel loops allocate nothing.

The graph is built from the child's side and never materialised whole: each task's in-edges
(one scan of its rows' parents, deduplicated by the stamps) are reduced as soon as they are
listed, thread by thread, each thread's tasks in level order. The reduction's tests, cheapest
first: a parent of the thread's previous task (the stamps the previous task left, read while
listing); a parent whose next task is also a parent (one stamp); only when a third thread exists
and the parent lies below the level under the task's, the children of the parent's rows, until
one's task is a parent. A parent task's level, thread and rows are one record. No list is
transposed and no out-edge list is built: on the 2.4M-nonzero audikw_1 stand-in at 128 threads
the 1.8M unreduced edges (``reduce=False``) cost one scan of L's rows.

Tasks are numbered as SpMP numbers them: thread by thread, each thread's non-empty tasks in
level order, so a thread's next task is ``id + 1``. Every edge runs between tasks of different
threads from a lower to a higher level.
"""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t, uint32_t

cnp.import_array()

cdef extern from *:
    void prefetch "__builtin_prefetch"(const void *) nogil


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


cdef Py_ssize_t parent_tasks(const int32_t *order, const int32_t *parent_ptr, const int32_t *parent_idx,
                             const int32_t *task_of_row, int32_t begin, int32_t end, int32_t lo, int32_t hi,
                             int32_t mark, int32_t prev_mark, int32_t *stamp, int32_t *out) noexcept nogil:
    """The distinct tasks outside ids [lo, hi) owning a parent of the rows order[begin:end], written
    to ``out``; returns how many. ``stamp`` (per thread) marks them with ``mark``; a task found
    holding ``prev_mark`` (a parent of the thread's previous task, marked just before) is written
    as ``~task`` (negative)."""
    cdef Py_ssize_t k, e, m = 0
    cdef int32_t row, other, was
    for k in range(begin, end):
        row = order[k]
        for e in range(parent_ptr[row], parent_ptr[row + 1]):
            other = task_of_row[parent_idx[e]]
            if <uint32_t>(other - lo) >= <uint32_t>(hi - lo):  # on another thread
                was = stamp[other]
                if was != mark:
                    stamp[other] = mark
                    out[m] = ~other if was == prev_mark else other
                    m += 1
    return m


cdef enum:
    INFO = 8  # int32 fields per task in ``info``: level, thread's first task, thread's end, first row, row end

cdef Py_ssize_t reduce_parents(int32_t *parents, Py_ssize_t n_parents, const int32_t *info,
                               const int32_t *order, const int32_t *child_ptr, const int32_t *child_idx,
                               const int32_t *task_of_row, bint third, int32_t mark,
                               const int32_t *stamp, int32_t level) noexcept nogil:
    """SpMP's approximate transitive reduction of one task's in-edges, in place; returns the kept.

    The edge a -> task is dropped when some k that a reaches in one step (a's next task on its
    thread, or a task of another thread owning a child of a's rows) is a parent of the task in one
    step (one of its other-thread parents, stamped ``mark``, or the task before it on its thread):
    a -> k -> task implies it. Tested cheapest first: a parent of the previous task (``~a`` in
    ``parents``: a -> previous); a's next task stamped; then a k of a third thread, only with
    ``third`` (more than two threads) and when a lies below the level under the task's (``level``,
    the task's: a k, a child of a and a parent of the task, lies strictly between): the children
    of a's rows are read until one's task is stamped. The cheap tests run over all parents
    first; the third-thread test then goes over those left, with the next ones' child lists
    prefetched (a task's rows lie anywhere in L). The kept parents are left in ascending
    order. Only the unreduced graph is read, so every task is handled independently. What is read
    of a parent a is its one 32-byte ``info`` record, not five arrays.
    """
    cdef Py_ssize_t a, e, r, kept = 0, q, n_left = 0, i
    cdef int32_t src, nxt, lo, hi, other, row, r_end
    cdef int32_t top = level - 1  # a k between a parent and the task lies at most here
    cdef const int32_t *ti
    cdef const int32_t *tn
    cdef bint implied
    for a in range(n_parents):
        src = parents[a]
        if src < 0:
            continue  # a -> the thread's previous task -> task
        ti = info + <Py_ssize_t>src * INFO
        nxt = src + 1
        if nxt < ti[2] and stamp[nxt] == mark:
            continue
        parents[n_left] = ~src if third and ti[0] < top else src
        n_left += 1
    for i in range(n_left):
        if i + 2 < n_left and parents[i + 2] < 0:
            tn = info + <Py_ssize_t>(~parents[i + 2]) * INFO
            for r in range(tn[3], min(tn[4], tn[3] + 4)):
                prefetch(&child_ptr[order[r]])
        if i + 1 < n_left and parents[i + 1] < 0:
            tn = info + <Py_ssize_t>(~parents[i + 1]) * INFO
            for r in range(tn[3], min(tn[4], tn[3] + 4)):
                row = order[r]
                prefetch(&child_idx[child_ptr[row]])
                prefetch(&child_idx[child_ptr[row] + 16])
        src = parents[i]
        implied = False
        if src < 0:
            src = ~src
            ti = info + <Py_ssize_t>src * INFO
            lo = ti[1]
            hi = ti[2]
            r = ti[3]
            r_end = ti[4]
            while r < r_end and not implied:
                row = order[r]
                for e in range(child_ptr[row], child_ptr[row + 1]):
                    other = task_of_row[child_idx[e]]
                    if (<uint32_t>(other - lo) >= <uint32_t>(hi - lo)) & (stamp[other] == mark):
                        implied = True
                        break
                r += 1
        if not implied:
            q = kept  # insertion into the sorted kept prefix (a few entries)
            while q > 0 and parents[q - 1] > src:
                parents[q] = parents[q - 1]
                q -= 1
            parents[q] = src
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
    thr_ptr_arr = np.zeros(P + 1, dtype=np.int32)  # thread p's tasks: ids thr_ptr[p]:thr_ptr[p + 1]
    cdef int32_t[::1] thr_ptr = thr_ptr_arr
    with nogil:
        for p in range(P):
            thr_ptr[p] = <int32_t>n_tasks
            for l in range(n_levels):
                start = cut[l * P + p - 1] if p > 0 else level_ptr[l]
                if cut[l * P + p] > start:
                    grid_task[l * P + p] = <int32_t>n_tasks
                    n_tasks += 1
        thr_ptr[P] = <int32_t>n_tasks
    task_begin_arr = np.empty(n_tasks, dtype=np.int32)
    task_end_arr = np.empty(n_tasks, dtype=np.int32)
    task_core_arr = np.empty(n_tasks, dtype=np.int32)
    task_grid_arr = np.empty(n_tasks, dtype=np.int32)
    task_level_arr = np.empty(n_tasks + 1, dtype=np.int32)
    task_of_row_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] task_begin = task_begin_arr
    cdef int32_t[::1] task_end = task_end_arr
    cdef int32_t[::1] task_core = task_core_arr
    cdef int32_t[::1] task_grid = task_grid_arr
    cdef int32_t[::1] task_level = task_level_arr
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
                    task_level[t] = <int32_t>l
                    for k in range(task_begin[t], task_end[t]):
                        task_of_row[order[k]] = t
                        core[order[k]] = p
    info_arr = np.zeros(<Py_ssize_t>max(n_tasks, 1) * INFO, dtype=np.int32)
    cdef int32_t[::1] info = info_arr
    cdef int32_t *inf = &info[0]
    with nogil:
        for t in range(n_tasks):
            inf[<Py_ssize_t>t * INFO] = task_level[t]
            inf[<Py_ssize_t>t * INFO + 1] = thr_ptr[task_core[t]]
            inf[<Py_ssize_t>t * INFO + 2] = thr_ptr[task_core[t] + 1]
            inf[<Py_ssize_t>t * INFO + 3] = task_begin[t]
            inf[<Py_ssize_t>t * INFO + 4] = task_end[t]
    # the task graph, built from the child's side: a task's unreduced in-edges are the distinct
    # other-thread tasks owning a parent of its rows (one scan of its rows' parents), written to
    # a buffer sized by its rows' parent counts; no edge list is transposed. They are built and
    # reduced thread by thread (the threads spread over OpenMP threads, each with its stamp
    # array), each thread's tasks in level order, so the stamps a task leaves tell its successor
    # which of its parents also reach the previous task
    cdef Py_ssize_t m
    cdef int32_t *st
    in_ptr_arr = np.empty(n_tasks + 1, dtype=np.int64)
    cdef int64_t[::1] in_ptr = in_ptr_arr
    with nogil:
        in_ptr[0] = 0
        for t in range(n_tasks):
            in_ptr[t + 1] = in_ptr[t]
            for k in range(task_begin[t], task_end[t]):
                in_ptr[t + 1] += parent_ptr[order[k] + 1] - parent_ptr[order[k]]
    in_idx_arr = np.empty(in_ptr[n_tasks] + 1, dtype=np.int32)
    in_len_arr = np.zeros(n_tasks + 1, dtype=np.int32)
    stamp_arr = np.full((threads, max(n_tasks, 1)), -1, dtype=np.int32)
    cdef int32_t[::1] in_idx = in_idx_arr
    cdef int32_t[::1] in_len = in_len_arr
    cdef int32_t[:, ::1] stamp = stamp_arr
    cdef int32_t *tor = &task_of_row[0] if n > 0 else NULL
    cdef const int32_t *pi = &parent_idx[0] if parent_idx.shape[0] > 0 else NULL
    cdef const int32_t *ci = &child_idx[0] if child_idx.shape[0] > 0 else NULL
    cdef int32_t *stamp0 = &stamp[0, 0]
    cdef Py_ssize_t width = stamp.shape[1]
    cdef int32_t *ii = &in_idx[0]
    cdef int32_t nt = <int32_t>n_tasks
    with nogil:
        for p in prange(P, num_threads=threads, schedule="dynamic", chunksize=1):
            st = stamp0 + threadid() * width
            for j in range(thr_ptr[p], thr_ptr[p + 1]):
                # the next tasks' rows lie anywhere in L: their row pointers two tasks ahead,
                # their parent lists one task ahead (with L out of cache, as in a sweep, this and
                # the reduction's prefetch take 0.78-1.05x of the time without at 128 cores)
                if j + 2 < thr_ptr[p + 1]:
                    for k in range(task_begin[j + 2], task_end[j + 2]):
                        prefetch(&pp[ordp[k]])
                if j + 1 < thr_ptr[p + 1]:
                    for k in range(task_begin[j + 1], task_end[j + 1]):
                        prefetch(&pi[pp[ordp[k]]])
                        prefetch(&pi[pp[ordp[k]] + 16])
                        prefetch(&pi[pp[ordp[k]] + 32])
                m = parent_tasks(ordp, pp, pi, tor, task_begin[j], task_end[j], thr_ptr[p], thr_ptr[p + 1],
                                 <int32_t>(nt + j), <int32_t>(nt + j - 1) if reduce and j > thr_ptr[p] else -2,
                                 st, ii + in_ptr[j])
                if reduce:
                    m = reduce_parents(ii + in_ptr[j], m, inf, ordp, cp, ci, tor, P > 2, <int32_t>(nt + j), st,
                                       inf[<Py_ssize_t>j * INFO])
                in_len[j] = <int32_t>m
    # parent lists of the grid tasks
    cdef Py_ssize_t n_grid = <Py_ssize_t>max(n_levels, 1) * P
    res_ptr_arr = np.zeros(n_grid + 1, dtype=np.int32)
    cdef int32_t[::1] res_ptr = res_ptr_arr
    with nogil:
        for j in range(n_tasks):
            res_ptr[task_grid[j] + 1] = in_len[j]
        for k in range(n_grid):
            res_ptr[k + 1] += res_ptr[k]
    res_idx_arr = np.empty(res_ptr[n_grid], dtype=np.int32)
    cdef int32_t[::1] res_idx = res_idx_arr
    with nogil:
        for j in prange(n_tasks, num_threads=threads, schedule="static"):
            for e in range(in_len[j]):
                res_idx[res_ptr[task_grid[j]] + e] = task_grid[in_idx[in_ptr[j] + e]]
    return level_arr, core_arr, res_ptr_arr, res_idx_arr
