"""HOOI on one process (tucker-lite-distribution §2.2 Figure 2, §3), plus a dense reference.

One invocation, for every mode n in turn (Gauss–Seidel: the factors updated earlier in the same
invocation are used):

1. TTM-chain into the COMPACT penultimate matrix Z_n (R_n rows = the non-empty mode-n slices,
   K̂_n = Π_{j≠n} K_j columns, the unfolding's column order of Appendix A: lowest mode fastest),
   by the Cython kernel ``spbench.kernels._ttm`` over a :class:`TTMPlan` (the elements grouped
   by compact row, prepared once per mode);
2. the K_n leading left singular vectors of Z_n by Lanczos (:mod:`.lanczos`) through an
   oracle ``matvec(x) = Z_n·x``, ``rmatvec(y) = Z_nᵀ·y``;
3. F_n[rows_n, :] = those vectors, every other row 0: an empty slice is a zero row of Z_(n), so
   every left singular vector with σ > 0 is zero there; ones with σ = 0 are not unique and we
   take them as 0 too (they are padding when K_n exceeds the non-empty slices, see lanczos.py).

After the last mode the core is G_(N) = F_N[rows_N]ᵀ · Z_N (no extra TTM), and
fit = 1 − √(max(‖T‖² − ‖G‖², 0))/‖T‖ (factors orthonormal or zero columns, so ‖G‖ is the norm of
the projection of T).

The distributed version changes only the TTM input (``plans``: a rank's elements of π_n) and the
oracle (``oracle``: σ_n owners, point-to-point reduction, Allreduce); the timer regions
``ttm_time`` / ``svd_time`` / ``core_time`` are shared with the benchmark (STYLE.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .lanczos import lanczos_svd
from .tensor import SparseTensor, linear_keys, unique_sorted
from .ttm import TTMPlan, fold, khat, ttm, ttm_scratch_len

__all__ = ["init_factors", "local_oracle", "hooi", "HOOIResult", "tucker_fit"]


# ---- initial factors ----------------------------------------------------------------------
def _orthonormal_columns(A: np.ndarray, K: int) -> np.ndarray:
    """QR of A (L × K): K orthonormal columns, zero columns beyond L."""
    L = A.shape[0]
    Q, R = np.linalg.qr(A[:, :min(K, L)])
    F = np.zeros((L, K))
    F[:, :Q.shape[1]] = Q
    return F


def _unfolding_sparse(tensor: SparseTensor, mode: int):
    """T_(n) as a scipy CSR over compact rows (non-empty slices) × compact columns (fibers)."""
    import scipy.sparse as sp

    others = [j for j in range(tensor.nmodes) if j != mode]
    # lexicographic key with the lowest other mode fastest (column order of the unfolding)
    keys = linear_keys(tensor.coords[:, others[::-1]], [tensor.dims[j] for j in others[::-1]])
    cols_u = unique_sorted(keys)
    cols = np.searchsorted(cols_u, keys)
    rows_u = unique_sorted(tensor.coords[:, mode])
    rows = np.searchsorted(rows_u, tensor.coords[:, mode])
    M = sp.csr_matrix((tensor.values, (rows, cols)), shape=(rows_u.size, cols_u.size))
    return M, rows_u


def init_factors(tensor: SparseTensor, K, init="random", seed: int = 0, *, tol: float = 1e-8):
    """Initial factor matrices: ``"random"`` (seeded normal, orthonormalized by QR),
    ``"hosvd"`` (leading K_n left singular vectors of the sparse unfolding T_(n), by Lanczos),
    or a list of N matrices (orthonormalized by QR)."""
    N = tensor.nmodes
    if isinstance(init, (list, tuple)):
        if len(init) != N:
            raise ValueError(f"{len(init)} initial factors for {N} modes")
        return [_orthonormal_columns(np.asarray(F, dtype=float), int(K[n])) for n, F in enumerate(init)]
    if init == "random":
        rng = np.random.default_rng(seed)
        return [_orthonormal_columns(rng.standard_normal((tensor.dims[n], int(K[n]))), int(K[n]))
                for n in range(N)]
    if init == "hosvd":
        out = []
        for n in range(N):
            M, rows = _unfolding_sparse(tensor, n)
            Mt = M.T.tocsr()
            res = lanczos_svd(lambda x: M @ x, lambda y: Mt @ y, M.shape, int(K[n]), tol=tol, seed=seed)
            F = np.zeros((tensor.dims[n], int(K[n])))
            F[rows] = res.U
            out.append(F)
        return out
    raise ValueError(f"unknown init {init!r}: 'random', 'hosvd' or a list of matrices")


# ---- HOOI ---------------------------------------------------------------------------------
def local_oracle(Z: np.ndarray, plan: TTMPlan):
    """Single-process oracle of the compact Z: (matvec, rmatvec, shape)."""
    return (lambda x: Z @ x), (lambda y: Z.T @ y), Z.shape


def tucker_fit(norm_t: float, norm_g: float) -> float:
    """1 − √(‖T‖² − ‖G‖²)/‖T‖ (clamped at 0 inside the root)."""
    if norm_t == 0:
        return 1.0
    return float(1.0 - np.sqrt(max(norm_t ** 2 - norm_g ** 2, 0.0)) / norm_t)


@dataclass
class HOOIResult:
    """Factors (L_n × K_n), core (K_1 × … × K_N), fit after each invocation, timers, and per
    mode the Lanczos singular values, oracle queries and restarts (of the last invocation)."""

    factors: list
    core: np.ndarray
    fits: list
    times: dict
    sigmas: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    restarts: list = field(default_factory=list)

    @property
    def fit(self) -> float:
        return self.fits[-1]


def _fold_core(G_last: np.ndarray, K) -> np.ndarray:
    """Core tensor from its mode-(N−1) unfolding (columns: lowest mode fastest)."""
    return fold(G_last, len(K) - 1, tuple(int(k) for k in K))


def hooi(tensor: SparseTensor, K, *, invocations: int = 1, init="random", seed: int = 0,
         threads: int = 1, tol: float = 1e-8, ncv: int | None = None, plans=None,
         oracle=local_oracle) -> HOOIResult:
    """HOOI (Figure 2) on one process.  ``K``: int or per-mode core sizes; ``init``: "random",
    "hosvd" or a list of factor matrices; ``threads``: OpenMP threads of the TTM kernel (BLAS is
    limited to the same count); ``tol``/``ncv``: Lanczos; ``plans``: per-mode TTMPlan (default:
    all elements); ``oracle(Z, plan) -> (matvec, rmatvec, shape)``."""
    N = tensor.nmodes
    K = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    if len(K) != N or min(K) < 1:
        raise ValueError(f"K must be positive, one per mode ({N}), got {K}")
    times = {"ttm_time": 0.0, "svd_time": 0.0, "core_time": 0.0, "init_time": 0.0, "plan_time": 0.0}
    t_all = time.perf_counter()
    threads = max(1, int(threads))
    with threadpool_limits(limits=threads):
        t0 = time.perf_counter()
        if plans is None:
            plans = [TTMPlan.build(tensor, n) for n in range(N)]
        Z = [np.empty((plans[n].nrows, khat(K, n))) for n in range(N)]
        scratch = np.empty((threads, max(ttm_scratch_len(K, n) for n in range(N))))
        times["plan_time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        F = init_factors(tensor, K, init, seed, tol=tol)
        times["init_time"] = time.perf_counter() - t0
        fits, sigmas, queries, restarts = [], [None] * N, [0] * N, [0] * N
        core = None
        for _ in range(int(invocations)):
            for n in range(N):
                t0 = time.perf_counter()
                ttm(tensor, plans[n], F, out=Z[n], scratch=scratch, threads=threads)
                t1 = time.perf_counter()
                matvec, rmatvec, shape = oracle(Z[n], plans[n])
                res = lanczos_svd(matvec, rmatvec, shape, K[n], ncv=ncv, tol=tol, seed=seed + n)
                Fn = np.zeros((tensor.dims[n], K[n]))
                Fn[plans[n].rows] = res.U
                F[n] = Fn
                times["ttm_time"] += t1 - t0
                times["svd_time"] += time.perf_counter() - t1
                sigmas[n], queries[n], restarts[n] = res.s, res.queries, res.restarts
            t0 = time.perf_counter()
            G_last = F[N - 1][plans[N - 1].rows].T @ Z[N - 1]
            core = _fold_core(G_last, K)
            fits.append(tucker_fit(tensor.norm, float(np.linalg.norm(G_last))))
            times["core_time"] += time.perf_counter() - t0
    times["total_time"] = time.perf_counter() - t_all
    return HOOIResult(F, core, fits, times, sigmas, queries, restarts)


