"""SpTrSV kernels (serial, BSP with spin and OpenMP barriers) against scipy and dense solves."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg as spla

from spbench.kernels import _build_info
from spbench.kernels.sptrsv import _dag, _sptrsv
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.schedule import reorder
from spbench.sptrsv.schedulers import wavefront

SIZES = [1, 2, 7, 60, 400]
BARRIERS = [_sptrsv.BARRIER_SPIN, _sptrsv.BARRIER_OMP]
THREADS = [1, 2] if _build_info.openmp_enabled() else [1]


def _reference(L, b):
    return spla.spsolve_triangular(L.tocsr(), b, lower=True)


def _bsp(L, cores, barrier, reps=3):
    """Wavefront-schedule, reorder and BSP-solve L x = 1; x in the original ordering."""
    schedule = wavefront.schedule(DAG(L), cores)
    L_perm, perm, block_ptr = reorder(schedule, L)
    x_perm = np.zeros(L.shape[0])
    times = np.zeros(reps)
    b = np.ones(L.shape[0])
    team = _sptrsv.bsp_solve_timed(L_perm.indptr, L_perm.indices, L_perm.data, b[perm], x_perm,
                                   block_ptr, schedule.n_supersteps, cores, barrier, times)
    assert team == cores
    assert np.all(times > 0)
    x = np.empty_like(x_perm)
    x[perm] = x_perm
    return x


@pytest.mark.parametrize("n", SIZES)
def test_serial_matches_scipy_and_dense(random_lower, n):
    L = random_lower(n, density=0.2, seed=n)
    b = np.random.default_rng(n).standard_normal(n)
    x = np.zeros(n)
    _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, x)
    np.testing.assert_allclose(x, _reference(L, b), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x, scipy.linalg.solve_triangular(L.toarray(), b, lower=True),
                               rtol=1e-12, atol=1e-14)


def test_serial_timed_runs_each_repetition(random_lower):
    L = random_lower(300, seed=3)
    b = np.ones(300)
    x = np.zeros(300)
    times = np.zeros(5)
    _sptrsv.serial_solve_timed(L.indptr, L.indices, L.data, b, x, times)
    assert np.all(times > 0)
    np.testing.assert_allclose(x, _reference(L, b), rtol=1e-12)
    np.testing.assert_array_equal(b, 1.0)


def test_diagonal_only_matrix(random_lower):
    L = random_lower(50, diag_only_rows=1.0, seed=1)
    assert L.nnz == 50
    for cores in THREADS:
        np.testing.assert_allclose(_bsp(L, cores, _sptrsv.BARRIER_SPIN), 1.0 / L.diagonal())


@pytest.mark.parametrize("cores", THREADS)
@pytest.mark.parametrize("barrier", BARRIERS)
@pytest.mark.parametrize("n", SIZES)
def test_bsp_matches_scipy(random_lower, n, cores, barrier):
    L = random_lower(n, density=0.05, seed=10 + n)
    np.testing.assert_allclose(_bsp(L, cores, barrier), _reference(L, np.ones(n)),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("barrier", BARRIERS)
def test_bsp_unsorted_input_via_prepare(random_lower, barrier):
    raw = random_lower(200, density=0.1, seed=5, shuffle=True)
    L = prepare_lower(raw)
    cores = THREADS[-1]
    np.testing.assert_allclose(_bsp(L, cores, barrier), _reference(L, np.ones(200)), rtol=1e-12)


def test_bsp_all_rows_on_one_thread(random_lower):
    """A single superstep with every row on thread 0 is a valid BSP schedule; thread 1 idles."""
    L = random_lower(100, seed=2)
    cores = THREADS[-1]
    block_ptr = np.array([0, 100] + [100] * (cores - 1), dtype=np.int32)
    x = np.zeros(100)
    team = _sptrsv.bsp_solve_timed(L.indptr, L.indices, L.data, np.ones(100), x, block_ptr, 1,
                                   cores, _sptrsv.BARRIER_SPIN, np.zeros(2))
    assert team == cores
    np.testing.assert_allclose(x, _reference(L, np.ones(100)), rtol=1e-12)


@pytest.mark.skipif(not _build_info.openmp_enabled(), reason="needs OpenMP")
def test_spin_barrier_oversubscribed_does_not_hang(random_lower):
    """More threads than cores: the sched_yield fallback keeps the spin barrier moving."""
    L = random_lower(200, density=0.05, seed=4)
    np.testing.assert_allclose(_bsp(L, 6, _sptrsv.BARRIER_SPIN, reps=2),
                               _reference(L, np.ones(200)), rtol=1e-12)


@pytest.mark.skipif(_build_info.openmp_enabled(), reason="only without OpenMP")
def test_bsp_without_openmp_reports_one_thread(random_lower):
    L = random_lower(10, seed=0)
    team = _sptrsv.bsp_solve_timed(L.indptr, L.indices, L.data, np.ones(10), np.zeros(10),
                                   np.array([0, 10, 10], dtype=np.int32), 1, 2,
                                   _sptrsv.BARRIER_SPIN, np.zeros(1))
    assert team == 1


def test_kernel_rejects_diagonal_not_last(random_lower):
    L = random_lower(30, density=0.3, seed=6, diag_only_rows=0.0, shuffle=True)
    bad_rows = [i for i in range(30) if L.indices[L.indptr[i + 1] - 1] != i]
    assert bad_rows
    with pytest.raises(ValueError, match=f"row {bad_rows[0]} is not lower-triangular"):
        _sptrsv.serial_solve(L.indptr, L.indices, L.data, np.ones(30), np.zeros(30))


def test_kernel_rejects_bad_shapes_and_block_ptr(random_lower):
    L = random_lower(10, seed=0)
    b = np.ones(10)
    with pytest.raises(ValueError, match="b and x"):
        _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, np.zeros(9))
    with pytest.raises(ValueError, match="same buffer"):
        _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, b)
    with pytest.raises(ValueError, match="block_ptr must run"):
        _sptrsv.bsp_solve_timed(L.indptr, L.indices, L.data, b, np.zeros(10),
                                np.array([0, 9], dtype=np.int32), 1, 1, 0, np.zeros(1))
    with pytest.raises(ValueError, match="decreases"):
        _sptrsv.bsp_solve_timed(L.indptr, L.indices, L.data, b, np.zeros(10),
                                np.array([0, 6, 4, 10], dtype=np.int32), 3, 1, 0, np.zeros(1))
    with pytest.raises(ValueError, match="barrier"):
        _sptrsv.bsp_solve_timed(L.indptr, L.indices, L.data, b, np.zeros(10),
                                np.array([0, 10], dtype=np.int32), 1, 1, 7, np.zeros(1))


def test_levels_kernel_matches_reference(random_lower):
    L = random_lower(300, density=0.02, seed=8)
    expected = np.zeros(300, dtype=np.int32)
    for i in range(300):
        cols = L.indices[L.indptr[i]:L.indptr[i + 1]]
        cols = cols[cols < i]
        expected[i] = expected[cols].max() + 1 if cols.size else 0
    np.testing.assert_array_equal(_dag.levels(L.indptr, L.indices), expected)
