"""HDagg scheduler: sparsification + tree grouping, glued level windows, bin-packed components."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spbench.kernels import _build_info, _hdagg
from spbench.sptrsv.dag import DAG
from spbench.machine import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import reorder, validate
from spbench.sptrsv.schedulers import SCHEDULERS, hdagg
from spbench.parameters import defaults

PARALLEL = min(2, usable_cores()) if _build_info.openmp_enabled() else 1


def _lower(dense_pattern):
    """Lower-triangular CSR with ones below the diagonal where the pattern says, 4 on it."""
    A = np.tril(np.asarray(dense_pattern, dtype=float), -1) + 4 * np.eye(len(dense_pattern))
    return prepare_lower(sp.csr_matrix(A))


def test_registered():
    assert SCHEDULERS["hdagg"] is hdagg.schedule
    assert hdagg.name == "hdagg" and defaults(hdagg.parameters) == {"threshold": 0.003}


def test_sparsification_and_tree_grouping():
    # 0 -> 1 -> 2 plus the transitive 0 -> 2: after sparsification 0 and 1 have one child each,
    # so {0, 1, 2} is one group; 3 -> {4, 5} has two children: three groups 3, 4, 5.
    P = np.zeros((6, 6))
    P[1, 0] = P[2, 1] = P[2, 0] = 1
    P[4, 3] = P[5, 3] = 1
    L = _lower(P)
    dag = DAG(L)
    group = _hdagg.tree_groups(dag.n, dag.parent_ptr, dag.parent_idx)
    assert group[0] == group[1] == group[2]
    assert len({group[3], group[4], group[5], group[0]}) == 4
    # groups numbered by root id: root 2 -> 0, root 3 -> 1, 4 -> 2, 5 -> 3
    np.testing.assert_array_equal(group, [0, 0, 0, 1, 2, 3])


def test_chain_is_one_group_on_one_core():
    L = prepare_lower(sp.diags([np.ones(49), np.full(50, 3.0)], [-1, 0]))
    s = hdagg.schedule(DAG(L), 2)
    validate(s, DAG(L))
    assert s.n_supersteps == 1 and np.all(s.core == s.core[0])


def test_balanced_independent_blocks_glue_into_one_superstep(laplacian_2d):
    """Four equal independent blocks: every window packs 2 + 2 (divergence 0), so all levels glue."""
    block = sp.tril(laplacian_2d(6))
    L = prepare_lower(sp.block_diag([block] * 4))
    dag = DAG(L)
    s = hdagg.schedule(dag, 2)
    validate(s, dag)
    assert dag.wavefronts > 1 and s.n_supersteps == 1
    loads = np.bincount(s.core, weights=dag.weights)
    assert loads[0] == loads[1]
    assert hdagg.schedule(dag, 2, threshold=0.0).n_supersteps > 1  # nothing glues at 0


def test_laplacian_does_not_glue_past_connected_levels(laplacian_2d):
    dag = DAG(prepare_lower(laplacian_2d(30)))
    s = hdagg.schedule(dag, 2)
    validate(s, dag)
    assert 1 < s.n_supersteps <= dag.wavefronts
    assert hdagg.schedule(dag, 1).n_supersteps == 1  # one core: always balanced


@pytest.mark.parametrize("cores", [1, 2, 3, 8])
def test_valid_on_random_and_special_dags(random_lower, cores):
    cases = [random_lower(n, density=d, seed=k, diag_only_rows=e)
             for k, (n, d, e) in enumerate([(300, 0.03, 0.2), (1000, 0.002, 0.2), (200, 0.1, 0.0),
                                            (150, 0.05, 0.7), (40, 0.1, 1.0), (1, 0.1, 0.0)])]
    for L in cases:
        dag = DAG(L)
        s = hdagg.schedule(dag, cores)
        validate(s, dag)
        assert s.staleness == 1 and s.n_cores == cores
        assert s.n_supersteps <= dag.wavefronts
        assert np.all((s.core >= 0) & (s.core < cores))


def test_diagonal_matrix_is_one_balanced_superstep(random_lower):
    dag = DAG(random_lower(90, diag_only_rows=1.0, seed=1))
    s = hdagg.schedule(dag, 3)
    assert s.n_supersteps == 1
    np.testing.assert_array_equal(np.bincount(s.core), [30, 30, 30])


def test_deterministic(random_lower):
    dag = DAG(random_lower(500, density=0.01, seed=3))
    a, b = hdagg.schedule(dag, 3), hdagg.schedule(dag, 3)
    np.testing.assert_array_equal(a.core, b.core)
    np.testing.assert_array_equal(a.superstep, b.superstep)


def test_rejects_bad_arguments(random_lower):
    dag = DAG(random_lower(10, seed=0))
    with pytest.raises(ValueError, match="cores"):
        hdagg.schedule(dag, 0)
    with pytest.raises(ValueError, match="threshold"):
        hdagg.schedule(dag, 2, threshold=-1.0)


@pytest.mark.parametrize("cores", sorted({1, PARALLEL}))
def test_solve_point_matches_scipy(random_lower, laplacian_2d, cores):
    for A in (random_lower(400, density=0.02, seed=cores, shuffle=True), laplacian_2d(20)):
        row = solve_point(A, "hdagg", cores, repeats=3)
        assert (row["kernel"], row["staleness"]) == ("bsp", 1)
        assert row["status"] == "ok" and row["supersteps"] <= row["wavefronts"]
    L = prepare_lower(random_lower(300, density=0.02, seed=5))
    s = hdagg.schedule(DAG(L), 2)
    L_perm, perm, _ = reorder(s, L)
    x_ref = spla.spsolve_triangular(L.tocsr(), np.ones(300), lower=True)
    np.testing.assert_allclose(spla.spsolve_triangular(L_perm.tocsr(), np.ones(300), lower=True),
                               x_ref[perm], rtol=1e-12)
