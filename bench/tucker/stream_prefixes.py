"""The shapes of every rank's CSF trees (:func:`.csf.prefix_counts`) streamed from the tensor store
in bounded memory, for the ``ttm: csf`` cost model of simulated points (tucker-lite §8's CSF TTM
at the paper's sizes, §7's 32–512 ranks).

What the model needs of mode n is, per rank p and per set S of other modes (1 ≤ |S| ≤ N − 2), the
number of distinct (i_n, i_S) prefixes among the elements π_n places on p. These are sets of
distinct keys far larger than a bitmap can hold, so they are counted by an external sort: while
the store streams past, each element's key (its indices over T = {n} ∪ S in mixed radix, with the
low bits of π_n(e)) is written to a spill file, partitioned into buckets by π_n(e)'s high bits and
by a range of the lowest mode of T whose elements are balanced; afterwards each bucket is read
back alone, sorted and its distinct keys counted per rank. Memory: one chunk's keys and one bucket
(:data:`BUCKET`), whatever the tensor's size; disk: 8 bytes per element and (n, T) of one group
(:func:`spill_groups`), deleted as soon as its buckets are counted.

Equal to :func:`.csf.prefix_counts` of the whole tensor element for element
(``tests/tucker/test_stream_prefixes.py``).
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
from itertools import combinations
from pathlib import Path

import numpy as np

__all__ = ["prefix_sets", "PrefixSpill", "spill_groups", "spill_directory", "BUCKET", "SPILL_BUDGET"]

#: the most keys a bucket should hold on average (its sort is the peak's second term)
BUCKET = 1 << 22
#: spill bytes one pass over the store writes (more (n, T) sets take further passes);
#: ``SPBENCH_SPILL_BUDGET`` (bytes) overrides
SPILL_BUDGET = 8 << 30
#: key bits available (a signed 64-bit key, one bit to spare)
_KEY_BITS = 62


def prefix_sets(N: int) -> list[tuple[int, tuple]]:
    """(n, S) for every mode n and set S of other modes with 1 ≤ |S| ≤ N − 2, as
    :func:`.csf.prefix_counts` keys them (S a sorted tuple)."""
    out = []
    for n in range(N):
        others = [j for j in range(N) if j != n]
        for size in range(1, N - 1):
            out.extend((n, S) for S in combinations(others, size))
    return out


def spill_groups(nnz: int, N: int, budget: int | None = None) -> list[list[tuple[int, tuple]]]:
    """:func:`prefix_sets` grouped into passes of at most ``budget`` spill bytes each (one set per
    pass at least)."""
    budget = int(os.environ.get("SPBENCH_SPILL_BUDGET") or SPILL_BUDGET) if budget is None else int(budget)
    per_set = 8 * max(int(nnz), 1)
    per_pass = max(1, budget // per_set)
    sets = prefix_sets(N)
    return [sets[i:i + per_pass] for i in range(0, len(sets), per_pass)]


def spill_directory() -> Path:
    """Where spills go: ``$SPBENCH_DATA/tmp`` (the disk the pre-flight checks)."""
    from spbench.cache_root import data_dir

    path = data_dir() / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


class _SetLayout:
    """How one (n, S)'s keys are packed and bucketed: T = sorted({n} ∪ S); the lowest mode of T
    is cut into ``groups`` ranges of balanced element counts (``group_of`` per index); a key is
    ((i_lead − start of its range) · Π_rest + rest in mixed radix) · ``width`` + π_n(e) mod
    ``width``; its bucket is (π_n(e) // ``width``) · ``groups`` + its range."""

    def __init__(self, n: int, S: tuple, dims, lead_sizes: np.ndarray, nnz: int, P: int):
        self.n, self.S = n, S
        T = sorted((n, *S))
        self.lead, self.rest = T[0], T[1:]
        rest_span = math.prod(int(dims[j]) for j in self.rest)
        self.strides = [math.prod(int(dims[j]) for j in self.rest[k + 1:]) for k in range(len(self.rest))]
        lead_len = int(dims[self.lead])
        width, groups = int(P), 1
        while True:
            bounds = self._bounds(lead_sizes, groups)
            span = int(np.max(np.diff(bounds))) * rest_span * width
            buckets = -(-P // width) * groups
            finest = width == 1 and groups >= lead_len
            if span < (1 << _KEY_BITS) and (nnz <= BUCKET * buckets or finest):
                break
            if width > 1:
                width = -(-width // 2)
            elif groups < lead_len:
                groups = min(lead_len, groups * 2)
            else:
                raise ValueError(f"prefix keys of modes {T} do not fit in 64 bits")
            if -(-P // width) * groups >= 1 << 16:
                raise ValueError(f"prefix keys of modes {T}: more than 65,535 buckets")
        groups = bounds.size - 1                        # cut points can coincide
        self.rest_span = rest_span
        self.width, self.groups = width, groups
        self.buckets = -(-P // width) * groups
        self.starts = bounds[:-1].astype(np.int64)
        self.group_of = np.repeat(np.arange(groups, dtype=np.uint16), np.diff(bounds))

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

    def keys(self, cols, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(packed keys, bucket per key) of one chunk's elements (``owner``: π_n of each)."""
        lead = np.asarray(cols[self.lead])
        group = self.group_of[lead]
        key = lead.astype(np.int64)
        key -= self.starts[group]
        key *= self.rest_span
        for j, stride in zip(self.rest, self.strides):
            key += np.asarray(cols[j]).astype(np.int64) * stride
        own = owner.astype(np.int64)
        key *= self.width
        key += own % self.width
        bucket = (own // self.width).astype(np.uint16)
        bucket *= np.uint16(self.groups)
        bucket += group
        return key, bucket

    def owner_of(self, bucket: int, offsets: np.ndarray) -> np.ndarray:
        """The ranks of keys of ``bucket`` with owner offsets ``offsets`` (key mod ``width``)."""
        return (bucket // self.groups) * self.width + offsets


class PrefixSpill:
    """The spill of one pass: per (n, S) of ``sets`` a file of keys, each chunk's keys in bucket
    order, and per chunk the keys per bucket; :meth:`counts` reads the buckets back and counts."""

    def __init__(self, sets, dims, slice_sizes, nnz: int, P: int, multi_policy: bool, directory=None):
        self.P, self.multi_policy = int(P), bool(multi_policy)
        self.layouts = [_SetLayout(n, S, dims, np.asarray(slice_sizes[min((n, *S))]), int(nnz), self.P)
                        for n, S in sets]
        self.dir = Path(tempfile.mkdtemp(prefix="spbench-prefixes-", dir=directory))
        self.files = [open(self.dir / f"{i}.keys", "wb") for i in range(len(self.layouts))]
        self.per_chunk: list[list[np.ndarray]] = [[] for _ in self.layouts]

    def add(self, cols, pol: np.ndarray) -> None:
        """Spill one chunk (``pol``: the chunk's policies, one row per mode or one for all)."""
        for k, lay in enumerate(self.layouts):
            key, bucket = lay.keys(cols, pol[lay.n] if self.multi_policy else pol[0])
            order = np.argsort(bucket, kind="stable")           # a radix sort of 16-bit bucket ids
            key[order].tofile(self.files[k])
            self.per_chunk[k].append(np.bincount(bucket, minlength=lay.buckets).astype(np.int64))

    def counts(self) -> dict:
        """{(n, S): distinct (i_n, i_S) prefixes per rank (int64, length P)}, each set's file removed
        once counted (:meth:`close`, the caller's, removes the folder whatever happens)."""
        for f in self.files:
            f.close()
        out = {}
        for k, lay in enumerate(self.layouts):
            out[(lay.n, lay.S)] = self._count(k, lay)
            os.unlink(self.dir / f"{k}.keys")
        return out

    def _count(self, k: int, lay: _SetLayout) -> np.ndarray:
        sizes = np.array(self.per_chunk[k], dtype=np.int64).reshape(-1, lay.buckets)    # chunks x buckets
        starts = np.concatenate(([0], np.cumsum(sizes.sum(axis=1))))[:-1]
        within = np.cumsum(sizes, axis=1) - sizes
        result = np.zeros(self.P, dtype=np.int64)
        with open(self.dir / f"{k}.keys", "rb") as f:
            for b in range(lay.buckets):
                parts = []
                for c in np.flatnonzero(sizes[:, b]):
                    f.seek(int(starts[c] + within[c, b]) * 8)
                    parts.append(np.fromfile(f, dtype=np.int64, count=int(sizes[c, b])))
                if not parts:
                    continue
                keys = np.concatenate(parts) if len(parts) > 1 else parts[0]
                del parts
                keys.sort()
                first = np.empty(keys.size, dtype=bool)
                first[0] = True
                np.not_equal(keys[1:], keys[:-1], out=first[1:])
                owners = lay.owner_of(b, keys[first] % lay.width)
                result += np.bincount(owners, minlength=self.P)[:self.P]
        return result

    def close(self) -> None:
        for f in self.files:
            f.close()
        shutil.rmtree(self.dir, ignore_errors=True)
