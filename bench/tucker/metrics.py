"""Exact metrics of a distribution scheme (paper §4, §7.3), for any P, per mode and aggregated.

Per mode n (policy π_n, row owners σ_n from ``comm``):

* ``e_max``  = max_p |E_n^p|                                  (Metric 1, TTM load balance)
* ``r_sum``  = Σ_p R_n^p, R_n^p = slices p shares             (Metric 2, SVD load)
* ``r_max``  = max_p R_n^p                                     (Metric 3, SVD load balance)
* ``slices`` = L_n, the number of non-empty mode-n slices (``length`` is the mode's size)
* ``svd_volume`` = Q_n · (R_n^sum − L_n) words (§4.2, Q_n = 4·K_n Lanczos queries)
* ``fm_volume``  = K_n · Σ_l |D_l \\ {σ_n(l)}| words, D_l = processors that need row F_n[l] for
  the next TTMs: those owning an element of Slice_n^l under some π_j, j ≠ n (§4.2). For a
  uni-policy scheme D_l is the set of sharers and this is K_n · (R_n^sum − L_n).

Normalized forms (Fig. 12): TTM imbalance E_max / (|E|/P), SVD redundancy R_sum / L_n, SVD
imbalance R_max / (R_sum/P). FLOPs (§4.3): TTM |E|·K̂_n, SVD Q_n·K̂_n·R_n^sum, K̂_n = Π_{j≠n} K_j.

Aggregates over modes: ``e_max`` is the TTM-FLOP-weighted mean Σ K̂_n E_n^max / Σ K̂_n;
``r_sum`` and ``r_max`` the SVD-FLOP-weighted means (weights Q_n K̂_n); the normalized
aggregates are ratios of the weighted sums (Σ w_n E_n^max / Σ w_n |E|/P, ...), i.e. "load
balance measured on FLOPs aggregated along all modes" (§7.2); volumes are summed over modes.

Memory per rank (§7.3, Fig. 17), in MB (10^6 bytes), average and max over ranks:

* tensor: elements held × (N·index_bytes + value_bytes); multi-policy schemes hold N copies
  (Σ_n |E_n^p|), uni-policy one (|E^p|). Defaults: 4-byte indices, 8-byte values.
* penultimate: Σ_n R_n^p · K̂_n · 8 (the compact local Z_(n)^p of every mode).
* factor: Σ_n |rows of F_n that p needs (D_l ∋ p) ∪ rows p owns (σ_n(l) = p)| · K_n · 8.

Two steps, so that the MPI worker (which gathers the per-rank counts of its own distribution)
and the serial path share the arithmetic: :func:`mode_counts` (one pass over the elements per
mode: per-rank counts, also the cost model's loads) and :func:`metrics_from_counts` (everything
above from those counts). The (slice, rank) pair sets are marked in an L_n × P bitmap when that
is small (≤ 4 bytes per element), else sorted keys: vectorized, no per-element sort in the
common case, a few bytes per element of scratch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spbench.tucker.mpi.comm import row_owners_from_pairs
from spbench.tucker.hooi.csf import prefix_counts
from spbench.datasets.sparse_tensor import sorted_member, unique_sorted

__all__ = ["TuckerMetrics", "compute_metrics", "mode_counts", "metrics_from_counts", "MODE_KEYS",
           "AGGREGATE_KEYS", "COUNT_KEYS"]

MODE_KEYS = ("mode", "length", "slices", "e_max", "r_sum", "r_max", "svd_volume", "fm_volume")
AGGREGATE_KEYS = ("e_max", "r_sum", "r_max", "svd_volume", "fm_volume",
                  "mem_tensor_mb", "mem_penultimate_mb", "mem_factor_mb",
                  "mem_tensor_mb_max", "mem_penultimate_mb_max", "mem_factor_mb_max")
# per-rank arrays of one mode that metrics_from_counts needs (plus the ints slices, fm_rows, bad_slices)
COUNT_KEYS = ("e_p", "r_p", "held_p")
_MB = 1e6
_CHUNK = 1 << 22                 # elements per vectorized step (bounded scratch)


@dataclass
class TuckerMetrics:
    """``modes``: one dict per mode (MODE_KEYS); ``aggregate``: AGGREGATE_KEYS plus normalized
    forms, FLOPs and totals; ``details``: per mode, the per-rank arrays and normalized values;
    ``counts``: per mode, :func:`mode_counts`' dict (the cost model's loads)."""

    modes: list
    aggregate: dict
    details: list = field(default_factory=list)
    owners: list = field(default_factory=list)   # σ_n per mode (int32, −1 = empty slice); may be empty
    counts: list = field(default_factory=list)

    def row(self) -> dict:
        """Result-row columns: the aggregate plus ``mode_metrics``."""
        return {**self.aggregate, "mode_metrics": [dict(m) for m in self.modes]}


def _per_mode(values, nmodes) -> list[int]:
    if np.ndim(values) == 0:
        return [int(values)] * nmodes
    values = [int(v) for v in values]
    if len(values) != nmodes:
        raise ValueError(f"expected {nmodes} per-mode values, got {len(values)}")
    return values


def _pair_keys(index: np.ndarray, policies, length: int, P: int, dense: bool | None = None) -> np.ndarray:
    """Sorted distinct keys l·P + p over the elements' (index, policy) pairs of every policy in
    ``policies``: an L × P bitmap when it is small (``dense`` None: ≤ 4 bytes per element or
    16 MB), else a sort of the keys."""
    nnz = int(index.shape[0])
    if not policies or nnz == 0:
        return np.zeros(0, dtype=np.int64)
    cells = int(length) * P
    if dense is None:
        dense = cells <= max(1 << 24, 4 * nnz)
    if not dense:
        return unique_sorted(np.concatenate([index.astype(np.int64) * P + pol for pol in policies]))
    mark = np.zeros(cells, dtype=bool)
    for a in range(0, nnz, _CHUNK):
        key = index[a:a + _CHUNK].astype(np.int64)
        key *= P
        for pol in policies:
            mark[key + pol[a:a + _CHUNK]] = True
    return np.flatnonzero(mark)


def _peers(a: np.ndarray, b: np.ndarray, P: int) -> np.ndarray:
    """Distinct partners per rank over the directed pairs a → b (both directions count)."""
    if a.size == 0:
        return np.zeros(P, dtype=np.int64)
    if P * P <= 1 << 26:
        mark = np.zeros((P, P), dtype=bool)
        mark[a, b] = True
        mark |= mark.T
        return np.count_nonzero(mark, axis=1).astype(np.int64)
    keys = unique_sorted(np.concatenate([a * P + b, b * P + a]).astype(np.int64))
    return np.bincount(keys // P, minlength=P).astype(np.int64)


def _bincount(x, P, weights=None) -> np.ndarray:
    return np.bincount(x, weights=weights, minlength=P).astype(np.int64)


def mode_counts(tensor, dist, *, owners=None, dense: bool | None = None, csf: bool = False) -> tuple[list, list]:
    """Per mode, the per-rank counts of ``dist`` on ``tensor`` in one pass over the elements,
    and σ_n per mode (``owners`` given, or ``comm``'s rule). Each dict holds the arrays over
    ranks ``e_p`` |E_n^p|, ``r_p`` R_n^p, ``held_p`` (factor rows needed ∪ owned), ``own_p``
    (σ_n(l) = p), ``x_send_p``/``x_recv_p`` (partial sums sent to / received at owners per Z·x),
    ``x_peers_p``, ``fm_send_p``/``fm_recv_p`` (factor rows sent / received), ``fm_peers_p``,
    and the ints ``slices`` (L_n), ``fm_rows`` (Σ_l |D_l \\ {σ_n(l)}|), ``bad_slices``.
    ``dense``: force the bitmap (True) or the sorted keys (False) for the pair sets. ``csf``:
    also ``csf_prefix_p`` (:func:`.csf.prefix_counts`: the shapes of the ranks' CSF trees, what
    the cost model of ``ttm: csf`` needs; a sort of the elements per set of other modes)."""
    N, P = tensor.nmodes, int(dist.nparts)
    dist.validate(tensor.nnz)
    counts, sigmas = [], []
    for n in range(N):
        idx = tensor.coords[:, n]
        L = int(tensor.dims[n])
        pol = dist.policy(n)
        S = _pair_keys(idx, [pol], L, P, dense)
        s, p = S // P, S % P
        cnt = np.bincount(s, minlength=L)
        sigma = np.asarray(owners[n] if owners is not None else row_owners_from_pairs(s, p, L, P))
        ne = np.flatnonzero(cnt)
        so = sigma[ne].astype(np.int64)
        r_p = _bincount(p, P)
        own_p = _bincount(so, P)
        own_of = sigma[s].astype(np.int64)
        shared = own_of != p
        # D pairs: who needs F_n rows for the TTMs of the other modes
        if N == 1:
            D = np.zeros(0, dtype=np.int64)
        elif dist.multi_policy:
            D = _pair_keys(idx, [dist.policy(j) for j in range(N) if j != n], L, P, dense)
        else:
            D = S
        dl, dq = D // P, D % P
        owner_in_d = sorted_member(ne.astype(np.int64) * P + so, D)
        do = sigma[dl].astype(np.int64)
        need = dq != do
        counts.append({
            "e_p": _bincount(pol, P), "r_p": r_p, "own_p": own_p,
            "held_p": _bincount(dq, P) + _bincount(so[~owner_in_d], P),
            "x_send_p": r_p - own_p, "x_recv_p": _bincount(so, P, cnt[ne] - 1),
            "x_peers_p": _peers(p[shared], own_of[shared], P),
            "fm_send_p": _bincount(do[need], P), "fm_recv_p": _bincount(dq[need], P),
            "fm_peers_p": _peers(do[need], dq[need], P),
            "slices": int(ne.size), "fm_rows": int(D.size - np.count_nonzero(owner_in_d)),
            "bad_slices": int(np.count_nonzero(cnt > 1)),
        })
        if csf:
            counts[-1]["csf_prefix_p"] = prefix_counts(tensor.coords, tensor.dims, n, pol, P)
        sigmas.append(sigma)
    return counts, sigmas


def metrics_from_counts(dims, nnz, K, Q, multi_policy, per_mode, *, index_bytes: int = 4,
                        value_bytes: int = 8) -> TuckerMetrics:
    """All metrics from per-rank counts (:func:`mode_counts`, or the MPI worker's gathered
    counts): ``per_mode`` a list over modes of dicts with the arrays ``e_p``, ``r_p``,
    ``held_p`` over ranks and the ints ``slices``, ``fm_rows``, ``bad_slices``. ``K`` and ``Q``
    (Lanczos queries; None = 4·K_n) are ints or per mode."""
    N, nnz = len(dims), int(nnz)
    Ks = _per_mode(K, N)
    Qs = _per_mode(Q, N) if Q is not None else [4 * k for k in Ks]
    Khat = [int(np.prod([Ks[j] for j in range(N) if j != n], dtype=np.int64)) for n in range(N)]
    P = int(np.asarray(per_mode[0]["e_p"]).shape[0])
    elem_bytes = N * index_bytes + value_bytes
    mem_tensor, mem_pen, mem_fac = np.zeros(P), np.zeros(P), np.zeros(P)
    modes, details = [], []
    for n, c in enumerate(per_mode):
        e_p = np.asarray(c["e_p"], dtype=np.int64)
        r_p = np.asarray(c["r_p"], dtype=np.int64)
        r_sum, slices = int(r_p.sum()), int(c["slices"])
        if multi_policy or n == 0:
            mem_tensor += e_p * elem_bytes
        mem_pen += r_p * Khat[n] * 8
        mem_fac += np.asarray(c["held_p"], dtype=np.int64) * Ks[n] * 8
        modes.append({"mode": n, "length": int(dims[n]), "slices": slices, "e_max": int(e_p.max(initial=0)),
                      "r_sum": r_sum, "r_max": int(r_p.max(initial=0)),
                      "svd_volume": int(Qs[n] * (r_sum - slices)), "fm_volume": int(Ks[n] * int(c["fm_rows"]))})
        details.append({
            "e_per_rank": e_p, "r_per_rank": r_p,
            "ttm_imbalance": float(e_p.max(initial=0) / (nnz / P)) if nnz else 1.0,
            "svd_redundancy": r_sum / slices if slices else 1.0,
            "svd_imbalance": float(r_p.max(initial=0) / (r_sum / P)) if r_sum else 1.0,
            "ttm_flops": nnz * Khat[n], "svd_flops": Qs[n] * Khat[n] * r_sum,
            "bad_slices": int(c["bad_slices"]), "K": Ks[n], "Q": Qs[n], "Khat": Khat[n],
        })
    wt = np.array(Khat, dtype=float)                       # TTM FLOPs per element, per mode
    ws = np.array([Qs[n] * Khat[n] for n in range(N)], dtype=float)   # SVD FLOPs per shared row
    col = {k: np.array([m[k] for m in modes], dtype=float) for k in ("e_max", "r_sum", "r_max", "slices")}
    agg = {
        "e_max": float(wt @ col["e_max"] / wt.sum()),
        "r_sum": float(ws @ col["r_sum"] / ws.sum()),
        "r_max": float(ws @ col["r_max"] / ws.sum()),
        "svd_volume": int(sum(m["svd_volume"] for m in modes)),
        "fm_volume": int(sum(m["fm_volume"] for m in modes)),
        "mem_tensor_mb": float(mem_tensor.mean() / _MB),
        "mem_penultimate_mb": float(mem_pen.mean() / _MB),
        "mem_factor_mb": float(mem_fac.mean() / _MB),
        "mem_tensor_mb_max": float(mem_tensor.max() / _MB),
        "mem_penultimate_mb_max": float(mem_pen.max() / _MB),
        "mem_factor_mb_max": float(mem_fac.max() / _MB),
    }
    total = mem_tensor + mem_pen + mem_fac
    agg["mem_total_mb"] = float(total.mean() / _MB)
    agg["mem_total_mb_max"] = float(total.max() / _MB)
    agg["ttm_imbalance"] = float(wt @ col["e_max"] / (wt.sum() * nnz / P)) if nnz else 1.0
    agg["svd_redundancy"] = float(ws @ col["r_sum"] / (ws @ col["slices"])) if col["slices"].any() else 1.0
    agg["svd_imbalance"] = float(ws @ col["r_max"] / (ws @ col["r_sum"] / P)) if col["r_sum"].any() else 1.0
    agg["ttm_flops"] = int(sum(d["ttm_flops"] for d in details))
    agg["svd_flops"] = int(sum(d["svd_flops"] for d in details))
    return TuckerMetrics(modes, agg, details, [], list(per_mode))


def compute_metrics(tensor, dist, K=10, *, Q=None, owners=None, index_bytes: int = 4,
                    value_bytes: int = 8) -> TuckerMetrics:
    """All metrics of ``dist`` (a schemes.Distribution) on ``tensor`` for core sizes ``K``
    (int or per mode). ``Q``: Lanczos queries per mode (default 4·K_n). ``owners``: σ_n per
    mode (default: ``comm``'s rule)."""
    counts, sigmas = mode_counts(tensor, dist, owners=owners)
    m = metrics_from_counts(tensor.dims, tensor.nnz, K, Q, bool(dist.multi_policy), counts,
                            index_bytes=index_bytes, value_bytes=value_bytes)
    m.owners = sigmas
    return m
