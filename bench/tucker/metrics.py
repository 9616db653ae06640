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
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .comm import row_owners_from_pairs, sharer_pairs
from .tensor import sorted_member, unique_sorted

__all__ = ["TuckerMetrics", "compute_metrics", "MODE_KEYS", "AGGREGATE_KEYS"]

MODE_KEYS = ("mode", "length", "slices", "e_max", "r_sum", "r_max", "svd_volume", "fm_volume")
AGGREGATE_KEYS = ("e_max", "r_sum", "r_max", "svd_volume", "fm_volume",
                  "mem_tensor_mb", "mem_penultimate_mb", "mem_factor_mb",
                  "mem_tensor_mb_max", "mem_penultimate_mb_max", "mem_factor_mb_max")
_MB = 1e6


@dataclass
class TuckerMetrics:
    """``modes``: one dict per mode (MODE_KEYS); ``aggregate``: AGGREGATE_KEYS plus normalized
    forms, FLOPs and totals; ``details``: per mode, the per-rank arrays and normalized values."""

    modes: list
    aggregate: dict
    details: list = field(default_factory=list)
    owners: list = field(default_factory=list)   # σ_n per mode (int32, −1 = empty slice)

    def row(self) -> dict:
        """Result-row columns: the aggregate plus ``mode_metrics`` (DESIGN.md §5)."""
        return {**self.aggregate, "mode_metrics": [dict(m) for m in self.modes]}


def _per_mode(values, nmodes) -> list[int]:
    if np.ndim(values) == 0:
        return [int(values)] * nmodes
    values = [int(v) for v in values]
    if len(values) != nmodes:
        raise ValueError(f"expected {nmodes} per-mode values, got {len(values)}")
    return values


def compute_metrics(tensor, dist, K=10, *, Q=None, owners=None, index_bytes: int = 4,
                    value_bytes: int = 8) -> TuckerMetrics:
    """All metrics of ``dist`` (a schemes.Distribution) on ``tensor`` for core sizes ``K``
    (int or per mode). ``Q``: Lanczos queries per mode (default 4·K_n). ``owners``: σ_n per
    mode (default: ``comm``'s greedy)."""
    N, P, nnz = tensor.nmodes, int(dist.nparts), tensor.nnz
    dist.validate(nnz)
    Ks = _per_mode(K, N)
    Qs = _per_mode(Q, N) if Q is not None else [4 * k for k in Ks]
    Khat = [int(np.prod([Ks[j] for j in range(N) if j != n], dtype=np.int64)) for n in range(N)]
    multi = bool(dist.multi_policy)

    modes, details, sigmas = [], [], []
    mem_tensor = np.zeros(P)
    mem_pen = np.zeros(P)
    mem_fac = np.zeros(P)
    elem_bytes = N * index_bytes + value_bytes
    for n in range(N):
        idx = tensor.coords[:, n]
        pol = dist.policy(n)
        L = tensor.dims[n]
        e_p = np.bincount(pol, minlength=P).astype(np.int64)
        s, p = sharer_pairs(idx, pol, P)
        r_p = np.bincount(p, minlength=P).astype(np.int64)
        r_sum = int(s.size)
        slices = int(np.count_nonzero(tensor.slice_sizes(n)))
        sigma = owners[n] if owners is not None else row_owners_from_pairs(s, p, L, P)
        sigma = np.asarray(sigma)
        # D pairs: who needs F_n rows for the TTMs of the other modes
        if multi:
            others = [j for j in range(N) if j != n]
            if others:
                keys = unique_sorted(np.concatenate([idx * P + dist.policy(j) for j in others]))
            else:
                keys = np.zeros(0, dtype=np.int64)
        else:
            keys = s * P + p if N > 1 else np.zeros(0, dtype=np.int64)
        nonempty = np.flatnonzero(sigma >= 0)
        own_keys = nonempty.astype(np.int64) * P + sigma[nonempty]
        owner_in_d = sorted_member(own_keys, keys)
        fm_rows = int(keys.size - np.count_nonzero(owner_in_d))
        fm_volume = Ks[n] * fm_rows
        svd_volume = Qs[n] * (r_sum - slices)
        # memory
        if multi or n == 0:
            mem_tensor += e_p * elem_bytes
        mem_pen += r_p * Khat[n] * 8
        held = np.bincount(keys % P, minlength=P) + np.bincount(sigma[nonempty][~owner_in_d], minlength=P)
        mem_fac += held * Ks[n] * 8
        modes.append({"mode": n, "length": int(L), "slices": slices, "e_max": int(e_p.max(initial=0)),
                      "r_sum": r_sum, "r_max": int(r_p.max(initial=0)),
                      "svd_volume": int(svd_volume), "fm_volume": int(fm_volume)})
        avg_e = nnz / P
        details.append({
            "e_per_rank": e_p, "r_per_rank": r_p,
            "ttm_imbalance": float(e_p.max(initial=0) / avg_e) if nnz else 1.0,
            "svd_redundancy": r_sum / slices if slices else 1.0,
            "svd_imbalance": float(r_p.max(initial=0) / (r_sum / P)) if r_sum else 1.0,
            "ttm_flops": nnz * Khat[n], "svd_flops": Qs[n] * Khat[n] * r_sum,
            "bad_slices": int(np.count_nonzero(np.bincount(s, minlength=L) > 1)),
            "K": Ks[n], "Q": Qs[n], "Khat": Khat[n],
        })
        sigmas.append(sigma)

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
    return TuckerMetrics(modes, agg, details, sigmas)
