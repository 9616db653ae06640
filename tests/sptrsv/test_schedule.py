"""DAG, Schedule validity (Def. 2.1, Eq. 2.5), reordering and the wavefront scheduler."""
import numpy as np
import pytest
import scipy.sparse as sp

from spbench.kernels.sptrsv import _sptrsv
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.schedule import Schedule, ScheduleError, reorder, validate
from spbench.sptrsv.schedulers import SCHEDULERS, wavefront


def _chain(n=3):
    """Lower bidiagonal: edges 0 -> 1 -> ... -> n-1."""
    return prepare_lower(sp.diags([np.full(n - 1, -1.0), np.full(n, 2.0)], [-1, 0]))


def test_dag_structure(random_lower):
    L = random_lower(120, density=0.1, seed=1)
    dag = DAG(L)
    assert (dag.n, dag.nnz) == (120, L.nnz)
    np.testing.assert_array_equal(dag.weights, np.diff(L.indptr))
    assert dag.weights.dtype == np.int64
    assert dag.n_edges == L.nnz - 120
    dense = L.toarray() != 0
    np.fill_diagonal(dense, False)
    for v in (0, 5, 60, 119):
        np.testing.assert_array_equal(dag.parents(v), np.flatnonzero(dense[v]))
        np.testing.assert_array_equal(dag.children(v), np.flatnonzero(dense[:, v]))
    src, dst = dag.edges()
    assert np.all(src < dst)
    assert np.all(dense[dst, src])


def test_dag_levels_and_wavefronts():
    dag = DAG(_chain(5))
    np.testing.assert_array_equal(dag.levels(), np.arange(5))
    assert dag.wavefronts == 5 and dag.avg_wavefront == 1.0
    diag = DAG(prepare_lower(sp.eye(7, format="csr")))
    assert diag.wavefronts == 1 and diag.avg_wavefront == 7.0


def test_dag_levels_laplacian(laplacian_2d):
    """Lower 5-point Laplacian on g x g: level of (i, j) is i + j, so 2g - 1 wavefronts."""
    g = 20
    dag = DAG(prepare_lower(laplacian_2d(g)))
    i, j = np.divmod(np.arange(g * g), g)
    np.testing.assert_array_equal(dag.levels(), i + j)
    assert dag.wavefronts == 2 * g - 1


def test_dag_rejects_non_lower(random_lower):
    with pytest.raises(ValueError, match="diagonal"):
        DAG(random_lower(30, density=0.3, seed=6, diag_only_rows=0.0, shuffle=True))
    wide = sp.eye(3, format="csr")
    wide.indices = wide.indices.astype(np.int64)
    with pytest.raises(ValueError, match="int32"):
        DAG(wide)
    with pytest.raises(ValueError, match=r"entry \(2, 1\)|row 1"):
        DAG(sp.csr_matrix((np.ones(4), np.array([0, 2, 1, 2], dtype=np.int32),
                           np.array([0, 1, 2, 4], dtype=np.int32)), shape=(3, 3)))


def test_validate_accepts_wavefront(random_lower):
    dag = DAG(random_lower(300, density=0.05, seed=2))
    for cores in (1, 2, 3):
        schedule = wavefront.schedule(dag, cores)
        assert schedule.staleness == 1 and schedule.n_cores == cores
        validate(schedule, dag)
    assert SCHEDULERS["wavefront"] is wavefront.schedule


def test_validate_same_core_same_superstep_ok():
    validate(Schedule(core=[0, 0, 0], superstep=[0, 0, 0], n_cores=2), DAG(_chain()))
    validate(Schedule(core=[1, 1, 1], superstep=[0, 0, 0], n_cores=2, staleness=2), DAG(_chain()))


def test_validate_rejects_cross_core_same_superstep_bsp():
    schedule = Schedule(core=[0, 1, 1], superstep=[0, 0, 1], n_cores=2, staleness=1)
    with pytest.raises(ScheduleError, match=r"edge \(0 -> 1\).*staleness 1"):
        validate(schedule, DAG(_chain()))
    validate(Schedule(core=[0, 1, 1], superstep=[0, 1, 1], n_cores=2), DAG(_chain()))


def test_validate_staleness_two_needs_two_supersteps_across_cores():
    dag = DAG(_chain())
    one_apart = Schedule(core=[0, 1, 1], superstep=[0, 1, 1], n_cores=2, staleness=2)
    with pytest.raises(ScheduleError, match=r"edge \(0 -> 1\).*σ\(v\) \+ 2"):
        validate(one_apart, dag)
    validate(Schedule(core=[0, 1, 1], superstep=[0, 2, 2], n_cores=2, staleness=2), dag)


def test_validate_rejects_parent_after_child_on_one_core():
    with pytest.raises(ScheduleError, match=r"edge \(1 -> 2\)"):
        validate(Schedule(core=[0, 0, 0], superstep=[0, 2, 1], n_cores=1), DAG(_chain()))


def test_validate_rejects_malformed():
    dag = DAG(_chain())
    with pytest.raises(ScheduleError, match="exactly one"):
        validate(Schedule(core=[0, 0], superstep=[0, 1], n_cores=1), dag)
    with pytest.raises(ScheduleError, match="outside"):
        validate(Schedule(core=[0, 2, 0], superstep=[0, 1, 2], n_cores=2), dag)
    with pytest.raises(ScheduleError, match="negative"):
        validate(Schedule(core=[0, 0, 0], superstep=[-1, 0, 1], n_cores=1), dag)
    with pytest.raises(ScheduleError, match="equal length"):
        Schedule(core=[0, 0, 0], superstep=[0, 1], n_cores=1)


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_reorder_keeps_lower_and_solution(random_lower, cores):
    L = random_lower(250, density=0.05, seed=cores)
    schedule = wavefront.schedule(DAG(L), cores)
    L_perm, perm, block_ptr = reorder(schedule, L)
    assert sp.tril(L_perm).nnz == L_perm.nnz
    assert L_perm.indices.dtype == np.int32 and L_perm.has_sorted_indices
    np.testing.assert_array_equal(L_perm.toarray(), L.toarray()[np.ix_(perm, perm)])
    assert block_ptr.dtype == np.int32
    assert block_ptr.size == schedule.n_supersteps * cores + 1
    for k, v in enumerate(perm[:50]):
        s, p = divmod(np.searchsorted(block_ptr, k, side="right") - 1, cores)
        assert (schedule.superstep[v], schedule.core[v]) == (s, p)
    b = np.random.default_rng(0).standard_normal(250)
    x, x_perm = np.zeros(250), np.zeros(250)
    _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, x)
    _sptrsv.serial_solve(L_perm.indptr, L_perm.indices, L_perm.data, b[perm], x_perm)
    x_back = np.empty(250)
    x_back[perm] = x_perm
    np.testing.assert_allclose(x_back, x, rtol=1e-13)


def test_reorder_rejects_invalid_schedule():
    schedule = Schedule(core=[0, 0, 0], superstep=[1, 0, 2], n_cores=1)
    with pytest.raises(ScheduleError, match="not lower triangular"):
        reorder(schedule, _chain())


def test_wavefront_chunks_contiguous_and_balanced(laplacian_2d):
    dag = DAG(prepare_lower(laplacian_2d(40)))
    cores = 3
    schedule = wavefront.schedule(dag, cores)
    np.testing.assert_array_equal(schedule.superstep, dag.levels())
    for level in (10, 39, 60):
        rows = np.flatnonzero(dag.levels() == level)
        core = schedule.core[rows]
        assert np.all(np.diff(core) >= 0)
        load = np.bincount(core, weights=dag.weights[rows], minlength=cores)
        assert load.max() - load.min() <= 2 * dag.weights[rows].max()


def test_wavefront_more_cores_than_rows():
    dag = DAG(_chain(4))
    schedule = wavefront.schedule(dag, 8)
    validate(schedule, dag)
    assert schedule.n_supersteps == 4


def test_prepare_lower(random_lower):
    raw = random_lower(80, density=0.2, seed=9, shuffle=True)
    full = raw + sp.triu(raw.T, k=1)
    L = prepare_lower(full.tocoo())
    assert L.indices.dtype == np.int32 and L.indptr.dtype == np.int32
    assert L.has_sorted_indices
    np.testing.assert_array_equal(L.toarray(), np.tril(raw.toarray()))
    with pytest.raises(ValueError, match=r"row 2 has no nonzero diagonal"):
        prepare_lower(sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 0.0]])))
    with pytest.raises(ValueError, match=r"row 1 has no nonzero diagonal"):
        prepare_lower(sp.csr_matrix((np.array([0.0, 1.0]), (np.array([0, 1]), np.array([0, 1])))))
    with pytest.raises(ValueError, match="square"):
        prepare_lower(sp.csr_matrix(np.ones((2, 3))))
    one = prepare_lower(sp.csr_matrix(np.array([[3.0]])))
    assert one.shape == (1, 1) and one.nnz == 1
