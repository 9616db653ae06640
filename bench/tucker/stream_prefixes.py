"""The shapes of every rank's CSF trees (:func:`.csf.prefix_counts`) streamed from the tensor store
in bounded memory, for the ``ttm: csf`` cost model of simulated points (tucker-lite §8's CSF TTM
at the paper's sizes, §7's 32–512 ranks).

What the model needs of mode n is, per rank p and per set S of other modes (1 ≤ |S| ≤ N − 2), the
number of distinct (i_n, i_S) prefixes among the elements π_n places on p; of the sets with
|S| ≥ 2 only those the level order each rank picks reads (:func:`tree_sets`, from the |S| = 1
counts). Sets with the same modes T = {n} ∪ S under the same policy (a uni-policy scheme) have
the same counts and are counted once. These are sets of distinct keys far larger than a bitmap
can hold, so they are counted by an external sort: while the store streams past, each element's
key (its indices over T in mixed radix, with the low bits of π_n(e)) is written to a spill file,
partitioned into buckets by π_n(e)'s high bits and by a range of the lowest mode of T whose
elements are balanced (one compiled counting sort per chunk, ``kernels/tucker/_prefix_spill.pyx``);
afterwards each bucket is read back alone and its distinct keys counted per rank in compiled code
(a radix pass into cache-sized ranges, then a hash set or a bitmap: no sort), one bucket per
thread. Memory: one chunk's keys and a bucket and its scratch per thread (:data:`BUCKET`), whatever
the tensor's size; disk: 8 bytes per element and key set of one group (:func:`spill_groups`),
deleted as soon as its buckets are counted, or, inside a sweep's :func:`spill_pool`, overwritten by
the next point and deleted when the sweep ends.

Equal to :func:`.csf.prefix_counts` of the whole tensor element for element
(``tests/tucker/test_stream_prefixes.py``).
"""
from __future__ import annotations

import fcntl
import math
import os
import shutil
import tempfile
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import combinations
from pathlib import Path

import numpy as np

__all__ = ["prefix_sets", "pair_sets", "tree_sets", "spill_key", "PrefixSpill", "spill_groups", "spill_directory",
           "spill_pool", "BUCKET", "SPILL_BUDGET", "POOL_VARIABLE"]

#: the most keys a bucket should hold on average (its sort is the peak's second term)
BUCKET = 1 << 22
#: spill bytes one pass over the store writes (more key sets take further passes);
#: ``SPBENCH_SPILL_BUDGET`` (bytes) overrides
SPILL_BUDGET = 8 << 30
#: key bits available (a signed 64-bit key, one bit to spare)
_KEY_BITS = 62
#: threads sorting and counting buckets
COUNT_THREADS = 2
#: how a bucket's distinct keys are counted: "radix" (compiled radix passes down to a bitmap,
#: ``count_unsorted``) or "sort" (numpy's sort, then ``count_distinct``: the reference, equal counts)
COUNTING = "radix"
#: bits of each counting thread's bitmap (a range of keys this wide is counted without sorting)
BITMAP_BITS = 1 << 24

_buffers = threading.local()


def _bucket_buffers(n: int):
    """This thread's buffers for counting a bucket of ``n`` keys (grown, never shrunk): the keys,
    as many scratch keys, and a zeroed bitmap of :data:`BITMAP_BITS`."""
    work = getattr(_buffers, "work", None)
    if work is None or work.bits.shape[0] != max(BITMAP_BITS // 64, 1):
        work = _buffers.work = types.SimpleNamespace(keys=np.empty(0, dtype=np.int64),
                                                     scratch=np.empty(0, dtype=np.int64),
                                                     bits=np.zeros(max(BITMAP_BITS // 64, 1), dtype=np.uint64))
    if work.keys.shape[0] < n:
        work.keys = np.empty(n, dtype=np.int64)
        work.scratch = np.empty(n, dtype=np.int64)
    return work


def prefix_sets(N: int) -> list[tuple[int, tuple]]:
    """(n, S) for every mode n and set S of other modes with 1 ≤ |S| ≤ N − 2, as
    :func:`.csf.prefix_counts` keys them (S a sorted tuple)."""
    out = []
    for n in range(N):
        others = [j for j in range(N) if j != n]
        for size in range(1, N - 1):
            out.extend((n, S) for S in combinations(others, size))
    return out


def pair_sets(N: int) -> list[tuple[int, tuple]]:
    """The sets with |S| = 1: every rank's level order is chosen from them (:func:`.csf.rank_nodes`)."""
    return [(n, S) for n, S in prefix_sets(N) if len(S) == 1] if N > 2 else []


def tree_sets(counts: list, K_values) -> list[tuple[int, tuple]]:
    """The sets with |S| ≥ 2 that :func:`.csf.rank_nodes` reads for any core size of ``K_values``
    (ints, K_n = K, or per-mode lists): per mode n and rank, ``sorted(order[1:k+1])`` of the level
    order :func:`.csf.order_from_counts` picks from ``counts[n]``'s ``r_p``, ``e_p`` and |S| = 1
    ``csf_prefix_p``."""
    from spbench.tucker.hooi.csf import order_from_counts

    N = len(counts)
    if N < 4:
        return []
    Ks = [[int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K] for K in K_values]
    need = set()
    for n, c in enumerate(counts):
        others = [j for j in range(N) if j != n]
        pairs = np.stack([np.asarray(c["csf_prefix_p"][(j,)], dtype=np.int64) for j in others], axis=1)
        loads = np.column_stack([np.asarray(c["r_p"], dtype=np.int64), np.asarray(c["e_p"], dtype=np.int64), pairs])
        for row in {tuple(int(x) for x in r) for r in loads}:        # ranks with equal counts pick alike
            for K in Ks:
                order = order_from_counts(n, others, row[0], dict(zip(others, row[2:])), row[1], K)
                need.update((n, tuple(sorted(order[1:k + 1]))) for k in range(2, N - 1))
    return sorted(need)


def spill_key(n: int, S: tuple, multi_policy: bool) -> tuple[int, tuple]:
    """(policy row, sorted modes T = {n} ∪ S) of a set: sets with equal keys have equal counts."""
    return (n if multi_policy else 0, tuple(sorted((n, *S))))


def spill_groups(nnz: int, N: int, budget: int | None = None, sets=None,
                 multi_policy: bool = True) -> list[list[tuple[int, tuple]]]:
    """``sets`` (default :func:`prefix_sets`) grouped into passes of at most ``budget`` spill bytes
    each (one key set per pass at least; sets of one :func:`spill_key` in one pass)."""
    budget = int(os.environ.get("SPBENCH_SPILL_BUDGET") or SPILL_BUDGET) if budget is None else int(budget)
    per_pass = max(1, budget // (8 * max(int(nnz), 1)))
    sets = prefix_sets(N) if sets is None else list(sets)
    keys: dict = {}
    for s in sets:
        keys.setdefault(spill_key(*s, multi_policy), []).append(s)
    groups = list(keys.values())
    return [[s for g in groups[i:i + per_pass] for s in g] for i in range(0, len(groups), per_pass)]


def spill_directory() -> Path:
    """Where spills go: ``$SPBENCH_DATA/tmp`` (the disk the pre-flight checks)."""
    from spbench.store.cache_root import data_dir

    path = data_dir() / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


#: the environment variable naming the sweep's spill pool (set by :func:`spill_pool`, inherited by
#: the points it forks)
POOL_VARIABLE = "SPBENCH_SPILL_POOL"


def _lock(path: Path, wait: bool):
    """``path`` opened and locked exclusively (flock), or None when another holds it and not ``wait``."""
    fh = open(path, "a")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        fh.close()
        return None
    return fh


@contextmanager
def spill_pool():
    """A folder of spill files the points of one sweep reuse, removed when the sweep ends.

    A spill overwrites the files the point before left: their pages are already in the page cache
    and their blocks on disk, so a point after another spends about half the time filling fresh
    pages (docs/performance.md, "With a Tucker calibration"). The folder is held by a lock for the
    sweep's life; pools whose sweep was killed are removed first."""
    root = spill_directory()
    for old in root.glob("spill-pool-*"):
        held = _lock(old / ".owner", wait=False) if (old / ".owner").is_file() else None
        if held is not None:            # nobody holds it: its sweep ended without removing it
            shutil.rmtree(old, ignore_errors=True)
            held.close()
    folder = Path(tempfile.mkdtemp(prefix="spill-pool-", dir=root))
    owner = _lock(folder / ".owner", wait=True)
    previous = os.environ.get(POOL_VARIABLE)
    os.environ[POOL_VARIABLE] = str(folder)
    try:
        yield folder
    finally:
        if previous is None:
            os.environ.pop(POOL_VARIABLE, None)
        else:
            os.environ[POOL_VARIABLE] = previous
        shutil.rmtree(folder, ignore_errors=True)
        owner.close()


class _SetLayout:
    """How the keys of one (policy row, T) are packed and bucketed: the lowest mode of T (the lead)
    is cut into ``groups`` ranges of balanced element counts (``starts`` per range; ``lead_block``
    the range of every 2**``block_shift``-th index, where the kernel's search for an index's range
    starts); a key is ((i_lead − start of its range) · Π_rest + rest in mixed radix) · ``width``
    + π(e) mod ``width`` (``width`` a power of two); its bucket is (π(e) // ``width``) · ``groups``
    + its range."""

    def __init__(self, row: int, T: tuple, dims, lead_sizes: np.ndarray, nnz: int, P: int):
        self.row = row
        self.lead, self.rest = T[0], T[1:]
        rest_span = math.prod(int(dims[j]) for j in self.rest)
        strides = [math.prod(int(dims[j]) for j in self.rest[k + 1:]) for k in range(len(self.rest))]
        lead_len = int(dims[self.lead])
        width, groups = 1 << max(int(P) - 1, 0).bit_length(), 1
        while True:
            bounds = self._bounds(lead_sizes, groups)
            span = int(np.max(np.diff(bounds))) * rest_span * width
            buckets = -(-P // width) * groups
            finest = width == 1 and groups >= lead_len
            if span < (1 << _KEY_BITS) and (nnz <= BUCKET * buckets or finest):
                break
            if width > 1:
                width //= 2
            elif groups < lead_len:
                groups = min(lead_len, groups * 2)
            else:
                raise ValueError(f"prefix keys of modes {T} do not fit in 64 bits")
            if -(-P // width) * groups >= 1 << 16:
                raise ValueError(f"prefix keys of modes {T}: more than 65,535 buckets")
        groups = bounds.size - 1                        # cut points can coincide
        self.rest_span, self.width, self.groups = rest_span, width, groups
        self.buckets = -(-P // width) * groups
        self.rest_modes = np.array(self.rest, dtype=np.int64)
        self.strides = np.array(strides, dtype=np.int64)
        self.starts = bounds[:-1].astype(np.int64)
        # the range of each block of 2**block_shift lead indices' first index (at most 16,384 blocks)
        self.block_shift = max(lead_len - 1, 0).bit_length() - 14 if lead_len > 1 << 14 else 0
        firsts = np.arange(0, lead_len, 1 << self.block_shift, dtype=np.int64)
        self.lead_block = (np.searchsorted(bounds, firsts, side="right") - 1).astype(np.uint16)
        ranks = np.arange(P, dtype=np.int64)
        self.own_low = ranks & (width - 1)
        self.own_bucket = (ranks // width) * groups

    @staticmethod
    def _bounds(sizes: np.ndarray, groups: int) -> np.ndarray:
        """``groups`` + 1 cut points of the lead mode's indices, balancing the elements (no empty range
        unless there are more groups than indices with elements)."""
        L = sizes.size
        if groups <= 1:
            return np.array([0, L], dtype=np.int64)
        csum = np.cumsum(sizes, dtype=np.int64)
        total = int(csum[-1]) if L else 0
        cuts = np.searchsorted(csum, (np.arange(1, groups) * total) // groups, side="right")
        return np.unique(np.concatenate(([0], np.clip(cuts, 0, L), [L]))).astype(np.int64)

    def scatter(self, cols: list, owner: np.ndarray, scratch: "_Scratch", keys: np.ndarray,
                counts: np.ndarray) -> np.ndarray:
        """One chunk's keys in bucket order (a view of ``keys``), its keys per bucket in ``counts``."""
        from spbench.kernels.tucker._prefix_spill import scatter_keys

        m = owner.shape[0]
        scatter_keys(cols, owner, self.lead, self.rest_modes, self.strides, self.starts, self.rest_span,
                     self.lead_block, self.block_shift, self.own_low, self.own_bucket, self.width, scratch.bucket,
                     scratch.pos, counts, keys)
        return keys[:m]


class _Scratch:
    """The per-element buffers of :meth:`_SetLayout.scatter`, grown to the largest chunk: the
    bucket of each element and two key buffers, one filled while the other is written out."""

    def __init__(self):
        self.keys = [np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)]
        self.bucket = np.empty(0, dtype=np.int32)
        self.pos = np.empty(1 << 16, dtype=np.int64)

    def fit(self, m: int) -> None:
        if self.bucket.shape[0] < m:
            self.keys = [np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)]
            self.bucket = np.empty(m, dtype=np.int32)


def _index_columns(cols) -> list:
    """The chunk's index columns as contiguous arrays of one dtype (int32 when all are)."""
    cols = [np.asarray(c) for c in cols]
    dtype = np.int32 if all(c.dtype == np.int32 for c in cols) else np.int64
    return [np.ascontiguousarray(c, dtype=dtype) for c in cols]


class PrefixSpill:
    """The spill of one pass: per key set (:func:`spill_key`) of ``sets`` a file of keys, each
    chunk's keys in bucket order, and per chunk the keys per bucket; :meth:`counts` reads the
    buckets back and counts. ``per_slice``: the elements are one rank's (P = 1, the policy row all
    zeros) and each set (n, S) is counted per slice of mode n instead of per rank (its keys led by
    mode n, so a key's slice is its quotient by the span of S: :mod:`.slice_prefixes`)."""

    def __init__(self, sets, dims, slice_sizes, nnz: int, P: int, multi_policy: bool, directory=None,
                 per_slice: bool = False):
        self.P, self.multi_policy, self.per_slice = int(P), bool(multi_policy), bool(per_slice)
        if self.per_slice and self.P != 1:
            raise ValueError("per-slice counts are of one rank's elements (P = 1)")
        self.dims = [int(d) for d in dims]
        self.sets = list(sets)
        keys = list(dict.fromkeys(self._key(n, S) for n, S in self.sets))
        self.layouts = [_SetLayout(row, T, dims, np.asarray(slice_sizes[T[0]]), int(nnz), self.P) for row, T in keys]
        self.keys = keys
        pool = os.environ.get(POOL_VARIABLE)
        self.lease = _lock(Path(pool) / ".use", wait=False) if pool and Path(pool).is_dir() else None
        if self.lease is not None:          # the sweep's pool: overwrite what the point before left
            self.dir = Path(pool)
            self.files = [open(self.dir / f"{i}.keys", "r+b" if (self.dir / f"{i}.keys").exists() else "wb")
                          for i in range(len(self.layouts))]
        else:
            self.dir = Path(tempfile.mkdtemp(prefix="spbench-prefixes-", dir=directory))
            self.files = [open(self.dir / f"{i}.keys", "wb") for i in range(len(self.layouts))]
        self.per_chunk: list[list[np.ndarray]] = [[] for _ in self.layouts]
        self.scratch = _Scratch()
        self.writer = ThreadPoolExecutor(1)          # the disk is slower than the keys are made
        self.writing = [None, None]                  # the write of each key buffer in flight
        self.turn = 0

    def _written(self, slot: int) -> None:
        if self.writing[slot] is not None:
            self.writing[slot].result()
            self.writing[slot] = None

    def add(self, cols, pol: np.ndarray) -> None:
        """Spill one chunk (``pol``: the chunk's policies, one row per mode or one for all): each key
        set's keys made into one buffer while the other buffer's are written."""
        cols = _index_columns(cols)
        self.scratch.fit(len(cols[0]))         # a write in flight keeps its old buffer alive
        for k, lay in enumerate(self.layouts):
            slot, self.turn = self.turn, 1 - self.turn
            self._written(slot)
            counts = np.empty(lay.buckets, dtype=np.int64)
            keys = lay.scatter(cols, np.ascontiguousarray(pol[lay.row], dtype=np.int32), self.scratch,
                               self.scratch.keys[slot], counts)
            self.writing[slot] = self.writer.submit(keys.tofile, self.files[k])
            self.per_chunk[k].append(counts)

    def _finish_writes(self) -> None:
        for slot in (0, 1):
            self._written(slot)
        self.writer.shutdown()
        for f in self.files:
            f.close()

    def counts(self) -> dict:
        """{(n, S): distinct (i_n, i_S) prefixes per rank (int64, length P)}, each key set's file
        removed once counted (:meth:`close`, the caller's, removes the folder whatever happens)."""
        self._finish_writes()
        by_key = {}
        for k, lay in enumerate(self.layouts):
            by_key[self.keys[k]] = self._count(k, lay)
            if self.lease is None:
                os.unlink(self.dir / f"{k}.keys")
        return {(n, S): by_key[self._key(n, S)].copy() for n, S in self.sets}

    def _key(self, n: int, S: tuple) -> tuple[int, tuple]:
        """The key set of (n, S): :func:`spill_key`, or per slice (policy row 0, mode n leading)."""
        return (0, (n, *S)) if self.per_slice else spill_key(n, S, self.multi_policy)

    def _count(self, k: int, lay: _SetLayout) -> np.ndarray:
        from spbench.kernels.tucker._prefix_spill import count_distinct, count_unsorted

        sizes = np.array(self.per_chunk[k], dtype=np.int64).reshape(-1, lay.buckets)    # chunks x buckets
        starts = np.concatenate(([0], np.cumsum(sizes.sum(axis=1))))[:-1]
        within = np.cumsum(sizes, axis=1) - sizes
        fd = os.open(self.dir / f"{k}.keys", os.O_RDONLY)

        firsts = np.append(lay.starts, self.dims[lay.lead])

        def length(b: int) -> int:
            """The counts of bucket b: its range of slices, or every rank's (padded to ``width``)."""
            return int(firsts[b + 1] - firsts[b]) if self.per_slice else -(-self.P // lay.width) * lay.width

        def where(b: int) -> tuple[int, int, int]:
            """(base, mask, div) of the kernels: a distinct key counts at base + ((key // div) & mask)."""
            return (0, -1, lay.rest_span) if self.per_slice else ((b // lay.groups) * lay.width, lay.width - 1, 1)

        def bucket(b: int) -> np.ndarray:
            result = np.zeros(length(b), dtype=np.int64)
            base, mask, div = where(b)
            total = int(sizes[:, b].sum())
            if total == 0:
                return result
            work = _bucket_buffers(total) if COUNTING == "radix" else None
            keys = np.empty(total, dtype=np.int64) if work is None else work.keys[:total]
            at = 0
            for c in np.flatnonzero(sizes[:, b]):
                n = int(sizes[c, b])
                view = memoryview(keys[at:at + n]).cast("B")
                got = 0
                while got < view.nbytes:
                    read = os.preadv(fd, [view[got:]], int(starts[c] + within[c, b]) * 8 + got)
                    if read <= 0:
                        raise OSError(f"{self.dir / f'{k}.keys'}: spill file shorter than written")
                    got += read
                at += n
            if work is None:            # the reference: numpy's sort, then one count per distinct key
                keys.sort()
                count_distinct(keys, mask, base, result, div)
            else:
                count_unsorted(keys, work.scratch, mask, base, result, work.bits, div)
            return result

        total = np.zeros(self.dims[lay.lead] if self.per_slice else length(0), dtype=np.int64)
        try:
            with ThreadPoolExecutor(COUNT_THREADS) as pool:
                for b, part in enumerate(pool.map(bucket, range(lay.buckets))):
                    if self.per_slice:          # the buckets are disjoint ranges of slices
                        total[int(firsts[b]):int(firsts[b + 1])] = part
                    else:
                        total += part
        finally:
            os.close(fd)
        return total if self.per_slice else total[:self.P].copy()

    def close(self) -> None:
        try:
            self._finish_writes()
        finally:
            if self.lease is None:
                shutil.rmtree(self.dir, ignore_errors=True)
            else:                           # the files stay for the sweep's next point
                self.lease.close()
                self.lease = None
