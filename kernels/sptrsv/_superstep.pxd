# cython: language_level=3
"""What GrowLocal and ElasticDivide share in growing supersteps (sptrsv-elasticity §3): the start
state, a core's next vertex, the score of an attempt, α's growth, the next desired parallelism and
the commit of the best attempt.  Both kernels must agree here with their references (GrowLocalAutoCores.hpp and
GrowLocalSSP in GrowLocalMaxBsp.hpp), which differ only in the constants passed in.

All inline (a header, no module of its own): ``from _superstep cimport ...`` (setup.py puts the
kernel's folder on the include path).
"""
from libc.stdint cimport int32_t, int64_t

from _vec_heap cimport Vec, heap_pop


cdef inline Py_ssize_t start_schedule(Py_ssize_t n, const int32_t[::1] parent_ptr, int32_t *predec,
                                     int32_t[::1] core_out, int32_t[::1] step_out,
                                     int32_t *ready) noexcept nogil:
    """Before the first superstep: in-degrees from parent_ptr, every vertex unassigned (core and
    superstep -1), the sources in ``ready`` in ascending order; returns how many there are."""
    cdef Py_ssize_t i, r_len = 0
    for i in range(n):
        predec[i] = parent_ptr[i + 1] - parent_ptr[i]
        core_out[i] = -1
        step_out[i] = -1
        if predec[i] == 0:
            ready[r_len] = <int32_t> i
            r_len += 1
    return r_len


cdef inline bint next_vertex(Vec *heap, int shift, const int32_t *ready, Py_ssize_t r_len,
                             Py_ssize_t *pos, int32_t *v) noexcept nogil:
    """Rule II: *v ← the top of the core's own ready heap (its key >> shift), else the next vertex
    of the global ready run ``ready[*pos:r_len]`` (advancing *pos); False when both are empty."""
    if heap.size > 0:
        v[0] = <int32_t> (heap_pop(heap) >> shift)
        return True
    if pos[0] < r_len:
        v[0] = ready[pos[0]]
        pos[0] += 1
        return True
    return False


cdef inline bint score_attempt(int64_t total_weight, int64_t weight_limit, int64_t sync_cost,
                               double keep_ratio, double desired, bint last, double *best_score,
                               double *best_par, bint *cont) noexcept nogil:
    """Score an attempt of total weight Σ whose heaviest core has weight max; returns whether it
    becomes the best one so far.

    Its score Σ/(max + L) (0 when max + L = 0) is kept while > keep_ratio·best (GrowLocal 0.97,
    ElasticDivide 0.99), raising *best_score and setting *best_par to Σ/max; otherwise *cont is
    cleared (no larger α is tried).  Past max >= 4L the growth also stops when Σ/max falls below
    max(2, 0.8·desired).  While max <= L it always continues, unless `last` (the attempt assigns
    every remaining vertex): then that attempt is taken and the growth stops.
    """
    cdef bint accept = False
    cdef double score = (<double> total_weight / <double> (weight_limit + sync_cost)
                         if weight_limit + sync_cost > 0 else 0.0)
    cdef double par = <double> total_weight / <double> weight_limit if weight_limit > 0 else 0.0
    if score > keep_ratio * best_score[0]:
        if score > best_score[0]:
            best_score[0] = score
        best_par[0] = par
        accept = True
    else:
        cont[0] = False
    if weight_limit >= 4 * sync_cost:
        if par < max(2.0, 0.8 * desired):
            cont[0] = False
    if weight_limit <= sync_cost:
        cont[0] = True
        if last:
            accept = True
            cont[0] = False
    return accept


cdef inline int64_t grow_limit(int64_t limit) noexcept nogil:
    """The next attempt's α: α ← α + 1 + (α + 1)/2."""
    limit += 1
    return limit + limit // 2


cdef inline double next_desired(double desired, double best_par, int n_cores) noexcept nogil:
    """The parallelism the next superstep aims at: 0.3·desired + 0.6·(best attempt's Σ/max) + 0.1·P."""
    return 0.3 * desired + 0.6 * best_par + 0.1 * n_cores


cdef inline void restore_indegrees(const int32_t *asg, Py_ssize_t lo, Py_ssize_t hi,
                                   const int32_t[::1] child_ptr, const int32_t[::1] child_idx,
                                   int32_t *predec) noexcept nogil:
    """Undo the in-degree decrements of the vertices ``asg[lo:hi]``."""
    cdef Py_ssize_t i, k
    cdef int32_t v
    for i in range(lo, hi):
        v = asg[i]
        for k in range(child_ptr[v], child_ptr[v + 1]):
            predec[child_idx[k]] += 1


cdef inline void commit_attempt(const int32_t *asg, Py_ssize_t n_asg, const int32_t *end,
                                int32_t step, const int32_t[::1] child_ptr,
                                const int32_t[::1] child_idx, int32_t *predec,
                                int32_t[::1] core_out, int32_t[::1] step_out) noexcept nogil:
    """Assign the best attempt: ``asg[i]`` runs on the core p with end[p - 1] <= i < end[p]
    (end[-1] = 0) in superstep `step`; its children's in-degrees drop."""
    cdef Py_ssize_t i, k
    cdef int32_t v
    cdef int p = 0
    for i in range(n_asg):
        while i >= end[p]:
            p += 1
        v = asg[i]
        core_out[v] = p
        step_out[v] = step
        for k in range(child_ptr[v], child_ptr[v + 1]):
            predec[child_idx[k]] -= 1
