"""Compressed-sparse-fiber layout of one mode's elements for the local TTM (tucker-lite-distribution
§8, its reference [26]: SPLATT's CSF). Built once per distribution, one mode at a time, by
counting sorts over int32 index columns (:meth:`CSFPlan.from_columns`); it replaces the element
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

__all__ = ["CSFPlan", "csf_flops", "choose_order", "order_from_counts", "prefix_counts", "rank_nodes",
           "tree_work", "gathers_beyond_cache"]


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


def order_from_counts(mode: int, others, roots: int, pairs: dict, nnz: int, K) -> tuple:
    """Level order (``mode`` first) of least estimated flops from ``roots`` (slices), ``pairs[j]``
    (distinct (slice, index of mode j) pairs) and ``nnz``; nodes of a level-prefix estimated by
    its largest single-mode pair count (exact for 3 modes). Ties: decreasing mode indices."""
    others = list(others)
    if len(others) < 2 or nnz == 0:
        return (mode, *others)
    best, best_cost = None, None
    for perm in permutations(others):
        nodes = [roots] + [max(pairs[j] for j in perm[:k]) for k in range(1, len(perm))]
        cost = csf_flops(nodes, nnz, [K[mode]] + [K[j] for j in perm])
        # ties: prefer decreasing mode indices (then no output permutation is needed)
        key = (cost, [-j for j in perm])
        if best_cost is None or key < best_cost:
            best, best_cost = perm, key
    return (mode, *best)


def choose_order(coords: np.ndarray, dims, mode: int, K=None) -> tuple:
    """Level order of the tree of ``coords`` rooted at ``mode`` (:func:`order_from_counts` on
    the exact counts of distinct (slice, index) pairs)."""
    N = coords.shape[1]
    others = [j for j in range(N) if j != mode]
    K = [10] * N if K is None else [int(k) for k in K]
    nnz = coords.shape[0]
    if len(others) < 2 or nnz == 0:
        return (mode, *others)
    pairs = {j: int(unique_sorted(linear_keys(coords[:, [mode, j]], (dims[mode], dims[j]))).size) for j in others}
    roots = int(unique_sorted(coords[:, mode]).size)
    return order_from_counts(mode, others, roots, pairs, nnz, K)


def _distinct_per_rank(cols, radices, owner: np.ndarray, P: int) -> np.ndarray:
    """Per rank p, the distinct coordinate tuples ``cols`` among the elements with owner p."""
    span = int(np.prod([int(r) for r in radices], dtype=object))
    if span * P < 1 << 62:
        key = owner.astype(np.int64) * span
        stride = span
        for c, r in zip(cols, radices):
            stride //= int(r)
            key += c.astype(np.int64) * stride
        return np.bincount(unique_sorted(key) // span, minlength=P).astype(np.int64)
    key = linear_keys(np.stack(cols, axis=1), radices)          # too many cells: sort by (rank, key)
    order = np.lexsort((key, owner))
    key, own = key[order], owner[order]
    new = np.ones(key.size, dtype=bool)
    new[1:] = (key[1:] != key[:-1]) | (own[1:] != own[:-1])
    return np.bincount(own[new], minlength=P).astype(np.int64)


def prefix_counts(coords: np.ndarray, dims, mode: int, owner: np.ndarray, P: int) -> dict:
    """For the trees the ranks build of ``mode`` (``owner[e]``: the rank holding element e for
    this mode): per set S of the other modes with 1 ≤ |S| ≤ N − 2, the distinct (slice, indices
    of S) prefixes per rank (arrays of length P, keyed by the sorted tuple S); what
    :func:`rank_nodes` needs to know every rank's tree shape without building it."""
    from itertools import combinations

    N = coords.shape[1]
    others = [j for j in range(N) if j != mode]
    owner = np.asarray(owner)
    out = {}
    for size in range(1, N - 1):
        for S in combinations(others, size):
            cols = [coords[:, mode]] + [coords[:, j] for j in S]
            out[S] = _distinct_per_rank(cols, [dims[mode]] + [dims[j] for j in S], owner, P)
    return out


def rank_nodes(mode: int, N: int, prefix: dict, roots_p, nnz_p, K) -> list:
    """Per rank, (level order, nodes per level) of the tree :meth:`CSFPlan.build` makes of its
    elements (``prefix``: :func:`prefix_counts`; ``roots_p`` slices and ``nnz_p`` elements per
    rank; ``K`` per mode): the order :func:`order_from_counts` picks, then the exact distinct
    prefixes of each level."""
    others = [j for j in range(N) if j != mode]
    K = [int(k) for k in K]
    out = []
    for p in range(len(nnz_p)):
        e, roots = int(nnz_p[p]), int(roots_p[p])
        pairs = {j: int(prefix[(j,)][p]) for j in others} if N > 2 else {}
        order = order_from_counts(mode, others, roots, pairs, e, K)
        nodes = [roots] + [int(prefix[tuple(sorted(order[1:k + 1]))][p]) for k in range(1, N - 1)] + [e]
        out.append((order, nodes))
    return out


def tree_work(order, nodes, K) -> tuple[float, float, float]:
    """What one TTM over a tree of level ``order`` with ``nodes`` per level does, in the cost
    model's terms (:mod:`.model`, ``ttm: csf``): (flops of the leaf sums along fibers, flops above
    the leaves, internal nodes between the slices and the leaves); the two flop counts add up to
    :func:`csf_flops`."""
    ks = [int(K[j]) for j in order]
    d = len(ks) - 1
    leaf = ks[d] * (2.0 * nodes[d] - nodes[d - 1])
    return leaf, csf_flops(nodes[:d], nodes[d], ks) - leaf, float(sum(nodes[1:d]))


def gathers_beyond_cache(order, nodes, K, rows, cache_bytes: float) -> float:
    """Factor-row reads of one TTM over the tree that miss a cache of ``cache_bytes``: every node
    of level k ≥ 1 reads a row of F_{order[k]} (``rows[j]`` rows of K_j doubles held), a miss with
    probability max(0, 1 − cache / bytes of that factor) when rows are read at random."""
    total = 0.0
    for k in range(1, len(order)):
        size = 8.0 * int(rows[order[k]]) * int(K[order[k]])
        total += float(nodes[k]) * max(0.0, 1.0 - cache_bytes / size) if size > 0 else 0.0
    return total


@dataclass(frozen=True)
class CSFPlan:
    """One mode's elements as a tree: ``rows`` the root slice ids (increasing, = compact rows);
    ``ptr[k]`` (k < d) children of level-k nodes; ``ids[k]`` (1 ≤ k ≤ d) factor rows of the
    level-k nodes (``ids[0]`` is None); ``values`` the nonzeros in leaf order. Indices (``rows``
    too) are int32 (a rank holds fewer than 2**31 elements), 4 bytes per node and level."""

    mode: int
    order: tuple
    dims: tuple                 # local mode lengths (factor rows)
    rows: np.ndarray            # int32 (R,)
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
              K=None, order=None, threads: int = 1) -> "CSFPlan":
        """Tree of ``elements`` (index array into ``tensor``; default all) rooted at ``mode``;
        ``order`` (the modes by level) is chosen by :func:`order_from_counts` unless given;
        ``threads``: :meth:`from_columns`'."""
        if tensor.nmodes < 2:
            raise ValueError("a CSF tree needs a tensor with at least 2 modes")
        coords, values = tensor.coords, tensor.values
        if elements is not None:
            elements = np.asarray(elements, dtype=np.int64).reshape(-1)
            lo = int(elements[0]) if elements.size else 0
            if elements.size and int(elements[-1]) - lo + 1 == elements.size and \
                    np.all(np.diff(elements) == 1):           # a range: views
                coords, values = coords[lo:lo + elements.size], values[lo:lo + elements.size]
            else:
                coords, values = coords[elements], values[elements]
        _check_int32(tensor.dims, coords.shape[0])
        cols = [np.asarray(coords[:, j], dtype=np.int32) for j in range(tensor.nmodes)]
        return cls.from_columns(cols, tensor.dims, mode, values, K=K, order=order, threads=threads)

    @classmethod
    def from_columns(cls, cols, dims, mode: int, values: np.ndarray, K=None, order=None,
                     threads: int = 1) -> "CSFPlan":
        """Tree of the elements whose mode-j indices are ``cols[j]`` (int32, possibly strided views;
        ``dims[j]`` bounds them) and values ``values``, rooted at ``mode``. Counting sorts by each
        level's column (stable, O(nnz + length) per level, the keys gathered in the current order so
        every pass reads them in sequence): the element-sized scratch is int32 (two permutations,
        then the sorted level columns, which give every level's nodes in one sequential pass). The
        level order is :func:`order_from_counts` on the exact pair counts unless ``order`` is
        given. The result is the tree of a sort by the level keys. ``threads``: the sorts and
        gathers of tens of thousands of elements or more run on that many threads."""
        from spbench.kernels.tucker import _ttm_csf

        N = len(cols)
        if N < 2:
            raise ValueError("a CSF tree needs a tensor with at least 2 modes")
        nnz = int(values.shape[0])
        _check_int32(dims, nnz)
        dims = tuple(int(x) for x in dims)
        cols = [np.asarray(c) for c in cols]
        if any(c.dtype != np.int32 or c.shape != (nnz,) for c in cols):
            raise ValueError(f"columns must be {N} int32 arrays of {nnz} indices")
        if nnz and any(int(c.min()) < 0 or int(c.max()) >= L for c, L in zip(cols, dims)):
            raise ValueError(f"an index lies outside its mode's length {dims}")
        counts = np.empty(max(dims) + 1, dtype=np.int64)
        perm = np.empty(nnz, dtype=np.int32)
        identity = np.zeros(0, dtype=np.int32)
        if order is None:
            others = [j for j in range(N) if j != mode]
            if len(others) < 2 or nnz == 0:
                order = (mode, *others)
            else:
                _ttm_csf.stable_order(cols[mode], dims[mode], identity, perm, counts, threads)   # by slice
                last = np.empty(max(dims[j] for j in others), dtype=np.int32)
                pairs = {}
                for j in others:
                    roots, pairs[j] = _ttm_csf.distinct_pairs(_take(cols[j], perm, threads), counts[:dims[mode]],
                                                              last)
                del last
                Kw = [10] * N if K is None else [int(k) for k in K]
                order = order_from_counts(mode, others, roots, pairs, nnz, Kw)
        order = tuple(int(j) for j in order)
        if order[0] != mode or sorted(order) != list(range(N)):
            raise ValueError(f"order {order} must list every mode once, {mode} first")
        # least significant level first; every pass is stable, so after the last (the slices) the
        # elements are sorted by (order[0], order[1], ..., order[d])
        bufs = [perm, np.empty(nnz, dtype=np.int32)]
        src = identity
        for t, j in enumerate(reversed(order)):
            _ttm_csf.stable_order(cols[j] if src is identity else _take(cols[j], src, threads), dims[j], src,
                                  bufs[t % 2], counts, threads)
            src = bufs[t % 2]
        del bufs, perm
        d = N - 1
        # sorted level columns (the last is the leaves' ids); the slices' from the last pass's counts
        level = [np.repeat(np.arange(dims[mode], dtype=np.int32), np.diff(counts[:dims[mode]], prepend=0))]
        del counts
        level += [_take(cols[j], src, threads) for j in order[1:]]
        nodes = _ttm_csf.tree_nodes(level[:d])
        rows = np.empty(nodes[0], dtype=np.int32)
        ptr = [np.empty(nodes[k] + 1, dtype=np.int32) for k in range(d)]
        ids = [None] + [np.empty(nodes[k], dtype=np.int32) for k in range(1, d)] + [level[d]]
        _ttm_csf.tree_fill(level[:d], rows, ptr, ids)
        del level
        vals = _take(np.asarray(values, dtype=np.float64), src, threads)
        return cls(mode, order, dims, rows, tuple(ptr), tuple(ids), vals)


def _take(a: np.ndarray, idx: np.ndarray, threads: int = 1) -> np.ndarray:
    """``a[idx]`` for int32 positions (compiled, on ``threads`` threads)."""
    from spbench.kernels.tucker import _ttm_csf

    out = np.empty(idx.shape[0], dtype=a.dtype)
    _ttm_csf.gather(a, idx, out, threads)
    return out


def _check_int32(dims, nnz: int) -> None:
    if max(dims, default=0) >= 2 ** 31 or nnz >= 2 ** 31:
        raise ValueError("CSF indices are int32: 2**31 rows in a mode or elements or more")
