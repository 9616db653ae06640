# cython: language_level=3
"""Hot loop of the GrowLocal (BSP) scheduler (sptrsv-elasticity §3).

Follows OneStopParallel (branch ``ssp_kernel``) ``GrowLocalAutoCores.hpp`` and gives the same
(core, superstep) for every vertex (checked against the C++ built from source).  Everything runs
without the GIL on C arrays: growable int64 vectors used as binary min-heaps or plain lists, and
int32 scratch arrays allocated once per call (:mod:`._vec_heap`); the steps of a superstep it
shares with ElasticDivide (next vertex, attempt score, commit) are in :mod:`._superstep`.

Speed-ups over the reference that do not change the result: core 0's picks in an attempt with
limit α are the first picks of any attempt with a larger α, so core 0 continues from where the
previous attempt stopped instead of restarting; only cores 1..P-1 are redone.  Their in-degree
and exclusivity-tag changes live in a stamped overlay (discarding them is O(1)), and with two
cores core 1 also resumes its previous run when core 0's new picks took nothing from the global
pool and touched no vertex core 1 had seen (a rerun would repeat it exactly).  The global ready
set is a sorted array read from the front (the reference's heap is only ever popped).
"""
from libc.stdint cimport int32_t, int64_t, INT32_MAX
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy

from _vec_heap cimport (
    Vec, check_arguments, cmp_int32, heap_push, ints_new, merge_sorted, vecs_free, vecs_new)
from _superstep cimport (
    commit_attempt, grow_limit, next_desired, next_vertex, score_attempt, start_schedule)


ctypedef struct Overlay:
    # in-degree / exclusivity tag of a vertex as seen by cores 1..P-1 in attempt `stamp`; the
    # base arrays hold core 0's view, so discarding an attempt of cores 1..P-1 is O(1)
    int32_t stamp
    int32_t pred
    int32_t tag



cdef Overlay *overlay_new(Py_ssize_t count):
    cdef Overlay *p = <Overlay *> malloc(max(count, 1) * sizeof(Overlay))
    cdef Py_ssize_t i
    if p == NULL:
        raise MemoryError()
    for i in range(count):
        p[i].stamp = -1
    return p


def grow_local(const int32_t[::1] parent_ptr, const int32_t[::1] child_ptr,
               const int32_t[::1] child_idx, const int64_t[::1] weights, int n_cores,
               int64_t sync_cost, int64_t min_superstep_size,
               int32_t[::1] core_out, int32_t[::1] step_out):
    """GrowLocal BSP schedule (GrowLocalAutoCores.hpp): fills core_out/step_out, returns the count.

    Each superstep is grown by attempts with limit α = min_superstep_size, α ← α + 1 + (α + 1)/2:
    core 0 takes up to α vertices, cores 1..P-1 fill to the running maximum weight; a core takes
    from its own ready heap (children whose parents in this superstep are all on it), then the
    smallest id of the global ready set.  Attempts are kept while Σ/(max + L) > 0.97·best.
    """
    cdef Py_ssize_t n = parent_ptr.shape[0] - 1
    check_arguments(n, child_ptr, weights, core_out, step_out, n_cores, sync_cost, min_superstep_size)
    cdef int P = n_cores
    cdef int32_t *predec = NULL
    cdef int32_t *tag = NULL
    cdef Overlay *ov = NULL
    cdef int32_t stamp = -1
    cdef int32_t *ready = NULL
    cdef int32_t *ready_tmp = NULL
    cdef int32_t *asg = NULL
    cdef int32_t *best_asg = NULL
    cdef int32_t *newr = NULL        # core 0's newly ready vertices (asg: its assignments)
    cdef int32_t *asg_r = NULL       # assignments of cores 1..P-1 in this attempt
    cdef int32_t *newr_r = NULL      # ... and the vertices they made ready
    cdef int32_t *best_newr = NULL
    cdef int32_t *end = NULL
    cdef int32_t *best_end = NULL
    cdef int32_t *swap_p
    cdef Vec *heaps = NULL
    cdef bint ok = True
    cdef Py_ssize_t i, k, r_len = 0, pos, best_pos = 0, n_asg, best_n_asg = 0
    cdef Py_ssize_t best_n_new = 0, total_assigned = 0, kept, m0, n_new0, pos0, pos1 = 0
    cdef Py_ssize_t n_r, n_new_r
    cdef int64_t limit, weight_limit, total_weight, cur_weight, w0, w1 = 0
    cdef int32_t v, c, tv
    cdef Overlay *o
    cdef int p
    cdef int32_t step = 0
    cdef double desired = P, best_score, best_par
    cdef bint cont, accept, first, resume, conflict
    cdef bint track = n_cores == 2  # core 1 resumes only with two cores (see below)
    try:
        predec = ints_new(n)
        tag = ints_new(n)
        ov = overlay_new(n)
        ready = ints_new(n)
        ready_tmp = ints_new(n)
        asg = ints_new(n)
        best_asg = ints_new(n)
        newr = ints_new(n)
        asg_r = ints_new(n)
        newr_r = ints_new(n)
        best_newr = ints_new(n)
        end = ints_new(P)
        best_end = ints_new(P)
        heaps = vecs_new(P)
        with nogil:
            r_len = start_schedule(n, parent_ptr, predec, core_out, step_out, ready)
            for i in range(n):
                tag[i] = -1
            while total_assigned < n and ok:
                limit = min_superstep_size
                best_score = 0.0
                best_par = 0.0
                cont = True
                # core 0's picks do not depend on α except where they stop, so its state (heap,
                # pool position, assignments, tags) carries over from attempt to attempt; only
                # cores 1..P-1 are undone and redone (same result as restarting each attempt)
                heaps[0].size = 0
                m0 = 0
                n_new0 = 0
                pos0 = 0
                w0 = 0
                n_r = 0
                n_new_r = 0
                first = True
                while cont and ok:
                    # core 0: continue up to `limit` vertices
                    pos = pos0
                    conflict = False
                    while m0 < limit:
                        if not next_vertex(&heaps[0], 0, ready, r_len, &pos, &v):
                            break
                        asg[m0] = v
                        m0 += 1
                        tag[v] = 0
                        w0 += weights[v]
                        for k in range(child_ptr[v], child_ptr[v + 1]):
                            c = child_idx[k]
                            if track and ov[c].stamp == stamp:
                                conflict = True  # core 1 of the previous attempt saw c
                            if tag[c] == -1:
                                tag[c] = 0
                            predec[c] -= 1
                            if predec[c] == 0:
                                newr[n_new0] = c
                                n_new0 += 1
                                if tag[c] == 0:
                                    ok = heap_push(&heaps[0], c) and ok
                    # with two cores, core 1 resumes its previous run when core 0's new picks
                    # took nothing from the global pool and touched nothing core 1 had seen:
                    # a rerun would repeat it exactly
                    resume = track and not first and pos == pos0 and not conflict
                    pos0 = pos
                    first = False
                    weight_limit = w0
                    total_weight = w0
                    # cores 1..P-1: fill up to the running maximum weight (in the overlay)
                    if not resume:
                        if stamp == INT32_MAX:
                            for i in range(n):
                                ov[i].stamp = -1
                            stamp = 0
                        else:
                            stamp += 1
                        n_r = 0
                        n_new_r = 0
                    for p in range(1, P):
                        if resume:
                            cur_weight = w1
                            pos = pos1
                        else:
                            heaps[p].size = 0
                            cur_weight = 0
                        while cur_weight < weight_limit:
                            if not next_vertex(&heaps[p], 0, ready, r_len, &pos, &v):
                                break
                            asg_r[n_r] = v
                            n_r += 1
                            cur_weight += weights[v]
                            for k in range(child_ptr[v], child_ptr[v + 1]):
                                c = child_idx[k]
                                o = &ov[c]
                                if o.stamp != stamp:
                                    o.stamp = stamp
                                    o.pred = predec[c]
                                    o.tag = tag[c]
                                tv = o.tag
                                if tv == -1:
                                    o.tag = p
                                elif tv != p:
                                    o.tag = P
                                o.pred -= 1
                                if o.pred == 0:
                                    newr_r[n_new_r] = c
                                    n_new_r += 1
                                    if o.tag == p:
                                        ok = heap_push(&heaps[p], c) and ok
                        end[p] = <int32_t> (m0 + n_r)
                        w1 = cur_weight
                        pos1 = pos
                        if cur_weight > weight_limit:
                            weight_limit = cur_weight
                        total_weight += cur_weight
                    n_asg = m0 + n_r
                    end[0] = <int32_t> m0
                    accept = score_attempt(total_weight, weight_limit, sync_cost, 0.97, desired,
                                           total_assigned + n_asg == n, &best_score, &best_par, &cont)
                    if total_assigned + n_asg == n:
                        cont = False
                    if accept:
                        memcpy(best_asg, asg, m0 * sizeof(int32_t))
                        memcpy(best_asg + m0, asg_r, n_r * sizeof(int32_t))
                        memcpy(best_newr, newr, n_new0 * sizeof(int32_t))
                        memcpy(best_newr + n_new0, newr_r, n_new_r * sizeof(int32_t))
                        memcpy(best_end, end, P * sizeof(int32_t))
                        best_n_asg = n_asg
                        best_n_new = n_new0 + n_new_r
                        best_pos = pos
                    limit = grow_limit(limit)
                # undo core 0 (the overlay of cores 1..P-1 expires with its stamp)
                for i in range(m0):
                    v = asg[i]
                    tag[v] = -1
                    for k in range(child_ptr[v], child_ptr[v + 1]):
                        c = child_idx[k]
                        predec[c] += 1
                        tag[c] = -1
                if not ok:
                    break
                # apply the best attempt
                commit_attempt(best_asg, best_n_asg, best_end, step, child_ptr, child_idx, predec,
                               core_out, step_out)
                total_assigned += best_n_asg
                # ready ← (ready not taken from the global pool) ∪ (newly ready not assigned)
                kept = 0
                for i in range(best_n_new):
                    v = best_newr[i]
                    if step_out[v] < 0:
                        best_newr[kept] = v
                        kept += 1
                qsort(best_newr, kept, sizeof(int32_t), cmp_int32)
                r_len = merge_sorted(ready + best_pos, r_len - best_pos, best_newr, kept, ready_tmp)
                swap_p = ready; ready = ready_tmp; ready_tmp = swap_p
                desired = next_desired(desired, best_par, P)
                step += 1
        if not ok:
            raise MemoryError("grow_local: out of memory growing a ready heap")
        return int(step)
    finally:
        free(predec); free(tag); free(ov); free(ready); free(ready_tmp); free(asg); free(best_asg)
        free(newr); free(asg_r); free(newr_r); free(best_newr); free(end); free(best_end)
        vecs_free(heaps, P)
