"""What the Tucker benchmarks (:mod:`.hooi_bench`, :mod:`.ttm_bench`) share: their generated
tensors, the data set name of a case in rows and the machine's numpy matmul peak (a leaf both import)."""
from __future__ import annotations

import time

import numpy as np

__all__ = ["make_tensor", "case_label", "matmul_peak"]


def make_tensor(dims, nnz: int, seed: int = 0):
    """Uniform random coordinates and values (seeded)."""
    from spbench.datasets.sparse_tensor import SparseTensor

    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, L, nnz) for L in dims], axis=1)
    return SparseTensor(coords, rng.random(nnz), dims)


def case_label(dims, nnz: int) -> str:
    """A case's data set name in rows: its dims and nonzeros."""
    return "×".join(map(str, dims)) + f", {nnz} nnz"


def matmul_peak(threads: int, n: int = 2048) -> float:
    """numpy matmul GFLOP/s (best of 3) with BLAS limited to ``threads``."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    A, B = rng.random((n, n)), rng.random((n, n))
    best = np.inf
    with threadpool_limits(limits=threads):
        A @ B
        for _ in range(3):
            t0 = time.perf_counter()
            A @ B
            best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9
