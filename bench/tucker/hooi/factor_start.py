"""Starting factor matrices of HOOI (tucker-lite-distribution §2.2 Figure 2, §3).

Distributed without full-size replicas (issue: "factors and start without full-size replicas"):
row l of F_n is drawn at its owner σ_n(l) from :func:`.counter_random.counter_normal` keyed by
(seed, n, l), so the start does not depend on P, and the owned rows are orthonormalized together
by Cholesky-QR applied twice, each pass one Allreduce of a K × K Gram matrix. Only rows of
non-empty slices are drawn (an empty slice's row never enters a TTM, the core or the fit). When
fewer than K_n slices are non-empty, the columns beyond them are zero (the padding rule of
:mod:`.lanczos`). :func:`init_factors` is the same rule on one process with full-size matrices
(the dense reference, benchmarks, HOSVD); :func:`hosvd_rows` computes HOSVD factors on rank 0 of
a gathered tensor and hands each rank its owned rows, refusing when the tensor would not fit.
"""
from __future__ import annotations

import os

import numpy as np
from scipy.linalg import solve_triangular

from spbench.tucker.hooi.counter_random import counter_normal
from spbench.tucker.hooi.lanczos import lanczos_svd
from spbench.datasets.sparse_tensor import SparseTensor, linear_keys, unique_sorted

__all__ = ["random_rows", "orthonormalize_rows", "init_factors", "hosvd_rows", "HOSVD_BYTES_PER_NONZERO"]

# what rank 0 holds per gathered nonzero during HOSVD: coordinates and value, the sorted keys and
# the CSR unfolding and its transpose (measured order of magnitude, generous)
HOSVD_BYTES_PER_NONZERO = 160


def random_rows(seed: int, mode: int, ids: np.ndarray, K: int) -> np.ndarray:
    """Rows ``ids`` of the random start of F_mode (standard normal, counter-based)."""
    return counter_normal(seed, mode, ids, K)


def orthonormalize_rows(A: np.ndarray, total, nrows_global: int) -> np.ndarray:
    """Orthonormal columns spanning A's (A split by rows over ranks; ``total`` sums over ranks):
    Cholesky-QR twice over the non-zero columns, at most ``nrows_global`` of them; others zero."""
    A = np.array(A, dtype=np.float64, order="C", copy=True)
    live = np.flatnonzero(total(np.einsum("ij,ij->j", A, A)) > 0)[:max(int(nrows_global), 0)]
    out = np.zeros_like(A)
    if live.size == 0:
        return out
    Q = A[:, live]
    for _ in range(2):
        G = total(Q.T @ Q)
        try:
            R = np.linalg.cholesky(G).T
        except np.linalg.LinAlgError:
            raise ValueError("starting factor columns are linearly dependent") from None
        Q = solve_triangular(R, Q.T, trans="T", lower=False).T
    out[:, live] = Q
    return out


def _identity(a):
    return np.asarray(a, dtype=np.float64)


def _unfolding_sparse(tensor: SparseTensor, mode: int):
    """T_(n) as a scipy CSR over compact rows (non-empty slices) × compact columns (fibers)."""
    import scipy.sparse as sp

    others = [j for j in range(tensor.nmodes) if j != mode]
    keys = linear_keys(tensor.coords[:, others[::-1]], [tensor.dims[j] for j in others[::-1]])
    cols_u = unique_sorted(keys)
    cols = np.searchsorted(cols_u, keys)
    rows_u = unique_sorted(tensor.coords[:, mode])
    rows = np.searchsorted(rows_u, tensor.coords[:, mode])
    M = sp.csr_matrix((tensor.values, (rows, cols)), shape=(rows_u.size, cols_u.size))
    return M, rows_u


def init_factors(tensor: SparseTensor, K, init="random", seed: int = 0, *, tol: float = 1e-8):
    """Full-size starting factors on one process: ``"random"`` (the distributed rule above),
    ``"hosvd"`` (leading K_n left singular vectors of the sparse unfolding T_(n), Lanczos to
    ``tol``), or a list of N matrices (their rows of non-empty slices, orthonormalized)."""
    N = tensor.nmodes
    K = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    if isinstance(init, (list, tuple)):
        if len(init) != N:
            raise ValueError(f"{len(init)} initial factors for {N} modes")
    elif init not in ("random", "hosvd"):
        raise ValueError(f"unknown init {init!r}: 'random', 'hosvd' or a list of matrices")
    out = []
    for n in range(N):
        ids = np.flatnonzero(tensor.slice_sizes(n))
        F = np.zeros((tensor.dims[n], K[n]))
        if init == "hosvd":
            M, rows = _unfolding_sparse(tensor, n)
            Mt = M.T.tocsr()
            res = lanczos_svd(lambda x: M @ x, lambda y: Mt @ y, M.shape, K[n], tol=tol, seed=seed)
            F[rows] = res.U
        else:
            A = (random_rows(seed, n, ids, K[n]) if init == "random"
                 else np.asarray(init[n], dtype=float)[ids, :K[n]])
            if A.shape != (ids.size, K[n]):
                raise ValueError(f"initial factor {n} must have {K[n]} columns, got {A.shape[1]}")
            F[ids] = orthonormalize_rows(A, _identity, ids.size)
        out.append(F)
    return out


def _available_bytes() -> int:
    """MemAvailable of this node (Linux), else a large number."""
    from spbench.machine.facts import proc_kb
    kb = proc_kb("/proc/meminfo", "MemAvailable")
    return kb * 1024 if kb is not None else 1 << 62


def hosvd_rows(comm, coords: np.ndarray, values: np.ndarray, dims, K, own_ids: list, seed: int,
               tol: float) -> list:
    """HOSVD start under MPI: every element once (``coords``/``values`` of π_0 on each rank)
    gathered on rank 0, which computes :func:`init_factors` ("hosvd") and sends every rank the
    rows it owns (``own_ids[n]``). Refused with a one-line ValueError, on every rank, when the
    gathered tensor would not fit in rank 0's available memory."""
    nnz = int(comm.allreduce(int(values.shape[0])))
    need = nnz * HOSVD_BYTES_PER_NONZERO
    avail = int(comm.bcast(_available_bytes() if comm.rank == 0 else None, root=0))
    if need > avail // 2:
        raise ValueError(f"init: hosvd gathers the whole tensor on rank 0 ({nnz} nonzeros, about "
                         f"{need / 1e9:.1f} GB) but only {avail / 1e9:.1f} GB is available there: "
                         f"use init: random")
    parts_c = comm.gather(np.asarray(coords), root=0)
    parts_v = comm.gather(np.asarray(values), root=0)
    ids = comm.gather([np.asarray(i) for i in own_ids], root=0)
    rows = None
    if comm.rank == 0:
        tensor = SparseTensor(np.concatenate(parts_c), np.concatenate(parts_v), tuple(dims),
                              sum_duplicates=False, check=False)
        del parts_c, parts_v
        F = init_factors(tensor, K, "hosvd", seed, tol=tol)
        rows = [[F[n][ids[q][n]] for n in range(len(F))] for q in range(comm.size)]
    return comm.scatter(rows, root=0)
