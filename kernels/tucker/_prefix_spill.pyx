# cython: language_level=3
"""The two compiled steps of the CSF prefix spill (``spbench.tucker.stream_prefixes``; the ``ttm:
csf`` cost model's tree shapes, tucker-lite §8, Appendix A): one chunk's packed prefix keys made and
scattered into bucket order in one counting sort, and a bucket's distinct keys counted per rank,
unsorted (``count_unsorted``: radix passes down to cache-sized ranges, then a hash set or a bitmap)
or sorted (``count_distinct``, the reference the tests hold it to). Counted per rank (a key's low
bits) or per slice of the key's lead mode (its quotient by the rest's span: the per-slice counts of
``spbench.tucker.slice_prefixes``).

Key of element e for a set T = {lead} ∪ rest (``_SetLayout``): ((i_lead − starts[g]) · rest_span +
Σ_r i_r·stride_r) · width + own_low[π(e)], g the range of i_lead (``starts[g] <= i_lead < starts[g + 1]``, found
from ``lead_block[i_lead >> block_shift]``, the range of the block's first index: a table small enough to stay in
cache); its bucket own_bucket[π(e)] + g; ``width`` is a power of
two, so a key's rank within its bucket is its low bits. Every loop is nogil and allocates nothing.
"""
from libc.stdint cimport int32_t, int64_t, uint16_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

ctypedef fused index_t:
    int32_t
    int64_t

cdef enum:
    MAXMODES = 16


cdef void _scatter(const index_t **cols, Py_ssize_t m, const int32_t *owner, Py_ssize_t lead,
                   const int64_t *rest, const int64_t *strides, Py_ssize_t nrest, const int64_t *starts, int64_t rest_span,
                   Py_ssize_t ngroups, const uint16_t *lead_block, int block_shift, const int64_t *own_low, const int64_t *own_bucket, int64_t width,
                   int32_t *bucket, int64_t *pos, Py_ssize_t nbuckets, int64_t *counts,
                   int64_t *out) noexcept nogil:
    cdef Py_ssize_t e, r, b
    cdef int64_t key, start
    cdef int32_t own
    cdef int64_t i, g
    cdef const index_t *lead_col = cols[lead]
    cdef const index_t *rest_col[MAXMODES]
    for r in range(nrest):
        rest_col[r] = cols[rest[r]]
    for b in range(nbuckets):
        counts[b] = 0
    if ngroups == 1:                        # one range of the lead mode: no lookup of its group
        for e in range(m):
            b = own_bucket[owner[e]]
            bucket[e] = <int32_t>b
            counts[b] += 1
    else:
        for e in range(m):
            i = lead_col[e]
            g = lead_block[i >> block_shift]
            while g + 1 < ngroups and i >= starts[g + 1]:
                g += 1
            b = own_bucket[owner[e]] + g
            bucket[e] = <int32_t>b
            counts[b] += 1
    start = 0
    for b in range(nbuckets):
        pos[b] = start
        start += counts[b]
    for e in range(m):                      # the group is the bucket less the rank's first bucket
        own = owner[e]
        b = bucket[e]
        key = (lead_col[e] - starts[b - own_bucket[own]]) * rest_span
        for r in range(nrest):
            key += <int64_t>rest_col[r][e] * strides[r]
        out[pos[b]] = key * width + own_low[own]
        pos[b] += 1


def scatter_keys(list cols, const int32_t[::1] owner, Py_ssize_t lead, const int64_t[::1] rest,
                 const int64_t[::1] strides, const int64_t[::1] starts, int64_t rest_span,
                 const uint16_t[::1] lead_block, int block_shift,
                 const int64_t[::1] own_low, const int64_t[::1] own_bucket, int64_t width, int32_t[::1] bucket,
                 int64_t[::1] pos, int64_t[::1] counts, int64_t[::1] out):
    """Write the keys of the chunk whose mode-j indices are ``cols[j]`` (all int32 or all int64,
    contiguous) and ranks ``owner`` into ``out`` in bucket order (stable within a bucket), and the
    keys per bucket into ``counts``; ``bucket`` (one per element) and ``pos`` (one per bucket) are
    scratch."""
    cdef Py_ssize_t j, m = owner.shape[0], nrest = rest.shape[0], nb = counts.shape[0]
    cdef const int32_t *p32[MAXMODES]
    cdef const int64_t *p64[MAXMODES]
    cdef const int32_t[::1] c32
    cdef const int64_t[::1] c64
    if len(cols) > MAXMODES or nrest >= MAXMODES:
        raise ValueError(f"at most {MAXMODES} modes")
    if bucket.shape[0] < m or out.shape[0] < m or pos.shape[0] < nb:
        raise ValueError("scratch arrays shorter than the chunk")
    if m == 0:
        counts[:] = 0
        return
    cdef bint wide = cols[0].dtype.itemsize == 8
    for j in range(len(cols)):
        if wide:
            c64 = cols[j]
            p64[j] = &c64[0]
        else:
            c32 = cols[j]
            p32[j] = &c32[0]
    with nogil:
        if wide:
            _scatter(p64, m, &owner[0], lead, &rest[0] if nrest else NULL, &strides[0] if nrest else NULL, nrest,
                     &starts[0], rest_span, starts.shape[0], &lead_block[0], block_shift, &own_low[0], &own_bucket[0], width, &bucket[0], &pos[0], nb,
                     &counts[0], &out[0])
        else:
            _scatter(p32, m, &owner[0], lead, &rest[0] if nrest else NULL, &strides[0] if nrest else NULL, nrest,
                     &starts[0], rest_span, starts.shape[0], &lead_block[0], block_shift, &own_low[0], &own_bucket[0], width, &bucket[0], &pos[0], nb,
                     &counts[0], &out[0])


def count_distinct(const int64_t[::1] keys, int64_t mask, Py_ssize_t base, int64_t[::1] result, int64_t div=1):
    """``result[base + (key & mask)]`` += 1 for every distinct key of the sorted ``keys`` (a bucket's:
    its rank is ``base`` plus the key's low bits); with ``div`` > 1 at ``base + ((key // div) & mask)``
    instead (the key's slice)."""
    cdef Py_ssize_t e, m = keys.shape[0]
    cdef int64_t prev
    if m == 0:
        return
    if div < 1:
        raise ValueError("div must be at least 1")
    with nogil:
        prev = keys[0]
        result[base + _slot(prev, mask, div)] += 1
        for e in range(1, m):
            if keys[e] != prev:
                prev = keys[e]
                result[base + _slot(prev, mask, div)] += 1


# ---- distinct keys of an unsorted bucket: MSD radix passes down to bitmap-sized ranges ----

cdef enum:
    RADIX_BITS = 10          # at most 1,024 sub-ranges per radix pass (more thrash the TLB)
    SMALL = 16               # ranges of at most this many keys: insertion sort
    HASHED = 4096            # ranges of at most this many keys: a hash set in cache
    TABLE_BITS = 13          # its slots (twice HASHED; 64 KB)
    DEPTH = 16               # nested radix passes at most: 4+ bits a pass, from 63 bits to a 64-bit bitmap


cdef extern from *:
    int __builtin_clzll(unsigned long long x) noexcept nogil


cdef inline int _bit_length(uint64_t x) noexcept nogil:
    return 0 if x == 0 else 64 - __builtin_clzll(x)


cdef inline Py_ssize_t _slot(int64_t key, int64_t mask, int64_t div) noexcept nogil:
    """Where a distinct key is counted: its low bits (``div`` 1: a rank), or its quotient by ``div``
    (a slice: the key's lead index, relative to the bucket's first)."""
    if div == 1:
        return <Py_ssize_t>(key & mask)
    return <Py_ssize_t>((key // div) & mask)


cdef void _count_small(int64_t *a, Py_ssize_t n, int64_t mask, int64_t div, int64_t *result) noexcept nogil:
    """Insertion sort of a few keys, then one count per distinct key at its rank."""
    cdef Py_ssize_t i, j
    cdef int64_t x
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
    result[_slot(a[0], mask, div)] += 1
    for i in range(1, n):
        if a[i] != a[i - 1]:
            result[_slot(a[i], mask, div)] += 1


cdef void _count_bitmap(const int64_t *a, Py_ssize_t n, int64_t low, uint64_t span, int64_t mask, int64_t div,
                        int64_t *result, uint64_t *bits) noexcept nogil:
    """Mark each key's offset from ``low`` in ``bits`` (zero on entry, ≥ ``span`` bits), counting
    the keys marked first; ``bits`` is zeroed again on return."""
    cdef Py_ssize_t e
    cdef uint64_t off, word, bit
    for e in range(n):
        off = <uint64_t>(a[e] - low)
        bit = (<uint64_t>1) << (off & 63)
        word = off >> 6
        if not (bits[word] & bit):
            bits[word] |= bit
            result[_slot(a[e], mask, div)] += 1
    if <uint64_t>n < (span >> 6):
        for e in range(n):
            bits[<uint64_t>(a[e] - low) >> 6] = 0
    else:
        memset(bits, 0, ((span + 63) >> 6) * 8)


cdef void _count_hashed(const int64_t *a, Py_ssize_t n, int64_t mask, int64_t div, int64_t *result,
                        int64_t *table) noexcept nogil:
    """Insert each key into the open-addressing ``table`` (2**TABLE_BITS slots, -1 free: keys are
    never negative), counting the keys inserted first; ``table`` is all free again on return."""
    cdef Py_ssize_t e
    cdef uint64_t slot, wrap = (1 << TABLE_BITS) - 1
    cdef int64_t x
    for e in range(n):
        x = a[e]
        slot = (<uint64_t>x * 0x9E3779B97F4A7C15ULL) >> (64 - TABLE_BITS)
        while table[slot] != -1 and table[slot] != x:
            slot = (slot + 1) & wrap
        if table[slot] == -1:
            table[slot] = x
            result[_slot(x, mask, div)] += 1
    if n < (1 << TABLE_BITS) // 16:
        for e in range(n):
            slot = (<uint64_t>a[e] * 0x9E3779B97F4A7C15ULL) >> (64 - TABLE_BITS)
            while table[slot] != -1:
                table[slot] = -1
                slot = (slot + 1) & wrap
    else:
        memset(table, 0xFF, (1 << TABLE_BITS) * sizeof(int64_t))


cdef void _count_range(int64_t *a, int64_t *tmp, Py_ssize_t n, int64_t mask, int64_t div, int64_t *result,
                       uint64_t *bits, uint64_t nbits, int64_t *table, Py_ssize_t *hist) noexcept nogil:
    """Count per rank the distinct keys of ``a[:n]`` (``tmp[:n]`` scratch; both are reordered): a
    hash set when they are few, a bitmap when their range fits ``nbits``, else one radix pass on
    the range's top bits into sub-ranges of about HASHED / 2 keys (``hist`` holding this pass's and
    the nested passes' tallies) and the same for each sub-range."""
    cdef Py_ssize_t e, d, at, size, nd
    cdef Py_ssize_t *pos = hist + (1 << RADIX_BITS)
    cdef int64_t low, high, x
    cdef uint64_t span
    cdef int shift, digits
    if n <= SMALL:
        if n > 0:
            _count_small(a, n, mask, div, result)
        return
    low = a[0]
    high = a[0]
    for e in range(1, n):
        x = a[e]
        if x < low:
            low = x
        elif x > high:
            high = x
    span = <uint64_t>(high - low) + 1
    if n <= HASHED and (span > nbits or span > (<uint64_t>n << 10)):     # a bitmap this sparse costs more
        _count_hashed(a, n, mask, div, result, table)
        return
    if span <= nbits:
        _count_bitmap(a, n, low, span, mask, div, result, bits)
        return
    digits = _bit_length(<uint64_t>n) - 11
    digits = RADIX_BITS if digits > RADIX_BITS else (4 if digits < 4 else digits)
    shift = _bit_length(span - 1) - digits
    if shift < 0:
        shift = 0
    nd = (<Py_ssize_t>((span - 1) >> shift)) + 1
    memset(hist, 0, nd * sizeof(Py_ssize_t))
    for e in range(n):
        hist[<uint64_t>(a[e] - low) >> shift] += 1
    at = 0
    for d in range(nd):
        pos[d] = at
        at += hist[d]
    for e in range(n):
        d = <Py_ssize_t>(<uint64_t>(a[e] - low) >> shift)
        tmp[pos[d]] = a[e]
        pos[d] += 1
    at = 0
    for d in range(nd):
        size = hist[d]
        if size:
            _count_range(tmp + at, a + at, size, mask, div, result, bits, nbits, table, hist + (2 << RADIX_BITS))
            at += size


def count_unsorted(int64_t[::1] keys, int64_t[::1] scratch, int64_t mask, Py_ssize_t base,
                   int64_t[::1] result, uint64_t[::1] bits, int64_t div=1):
    """``result[base + (key & mask)]`` += 1 (with ``div`` > 1: at ``base + ((key // div) & mask)``)
    for every distinct key of ``keys`` (a bucket's, in any order; ``keys`` is reordered, ``scratch``
    at least as long): the counts of :func:`count_distinct` of the sorted keys, by radix passes on the
    keys' range until a range fits the bitmap ``bits`` (zero on entry and on return)."""
    cdef Py_ssize_t m = keys.shape[0]
    cdef uint64_t nbits = <uint64_t>bits.shape[0] * 64
    cdef Py_ssize_t *hist
    cdef int64_t *table
    if scratch.shape[0] < m:
        raise ValueError("scratch shorter than the keys")
    if m == 0:
        return
    if nbits == 0:
        raise ValueError("an empty bitmap")
    if div < 1:
        raise ValueError("div must be at least 1")
    hist = <Py_ssize_t *>malloc(DEPTH * (2 << RADIX_BITS) * sizeof(Py_ssize_t) + (sizeof(int64_t) << TABLE_BITS))
    if hist == NULL:
        raise MemoryError()
    table = <int64_t *>(hist + DEPTH * (2 << RADIX_BITS))
    with nogil:
        memset(table, 0xFF, sizeof(int64_t) << TABLE_BITS)
        _count_range(&keys[0], &scratch[0], m, mask, div, &result[base], &bits[0], nbits, table, hist)
    free(hist)
