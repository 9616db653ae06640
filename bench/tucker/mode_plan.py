"""What one rank needs to run HOOI on its share of a distributed tensor (tucker-lite-distribution
§3 Figures 4–5, "Factor Matrix Transfer"; §4.2), built once before the first invocation.

Local index (issue: factors without full-size replicas). For every mode j the rank keeps only the
factor rows it needs, ``factor_ids[j]`` (increasing slice ids): the rows of slices it touches in
the TTMs of the other modes (its elements under π_i, i ≠ j) and the rows of the slices it shares
under π_j (among them those it owns, σ_j(l) = p; they also number the compact rows of Z_j).
The local tensor's coordinates are renumbered into these local rows once, so the TTM kernel runs
unchanged on (|factor_ids[j]| × K_j) factor matrices.

Per mode n (:class:`ModePlan`): the TTM plan over this rank's elements of π_n (compact rows = the
R_n^p slices it shares), σ_n of those rows (:class:`.comm.RowOwners`, no global gathers), and three
precomputed exchanges: ``reduce_x`` (Z·x: partial sums of shared rows, sharers → owners),
``bcast_y`` (y·Z: owners → the other sharers), ``fm`` (new factor rows: owners → every rank that
needs them). Each product moves R_n^sum − L_n words (checked here).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .comm import RowOwners
from .mpi import Exchange, alltoallv
from spbench.datasets.sparse_tensor import SparseTensor, unique_sorted
from .ttm import TTMPlan, build_ttm_plan

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
    """Rank p's plan for mode n."""

    mode: int
    ttm: TTMPlan                    # TTMPlan over LocalTensor.tensor or a CSFPlan; compact rows = shared slices
    m: int                          # L_n: non-empty slices (global rows of Z_n)
    r_sum: int                      # R_n^sum
    e_p: int                        # |E_n^p|
    held: int                       # factor rows the paper's memory counts: needed ∪ owned
    rows: np.ndarray                # global slice ids of the compact rows (R_n^p)
    own_idx: np.ndarray             # compact rows this rank owns (increasing slice id)
    own_ids: np.ndarray             # their slice ids
    own_local: np.ndarray           # their local factor rows
    send_idx: np.ndarray            # compact rows whose partial sums go to their owner, by (owner, slice)
    recv_pos: np.ndarray            # compact rows (owned) receiving partials, by (sharer, slice)
    fm_send_local: np.ndarray       # local factor rows this rank (owner) sends, by destination
    fm_recv_local: np.ndarray       # local factor rows it receives, by source
    reduce_x: Exchange
    bcast_y: Exchange
    fm: Exchange

    @property
    def r_p(self) -> int:
        return int(self.rows.shape[0])


def _by_owner(owner: np.ndarray, P: int):
    order = np.argsort(owner, kind="stable")
    return order, np.bincount(owner, minlength=P).astype(np.int64)


def build_plans(comm, dt, ttm: str = "csf", K=None, *, release: bool = False) -> tuple[LocalTensor, list]:
    """The local tensor and the per-mode plans of a :class:`.distribute.DistributedTensor`
    (a uni-policy scheme's values are shared with ``dt``, not copied); ``ttm``: the TTM kernel
    whose plans to build (:data:`.ttm.TTM_KINDS`), ``K`` weighs the CSF level order. ``release``:
    drop each policy set's coordinates and ids as soon as they are renumbered into the local
    tensor (values stay until :func:`release_elements`), so a multi-policy scheme at one rank
    never holds its N sets and their renumbered copy at once."""
    P, N = comm.size, dt.nmodes
    sets = dt.sets if dt.multi_policy else dt.sets[:1]
    # slices this rank shares per mode (its elements of π_n) and their owners
    rows = [unique_sorted((dt.sets[n].coords[:, n])) for n in range(N)]
    owners = [RowOwners.compute(comm, rows[n], dt.dims[n]) for n in range(N)]
    # factor rows needed for the TTMs of the other modes
    need = []
    for n in range(N):
        if N == 1:
            need.append(np.zeros(0, np.int64))
        elif dt.multi_policy:
            need.append(unique_sorted(np.concatenate([dt.sets[j].coords[:, n] for j in range(N) if j != n])))
        else:
            need.append(rows[n])
    # local rows of F_n: needed ∪ shared (owned ⊆ shared; the shared rows also number Z_n's rows)
    factor_ids = [unique_sorted(np.concatenate([need[n], rows[n]])) for n in range(N)]
    # one local tensor holding every set, coordinates renumbered into local factor rows
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
    lt = LocalTensor(local, factor_ids, tuple(dt.dims))
    plans = []
    for n in range(N):
        k = n if dt.multi_policy else 0
        tp = build_ttm_plan(local, n, np.arange(offs[k], offs[k + 1]), ttm, K)
        plans.append(_mode_plan(comm, n, tp, rows[n], owners[n], need[n], factor_ids[n], int(offs[k + 1] - offs[k])))
    if ttm == "csf":
        lt.tensor = None
    return lt, plans


def _mode_plan(comm, n, tp: TTMPlan, rows, ro: RowOwners, need, fids, e_p) -> ModePlan:
    P, p = comm.size, comm.rank
    sig = ro.owners.astype(np.int64)
    own_idx = np.flatnonzero(sig == p)
    nonown = np.flatnonzero(sig != p)
    o, send_counts = _by_owner(sig[nonown], P)
    send_idx = nonown[o]
    # owners learn which slices each sharer sends (in the sharer's (owner, slice) order)
    got, recv_counts = alltoallv(comm, rows[send_idx], send_counts)
    recv_pos = np.searchsorted(rows, got)
    # factor transfer: rows needed here but owned elsewhere, requested from their owners
    ext = need[~np.isin(need, rows[own_idx], assume_unique=True)]
    known = np.minimum(np.searchsorted(rows, ext), max(rows.size - 1, 0))
    inrows = rows[known] == ext if rows.size else np.zeros(ext.size, bool)
    ext_owner = np.empty(ext.size, dtype=np.int64)
    ext_owner[inrows] = sig[known[inrows]]
    ext_owner[~inrows] = ro.lookup(comm, ext[~inrows])
    o, req_counts = _by_owner(ext_owner, P)
    fm_recv = ext[o]
    fm_send, fm_send_counts = alltoallv(comm, fm_recv, req_counts)
    r_sum = int(comm.allreduce(int(rows.size)))
    m = int(comm.allreduce(int(own_idx.size)))
    moved = int(comm.allreduce(int(send_idx.size)))
    if moved != r_sum - m or int(comm.allreduce(int(got.size))) != r_sum - m:
        raise RuntimeError(f"mode {n}: oracle plan moves {moved} words per product, expected R_sum − L_n = {r_sum - m}")
    held = int(unique_sorted(np.concatenate([need, rows[own_idx]])).size)
    return ModePlan(n, tp, m, r_sum, e_p, held, rows, own_idx, rows[own_idx],
                    np.searchsorted(fids, rows[own_idx]), send_idx, recv_pos,
                    np.searchsorted(fids, fm_send), np.searchsorted(fids, fm_recv),
                    Exchange(send_counts, recv_counts), Exchange(recv_counts, send_counts),
                    Exchange(fm_send_counts, req_counts))


def release_elements(dt) -> None:
    """Drop ``dt``'s element arrays once the local tensor holds them (renumbered): the rank then
    keeps one copy of its elements during HOOI, not two (issue: per-rank memory)."""
    for s in dt.sets:
        s.gids = s.coords = s.values = None

