"""Leading singular triplets through an oracle: Golub–Kahan–Lanczos bidiagonalization
(tucker-lite-distribution §3 "SVD Component", Figure 5; SLEPc's SVDTRLANCZOS).

The matrix Z (m × n) is only seen through two callables, ``matvec(x) = Z·x`` (x of length n,
result of length m) and ``rmatvec(y) = y·Z = Zᵀy`` (y of length m, result of length n), so the
distributed version plugs in its own oracles (row owners σ_n, point-to-point reduction,
Allreduce) and nothing here changes.  Every call of either callable is one oracle query; ``Q``
counts them.

Method.  A Krylov basis of ``ncv = max(2·nsv, 10)`` vectors (SLEPc's default, the paper's
"2K Lanczos iterations", Q = 4K queries per pass), both bases fully reorthogonalized (classical
Gram–Schmidt applied twice).  The projected matrix B = Uᵀ Z V is kept as the Gram–Schmidt
coefficients, so after ``k`` steps Z V_k = U_k B and Zᵀ U_k = V_k Bᵀ + β_k v_{k+1} e_kᵀ.  With
B = P Σ Qᵀ the residual of Ritz triplet i is β_k·|P[k−1, i]|; triplet i has converged when it is
≤ ``tol``·σ_i (relative, SLEPc's default test).  Until the ``nsv`` leading triplets converge the
basis is thick-restarted as SLEPc does: keep the ``nconv + max(1, (ncv − nconv)//2)`` leading
Ritz vectors (U P_l, [V Q_l, v_{k+1}]; B becomes diag(σ_l) plus the column β_k·P[k−1, :l]) and
extend the basis again.  Breakdowns (an invariant subspace: α or β ≈ 0) continue with a random
vector orthogonal to the basis (its B coefficient is 0), as SLEPc does.

Small or deficient matrices.  When ``ncv ≥ min(m, n)`` the Krylov space cannot hold ncv
vectors: the matrix is then formed through the oracle (min(m, n) queries: Z·e_i for the n
columns, or e_iᵀ·Z for the m rows) and given to a dense SVD.  When ``nsv > min(m, n)`` there
are only min(m, n) singular triplets: the result is padded with σ = 0 and ZERO singular
vectors (columns of zeros), so U keeps ``nsv`` columns, all orthonormal or zero.  HOOI uses this
for K_n ≥ L_n (or more columns than non-empty slices): the zero columns of F_n contribute
nothing to the next TTMs or to the core, and the fit stays 1 − √(‖T‖² − ‖G‖²)/‖T‖.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["LanczosResult", "lanczos_svd", "default_ncv"]


@dataclass
class LanczosResult:
    """``U`` (m, nsv), ``s`` (nsv,) decreasing, ``V`` (n, nsv); diagnostics."""

    U: np.ndarray
    s: np.ndarray
    V: np.ndarray
    queries: int = 0            # oracle calls (matvec + rmatvec): the paper's Q_n
    restarts: int = 0
    converged: int = 0          # leading triplets that met the tolerance
    residuals: np.ndarray = field(default_factory=lambda: np.zeros(0))
    dense: bool = False         # solved by the dense fallback


def default_ncv(nsv: int) -> int:
    """SLEPc's default basis size max(2·nsv, 10)."""
    return max(2 * int(nsv), 10)


def _orth(basis: np.ndarray, k: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonalize ``w`` against ``basis[:, :k]`` (CGS twice); returns (w, coefficients)."""
    if k == 0:
        return w, np.zeros(0)
    B = basis[:, :k]
    c = B.T @ w
    w = w - B @ c
    c2 = B.T @ w
    w = w - B @ c2
    return w, c + c2


def _random_orth(basis: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A random unit vector orthogonal to ``basis[:, :k]`` (k < basis.shape[0])."""
    for _ in range(5):
        w, _ = _orth(basis, k, rng.standard_normal(basis.shape[0]))
        nrm = np.linalg.norm(w)
        if nrm > 1e-8:
            return w / nrm
    raise RuntimeError("could not extend the Lanczos basis (is the space exhausted?)")


def _pad(U, s, V, m, n, nsv):
    """Exactly ``nsv`` triplets: extra ones are σ = 0 with zero vectors."""
    k = s.shape[0]
    if k >= nsv:
        return U[:, :nsv], s[:nsv], V[:, :nsv]
    Up = np.zeros((m, nsv))
    Vp = np.zeros((n, nsv))
    sp = np.zeros(nsv)
    Up[:, :k], Vp[:, :k], sp[:k] = U, V, s
    return Up, sp, Vp


def _dense(matvec, rmatvec, m, n, nsv) -> LanczosResult:
    """Form Z through the oracle (min(m, n) queries) and take a dense SVD."""
    if m == 0 or n == 0:
        U, s, V = _pad(np.zeros((m, 0)), np.zeros(0), np.zeros((n, 0)), m, n, nsv)
        return LanczosResult(U, s, V, dense=True, converged=nsv)
    if n <= m:
        Z = np.empty((m, n))
        e = np.zeros(n)
        for i in range(n):
            e[i] = 1.0
            Z[:, i] = matvec(e)
            e[i] = 0.0
        q = n
    else:
        Z = np.empty((m, n))
        e = np.zeros(m)
        for i in range(m):
            e[i] = 1.0
            Z[i, :] = rmatvec(e)
            e[i] = 0.0
        q = m
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    U, s, V = _pad(U, s, Vt.T, m, n, nsv)
    return LanczosResult(np.ascontiguousarray(U), s, np.ascontiguousarray(V), queries=q,
                         dense=True, converged=nsv, residuals=np.zeros(nsv))


def lanczos_svd(matvec, rmatvec, shape, nsv: int, *, ncv: int | None = None, tol: float = 1e-8,
                max_restarts: int | None = None, seed: int = 0, v0: np.ndarray | None = None) -> LanczosResult:
    """The ``nsv`` leading singular triplets of the m × n matrix seen through the oracle.

    ``shape`` = (m, n); ``ncv`` defaults to max(2·nsv, 10); ``tol`` is the relative residual
    bound; ``v0`` the starting right vector (default: seeded normal).  Raises RuntimeError when
    ``max_restarts`` restarts (default SLEPc's max(100, min(m, n)/ncv)) do not converge.
    """
    m, n = int(shape[0]), int(shape[1])
    nsv = int(nsv)
    if nsv < 1:
        raise ValueError(f"nsv must be >= 1, got {nsv}")
    ncv = default_ncv(nsv) if ncv is None else int(ncv)
    if ncv <= nsv:
        raise ValueError(f"ncv = {ncv} must exceed nsv = {nsv}")
    if ncv >= min(m, n):
        return _dense(matvec, rmatvec, m, n, nsv)

    if max_restarts is None:
        max_restarts = max(100, min(m, n) // ncv)
    rng = np.random.default_rng(seed)
    U = np.zeros((m, ncv))
    V = np.zeros((n, ncv + 1))
    B = np.zeros((ncv, ncv))
    v = rng.standard_normal(n) if v0 is None else np.asarray(v0, dtype=float).copy()
    nrm = np.linalg.norm(v)
    if nrm == 0:
        v = rng.standard_normal(n)
        nrm = np.linalg.norm(v)
    V[:, 0] = v / nrm
    queries = 0
    restarts = 0
    l = 0            # vectors kept from the last restart: U[:, :l], V[:, :l+1] valid
    anorm = 0.0      # running estimate of ‖Z‖ for breakdown tests
    while True:
        beta = 0.0
        for j in range(l, ncv):
            # u_j = Z v_j − U B[:, j]
            w = np.asarray(matvec(V[:, j]), dtype=float)
            queries += 1
            w, c = _orth(U, j, w)
            B[:j, j] = c
            alpha = np.linalg.norm(w)
            anorm = max(anorm, alpha, np.linalg.norm(c))
            if alpha <= 1e-13 * max(anorm, 1e-300):
                U[:, j] = _random_orth(U, j, rng)
                B[j, j] = 0.0
            else:
                U[:, j] = w / alpha
                B[j, j] = alpha
            # v_{j+1} = Zᵀ u_j − V (·)
            w = np.asarray(rmatvec(U[:, j]), dtype=float)
            queries += 1
            w, _ = _orth(V, j + 1, w)
            beta = np.linalg.norm(w)
            anorm = max(anorm, beta)
            if beta <= 1e-13 * max(anorm, 1e-300):
                V[:, j + 1] = _random_orth(V, j + 1, rng)
                beta = 0.0
            else:
                V[:, j + 1] = w / beta
        P, s, Qt = np.linalg.svd(B)
        res = beta * np.abs(P[ncv - 1, :])
        ok = res <= tol * np.maximum(s, 1e-300)
        nconv = 0
        while nconv < ncv and ok[nconv]:
            nconv += 1
        if nconv >= nsv or restarts >= max_restarts:
            if nconv < nsv:
                raise RuntimeError(f"Lanczos: {nconv} of {nsv} triplets converged after "
                                   f"{restarts} restarts (tol {tol})")
            Uk = U @ P[:, :nsv]
            Vk = V[:, :ncv] @ Qt[:nsv, :].T
            return LanczosResult(Uk, s[:nsv].copy(), Vk, queries=queries, restarts=restarts,
                                 converged=min(nconv, nsv), residuals=res[:nsv].copy())
        # thick restart: keep the leading Ritz vectors and the last right vector
        keep = min(ncv - 1, max(nsv, nconv + max(1, (ncv - nconv) // 2)))
        Unew = U @ P[:, :keep]
        Vnew = V[:, :ncv] @ Qt[:keep, :].T
        vlast = V[:, ncv].copy()
        U[:, :keep] = Unew
        U[:, keep:] = 0.0
        V[:, :keep] = Vnew
        V[:, keep] = vlast
        V[:, keep + 1:] = 0.0
        B[:] = 0.0
        B[np.arange(keep), np.arange(keep)] = s[:keep]
        B[:keep, keep] = beta * P[ncv - 1, :keep]   # recomputed by the next Gram–Schmidt
        l = keep
        restarts += 1
