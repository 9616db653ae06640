"""Lanczos bidiagonalization (the paper's Fig. 5 SVD) against numpy's SVD; compiled one-process
steps against the Python steps."""
import numpy as np
import pytest

from spbench.tucker.hooi.lanczos import default_ncv, lanczos_svd


# ---- Lanczos --------------------------------------------------------------------------------
def _matrix(m, n, decay, seed):
    rng = np.random.default_rng(seed)
    r = min(m, n)
    U = np.linalg.qr(rng.standard_normal((m, r)))[0]
    V = np.linalg.qr(rng.standard_normal((n, r)))[0]
    return (U * decay ** np.arange(r)) @ V.T


def _sin_angle(A, B):
    """sin of the largest principal angle between the column spaces (orthonormal A, B)."""
    return np.linalg.norm(B - A @ (A.T @ B), 2)


@pytest.mark.parametrize("m,n,k", [(300, 80, 10), (80, 300, 5), (400, 200, 3), (1000, 100, 10)])
def test_lanczos_matches_svd(m, n, k):
    A = _matrix(m, n, 0.8, seed=m + n)
    calls = [0]

    def mv(x):
        calls[0] += 1
        return A @ x

    res = lanczos_svd(mv, lambda y: A.T @ y, (m, n), k)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(res.s, s[:k], rtol=1e-8)
    assert _sin_angle(U[:, :k], res.U) < 1e-8
    assert _sin_angle(Vt[:k].T, res.V) < 1e-8
    np.testing.assert_allclose(res.U.T @ res.U, np.eye(k), atol=1e-12)
    assert not res.dense and res.converged == k
    assert res.queries >= 2 * default_ncv(k) and calls[0] * 2 == res.queries
    assert res.restarts > 0 or res.queries == 2 * default_ncv(k)


def test_lanczos_restarts_on_clustered_spectrum():
    A = _matrix(400, 150, 0.97, seed=5)
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 4, tol=1e-10)
    s = np.linalg.svd(A, compute_uv=False)
    assert res.restarts > 0
    np.testing.assert_allclose(res.s, s[:4], rtol=1e-8)


def test_lanczos_rank_deficient_breakdown():
    """rank 3 < ncv < min(m, n): invariant subspace, continued with random vectors."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((200, 3)) @ rng.standard_normal((3, 60))
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 3)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(res.s, s[:3], rtol=1e-8)
    assert _sin_angle(U[:, :3], res.U) < 1e-8


@pytest.mark.parametrize("mode,rank", [("paper", None), ("converged", None), ("paper", 3), ("converged", 3)])
def test_lanczos_compiled_steps_equal_python_steps(mode, rank):
    """One process holding Z whole: the compiled steps give the Python steps' triplets (rounding
    apart), queries and restarts without calling the oracle, breakdowns (rank 3) included; a Z that
    is not the whole C-contiguous matrix is refused."""
    rng = np.random.default_rng(7)
    A = _matrix(400, 150, 0.97, seed=5) if rank is None else \
        rng.standard_normal((200, rank)) @ rng.standard_normal((rank, 60))
    k = 4 if rank is None else rank
    ref = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, k, mode=mode, tol=1e-10, seed=2)

    def unused(_):
        raise AssertionError("the oracle was called")

    res = lanczos_svd(lambda x: A @ x if rank else unused(x), lambda y: A.T @ y if rank else unused(y), A.shape, k,
                      mode=mode, tol=1e-10, seed=2, local_matrix=A)
    assert (res.queries, res.restarts) == (ref.queries, ref.restarts)
    np.testing.assert_allclose(res.s, ref.s, rtol=1e-12)
    assert _sin_angle(ref.U, res.U) < 1e-10 and _sin_angle(ref.V, res.V) < 1e-10
    with pytest.raises(ValueError, match="local_matrix"):
        lanczos_svd(unused, unused, A.shape, k, local_matrix=np.asfortranarray(A))


@pytest.mark.parametrize("m,n,k", [(9, 40, 5), (40, 8, 5), (6, 30, 10), (30, 4, 7), (0, 5, 3)])
def test_lanczos_small_or_deficient_falls_back_to_dense(m, n, k):
    A = _matrix(m, n, 0.7, seed=1) if m else np.zeros((0, n))
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, (m, n), k)
    assert res.dense and res.U.shape == (m, k) and res.V.shape == (n, k) and res.s.shape == (k,)
    r = min(m, n, k)
    if m:
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        np.testing.assert_allclose(res.s[:r], s[:r], rtol=1e-10)
        assert _sin_angle(U[:, :r], res.U[:, :r]) < 1e-10
        assert res.queries == min(m, n)
    assert not np.any(res.U[:, r:]) and not np.any(res.s[r:]) and not np.any(res.V[:, r:])


def test_lanczos_reports_non_convergence():
    A = np.random.default_rng(0).standard_normal((300, 100))
    with pytest.raises(RuntimeError, match="converged"):
        lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 5, max_restarts=0, tol=1e-14)
    with pytest.raises(ValueError):
        lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 5, ncv=5)
