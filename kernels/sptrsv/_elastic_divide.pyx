# cython: language_level=3
"""Hot loop of the ElasticDivide (SSP) scheduler (sptrsv-elasticity §3, Alg. 3.1).

Follows OneStopParallel (branch ``ssp_kernel``) ``GrowLocalSSP`` in ``GrowLocalMaxBsp.hpp`` and
gives the same (core, superstep) for every vertex (checked against the C++ built from source).
Everything runs without the GIL on C arrays (:mod:`._vec_heap`), with the steps of a superstep
GrowLocal shares (:mod:`._superstep`).  Heap keys pack ``(vertex << 32) | expiry``, so the heap
order is vertex id first, as ``std::greater<std::pair<vertex, step>>`` in the reference.  As in
GrowLocal, core 0 continues from where the previous attempt stopped instead of restarting; the
global ready set is a sorted array read from the front.
"""
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, qsort
from libc.string cimport memcpy
from libc.float cimport DBL_MAX

from _vec_heap cimport (
    Vec, check_arguments, cmp_int32, heap_push, heapify, ints_new, merge_sorted, vec_copy, vec_extend, vec_push, vec_swap, vecs_free, vecs_new)
from _superstep cimport (
    commit_attempt, grow_limit, next_desired, next_vertex, restore_indegrees, score_attempt,
    start_schedule)


def elastic_divide(const int32_t[::1] parent_ptr, const int32_t[::1] parent_idx,
                   const int32_t[::1] child_ptr, const int32_t[::1] child_idx,
                   const int64_t[::1] weights, int n_cores, int staleness, int64_t sync_cost,
                   int64_t min_superstep_size, int32_t[::1] core_out, int32_t[::1] step_out):
    """ElasticDivide SSP schedule (Alg. 3.1; GrowLocalSSP in GrowLocalMaxBsp.hpp); returns the count.

    Rule I: a vertex is ready on core p at max(s, σ(w) for same-core parents, σ(w) + S for the
    others).  Rule II: own-core heap first, then the smallest id of the global ready run.
    Locally ready vertices carry an expiry σ + S after which they join the global pool; vertices
    that become ready at s + 1 (s + S) wait in a ring of S per-core lists (global lists).
    """
    cdef Py_ssize_t n = parent_ptr.shape[0] - 1
    check_arguments(n, child_ptr, weights, core_out, step_out, n_cores, sync_cost, min_superstep_size)
    if staleness < 1:
        raise ValueError(f"staleness must be >= 1, got {staleness}")
    if parent_idx.shape[0] != parent_ptr[n] or child_idx.shape[0] != child_ptr[n]:
        raise ValueError("parent_idx/child_idx lengths must match parent_ptr[n]/child_ptr[n]")
    cdef int P = n_cores, S = staleness
    cdef int32_t *predec = NULL
    cdef int32_t *cr = NULL          # globally ready now, ascending
    cdef int32_t *cr_tmp = NULL
    cdef int32_t *sort_buf = NULL
    cdef int32_t *asg = NULL
    cdef int32_t *best_asg = NULL
    cdef int32_t *end = NULL
    cdef int32_t *best_end = NULL
    cdef int32_t *swap_p
    cdef Vec *future = NULL          # [S]: global ready at a later step (vertex ids)
    cdef Vec *best_future = NULL     # [1]
    cdef Vec *proc_ready = NULL      # [S * P]: (v << 32 | expiry), ready on p at a step
    cdef Vec *additions = NULL       # [S * P]: this attempt's additions to proc_ready
    cdef Vec *best_additions = NULL  # [S * P]
    cdef Vec *heaps = NULL           # [P]: this attempt's own-core heaps
    cdef Vec *best_heaps = NULL      # [P]
    cdef Vec *fut
    cdef Vec *nf
    cdef bint ok = True
    cdef Py_ssize_t i, k, kk, cr_len = 0, it, best_it = 0, n_asg, best_n_asg = 0
    cdef Py_ssize_t total_assigned = 0, max_usage, usage_next, len_next, m0, it0, fut0
    cdef int64_t limit, weight_limit, total_weight, cur_weight, w0
    cdef int64_t key, earliest, cons, expiry
    cdef int32_t v, c, par_v
    cdef int p, slot, j, rs, nxt
    cdef int32_t step = 0
    cdef double desired = P, best_score, best_par
    cdef bint cont, accept, chance
    try:
        predec = ints_new(n)
        cr = ints_new(n)
        cr_tmp = ints_new(n)
        sort_buf = ints_new(n)
        asg = ints_new(n)
        best_asg = ints_new(n)
        end = ints_new(P)
        best_end = ints_new(P)
        future = vecs_new(S)
        best_future = vecs_new(1)
        proc_ready = vecs_new(S * P)
        additions = vecs_new(S * P)
        best_additions = vecs_new(S * P)
        heaps = vecs_new(P)
        best_heaps = vecs_new(P)
        with nogil:
            cr_len = start_schedule(n, parent_ptr, predec, core_out, step_out, cr)
            while total_assigned < n and ok:
                rs = step % S
                fut = &future[rs]
                if S == 1:
                    usage_next = cr_len
                else:
                    len_next = future[(step + 1) % S].size
                    usage_next = (cr_len + len_next + 1) // 2
                max_usage = <Py_ssize_t> (<double> min_superstep_size * desired)
                if usage_next > max_usage:
                    max_usage = usage_next
                for p in range(P):
                    heapify(&proc_ready[rs * P + p])
                limit = min_superstep_size
                best_score = -DBL_MAX
                best_par = 0.0
                cont = True
                # core 0's picks do not depend on α except where they stop, so its state (heap,
                # pool position, lists, assignments) carries over from attempt to attempt; only
                # cores 1..P-1 are undone and redone (same result as restarting each attempt)
                ok = vec_copy(&heaps[0], &proc_ready[rs * P]) and ok
                for k in range(S * P):
                    additions[k].size = 0
                fut.size = 0
                fut0 = 0
                m0 = 0
                n_asg = 0
                it0 = 0
                w0 = 0
                while cont and ok:
                    # undo cores 1..P-1 of the previous attempt (π, σ are overwritten later)
                    restore_indegrees(asg, m0, n_asg, child_ptr, child_idx, predec)
                    n_asg = m0
                    fut.size = fut0
                    for slot in range(S):
                        for p in range(1, P):
                            additions[slot * P + p].size = 0
                    for p in range(1, P):
                        ok = vec_copy(&heaps[p], &proc_ready[rs * P + p]) and ok
                    it = it0
                    weight_limit = 0
                    total_weight = 0
                    for p in range(P):
                        cur_weight = w0 if p == 0 else 0
                        while (m0 < limit) if p == 0 else (cur_weight < weight_limit):
                            if not next_vertex(&heaps[p], 32, cr, cr_len, &it, &v):
                                break
                            asg[n_asg] = v
                            n_asg += 1
                            if p == 0:
                                m0 += 1
                            core_out[v] = p
                            step_out[v] = step
                            cur_weight += weights[v]
                            for k in range(child_ptr[v], child_ptr[v + 1]):
                                c = child_idx[k]
                                predec[c] -= 1
                                if predec[c] != 0:
                                    continue
                                # Rule I: earliest superstep at which c may run on p
                                earliest = step
                                for kk in range(parent_ptr[c], parent_ptr[c + 1]):
                                    par_v = parent_idx[kk]
                                    if core_out[par_v] == p:
                                        cons = step
                                    else:
                                        cons = <int64_t> step_out[par_v] + S
                                    if cons > earliest:
                                        earliest = cons
                                expiry = <int64_t> step + S
                                key = ((<int64_t> c) << 32) | expiry
                                if earliest <= step:
                                    ok = heap_push(&heaps[p], key) and ok
                                elif earliest < step + S:
                                    ok = vec_push(&additions[(earliest % S) * P + p], key) and ok
                                else:
                                    ok = vec_push(fut, c) and ok
                        end[p] = <int32_t> n_asg
                        if p == 0:
                            w0 = cur_weight
                            it0 = it
                            fut0 = fut.size
                            weight_limit = cur_weight
                        elif cur_weight > weight_limit:
                            weight_limit = cur_weight
                        total_weight += cur_weight
                    # (with L = 0 an empty attempt is 0/0 in the reference; here it scores 0)
                    accept = score_attempt(total_weight, weight_limit, sync_cost, 0.99, desired,
                                           total_assigned + n_asg == n, &best_score, &best_par, &cont)
                    if it == cr_len:
                        cont = False
                    if cont and it > max_usage:
                        # not enough assignable vertices left for the next superstep, unless
                        # the end is near and nothing waits for later supersteps
                        chance = total_assigned + n_asg >= (n // 4) * 3
                        for j in range(S):
                            if future[j].size > 0:
                                chance = False
                        if chance:
                            for j in range(1, S):
                                slot = (j + step) % S
                                for p in range(P):
                                    if (proc_ready[slot * P + p].size > 0
                                            or additions[slot * P + p].size > 0):
                                        chance = False
                        if not chance:
                            cont = False
                    if accept:
                        # core 0's lists keep growing: copy them; cores 1..P-1 are rebuilt: swap
                        ok = vec_copy(best_future, fut) and ok
                        for k in range(S * P):
                            if k % P == 0:
                                ok = vec_copy(&best_additions[k], &additions[k]) and ok
                            else:
                                vec_swap(&best_additions[k], &additions[k])
                        ok = vec_copy(&best_heaps[0], &heaps[0]) and ok
                        for p in range(1, P):
                            vec_swap(&best_heaps[p], &heaps[p])
                        memcpy(best_asg, asg, n_asg * sizeof(int32_t))
                        memcpy(best_end, end, P * sizeof(int32_t))
                        best_n_asg = n_asg
                        best_it = it
                    limit = grow_limit(limit)
                # undo the last attempt's in-degree decrements completely
                restore_indegrees(asg, 0, n_asg, child_ptr, child_idx, predec)
                if not ok:
                    break
                # apply the best attempt
                vec_swap(fut, best_future)
                for p in range(P):
                    proc_ready[rs * P + p].size = 0
                nxt = (step + 1) % S
                for p in range(P):
                    for i in range(best_heaps[p].size):
                        key = best_heaps[p].data[i]
                        if (key & <int64_t> 0xFFFFFFFF) <= <int64_t> step + 1:
                            ok = vec_push(&future[nxt], key >> 32) and ok
                        else:
                            ok = vec_push(&proc_ready[nxt * P + p], key) and ok
                for k in range(S * P):
                    ok = vec_extend(&proc_ready[k], &best_additions[k]) and ok
                commit_attempt(best_asg, best_n_asg, best_end, step, child_ptr, child_idx, predec,
                               core_out, step_out)
                total_assigned += best_n_asg
                # merge the vertices that become globally ready at step + 1
                nf = &future[nxt]
                for i in range(nf.size):
                    sort_buf[i] = <int32_t> nf.data[i]
                qsort(sort_buf, nf.size, sizeof(int32_t), cmp_int32)
                cr_len = merge_sorted(cr + best_it, cr_len - best_it, sort_buf, nf.size, cr_tmp)
                swap_p = cr; cr = cr_tmp; cr_tmp = swap_p
                nf.size = 0
                step += 1
                desired = next_desired(desired, best_par, P)
        if not ok:
            raise MemoryError("elastic_divide: out of memory growing a ready list")
        return int(step)
    finally:
        free(predec); free(cr); free(cr_tmp); free(sort_buf); free(asg); free(best_asg)
        free(end); free(best_end)
        vecs_free(future, S)
        vecs_free(best_future, 1)
        vecs_free(proc_ready, S * P)
        vecs_free(additions, S * P)
        vecs_free(best_additions, S * P)
        vecs_free(heaps, P)
        vecs_free(best_heaps, P)
