"""Distribution-scheme speed benchmark (`make bench-lite`): tucker-lite §6's Lite, vectorized,
against CoarseG and MediumG on one generated tensor, all in one process so the ratios are fair.

The tensor has power-law slice sizes (largest-slice shares of several percent) so Lite's second
stage really splits slices; Theorem 6.1's bounds are checked on the result.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from spbench.tucker.metrics import compute_metrics
from spbench.tucker.runner import theorem_6_1_slack
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.tensor import SparseTensor

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spbench.tucker.scheme_bench", description=__doc__)
    parser.add_argument("--nnz", type=int, default=10_000_000)
    parser.add_argument("--dims", default="100000,50000,2000000", help="comma-separated mode lengths")
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    dims = tuple(int(d) for d in args.dims.split(","))
    t0 = time.perf_counter()
    tensor = powerlaw_tensor(args.nnz, dims)
    shares = [round(m["largest_share"], 4) for m in tensor.stats()["modes"]]
    print(f"tensor: {len(dims)} modes, dims {dims}, nnz {tensor.nnz:,}, largest-slice shares {shares} "
          f"(generated in {time.perf_counter() - t0:.1f} s)")
    print("| scheme | P | median time (s) | all times (s) |\n|---|---|---|---|")
    dists = {}
    for name in ("lite", "coarse", "medium"):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            dists[name] = SCHEMES[name](tensor, args.ranks, seed=0)
            times.append(time.perf_counter() - start)
        print(f"| {name} | {args.ranks} | {np.median(times):.3f} | {', '.join(f'{t:.3f}' for t in times)} |")
    slack = theorem_6_1_slack(compute_metrics(tensor, dists["lite"], K=10).row()["mode_metrics"],
                              tensor.nnz, args.ranks)
    print(f"Lite Theorem 6.1 slack (min over modes; >= 0 holds): {slack}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
