# cython: language_level=3
"""Stand-in draws (``spbench.datasets.tensor_standins``) in compiled loops, bit for bit numpy's.

``permutation``, ``draw_mode`` and the shuffle inside it consume a ``numpy.random.Generator``'s
bit stream exactly as ``rng.permutation(n)``, ``np.repeat(labels, rng.multinomial(m, pix))`` and
``rng.shuffle`` do (numpy's ``random_multinomial``, ``random_binomial`` and ``random_interval``
replayed call for call; the cases other than the binomial inversion call numpy's own
``random_binomial``), so the indices are the same, only faster: the shuffle's random swaps are
prefetched, the multinomial's conditional probabilities are computed once per law
(``law_terms``), the inversion takes its ``log1p`` and ``exp`` only when the uniform is not safely
below a lower bound of their result (X = 0 otherwise, as numpy finds), and the counts are never
materialised. ``SeenHashes`` keeps the first coordinate of every 64-bit hash in draw order (the
hash is ``store_duplicates.mix64(key_words(...))``) in an open-addressing table of 64-byte buckets.
"""
cimport cython
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport exp, log1p, sqrt
from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport binomial_t, random_binomial

import numpy as _np

cdef extern from *:
    """
    static inline void spb_prefetch(const void *p) { __builtin_prefetch(p, 1, 3); }
    static inline uint64_t spb_slot(uint64_t h, uint64_t cap) {
        return (uint64_t)(((unsigned __int128)h * cap) >> 64);
    }
    """
    void spb_prefetch(const void *p) noexcept nogil
    uint64_t spb_slot(uint64_t h, uint64_t cap) noexcept nogil

ctypedef fused index_t:
    int32_t
    int64_t

cdef enum:
    BATCH = 512          # swaps (hashes) whose random targets (table slots) are known ahead
    AHEAD = 32           # how far ahead the swap targets / slots are prefetched
    MAXMODES = 64

cdef uint64_t MIX0 = 0x9E3779B97F4A7C15ULL
cdef uint64_t MIX1 = 0xC2B2AE3D27D4EB4FULL
cdef uint64_t MIX2 = 0x165667B19E3779F9ULL


cdef bitgen_t *_bitgen(rng) except NULL:
    return <bitgen_t *> PyCapsule_GetPointer(rng.bit_generator.capsule, "BitGenerator")


cdef inline uint64_t _interval(bitgen_t *bg, uint64_t mx) noexcept nogil:
    """numpy's ``random_interval``: uniform in [0, mx] by masked rejection."""
    cdef uint64_t mask = mx, value
    if mx == 0:
        return 0
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    if mx <= 0xffffffffULL:
        while True:
            value = bg.next_uint32(bg.state) & mask
            if value <= mx:
                return value
    while True:
        value = bg.next_uint64(bg.state) & mask
        if value <= mx:
            return value


cdef void _shuffle(bitgen_t *bg, index_t *data, int64_t n) noexcept nogil:
    """numpy's ``shuffle`` of a 1-d array: for i = n-1 .. 1 swap data[i] and data[random_interval(i)];
    a batch of targets is drawn first so that each swap's far element is prefetched."""
    cdef int64_t targets[BATCH]
    cdef int64_t i = n - 1, k, cnt, j
    cdef index_t tmp
    while i >= 1:
        cnt = BATCH if i >= BATCH else i
        for k in range(cnt):
            targets[k] = <int64_t> _interval(bg, <uint64_t> (i - k))
        for k in range(AHEAD if cnt > AHEAD else cnt):
            spb_prefetch(&data[targets[k]])
        for k in range(cnt):
            if k + AHEAD < cnt:
                spb_prefetch(&data[targets[k + AHEAD]])
            j = targets[k]
            tmp = data[j]
            data[j] = data[i - k]
            data[i - k] = tmp
        i -= cnt


def permutation(rng, index_t[::1] out):
    """``out[:] = rng.permutation(len(out))``, the same draws."""
    cdef bitgen_t *bg = _bitgen(rng)
    cdef int64_t n = out.shape[0], k
    if index_t is int32_t and n > 2147483647:
        raise ValueError("permutation: more indices than int32 holds")
    with rng.bit_generator.lock, nogil:
        for k in range(n):
            out[k] = <index_t> k
        if n > 0:
            _shuffle(bg, &out[0], n)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def law_terms(const double[::1] pix):
    """The conditional probabilities p_j = pix[j] / (1 - pix[0] - .. - pix[j-1]), j < len(pix) - 1,
    that numpy's multinomial hands to ``random_binomial`` (the same arithmetic, the same values)."""
    cdef int64_t d = pix.shape[0], j
    out = _np.empty(max(d - 1, 0), dtype=_np.float64)
    cdef double[::1] p = out
    cdef double remaining_p = 1.0
    with nogil:
        for j in range(d - 1):
            p[j] = pix[j] / remaining_p
            remaining_p -= pix[j]
    return out


@cython.cdivision(True)
cdef inline int64_t _inversion(bitgen_t *bg, int64_t n, double p) noexcept nogil:
    """numpy's ``random_binomial_inversion(n, p)`` for p <= 0.5. X = 0 (the uniform U <= q^n)
    without ``log1p`` and ``exp`` when U is below 1 - n p (1 + 2p), less a margin far above the
    rounding: q^n = exp(n log1p(-p)) >= 1 + n log1p(-p) and log1p(-p) >= -p / (1 - p) >= -p (1 + 2p)."""
    cdef double U = bg.next_double(bg.state)
    cdef double q, qn, np_, px, t
    cdef int64_t X, bound
    if U <= 1.0 - <double> n * p * (1.0 + 2.0 * p) * (1.0 + 1e-12) - 1e-14:
        return 0
    q = 1.0 - p
    qn = exp(<double> n * log1p(-p))
    np_ = <double> n * p
    t = np_ + 10.0 * sqrt(np_ * q + 1)
    bound = n if <double> n < t else <int64_t> t
    X = 0
    px = qn
    while U > px:
        X += 1
        if X > bound:
            X = 0
            px = qn
            U = bg.next_double(bg.state)
        else:
            U -= px
            px = ((<double> (n - X + 1)) * p * px) / (<double> X * q)
    return X


cdef inline int64_t _fill(index_t *out, int64_t pos, int64_t count, index_t label) noexcept nogil:
    cdef int64_t k
    for k in range(count):
        out[pos + k] = label
    return pos + count


@cython.boundscheck(False)
@cython.wraparound(False)
def draw_mode(rng, int64_t m, const double[::1] p, const index_t[::1] labels, index_t[::1] out):
    """``out[:m] = np.repeat(labels, rng.multinomial(m, pix))`` then ``rng.shuffle(out[:m])``, the
    same draws, given ``p = law_terms(pix)`` (numpy's checks of ``pix`` not repeated)."""
    cdef bitgen_t *bg = _bitgen(rng)
    cdef int64_t d = labels.shape[0], j, x, dn = m, pos = 0
    cdef binomial_t binomial
    if m < 0 or out.shape[0] < m or d < 1 or p.shape[0] != d - 1:
        raise ValueError("draw_mode: bad sizes")
    binomial.has_binomial = 0
    with rng.bit_generator.lock, nogil:
        for j in range(d - 1):                      # random_multinomial
            if dn == 0 or p[j] == 0.0:              # random_binomial
                x = 0
            elif p[j] <= 0.5 and p[j] * dn <= 30.0:
                x = _inversion(bg, dn, p[j])
            else:
                x = random_binomial(bg, p[j], dn, &binomial)
            pos = _fill(&out[0], pos, x, labels[j])
            dn = dn - x
            if dn <= 0:
                break
        if dn > 0:
            pos = _fill(&out[0], pos, dn, labels[d - 1])
        if m > 0:
            _shuffle(bg, &out[0], m)


cdef class SeenHashes:
    """The 64-bit hashes of the coordinates accepted so far, in buckets of 8 (one cache line) with
    linear probing from bucket to bucket (0 marks a free slot; the hash 0 has its own flag); at
    least ``capacity`` slots, never grown."""

    cdef object memory
    cdef uint64_t *table
    cdef uint64_t buckets
    cdef bint has_zero
    cdef readonly int64_t count

    def __init__(self, int64_t capacity):
        cdef uint64_t[::1] view
        cdef uint64_t skew
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.buckets = (<uint64_t> capacity + 7) // 8
        self.memory = _np.zeros(self.buckets * 8 + 8, dtype=_np.uint64)
        view = self.memory
        skew = (<uint64_t> &view[0]) % 64
        self.table = &view[0] + ((64 - skew) % 64) // 8    # buckets on cache lines
        self.has_zero = False
        self.count = 0

    @property
    def capacity(self):
        return int(self.buckets * 8)

    def touch(self):
        """Write every page of the table once (zeros), so that a thread can take its page faults
        while the laws are computed instead of during the first rounds."""
        cdef uint64_t k
        with nogil:
            for k in range(0, self.buckets * 8, 512):
                self.table[k] = 0

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def accept(self, index_t[:, ::1] cols, int64_t m, const int64_t[::1] dims, const int64_t[::1] starts,
               int64_t limit, int64_t[:, ::1] ranges):
        """Keep, in draw order, the first ``limit`` of ``cols[:, :m]`` whose hash was never seen;
        move them to the front of ``cols`` (in place), add their hashes, set ``ranges[n]`` to
        each mode's (min, max) among them, and return how many were kept. ``starts[n]`` is 1
        where mode n begins a key word (``store_duplicates.key_plan``)."""
        cdef int64_t nmodes = cols.shape[0], n, k, b, cnt, kept = 0
        cdef uint64_t w, h, v, nb = self.buckets
        cdef uint64_t *line
        cdef uint64_t hashes[BATCH]
        cdef uint64_t *lines[BATCH]
        cdef uint64_t *table = self.table
        cdef index_t *col[MAXMODES]
        cdef uint64_t length[MAXMODES]
        cdef int starts_word[MAXMODES]
        cdef int64_t low[MAXMODES]
        cdef int64_t high[MAXMODES]
        cdef bint has_zero = self.has_zero, seen
        cdef int first, slot
        if dims.shape[0] != nmodes or starts.shape[0] != nmodes or ranges.shape[0] != nmodes \
                or ranges.shape[1] != 2 or cols.shape[1] < m or nmodes < 1 or nmodes > MAXMODES or starts[0] != 1:
            raise ValueError("accept: bad sizes")
        if limit > <int64_t> (nb * 8) - self.count - 1:
            raise ValueError("accept: the table would overflow")
        if m == 0 or limit <= 0:
            return 0
        for n in range(nmodes):
            col[n] = &cols[n, 0]
            length[n] = <uint64_t> dims[n]
            starts_word[n] = starts[n] != 0
            low[n] = dims[n]
            high[n] = -1
        with nogil:
            b = 0
            while b < m and kept < limit:
                cnt = BATCH if m - b >= BATCH else m - b
                for k in range(cnt):                # store_duplicates.mix64(key_words(...))
                    w = <uint64_t> col[0][b + k]
                    first = 1
                    h = 0
                    for n in range(1, nmodes):
                        if starts_word[n]:
                            if first:
                                h = w * MIX0
                                first = 0
                            else:
                                h ^= w * MIX1
                            w = <uint64_t> col[n][b + k]
                        else:
                            w = w * length[n] + <uint64_t> col[n][b + k]
                    if first:
                        h = w * MIX0
                    else:
                        h ^= w * MIX1
                    h ^= h >> 29
                    h *= MIX2
                    h ^= h >> 32
                    hashes[k] = h
                    lines[k] = table + 8 * spb_slot(h, nb)
                    if k < AHEAD:
                        spb_prefetch(lines[k])
                for k in range(cnt):
                    if k + AHEAD < cnt:
                        spb_prefetch(lines[k + AHEAD])
                    h = hashes[k]
                    if h == 0:
                        if has_zero:
                            continue
                        has_zero = True
                    else:
                        line = lines[k]
                        seen = False
                        while True:
                            for slot in range(8):
                                v = line[slot]
                                if v == 0:
                                    line[slot] = h
                                    break
                                if v == h:
                                    seen = True
                                    break
                            else:
                                line += 8
                                if line == table + 8 * nb:
                                    line = table
                                continue
                            break
                        if seen:
                            continue
                    for n in range(nmodes):
                        col[n][kept] = col[n][b + k]
                    kept += 1
                    if kept == limit:
                        break
                b += cnt
            for n in range(nmodes):
                _range(col[n], kept, &low[n], &high[n])
        self.has_zero = has_zero
        self.count += kept
        for n in range(nmodes):
            ranges[n, 0] = low[n]
            ranges[n, 1] = high[n]
        return kept


cdef void _range(const index_t *c, int64_t n, int64_t *low, int64_t *high) noexcept nogil:
    """(min, max) of c[:n] into *low, *high when n > 0 (a loop the compiler vectorises)."""
    cdef int64_t k
    cdef index_t lo, hi
    if n == 0:
        return
    lo = c[0]
    hi = c[0]
    for k in range(1, n):
        lo = c[k] if c[k] < lo else lo
        hi = c[k] if c[k] > hi else hi
    low[0] = lo
    high[0] = hi
