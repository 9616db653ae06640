"""Dense numpy HOOI: the reference the sparse, distributed HOOI is tested against (small tensors).

Same start (:func:`.factor_start.init_factors`), same padding rule (σ beyond min(L_n, K̂_n) are
zero columns), numpy SVD of the full unfolding Z_(n) (tucker-lite-distribution §2.2 Figure 2).
"""
from __future__ import annotations

import numpy as np

from spbench.tucker.hooi.factor_start import init_factors
from spbench.tucker.hooi.loop import HOOIResult, tucker_fit
from spbench.tucker.hooi.ttm import fold, unfold
from spbench.datasets.sparse_tensor import SparseTensor

__all__ = ["ttm_dense", "hooi_dense"]


def ttm_dense(X: np.ndarray, F, skip: int | None = None) -> np.ndarray:
    """X ×_j F_jᵀ for every j ≠ skip."""
    Y = X
    for j, Fj in enumerate(F):
        if j == skip:
            continue
        Y = np.moveaxis(np.tensordot(Y, Fj, axes=([j], [0])), -1, j)
    return Y


def hooi_dense(tensor: SparseTensor, K, *, invocations: int = 1, init="random", seed: int = 0) -> HOOIResult:
    """Dense numpy HOOI (small tensors, tests): same init, same padding rule (σ beyond
    min(L_n, K̂_n) are zero columns), numpy SVD of the full unfolding Z_(n)."""
    N = tensor.nmodes
    K = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    X = tensor.to_dense()
    if init == "hosvd":
        F = []
        for n in range(N):
            U, s, _ = np.linalg.svd(unfold(X, n), full_matrices=False)
            Fn = np.zeros((tensor.dims[n], K[n]))
            k = min(K[n], U.shape[1])
            Fn[:, :k] = U[:, :k]
            F.append(Fn)
    else:
        F = init_factors(tensor, K, init, seed)
    fits, sigmas = [], [None] * N
    core = None
    for _ in range(int(invocations)):
        for n in range(N):
            Zn = unfold(ttm_dense(X, F, skip=n), n)
            U, s, _ = np.linalg.svd(Zn, full_matrices=False)
            Fn = np.zeros((tensor.dims[n], K[n]))
            k = min(K[n], U.shape[1])
            Fn[:, :k] = U[:, :k]
            F[n] = Fn
            sp = np.zeros(K[n])
            sp[:k] = s[:k]
            sigmas[n] = sp
        core = ttm_dense(X, F)
        fits.append(tucker_fit(tensor.norm, float(np.linalg.norm(core))))
    ids = [np.arange(d, dtype=np.int64) for d in tensor.dims]
    return HOOIResult(F, ids, ids, core, fits, {}, [], [], [], sigmas)
