# cython: language_level=3
"""Task-graph loops for point-to-point execution (SpMP, Park et al. 2014): reduction and coverage.

Tasks are the blocks t = s*P + p of a schedule (superstep s, core p); core p runs its tasks in
order of s, so a finished task (s, q) implies every (s', q) with s' <= s is finished ("program
order").  Parent lists are CSR (``ptr``/``idx``, int32) over tasks; every parent has a smaller s
and another core.
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()


def reduce_parents(const int32_t[::1] ptr, const int32_t[::1] idx, int n_steps, int n_cores):
    """Drop task-graph edges implied by others; returns the reduced ``(ptr, idx)``.

    Input: for every task, its parents with at most one parent per core (the latest one), any
    order.  Tasks are handled in increasing id (= increasing step).  For task t on core p a parent
    a = (l, q) (step l, core q) is dropped when

    1. core p already knows (q, l) is done: some earlier task of p had a parent (q, l' >= l), or a
       kept parent of an earlier task of p had one (``known[p][q] >= l``); or
    2. another kept parent c of t has a kept parent (q, l' >= l) (a 2-hop path c <- (q, l') that
       with program order on q implies a, SpMP's "another parent of i succeeds j").

    Both rules only use facts that hold before t starts, so every dropped edge stays implied.
    """
    cdef Py_ssize_t n_tasks = <Py_ssize_t>n_steps * n_cores
    if ptr.shape[0] != n_tasks + 1:
        raise ValueError(f"ptr must have n_steps*n_cores+1 = {n_tasks + 1} entries")
    out_ptr = np.zeros(n_tasks + 1, dtype=np.int32)
    out_idx = np.empty(idx.shape[0], dtype=np.int32)
    known_arr = np.full((n_cores, n_cores), -1, dtype=np.int32)
    cover_arr = np.full(n_cores, -1, dtype=np.int32)
    cdef int32_t[::1] optr = out_ptr
    cdef int32_t[::1] oidx = out_idx
    cdef int32_t[:, ::1] known = known_arr
    cdef int32_t[::1] cover = cover_arr
    cdef Py_ssize_t t, k, k2, m = 0
    cdef int32_t a, c, p, q, l, first
    with nogil:
        for t in range(n_tasks):
            p = <int32_t>(t % n_cores)
            first = <int32_t>m
            # rule 1: what p knows already
            for k in range(ptr[t], ptr[t + 1]):
                a = idx[k]
                q = a % n_cores
                l = a // n_cores
                if known[p, q] < l:
                    oidx[m] = a
                    m += 1
            # rule 2: 2-hop cover through the other kept parents
            for k in range(first, m):
                c = oidx[k]
                for k2 in range(optr[c], optr[c + 1]):
                    a = oidx[k2]
                    q = a % n_cores
                    if cover[q] < a // n_cores:
                        cover[q] = a // n_cores
            k2 = first
            for k in range(first, m):
                a = oidx[k]
                q = a % n_cores
                l = a // n_cores
                if cover[q] < l:
                    oidx[k2] = a
                    k2 += 1
            m = k2
            # everything t waited for (directly or by the cover) is done for p's later tasks
            for k in range(ptr[t], ptr[t + 1]):
                a = idx[k]
                q = a % n_cores
                if known[p, q] < a // n_cores:
                    known[p, q] = a // n_cores
            for q in range(n_cores):
                if known[p, q] < cover[q]:
                    known[p, q] = cover[q]
                cover[q] = -1
            optr[t + 1] = <int32_t>m
    return out_ptr, out_idx[:m].copy()


def known_done(const int32_t[::1] ptr, const int32_t[::1] idx, int n_steps, int n_cores):
    """Exact reachability: ``K[t, q]`` = largest step s' such that task (s', q) is finished
    whenever task t starts (-1: none), through parent edges and program order.  (T, P) int32."""
    cdef Py_ssize_t n_tasks = <Py_ssize_t>n_steps * n_cores
    if ptr.shape[0] != n_tasks + 1:
        raise ValueError(f"ptr must have n_steps*n_cores+1 = {n_tasks + 1} entries")
    K_arr = np.full((max(n_tasks, 1), n_cores), -1, dtype=np.int32)
    cdef int32_t[:, ::1] K = K_arr
    cdef Py_ssize_t t, k, prev
    cdef int32_t a, p, q, s
    for t in range(n_tasks):
        for k in range(ptr[t], ptr[t + 1]):
            a = idx[k]
            if a < 0 or a // n_cores >= t // n_cores:
                raise ValueError(f"task {t} has parent {a}, which is not a task of an earlier step")
    with nogil:
        for t in range(n_tasks):
            p = <int32_t>(t % n_cores)
            s = <int32_t>(t // n_cores)
            if s > 0:
                prev = t - n_cores
                for q in range(n_cores):
                    K[t, q] = K[prev, q]
                K[t, p] = s - 1
            for k in range(ptr[t], ptr[t + 1]):
                a = idx[k]
                for q in range(n_cores):
                    if K[t, q] < K[a, q]:
                        K[t, q] = K[a, q]
                q = a % n_cores
                if K[t, q] < a // n_cores:
                    K[t, q] = a // n_cores
    return K_arr[:n_tasks]
