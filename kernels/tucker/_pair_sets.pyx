# cython: language_level=3
"""Distinct (slice, rank) pair sets as bitmaps, and what the Tucker metrics read off them
(tucker-lite §4 "SVD redundancy", §5 "Row-Index Mapping", §7.3 factor-matrix volumes).

A pair set of mode n is an L_n × P bitmap, row l holding bit p when rank p holds an element of
slice l (``words`` = ⌈P/64⌉ 64-bit words per row). Marking streams the elements chunk by chunk,
so no per-element array of the whole tensor is ever needed; every pass below reads the bitmap
row by row. All loops are nogil; nothing allocates inside them.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

ctypedef fused index_t:
    int32_t
    int64_t

cdef extern from *:
    int popcount64 "__builtin_popcountll"(unsigned long long) nogil
    int ctz64 "__builtin_ctzll"(unsigned long long) nogil
    void prefetch_write "__builtin_prefetch"(const void *, int, int) nogil
    void prefetch_read "__builtin_prefetch"(const void *, int, int) nogil

# elements ahead whose bitmap row is prefetched (rows are hit at random: the marking is latency-bound)
cdef enum:
    AHEAD = 16


def mark_pairs(uint64_t[::1] bits, Py_ssize_t words, const index_t[::1] index, const int32_t[:, ::1] policies,
               Py_ssize_t skip=-1):
    """Set bit (index[e], policies[j, e]) for every element e and every policy row j ≠ ``skip``."""
    cdef Py_ssize_t e, j, m = index.shape[0], rows = policies.shape[0]
    cdef int32_t p
    cdef uint64_t *row
    with nogil:
        for e in range(m):
            if e + AHEAD < m:
                prefetch_write(&bits[index[e + AHEAD] * words], 1, 0)
            row = &bits[index[e] * words]
            for j in range(rows):
                if j != skip:
                    p = policies[j, e]
                    row[p >> 6] |= (<uint64_t>1) << (p & 63)


def row_counts(const uint64_t[::1] bits, Py_ssize_t words, int32_t[::1] cnt, int64_t[::1] per_rank):
    """``cnt[l]``: the bits of row l (sharers of slice l); ``per_rank[p]`` += rows holding bit p."""
    cdef Py_ssize_t l, w, L = cnt.shape[0]
    cdef uint64_t x
    cdef int c
    with nogil:
        for l in range(L):
            c = 0
            for w in range(words):
                x = bits[l * words + w]
                c += popcount64(x)
                while x:
                    per_rank[w * 64 + ctz64(x)] += 1
                    x &= x - 1
            cnt[l] = c


cdef inline int32_t _best_sharer(const uint64_t *row, Py_ssize_t words, const int64_t *load, int64_t r,
                                 int64_t P, int64_t *sharers) noexcept nogil:
    """The sharer p minimizing (load[p], (p − r) mod P): the greedy's choice for one shared slice;
    ``sharers`` receives the row's bit count (read here rather than from a count array: one
    random line per slice, not two)."""
    cdef Py_ssize_t w
    cdef uint64_t x
    cdef int64_t p, k, best = -1, best_load = 0, best_rot = 0, rot, c = 0
    for w in range(words):
        x = row[w]
        while x:
            p = w * 64 + ctz64(x)
            x &= x - 1
            c += 1
            k = load[p]
            rot = p - r                  # (p − r) mod P, both in [0, P)
            if rot < 0:
                rot += P
            if best < 0 or k < best_load or (k == best_load and rot < best_rot):
                best, best_load, best_rot = p, k, rot
    sharers[0] = c
    return <int32_t>best


def chain_owners(const uint64_t[::1] bits, Py_ssize_t words, int64_t P, const int64_t[::1] order,
                 const int64_t[::1] home_start, int sweeps, int32_t[::1] sigma, int32_t[::1] chosen,
                 int64_t[:, ::1] mine, int64_t[::1] total, int64_t[::1] load):
    """σ of the shared slices by the homes' greedy run in a chain (``spbench.tucker.mpi.comm``'s rule):
    ``order`` lists the shared slices grouped by active home, each group in decreasing sharers
    (ties: increasing slice id), group a being ``order[home_start[a]:home_start[a+1]]``; ``chosen``
    (as long as ``order``) holds each sweep's choices in that order and is written to ``sigma``
    once at the end, so a greedy step reads one line at random (the slice's bitmap row), not three;
    ``mine`` (homes × P) and ``total``, ``load`` (P) are zeroed scratch. Returns the greedy steps taken."""
    cdef Py_ssize_t a, i, p, homes = home_start.shape[0] - 1
    cdef int64_t l, c = 0, steps = 0
    cdef int32_t best
    cdef int s
    with nogil:
        for s in range(sweeps):
            for a in range(homes):
                for p in range(P):
                    load[p] = total[p] - mine[a, p]
                for i in range(home_start[a], home_start[a + 1]):
                    if i + AHEAD < home_start[a + 1]:   # rows are hit at stride P
                        prefetch_read(&bits[order[i + AHEAD] * words], 0, 0)
                    l = order[i]
                    best = _best_sharer(&bits[l * words], words, &load[0], (l + l // P) % P, P, &c)
                    load[best] += c - 1
                    chosen[i] = best
                    steps += c
                for p in range(P):
                    mine[a, p] += load[p] - total[p]
                    total[p] = load[p]
        for i in range(order.shape[0]):
            sigma[order[i]] = chosen[i]
    return steps


def shared_order(const int32_t[::1] cnt, int64_t P, int64_t[::1] by_count, int64_t[::1] order,
                 int64_t[::1] bucket):
    """The shared slices (cnt > 1) in the order of ``spbench.tucker.mpi.comm``'s greedy: by home
    (l mod P), then decreasing sharers, then increasing l; two stable counting sorts (sharers, then
    home). ``by_count`` and ``order`` hold the shared slices' count, ``bucket`` P + 1 zeroed entries;
    ``order`` is filled and ``bucket[h]`` .. ``bucket[h + 1]`` is home h's range on return."""
    cdef Py_ssize_t l, i, L = cnt.shape[0], m = order.shape[0]
    cdef int64_t c, h, acc, nxt
    with nogil:
        for l in range(L):                       # pass 1: by decreasing sharers (bucket P − cnt)
            if cnt[l] > 1:
                bucket[P - cnt[l] + 1] += 1
        acc = 0
        for h in range(P + 1):
            acc += bucket[h]
            bucket[h] = acc
        for l in range(L):
            if cnt[l] > 1:
                c = P - cnt[l]
                by_count[bucket[c]] = l
                bucket[c] += 1
        for h in range(P + 1):                   # pass 2: by home, stable
            bucket[h] = 0
        for i in range(m):
            bucket[by_count[i] % P + 1] += 1
        acc = 0
        for h in range(P + 1):
            acc += bucket[h]
            bucket[h] = acc
        for i in range(m):
            h = by_count[i] % P
            order[bucket[h]] = by_count[i]
            bucket[h] += 1
        acc = 0                                  # bucket[h] is now home h's end: shift to starts
        for h in range(P + 1):
            nxt = bucket[h]
            bucket[h] = acc
            acc = nxt


def good_owners(const uint64_t[::1] bits, Py_ssize_t words, const int32_t[::1] cnt, int32_t[::1] sigma):
    """σ(l) = the one sharer of every good slice (cnt 1), −1 for empty slices."""
    cdef Py_ssize_t l, w, L = cnt.shape[0]
    cdef uint64_t x
    with nogil:
        for l in range(L):
            if cnt[l] == 0:
                sigma[l] = -1
            elif cnt[l] == 1:
                for w in range(words):
                    x = bits[l * words + w]
                    if x:
                        sigma[l] = <int32_t>(w * 64 + ctz64(x))
                        break


def sharer_stats(const uint64_t[::1] bits, Py_ssize_t words, int64_t P, const int32_t[::1] cnt,
                 const int32_t[::1] sigma, int64_t[::1] own_p, int64_t[::1] recv_p, uint8_t[::1] peers):
    """Per owner: slices owned (``own_p``) and partial sums received per Z·x (``recv_p``, sharers
    − 1 per slice); ``peers[p·P + σ(l)]`` = 1 for every sharer p ≠ σ(l)."""
    cdef Py_ssize_t l, w, L = cnt.shape[0]
    cdef uint64_t x
    cdef int64_t p, o
    with nogil:
        for l in range(L):
            if cnt[l] == 0:
                continue
            o = sigma[l]
            own_p[o] += 1
            recv_p[o] += cnt[l] - 1
            if cnt[l] == 1:
                continue
            for w in range(words):
                x = bits[l * words + w]
                while x:
                    p = w * 64 + ctz64(x)
                    x &= x - 1
                    if p != o:
                        peers[p * P + o] = 1


def need_stats(const uint64_t[::1] bits, Py_ssize_t words, int64_t P, const int32_t[::1] cnt,
               const int32_t[::1] sigma, int64_t[::1] held_p, int64_t[::1] send_p, int64_t[::1] recv_p,
               uint8_t[::1] peers):
    """Over the pairs D (rank q needs row l of F_n): rows held per rank (needed ∪ owned), rows sent
    by owners and received by the others, ``peers[σ(l)·P + q]`` = 1. Returns (|D|, pairs (l, σ(l))
    in D)."""
    cdef Py_ssize_t l, w, L = cnt.shape[0]
    cdef uint64_t x
    cdef int64_t q, o, size = 0, owned = 0
    cdef bint in_d
    with nogil:
        for l in range(L):
            o = sigma[l]
            in_d = False
            for w in range(words):
                x = bits[l * words + w]
                while x:
                    q = w * 64 + ctz64(x)
                    x &= x - 1
                    size += 1
                    held_p[q] += 1
                    if q == o:
                        in_d = True
                    else:
                        send_p[o] += 1
                        recv_p[q] += 1
                        peers[o * P + q] = 1
            if in_d:
                owned += 1
            elif cnt[l] > 0:
                held_p[o] += 1
    return size, owned
