"""What one rank needs to run HOOI on its share of a distributed tensor (tucker-lite-distribution
§3 Figures 4–5, "Factor Matrix Transfer"; §4.2), built once before the first invocation.

Local index (issue: factors without full-size replicas). For every mode j the rank keeps only the
factor rows it needs, ``factor_ids[j]`` (increasing slice ids): the rows of slices it touches in
the TTMs of the other modes (its elements under π_i, i ≠ j) and the rows of the slices it shares
under π_j (among them those it owns, σ_j(l) = p; they also number the compact rows of Z_j).
Each mode's tree is built from its policy set's coordinates renumbered into these local rows
(int32, one mode at a time), so the TTM kernel runs unchanged on (|factor_ids[j]| × K_j) factor
matrices.

Per mode n (:class:`ModePlan`): the TTM plan over this rank's elements of π_n (compact rows = the
R_n^p slices it shares), σ_n of those rows (:class:`.comm.RowOwners`, no global gathers), and three
precomputed exchanges: ``reduce_x`` (Z·x: partial sums of shared rows, sharers → owners),
``bcast_y`` (y·Z: owners → the other sharers), ``fm`` (new factor rows: owners → every rank that
needs them). Each product moves R_n^sum − L_n words (checked here).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spbench.tucker.mpi.comm import RowOwners
from spbench.tucker.mpi.collectives import Exchange, allreduce, alltoallv
from spbench.datasets.sparse_tensor import SparseTensor, unique_sorted
from spbench.tucker.hooi.ttm import TTM_KINDS, TTMPlan

__all__ = ["ModePlan", "LocalTensor", "build_plans", "release_elements"]


@dataclass
class LocalTensor:
    """This rank's elements with coordinates in local factor rows; ``sets[n]`` = the element
    range of π_n (one range for a uni-policy scheme). With ``ttm: csf`` the per-mode trees hold
    the elements and ``tensor`` is None (the coordinates are dropped once the trees are built)."""

    tensor: SparseTensor | None     # dims = local factor row counts
    factor_ids: list                # per mode: global slice ids of the local factor rows
    dims: tuple                     # global mode lengths

    @property
    def nbytes(self) -> int:
        held = 0 if self.tensor is None else self.tensor.coords.nbytes + self.tensor.values.nbytes
        return int(held + sum(f.nbytes for f in self.factor_ids))


@dataclass
class ModePlan:
    """Rank p's plan for mode n. Positions (``own_idx``, ``own_local``, ``send_idx``,
    ``recv_pos``, ``fm_*_local``) are int32; slice ids int64."""

    mode: int
    ttm: TTMPlan                    # TTMPlan over LocalTensor.tensor or a CSFPlan; compact rows = shared slices
    m: int                          # L_n: non-empty slices (global rows of Z_n)
    r_sum: int                      # R_n^sum
    e_p: int                        # |E_n^p|
    held: int                       # factor rows the paper's memory counts: needed ∪ owned
    rows: np.ndarray                # global slice ids of the compact rows (R_n^p)
    own_idx: np.ndarray             # compact rows this rank owns (increasing slice id)
    own_ids: np.ndarray             # their slice ids (``rows`` itself when it owns them all)
    own_local: np.ndarray           # their local factor rows
    send_idx: np.ndarray            # compact rows whose partial sums go to their owner, by (owner, slice)
    recv_pos: np.ndarray            # compact rows (owned) receiving partials, by (sharer, slice)
    fm_send_local: np.ndarray       # local factor rows this rank (owner) sends, by destination
    fm_recv_local: np.ndarray       # local factor rows it receives, by source
    reduce_x: Exchange
    bcast_y: Exchange
    fm: Exchange
    fm_items_max: int = 0           # most rows any rank sends or receives in the factor transfer

    @property
    def r_p(self) -> int:
        return int(self.rows.shape[0])


def _by_owner(owner: np.ndarray, P: int):
    order = np.argsort(owner, kind="stable")
    return order, np.bincount(owner, minlength=P).astype(np.int64)


def build_plans(comm, dt, ttm: str = "csf", K=None, *, release: bool = False,
                threads: int = 1) -> tuple[LocalTensor, list]:
    """The local tensor and the per-mode plans of a :class:`.distribute.DistributedTensor`;
    ``ttm``: the TTM kernel whose plans to build (:data:`.ttm.TTM_KINDS`), ``K`` weighs the CSF
    level order. ``release``: drop each policy set's arrays (ids, coordinates, values) as soon as
    the trees no longer need them (``ttm: csf``; ``paper`` keeps the values in its local tensor),
    so a rank never holds its sets and their trees whole at once (§7.3: one copy of the input
    per policy). ``threads``: the csf trees' sorts and gathers run on that many threads."""
    N = dt.nmodes
    sets = dt.sets if dt.multi_policy else dt.sets[:1]
    if release:
        for s in sets:
            s.gids = None
    # slices this rank shares per mode (its elements of π_n) and their owners
    rows = [_distinct([dt.sets[n].coords[:, n]], dt.dims[n]) for n in range(N)]
    owners = [RowOwners.compute(comm, rows[n], dt.dims[n]) for n in range(N)]
    # factor rows needed for the TTMs of the other modes
    need = []
    for n in range(N):
        if N == 1:
            need.append(np.zeros(0, np.int64))
        elif dt.multi_policy:
            need.append(_distinct([dt.sets[j].coords[:, n] for j in range(N) if j != n], dt.dims[n]))
        else:
            need.append(rows[n])
    # local rows of F_n: needed ∪ shared (owned ⊆ shared; the shared rows also number Z_n's rows)
    factor_ids = [_union(need[n], rows[n], dt.dims[n]) for n in range(N)]
    sizes = [s.size for s in sets]
    if ttm == "paper":
        lt, trees = _paper_plans(dt, sets, factor_ids, release)
    else:
        if ttm not in TTM_KINDS:
            raise ValueError(f"ttm must be one of {', '.join(TTM_KINDS)}, got {ttm!r}")
        lt = LocalTensor(None, factor_ids, tuple(dt.dims))
        trees = _csf_trees(dt, sets, factor_ids, K, release, threads)
    plans = []
    for n in range(N):
        k = n if dt.multi_policy else 0
        plans.append(_mode_plan(comm, n, trees[n], rows[n], owners[n], need[n], factor_ids[n], int(sizes[k])))
        trees[n] = owners[n] = need[n] = None
    return lt, plans


def _distinct(columns, length: int) -> np.ndarray:
    """Sorted distinct values (int64) of index arrays in [0, length): a mark per index when the
    marks are no larger than the columns, else a sort."""
    total = sum(int(c.shape[0]) for c in columns)
    if int(length) <= 8 * total + (1 << 20):
        mark = np.zeros(int(length), dtype=bool)
        for c in columns:
            mark[c] = True
        return np.flatnonzero(mark)
    return unique_sorted(np.concatenate([np.asarray(c, dtype=np.int64) for c in columns]))


def _union(a: np.ndarray, b: np.ndarray, length: int) -> np.ndarray:
    """Sorted union of two sorted distinct id arrays; ``b`` itself when it holds ``a``."""
    if a is b or (a.size <= b.size and np.array_equal(b[np.minimum(np.searchsorted(b, a), max(b.size - 1, 0))], a)):
        return b
    return _distinct([a, b], length)


def _local_rows(ids: np.ndarray, length: int):
    """Index → local row (int32) of the sorted ids ``ids`` ⊂ [0, length): None when the ids are
    every index (local = global), else a function of an index column."""
    if ids.size == int(length):
        return None
    if int(length) <= 4 * (ids.size + (1 << 20)):
        lut = np.full(int(length), -1, dtype=np.int32)
        lut[ids] = np.arange(ids.size, dtype=np.int32)
        return lambda col: lut[col]
    return lambda col: np.searchsorted(ids, col).astype(np.int32)


def _csf_trees(dt, sets, factor_ids, K, release: bool, threads: int = 1) -> list:
    """Per mode, the CSF tree of that mode's policy set (:meth:`.csf.CSFPlan.from_columns`, its
    sorts on ``threads`` threads), built one mode at a time from int32 columns renumbered into
    local factor rows; with ``release`` a set's arrays go as soon as its last tree is built."""
    from spbench.tucker.hooi.csf import CSFPlan

    N = dt.nmodes
    local = [_local_rows(factor_ids[j], dt.dims[j]) for j in range(N)]
    dims = tuple(int(f.size) for f in factor_ids)
    trees = []
    for n in range(N):
        s = sets[n] if dt.multi_policy else sets[0]
        cols = []
        for j in range(N):
            c = s.coords[:, j]
            cols.append(np.asarray(c, dtype=np.int32) if local[j] is None else local[j](c))
        trees.append(CSFPlan.from_columns(cols, dims, n, s.values, K=K, threads=threads))
        del cols
        if release and (dt.multi_policy or n == N - 1):
            s.gids = s.coords = s.values = None
    return trees


def _paper_plans(dt, sets, factor_ids, release: bool):
    """The local tensor of every set (coordinates renumbered into local factor rows, int64) and
    the element-wise TTM plans over its ranges (``ttm: paper``)."""
    N = dt.nmodes
    offs = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=offs[1:])
    coords = np.empty((int(offs[-1]), N), dtype=np.int64)
    for s, lo, hi in zip(sets, offs[:-1], offs[1:]):
        for j in range(N):
            coords[lo:hi, j] = np.searchsorted(factor_ids[j], s.coords[:, j])
        if release:
            s.gids = s.coords = None
    values = (sets[0].values if len(sets) == 1 else np.concatenate([s.values for s in sets])) if offs[-1] \
        else np.zeros(0)
    local = SparseTensor(coords, values, tuple(int(f.size) for f in factor_ids),
                         sum_duplicates=False, check=False)
    trees = []
    for n in range(N):
        k = n if dt.multi_policy else 0
        trees.append(TTMPlan.build(local, n, np.arange(offs[k], offs[k + 1])))
    return LocalTensor(local, factor_ids, tuple(dt.dims)), trees


def _mode_plan(comm, n, tp: TTMPlan, rows, ro: RowOwners, need, fids, e_p) -> ModePlan:
    P, p = comm.size, comm.rank
    sig = ro.owners
    own_idx = _index(np.flatnonzero(sig == p), rows.size)
    nonown = np.flatnonzero(sig != p)
    o, send_counts = _by_owner(sig[nonown], P)
    send_idx = _index(nonown[o], rows.size)
    del nonown, o
    # owners learn which slices each sharer sends (in the sharer's (owner, slice) order)
    got, recv_counts = alltoallv(comm, rows[send_idx], send_counts)
    recv_pos = _index(np.searchsorted(rows, got), rows.size)
    # factor transfer: rows needed here but owned elsewhere, requested from their owners
    own_ids = rows if own_idx.size == rows.size else rows[own_idx]
    ext = need[~np.isin(need, own_ids, assume_unique=True)]
    known = np.minimum(np.searchsorted(rows, ext), max(rows.size - 1, 0))
    inrows = rows[known] == ext if rows.size else np.zeros(ext.size, bool)
    ext_owner = np.empty(ext.size, dtype=np.int64)
    ext_owner[inrows] = sig[known[inrows]]
    ext_owner[~inrows] = ro.lookup(comm, ext[~inrows])
    del known, inrows
    o, req_counts = _by_owner(ext_owner, P)
    fm_recv = ext[o]
    del ext, ext_owner, o
    fm_send, fm_send_counts = alltoallv(comm, fm_recv, req_counts)
    r_sum = int(comm.allreduce(int(rows.size)))
    m = int(comm.allreduce(int(own_idx.size)))
    moved = int(comm.allreduce(int(send_idx.size)))
    if moved != r_sum - m or int(comm.allreduce(int(got.size))) != r_sum - m:
        raise RuntimeError(f"mode {n}: oracle plan moves {moved} words per product, expected R_sum − L_n = {r_sum - m}")
    held = int(need.size) + int(np.count_nonzero(~np.isin(own_ids, need, assume_unique=True)))
    own_local = _local_index(fids, own_ids)
    return ModePlan(n, tp, m, r_sum, e_p, held, rows, own_idx, own_ids, own_local, send_idx, recv_pos,
                    _local_index(fids, fm_send), _local_index(fids, fm_recv),
                    Exchange(send_counts, recv_counts), Exchange(recv_counts, send_counts),
                    Exchange(fm_send_counts, req_counts),
                    int(allreduce(comm, np.array([max(fm_send.size, fm_recv.size)]), op="max")[0]))


def _index(a: np.ndarray, length: int) -> np.ndarray:
    """Positions into an array of ``length`` entries: int32 (half the bytes) when it has fewer
    than 2**31."""
    return a.astype(np.int32, copy=False) if int(length) < 2 ** 31 else a


def _local_index(fids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Local factor rows (int32) of the sorted slice ids ``ids`` ⊂ ``fids`` (no search when they
    are all of them)."""
    if ids is fids or (ids.size == fids.size and np.array_equal(ids, fids)):
        return _index(np.arange(fids.size), fids.size)
    return _index(np.searchsorted(fids, ids), fids.size)


def release_elements(dt) -> None:
    """Drop ``dt``'s element arrays once the local tensor holds them (renumbered): the rank then
    keeps one copy of its elements during HOOI, not two (issue: per-rank memory)."""
    for s in dt.sets:
        s.gids = s.coords = s.values = None

