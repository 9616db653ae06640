"""Row-index mapping σ_n (paper §3 "SVD Component", §5 "Row-Index Mapping").

For mode n under policy π_n, processor p *shares* Slice_n^l when it owns one of its elements.
σ_n(l) must be one of the sharers. Good slices (one sharer) are owned by that sharer. Shared
(bad) slices are assigned greedily to balance the owners' communication load:

* weight of a shared slice w_l = s_l − 1 (s_l = number of sharers): per Lanczos query its owner
  receives s_l − 1 partial sums (x_out = Z·x) and sends s_l − 1 values (y_in), and, for a
  uni-policy scheme, sends the new factor row to the s_l − 1 other sharers;
* slices in decreasing weight (ties: increasing slice id), each to the sharer with the smallest
  load so far (ties: lowest rank); good slices add no load (longest-processing-time greedy).

The greedy is a Python loop over the shared slices only (a few µs each): negligible for Lite
(at most P shared slices per mode) and CoarseG (none); O(shared slices + their sharers) for
MediumG/HyperG.
"""
from __future__ import annotations

import numpy as np

from .tensor import unique_sorted

__all__ = ["sharer_pairs", "row_owners", "row_owners_from_pairs"]


def sharer_pairs(index: np.ndarray, policy: np.ndarray, nparts: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique (slice, processor) pairs with p sharing the slice; sorted by slice, then processor."""
    P = int(nparts)
    keys = unique_sorted(np.asarray(index, dtype=np.int64) * P + np.asarray(policy, dtype=np.int64))
    return keys // P, keys % P


def row_owners_from_pairs(slices: np.ndarray, procs: np.ndarray, length: int, nparts: int) -> np.ndarray:
    """σ_n from sorted sharer pairs; int32 over [0, length), −1 for empty slices."""
    owner = np.full(int(length), -1, dtype=np.int32)
    if slices.size == 0:
        return owner
    counts = np.bincount(slices, minlength=length)
    starts = np.zeros(int(length) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    good = np.flatnonzero(counts == 1)
    owner[good] = procs[starts[good]]
    bad = np.flatnonzero(counts > 1)
    if bad.size:
        w = counts[bad] - 1
        bad = bad[np.argsort(-w, kind="stable")]
        load = [0] * int(nparts)
        plist = procs.tolist()
        st = starts.tolist()
        cnt = counts.tolist()
        out = np.empty(bad.size, dtype=np.int32)
        for i, l in enumerate(bad.tolist()):
            a, b = st[l], st[l + 1]
            best = min(plist[a:b], key=load.__getitem__)   # first minimum = lowest rank (sorted)
            load[best] += cnt[l] - 1
            out[i] = best
        owner[bad] = out
    return owner


def row_owners(tensor, policy: np.ndarray, mode: int, nparts: int) -> np.ndarray:
    """σ_mode for ``policy`` (see module docstring); −1 marks empty slices."""
    s, p = sharer_pairs(tensor.coords[:, mode], policy, nparts)
    return row_owners_from_pairs(s, p, tensor.dims[mode], nparts)


class RowOwners:
    """σ_n of the slices a rank shares, under MPI (interim rule: every rank gathers the sharer
    pairs and runs the global greedy; the home-rank rule without global gathers replaces it)."""

    def __init__(self, sigma: np.ndarray, rows: np.ndarray):
        self._sigma = sigma
        self.owners = sigma[rows] if rows.size else np.zeros(0, dtype=np.int32)

    @classmethod
    def compute(cls, comm, rows: np.ndarray, length: int) -> "RowOwners":
        from .mpi import allgatherv

        P = comm.size
        rows = np.asarray(rows, dtype=np.int64)
        keys, _ = allgatherv(comm, rows * P + comm.rank)
        keys.sort()
        return cls(row_owners_from_pairs(keys // P, keys % P, length, P), rows)

    def lookup(self, comm, slices: np.ndarray) -> np.ndarray:
        return self._sigma[np.asarray(slices, dtype=np.int64)]
