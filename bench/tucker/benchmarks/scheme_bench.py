"""Distribution-scheme speed benchmark (`spbench bench lite`, `make bench-lite`): tucker-lite §6's
Lite, vectorized, against CoarseG and MediumG on one generated tensor, all in one process so the
ratios are fair.

The tensor has power-law slice sizes (largest-slice shares of several percent) so Lite's second
stage really splits slices; Theorem 6.1's bounds are checked on the result.
"""
from __future__ import annotations

import time

import numpy as np

from spbench.datasets.sparse_tensor import SparseTensor
from spbench.tucker.schemes.lite_bound import theorem_6_1_slack
from spbench.tucker.metrics import compute_metrics
from spbench.tucker.schemes import SCHEMES

EXPONENTS = (1.1, 0.9, 0.6, 0.8)


def powerlaw_tensor(nnz: int, dims: tuple, seed: int = 0) -> SparseTensor:
    """nnz elements, each mode's index drawn from p_i ∝ i^-α over a random relabelling (duplicates kept)."""
    rng = np.random.default_rng(seed)
    cols = []
    for L, a in zip(dims, EXPONENTS):
        cdf = np.cumsum(np.arange(1, L + 1, dtype=float) ** -a)
        cdf /= cdf[-1]
        cols.append(rng.permutation(L)[np.minimum(np.searchsorted(cdf, rng.random(nnz)), L - 1)])
    return SparseTensor(np.stack(cols, axis=1), rng.random(nnz), dims, sum_duplicates=False)


def bench_schemes(nnz: int, dims: tuple, ranks: int, repeats: int, say=lambda text: None) -> list[dict]:
    """Items: Lite, CoarseG and MediumG on one power-law tensor at ``ranks`` ranks (median of
    ``repeats``); Lite's row carries its Theorem 6.1 slack (min over modes; >= 0 holds)."""
    t0 = time.perf_counter()
    tensor = powerlaw_tensor(nnz, dims)
    facts = {"dataset": "powerlaw[dims=" + ",".join(map(str, dims)) + f",nnz={nnz}]", "nnz": int(tensor.nnz),
             "dims": list(dims), "largest_shares": [round(m["largest_share"], 4) for m in tensor.stats()["modes"]],
             "generate_time": time.perf_counter() - t0, "ranks": ranks}
    items, dists = [], {}
    for name in ("lite", "coarse", "medium"):
        say(name)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            dists[name] = SCHEMES[name](tensor, ranks, seed=0)
            times.append(time.perf_counter() - start)
        items.append({**facts, "item": name, "time": float(np.median(times)), "times": times})
    slack = theorem_6_1_slack(compute_metrics(tensor, dists["lite"], K=10).row()["mode_metrics"], tensor.nnz, ranks)
    items[0].update(theorem_slack=slack, status="ok" if min(slack.values()) >= 0 else "invalid")
    return items
