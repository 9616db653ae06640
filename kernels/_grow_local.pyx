# cython: language_level=3
"""Hot loops of the GrowLocal (BSP) and ElasticDivide (SSP) schedulers (sptrsv-elasticity §3).

Both follow OneStopParallel (branch ``ssp_kernel``): ``GrowLocalAutoCores.hpp`` and
``GrowLocalSSP`` in ``GrowLocalMaxBsp.hpp``, and give the same (core, superstep) for every
vertex (checked against the C++ built from source).  Everything runs without the GIL on C arrays:
growable int64 vectors (``Vec``) used as binary min-heaps or plain lists, and int32 scratch
arrays allocated once per call.  Heap keys of ElasticDivide pack ``(vertex << 32) | expiry``, so
the heap order is vertex id first, as ``std::greater<std::pair<vertex, step>>`` in the reference.

Speed-ups over the reference that do not change the result: core 0's picks in an attempt with
limit α are the first picks of any attempt with a larger α, so core 0 continues from where the
previous attempt stopped instead of restarting; only cores 1..P-1 are redone.  In GrowLocal their
in-degree and exclusivity-tag changes live in a stamped overlay (discarding them is O(1)), and with
two cores core 1 also resumes its previous run when core 0's new picks took nothing from the
global pool and touched no vertex core 1 had seen (a rerun would repeat it exactly).  The global
ready set is a sorted array read from the front (the reference's heap is only ever popped).
"""
from libc.stdint cimport int32_t, int64_t, INT32_MAX
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy
from libc.float cimport DBL_MAX


ctypedef struct Vec:
    int64_t *data
    Py_ssize_t size
    Py_ssize_t cap


ctypedef struct Overlay:
    # in-degree / exclusivity tag of a vertex as seen by cores 1..P-1 in attempt `stamp`; the
    # base arrays hold core 0's view, so discarding an attempt of cores 1..P-1 is O(1)
    int32_t stamp
    int32_t pred
    int32_t tag


cdef inline bint vec_reserve(Vec *v, Py_ssize_t want) noexcept nogil:
    """Make room for `want` entries; False when realloc fails (the vector is left as it was)."""
    cdef Py_ssize_t cap
    cdef int64_t *p
    if want <= v.cap:
        return True
    cap = v.cap * 2 if v.cap > 0 else 16
    if cap < want:
        cap = want
    p = <int64_t *> realloc(v.data, cap * sizeof(int64_t))
    if p == NULL:
        return False
    v.data = p
    v.cap = cap
    return True


cdef inline bint vec_push(Vec *v, int64_t x) noexcept nogil:
    if v.size == v.cap and not vec_reserve(v, v.size + 1):
        return False
    v.data[v.size] = x
    v.size += 1
    return True


cdef inline bint vec_extend(Vec *dst, const Vec *src) noexcept nogil:
    if src.size == 0:
        return True
    if not vec_reserve(dst, dst.size + src.size):
        return False
    memcpy(dst.data + dst.size, src.data, src.size * sizeof(int64_t))
    dst.size += src.size
    return True


cdef inline bint vec_copy(Vec *dst, const Vec *src) noexcept nogil:
    dst.size = 0
    return vec_extend(dst, src)


cdef inline void vec_swap(Vec *a, Vec *b) noexcept nogil:
    cdef Vec t = a[0]
    a[0] = b[0]
    b[0] = t


cdef inline void sift_down(int64_t *h, Py_ssize_t size, Py_ssize_t i) noexcept nogil:
    cdef int64_t x = h[i]
    cdef Py_ssize_t c
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and h[c + 1] < h[c]:
            c += 1
        if h[c] >= x:
            break
        h[i] = h[c]
        i = c
    h[i] = x


cdef inline bint heap_push(Vec *v, int64_t x) noexcept nogil:
    """Min-heap push."""
    cdef Py_ssize_t i, parent
    cdef int64_t *h
    if not vec_push(v, x):
        return False
    h = v.data
    i = v.size - 1
    while i > 0:
        parent = (i - 1) >> 1
        if h[parent] <= x:
            break
        h[i] = h[parent]
        i = parent
    h[i] = x
    return True


cdef inline int64_t heap_pop(Vec *v) noexcept nogil:
    """Min-heap pop (the heap must not be empty)."""
    cdef int64_t top = v.data[0]
    v.size -= 1
    if v.size > 0:
        v.data[0] = v.data[v.size]
        sift_down(v.data, v.size, 0)
    return top


cdef inline void heapify(Vec *v) noexcept nogil:
    cdef Py_ssize_t i
    if v.size < 2:
        return
    i = (v.size - 2) >> 1
    while i >= 0:
        sift_down(v.data, v.size, i)
        i -= 1


cdef int _cmp_i32(const void *a, const void *b) noexcept nogil:
    cdef int32_t x = (<const int32_t *> a)[0]
    cdef int32_t y = (<const int32_t *> b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t merge_sorted(const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb,
                             int32_t *out) noexcept nogil:
    """Merge two ascending runs into `out` (which must not alias either); returns the length."""
    cdef Py_ssize_t i = 0, j = 0, k = 0
    while i < na and j < nb:
        if a[i] <= b[j]:
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    while i < na:
        out[k] = a[i]
        i += 1
        k += 1
    while j < nb:
        out[k] = b[j]
        j += 1
        k += 1
    return k


cdef Vec *vecs_new(Py_ssize_t count):
    cdef Vec *v = <Vec *> malloc(max(count, 1) * sizeof(Vec))
    cdef Py_ssize_t i
    if v == NULL:
        raise MemoryError()
    for i in range(count):
        v[i].data = NULL
        v[i].size = 0
        v[i].cap = 0
    return v


cdef void vecs_free(Vec *v, Py_ssize_t count) noexcept:
    cdef Py_ssize_t i
    if v == NULL:
        return
    for i in range(count):
        free(v[i].data)
    free(v)


cdef Overlay *overlay_new(Py_ssize_t count):
    cdef Overlay *p = <Overlay *> malloc(max(count, 1) * sizeof(Overlay))
    cdef Py_ssize_t i
    if p == NULL:
        raise MemoryError()
    for i in range(count):
        p[i].stamp = -1
    return p


cdef int32_t *ints_new(Py_ssize_t count):
    cdef int32_t *p = <int32_t *> malloc(max(count, 1) * sizeof(int32_t))
    if p == NULL:
        raise MemoryError()
    return p


def _check(Py_ssize_t n, const int32_t[::1] child_ptr, const int64_t[::1] weights,
           int32_t[::1] core_out, int32_t[::1] step_out, int n_cores, int64_t sync_cost,
           int64_t min_superstep_size):
    if n < 1:
        raise ValueError(f"the DAG needs at least one vertex, got n = {n}")
    if child_ptr.shape[0] != n + 1 or weights.shape[0] != n:
        raise ValueError(f"child_ptr must have n + 1 = {n + 1} and weights n = {n} entries, got "
                         f"{child_ptr.shape[0]} and {weights.shape[0]}")
    if core_out.shape[0] != n or step_out.shape[0] != n:
        raise ValueError(f"core_out and step_out must have n = {n} entries")
    if n_cores < 1:
        raise ValueError(f"n_cores must be >= 1, got {n_cores}")
    if sync_cost < 0:
        raise ValueError(f"sync_cost must be >= 0, got {sync_cost}")
    if min_superstep_size < 1:
        raise ValueError(f"min_superstep_size must be >= 1, got {min_superstep_size}")


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
    _check(n, child_ptr, weights, core_out, step_out, n_cores, sync_cost, min_superstep_size)
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
    cdef int64_t limit, weight_limit, total_weight, cur_weight, w0, w1 = 0, L = sync_cost
    cdef int64_t min_weight_parallel_check = 4 * sync_cost, min_superstep_weight = sync_cost
    cdef int32_t v, c, tv
    cdef Overlay *o
    cdef int p
    cdef int32_t step = 0
    cdef double desired = P, best_score, best_par, score, par
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
            for i in range(n):
                predec[i] = parent_ptr[i + 1] - parent_ptr[i]
                tag[i] = -1
                core_out[i] = -1
                step_out[i] = -1
                if predec[i] == 0:
                    ready[r_len] = <int32_t> i
                    r_len += 1
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
                        if heaps[0].size > 0:
                            v = <int32_t> heap_pop(&heaps[0])
                        elif pos < r_len:
                            v = ready[pos]
                            pos += 1
                        else:
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
                            if heaps[p].size > 0:
                                v = <int32_t> heap_pop(&heaps[p])
                            elif pos < r_len:
                                v = ready[pos]
                                pos += 1
                            else:
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
                    # score the attempt
                    accept = False
                    score = (<double> total_weight / <double> (weight_limit + L)
                             if weight_limit + L > 0 else 0.0)
                    par = <double> total_weight / <double> weight_limit if weight_limit > 0 else 0.0
                    if score > 0.97 * best_score:
                        if score > best_score:
                            best_score = score
                        best_par = par
                        accept = True
                    else:
                        cont = False
                    if weight_limit >= min_weight_parallel_check:
                        if par < max(2.0, 0.8 * desired):
                            cont = False
                    if weight_limit <= min_superstep_weight:
                        cont = True
                        if total_assigned + n_asg == n:
                            accept = True
                            cont = False
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
                    limit += 1
                    limit += limit // 2
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
                p = 0
                for i in range(best_n_asg):
                    while i >= best_end[p]:
                        p += 1
                    v = best_asg[i]
                    core_out[v] = p
                    step_out[v] = step
                    for k in range(child_ptr[v], child_ptr[v + 1]):
                        predec[child_idx[k]] -= 1
                total_assigned += best_n_asg
                # ready ← (ready not taken from the global pool) ∪ (newly ready not assigned)
                kept = 0
                for i in range(best_n_new):
                    v = best_newr[i]
                    if step_out[v] < 0:
                        best_newr[kept] = v
                        kept += 1
                qsort(best_newr, kept, sizeof(int32_t), _cmp_i32)
                r_len = merge_sorted(ready + best_pos, r_len - best_pos, best_newr, kept, ready_tmp)
                swap_p = ready; ready = ready_tmp; ready_tmp = swap_p
                desired = 0.3 * desired + 0.6 * best_par + 0.1 * P
                step += 1
        if not ok:
            raise MemoryError("grow_local: out of memory growing a ready heap")
        return int(step)
    finally:
        free(predec); free(tag); free(ov); free(ready); free(ready_tmp); free(asg); free(best_asg)
        free(newr); free(asg_r); free(newr_r); free(best_newr); free(end); free(best_end)
        vecs_free(heaps, P)


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
    _check(n, child_ptr, weights, core_out, step_out, n_cores, sync_cost, min_superstep_size)
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
    cdef int64_t limit, weight_limit, total_weight, cur_weight, w0, L = sync_cost
    cdef int64_t min_weight_parallel_check = 4 * sync_cost, min_superstep_weight = sync_cost
    cdef int64_t key, earliest, cons, expiry
    cdef int32_t v, c, par_v
    cdef int p, slot, j, rs, nxt
    cdef int32_t step = 0
    cdef double desired = P, best_score, best_par, score, par
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
            for i in range(n):
                predec[i] = parent_ptr[i + 1] - parent_ptr[i]
                core_out[i] = -1
                step_out[i] = -1
                if predec[i] == 0:
                    cr[cr_len] = <int32_t> i
                    cr_len += 1
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
                    for i in range(m0, n_asg):
                        v = asg[i]
                        for k in range(child_ptr[v], child_ptr[v + 1]):
                            predec[child_idx[k]] += 1
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
                            if heaps[p].size > 0:
                                v = <int32_t> (heap_pop(&heaps[p]) >> 32)
                            elif it < cr_len:
                                v = cr[it]
                                it += 1
                            else:
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
                    # score the attempt
                    accept = False
                    # (with L = 0 an empty attempt is 0/0 in the reference; here it scores 0)
                    score = (<double> total_weight / <double> (weight_limit + L)
                             if weight_limit + L > 0 else 0.0)
                    par = <double> total_weight / <double> weight_limit if weight_limit > 0 else 0.0
                    if score > 0.99 * best_score:
                        if score > best_score:
                            best_score = score
                        best_par = par
                        accept = True
                    else:
                        cont = False
                    if weight_limit >= min_weight_parallel_check:
                        if par < max(2.0, 0.8 * desired):
                            cont = False
                    if weight_limit <= min_superstep_weight:
                        cont = True
                        if total_assigned + n_asg == n:
                            accept = True
                            cont = False
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
                    limit += 1
                    limit += limit // 2
                # undo the last attempt's in-degree decrements completely
                for i in range(n_asg):
                    v = asg[i]
                    for k in range(child_ptr[v], child_ptr[v + 1]):
                        predec[child_idx[k]] += 1
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
                p = 0
                for i in range(best_n_asg):
                    while i >= best_end[p]:
                        p += 1
                    v = best_asg[i]
                    core_out[v] = p
                    step_out[v] = step
                    for k in range(child_ptr[v], child_ptr[v + 1]):
                        predec[child_idx[k]] -= 1
                total_assigned += best_n_asg
                # merge the vertices that become globally ready at step + 1
                nf = &future[nxt]
                for i in range(nf.size):
                    sort_buf[i] = <int32_t> nf.data[i]
                qsort(sort_buf, nf.size, sizeof(int32_t), _cmp_i32)
                cr_len = merge_sorted(cr + best_it, cr_len - best_it, sort_buf, nf.size, cr_tmp)
                swap_p = cr; cr = cr_tmp; cr_tmp = swap_p
                nf.size = 0
                step += 1
                desired = 0.3 * desired + 0.6 * best_par + 0.1 * P
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
