"""Per-scheme peak memory, the P-independent start and the HOSVD refusal (issue: Tucker at the
paper's scale, part 1, items 3 and 5)."""
import numpy as np
import pytest

from spbench.tucker.hooi import factor_start
from spbench.tucker.hooi.counter_random import counter_normal
from spbench.tucker.hooi.factor_start import init_factors, orthonormalize_rows
from spbench.tucker.mpi.collectives import LocalComm
from spbench.tucker.rank_usage import peak_rss_mb, reset_peak_rss


def test_peak_rss_resets_between_phases():
    """After a reset the peak is the current size, so a later, smaller phase reads lower."""
    if not reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs on this system")
    big = np.ones(150_000_000 // 8)              # 150 MB touched
    high = peak_rss_mb()
    del big
    reset_peak_rss()
    low = peak_rss_mb()
    assert high - low > 100, (high, low)


def test_counter_normal_depends_only_on_ids():
    a = counter_normal(7, 2, np.arange(1000), 5)
    b = counter_normal(7, 2, np.array([999, 3]), 5)
    np.testing.assert_array_equal(b, a[[999, 3]])
    assert abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1
    assert not np.array_equal(counter_normal(8, 2, np.arange(10), 5), a[:10])


def test_random_start_draws_only_non_empty_rows(make_tensor):
    """Rows of empty slices are 0; the drawn rows are orthonormalized; with fewer non-empty
    slices than K the extra columns are 0 (the padding rule). Rows split over ranks give the
    same factor: tests/tucker/test_worker.py compares 1, 2 and 3 ranks."""
    T = make_tensor(3, dims=(8, 6, 5), nnz=60)
    keep = T.coords[:, 0] != 7
    from spbench.datasets.sparse_tensor import SparseTensor
    T = SparseTensor(T.coords[keep], T.values[keep], T.dims)
    F = init_factors(T, (3, 3, 6), "random", seed=1)
    assert not np.any(F[0][7])
    np.testing.assert_allclose(F[0].T @ F[0], np.eye(3), atol=1e-12)
    nonempty = np.count_nonzero(T.slice_sizes(2))
    G = F[2].T @ F[2]
    np.testing.assert_allclose(np.diag(G), [1.0] * min(6, nonempty) + [0.0] * (6 - min(6, nonempty)), atol=1e-12)
    A = counter_normal(1, 0, np.arange(50), 4)
    Q = orthonormalize_rows(A, lambda x: np.asarray(x, float), 50)
    np.testing.assert_allclose(Q @ np.linalg.lstsq(Q, A, rcond=None)[0], A, atol=1e-10)   # same span


def test_hosvd_refuses_a_tensor_rank0_cannot_hold(monkeypatch, make_tensor):
    monkeypatch.setattr(factor_start, "_available_bytes", lambda: 1000)
    T = make_tensor(2, dims=(10, 9, 8), nnz=200)
    with pytest.raises(ValueError, match="init: hosvd.*use init: random"):
        factor_start.hosvd_rows(LocalComm(), T.coords, T.values, T.dims, 3,
                                [np.arange(10), np.arange(9), np.arange(8)], 0, 1e-8)
