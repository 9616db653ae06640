"""Ideal Lite loads at a tensor's real size (tucker-lite-distribution §6, Theorem 6.1), for the
modelled 32 → 512-rank speed-ups of the paper's tensors without holding the tensor.

Per mode n at P ranks (L = L_n, every slice taken non-empty, E = |E|):

* |E_n^p| = ⌈E/P⌉ on every rank (Theorem 6.1: E_max = ⌈|E|/P⌉);
* own^p = ⌈L/P⌉ and R_n^p = own^p + 1 (R_sum ≤ L + P, R_max ≤ ⌈L/P⌉ + 2): each rank shares one
  slice it does not own with a neighbour, so it sends 1 partial sum and receives 1 per Z·x, with
  its 2 neighbours;
* factor transfer (not bounded by the theorem): the rows of F_n a rank needs are those touched
  by its N − 1 blocks of ⌈E/P⌉ elements under the other modes' policies. Taking the blocks'
  mode-n indices as independent draws from the mode's slice-size law (the power law of the
  stand-ins: the largest slice holds ``max_share[n]`` of the elements, :mod:`spbench.datasets.tensor_registry`),
  the expected number of distinct rows touched is Σ_l 1 − (1 − w_l)^((N − 1)·⌈E/P⌉); a fraction
  own/L of them are its own rows, the rest it receives, and each rank sends as many as it receives
  (totals balance), to min(P − 1, rows) peers.
"""
from __future__ import annotations

import numpy as np

from .mode_load import ModeLoad, khat_of as _khat

__all__ = ["ideal_lite_loads", "rows_touched"]


def rows_touched(length: int, share: float, draws: float) -> float:
    """Expected distinct slices among ``draws`` elements drawn from ``length`` power-law slices
    whose largest holds ``share`` of the elements."""
    from spbench.datasets.tensor_registry import powerlaw_exponent

    a = powerlaw_exponent(int(length), min(float(share), 0.999))
    w = np.arange(1, int(length) + 1, dtype=float) ** -a
    w /= w.sum()
    return float(np.sum(-np.expm1(float(draws) * np.log1p(-w))))


def ideal_lite_loads(dims, nnz: int, P: int, K, max_share) -> list[ModeLoad]:
    """ModeLoads of an ideal Lite distribution (see the module docstring)."""
    N = len(dims)
    Ks = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    E = -(-int(nnz) // P)
    full = lambda v: np.full(P, int(v), dtype=np.int64)   # noqa: E731
    loads = []
    for n, L in enumerate(dims):
        own = -(-int(L) // P)
        shared = 1 if P > 1 else 0
        touched = rows_touched(L, max_share[n], (N - 1) * E) if P > 1 and N > 1 else 0.0
        fm = int(round(touched * (1 - own / L)))
        loads.append(ModeLoad(K=Ks[n], Khat=_khat(Ks, n), L=int(L), e=full(E), r=full(own + shared),
                              x_send=full(shared), x_recv=full(shared), x_peers=full(min(2 * shared, P - 1)),
                              own=full(own), fm_send=full(fm), fm_recv=full(fm),
                              fm_peers=full(min(P - 1, fm)), held=full(N * E),
                              extra={"rows_touched": touched}))
    return loads
