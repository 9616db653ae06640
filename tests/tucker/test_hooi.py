"""Single-process HOOI (paper §2.2 Figure 2) against the dense numpy HOOI."""
import numpy as np
import pytest

from spbench.tucker.hooi.factor_start import init_factors
from spbench.tucker.hooi.loop import hooi
from spbench.tucker.hooi.hooi_reference import hooi_dense, ttm_dense as _ttm_dense
from spbench.datasets.sparse_tensor import SparseTensor


def _sin_angle(A, B):
    return np.linalg.norm(B - A @ (A.T @ B), 2)


def _assert_same_subspaces(res, ref, gap=1e-6):
    """Compare the factor subspaces of the columns with σ > 0 (zero-σ columns are padding)."""
    for n, (F, Fd) in enumerate(zip(res.factors, ref.factors)):
        s = ref.sigmas[n]
        keep = s > gap * max(s[0], 1e-300)
        A, B = Fd[:, keep], F[:, keep]
        assert _sin_angle(A, B) < 1e-8, n
        np.testing.assert_allclose(res.sigmas[n][keep], s[keep], rtol=1e-9)
        np.testing.assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-12)


def _hollow_tensor(seed, dims, nnz, make_tensor):
    """Random tensor with some empty slices in every mode."""
    T = make_tensor(seed, dims=dims, nnz=nnz)
    keep = np.ones(T.nnz, dtype=bool)
    for n, L in enumerate(dims):
        keep &= T.coords[:, n] != L - 1           # the last slice of every mode is empty
    return SparseTensor(T.coords[keep], T.values[keep], T.dims)


@pytest.mark.parametrize("dims,K", [((30, 25, 20), (4, 3, 5)), ((14, 12, 10, 9), (3, 2, 3, 2))])
@pytest.mark.parametrize("init", ["random", "hosvd"])
def test_hooi_matches_dense(dims, K, init, make_tensor):
    T = make_tensor(7, dims=dims, nnz=600)
    res = hooi(T, K, invocations=2, init=init, seed=3, tol=1e-12, lanczos="converged")
    ref = hooi_dense(T, K, invocations=2, init=init, seed=3)
    np.testing.assert_allclose(res.fits, ref.fits, rtol=1e-10)
    assert res.fits[1] >= res.fits[0] - 1e-12
    _assert_same_subspaces(res, ref)
    assert res.core.shape == tuple(K)
    # the core from the last Z equals the full TTM chain with the new factors
    np.testing.assert_allclose(res.core, _ttm_dense(T.to_dense(), res.factors), atol=1e-10)
    assert set(res.times) >= {"ttm_time", "svd_time", "hooi_time"}
    assert all(q > 0 for q in res.queries)


def test_one_process_time_partition_and_no_words(make_tensor):
    """On one process: ttm + svd + comm + other = hooi_time (Fig. 11's bars; the same clock
    readings, so only rounding differs), nothing is sent (no message time, 0 words per rank)."""
    from spbench.tucker.hooi.loop import PARTITION

    T = make_tensor(5, dims=(300, 200, 100), nnz=20000)
    res = hooi(T, 6, invocations=2, seed=0)
    parts = [res.times[k] for k in PARTITION]
    assert min(parts) >= 0 and res.times["ttm_time"] > 0 and res.times["svd_time"] > 0
    assert sum(parts) == pytest.approx(res.times["hooi_time"], rel=1e-9)
    assert res.times["comm_time"] == 0.0 and res.words_sent_recv == 0 and res.core_words == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_hooi_default_tolerance_and_threads(threads, make_tensor):
    T = make_tensor(11, dims=(40, 30, 20), nnz=900)
    res = hooi(T, 5, threads=threads, seed=1, lanczos="converged")
    ref = hooi_dense(T, 5, seed=1)
    np.testing.assert_allclose(res.fit, ref.fit, rtol=1e-10)
    _assert_same_subspaces(res, ref)


@pytest.mark.parametrize("dims,K", [((6, 5, 4), (6, 5, 4)), ((6, 5, 4), (8, 2, 4)),
                                    ((5, 4, 3, 3), (5, 4, 3, 3)), ((12, 10, 9, 8), (12, 3, 2, 2))])
def test_hooi_k_at_least_l_and_empty_slices(dims, K, make_tensor):
    """K_n ≥ L_n (dense fallback, zero padding) with empty slices: same ‖G‖ as the dense HOOI.
    The fit 1 − √(‖T‖² − ‖G‖²)/‖T‖ is ill-conditioned near 1 (√ of a cancellation), so it is
    compared absolutely at 1e-7, ‖G‖ relatively at 1e-10."""
    T = _hollow_tensor(5, dims, 80, make_tensor)
    res = hooi(T, K, invocations=2, seed=2, lanczos="converged")
    ref = hooi_dense(T, K, invocations=2, seed=2)
    np.testing.assert_allclose(np.linalg.norm(res.core), np.linalg.norm(ref.core), rtol=1e-10)
    np.testing.assert_allclose(res.fits, ref.fits, atol=1e-7)
    for n, F in enumerate(res.factors):
        assert F.shape == (T.dims[n], K[n])
        assert not np.any(F[T.dims[n] - 1])                # empty slice: zero row
        G = F.T @ F
        nz = np.diag(G) > 0.5                              # orthonormal or zero columns
        np.testing.assert_allclose(G, np.diag(nz.astype(float)), atol=1e-12)


def test_init_factors_random_is_seeded_orthonormal(make_tensor):
    T = make_tensor(1, dims=(9, 7, 5), nnz=100)
    a = init_factors(T, (3, 8, 2), "random", seed=4)
    b = init_factors(T, (3, 8, 2), "random", seed=4)
    for F, G in zip(a, b):
        np.testing.assert_array_equal(F, G)
    np.testing.assert_allclose(a[0].T @ a[0], np.eye(3), atol=1e-12)
    assert a[1].shape == (7, 8) and not np.any(a[1][:, 7:])
    with pytest.raises(ValueError):
        init_factors(T, (3, 3, 3), "nope")


def test_hooi_paper_lanczos_runs_2k_steps(make_tensor):
    """``lanczos: paper`` (§7.1): 2K_n Lanczos steps, Q_n = 4K_n queries, no restart, the
    leading triplets' relative residuals reported; its fit is close to the converged one."""
    T = make_tensor(2, dims=(60, 50, 40), nnz=1500)
    res = hooi(T, 3, seed=0)
    conv = hooi(T, 3, seed=0, lanczos="converged", tol=1e-10)
    assert res.queries == [12, 12, 12] and res.restarts == [0, 0, 0]
    assert all(0 <= r < 1 for r in res.residuals)
    assert all(r <= 1e-10 for r in conv.residuals)
    assert abs(res.fit - conv.fit) < 1e-2 * conv.fit
    with pytest.raises(ValueError, match="lanczos"):
        hooi(T, 3, lanczos="fast")


@pytest.mark.parametrize("dims,K", [((30, 25, 20), 3), ((12, 10, 9, 8), (3, 2, 3, 2))])
def test_hooi_matches_pyttb_tucker_als(dims, K, make_tensor):
    """Same initial factors, one invocation: the same fit as pyttb's tucker_als."""
    ttb = pytest.importorskip("pyttb")
    T = make_tensor(4, dims=dims, nnz=500)
    Ks = [K] * len(dims) if np.ndim(K) == 0 else list(K)
    F0 = init_factors(T, Ks, "random", seed=6)
    X = ttb.sptensor(T.coords, T.values[:, None], tuple(T.dims))
    _, _, info = ttb.tucker_als(X, Ks, stoptol=0, maxiters=1, init=[F.copy() for F in F0], printitn=0)
    res = hooi(T, Ks, init=F0, tol=1e-12, lanczos="converged")
    np.testing.assert_allclose(res.fit, info["fit"], rtol=1e-9)
