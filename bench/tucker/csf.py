"""Compressed-sparse-fiber layout of one mode's elements for the local TTM (tucker-lite-distribution
§8, its reference [26]: SPLATT's CSF). Built once per distribution; it replaces the element
lists of :class:`.ttm.TTMPlan` and the coordinates (the leaf values are stored in tree order).

The mode being updated is the root (one tree root per compact output row, so threads can take
whole slices). The other modes are ordered by the estimated TTM flop count
Σ_k (Π_{j≥k} K_{order[j]})·(2·nodes_k − nodes_{k−1}) (:func:`csf_flops`: every node's
partial product is formed once, SPLATT's count), with nodes_k estimated from the exact number
of (slice, index) pairs of each mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from spbench.datasets.sparse_tensor import SparseTensor, linear_keys, unique_sorted

__all__ = ["CSFPlan", "csf_flops", "choose_order"]


def csf_flops(nodes, nnz: int, kdims_by_level) -> float:
    """Flops of the CSF TTM: ``nodes[k]`` nodes at level k < d (level 0 = slices), ``nnz``
    leaves, ``kdims_by_level`` K of each level's mode (index 0: the root's, unused). A parent
    with c children writes its first child's product (K·width multiplies) and adds the others
    (2·K·width each): level k costs Π_{j≥k} K_j · (2·nodes_k − nodes_{k−1})."""
    ks = [int(k) for k in kdims_by_level]
    d = len(ks) - 1
    count = [float(c) for c in nodes[:d]] + [float(nnz)]
    total, width = 0.0, 1
    for k in range(d, 0, -1):
        width *= ks[k]
        total += width * (2.0 * count[k] - count[k - 1])
    return total


def choose_order(coords: np.ndarray, dims, mode: int, K=None) -> tuple:
    """Level order (``mode`` first) of least estimated flops; nodes of a prefix estimated by its
    largest single-mode count of distinct (slice, index) pairs (exact for 3 modes)."""
    N = coords.shape[1]
    others = [j for j in range(N) if j != mode]
    K = [10] * N if K is None else [int(k) for k in K]
    nnz = coords.shape[0]
    if len(others) < 2 or nnz == 0:
        return (mode, *others)
    pairs = {}
    for j in others:
        keys = linear_keys(coords[:, [mode, j]], (dims[mode], dims[j]))
        pairs[j] = int(unique_sorted(keys).size)
    roots = int(unique_sorted(coords[:, mode]).size)
    best, best_cost = None, None
    for perm in permutations(others):
        nodes = [roots] + [max(pairs[j] for j in perm[:k]) for k in range(1, len(perm))]
        cost = csf_flops(nodes, nnz, [K[mode]] + [K[j] for j in perm])
        # ties: prefer decreasing mode indices (then no output permutation is needed)
        key = (cost, [-j for j in perm])
        if best_cost is None or key < best_cost:
            best, best_cost = perm, key
    return (mode, *best)


@dataclass(frozen=True)
class CSFPlan:
    """One mode's elements as a tree: ``rows`` the root slice ids (increasing, = compact rows);
    ``ptr[k]`` (k < d) children of level-k nodes; ``ids[k]`` (1 ≤ k ≤ d) factor rows of the
    level-k nodes (``ids[0]`` is None); ``values`` the nonzeros in leaf order. Indices are
    int32 (a rank holds fewer than 2**31 elements), 4 bytes per node and level."""

    mode: int
    order: tuple
    dims: tuple                 # local mode lengths (factor rows)
    rows: np.ndarray            # int64 (R,)
    ptr: tuple                  # int32 arrays
    ids: tuple                  # int32 arrays
    values: np.ndarray          # float64 (nnz,)

    @property
    def nrows(self) -> int:
        return int(self.rows.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.values.shape[0])

    @property
    def nodes(self) -> list:
        """Nodes per level (level 0 = slices, level d = nonzeros)."""
        return [int(p.shape[0]) - 1 for p in self.ptr] + [self.nnz]

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.values.nbytes + sum(p.nbytes for p in self.ptr)
                   + sum(i.nbytes for i in self.ids[1:]))

    def flops(self, K) -> float:
        """Flops one TTM over this tree performs with core sizes ``K`` (per mode)."""
        return csf_flops(self.nodes, self.nnz, [int(K[j]) for j in self.order])

    def column_perm(self, K) -> np.ndarray:
        """Output column of each position of the level-ordered row (``order[1]`` slowest), or an
        empty array when that is already the unfolding's order (lowest mode fastest)."""
        lev = list(self.order[1:])
        if lev == sorted(lev, reverse=True):
            return np.zeros(0, dtype=np.int64)
        ks = [int(K[j]) for j in lev]
        canon = sorted(lev)                       # canonical: canon[0] fastest
        stride = {j: int(np.prod([int(K[i]) for i in canon[:canon.index(j)]], dtype=np.int64))
                  for j in lev}
        pos = np.zeros(1, dtype=np.int64)
        for j, k in zip(lev, ks):                 # slowest first: each next mode varies faster
            pos = (pos[:, None] + stride[j] * np.arange(k, dtype=np.int64)[None, :]).reshape(-1)
        return np.ascontiguousarray(pos, dtype=np.int64)

    @classmethod
    def build(cls, tensor: SparseTensor, mode: int, elements: np.ndarray | None = None,
              K=None, order=None) -> "CSFPlan":
        """Tree of ``elements`` (index array into ``tensor``; default all) rooted at ``mode``;
        ``order`` (the modes by level) is chosen by :func:`choose_order` unless given."""
        N = tensor.nmodes
        if N < 2:
            raise ValueError("a CSF tree needs a tensor with at least 2 modes")
        if max(tensor.dims, default=0) >= 2 ** 31 or tensor.nnz >= 2 ** 31:
            raise ValueError("CSF indices are int32: 2**31 rows in a mode or elements or more")
        coords, values = tensor.coords, tensor.values
        if elements is not None:
            elements = np.asarray(elements, dtype=np.int64).reshape(-1)
            lo = int(elements[0]) if elements.size else 0
            if elements.size and int(elements[-1]) - lo + 1 == elements.size and \
                    np.all(np.diff(elements) == 1):           # a range (the worker's layout): views
                coords, values = coords[lo:lo + elements.size], values[lo:lo + elements.size]
            else:
                coords, values = coords[elements], values[elements]
        order = tuple(int(j) for j in order) if order is not None else \
            choose_order(coords, tensor.dims, mode, K)
        if order[0] != mode or sorted(order) != list(range(N)):
            raise ValueError(f"order {order} must list every mode once, {mode} first")
        nnz = coords.shape[0]
        d = N - 1
        keys = linear_keys(coords[:, list(order)], [tensor.dims[j] for j in order])
        perm = np.argsort(keys)
        del keys
        new = np.zeros(nnz, dtype=bool)
        if nnz:
            new[0] = True
        starts, ids = [], [None]
        for k in range(d):
            col = coords[perm, order[k]]
            if nnz > 1:
                new[1:] |= col[1:] != col[:-1]
            starts.append(np.flatnonzero(new))
            if k == 0:
                rows = col[starts[0]].astype(np.int64)
            else:
                ids.append(col[starts[k]].astype(np.int32))
            del col
        ids.append(coords[perm, order[d]].astype(np.int32))
        ptr = []
        for k in range(d):
            child = starts[k + 1] if k + 1 < d else None
            p = np.empty(starts[k].size + 1, dtype=np.int32)
            p[:-1] = starts[k] if child is None else np.searchsorted(child, starts[k])
            p[-1] = nnz if child is None else child.size
            ptr.append(p)
        return cls(mode, order, tuple(int(x) for x in tensor.dims), rows, tuple(ptr), tuple(ids),
                   np.ascontiguousarray(values[perm]))
