"""HDagg scheduler: sparsification + tree grouping, glued level windows, bin-packed components."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spbench.kernels import _build_info
from spbench.kernels.sptrsv import _hdagg
from spbench.sptrsv.dag import DAG
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import reorder, validate
from spbench.sptrsv.schedulers import SCHEDULERS, hdagg
from spbench.pipeline.parameters import defaults

PARALLEL = min(2, usable_cores()) if _build_info.openmp_enabled() else 1


def _lower(dense_pattern):
    """Lower-triangular CSR with ones below the diagonal where the pattern says, 4 on it."""
    A = np.tril(np.asarray(dense_pattern, dtype=float), -1) + 4 * np.eye(len(dense_pattern))
    return prepare_lower(sp.csr_matrix(A))


def test_registered():
    assert SCHEDULERS["hdagg"] is hdagg.schedule
    assert hdagg.name == "hdagg" and defaults(hdagg.parameters) == {"threshold": 0.003, "grouping": "tree"}


def _groups(L):
    dag = DAG(L)
    sp_ptr, sp_idx = _hdagg.sparsified_children(dag.n, dag.child_ptr, dag.child_idx)
    return sp_ptr, sp_idx, *_hdagg.tree_groups(dag.n, sp_ptr, sp_idx)


def test_sparsification_and_tree_grouping():
    # 0 -> 1 -> 2 plus the transitive 0 -> 2: after sparsification 0 and 1 have one child each,
    # so {0, 1, 2} is one group; 3 -> {4, 5} has two children: three groups 3, 4, 5.
    P = np.zeros((6, 6))
    P[1, 0] = P[2, 1] = P[2, 0] = 1
    P[4, 3] = P[5, 3] = 1
    sp_ptr, sp_idx, group, level = _groups(_lower(P))
    np.testing.assert_array_equal(np.diff(sp_ptr), [1, 1, 0, 2, 0, 0])
    # groups numbered by their smallest vertex: {0, 1, 2} -> 0, {3} -> 1, {4} -> 2, {5} -> 3
    np.testing.assert_array_equal(group, [0, 0, 0, 1, 2, 3])
    np.testing.assert_array_equal(level, [0, 0, 1, 1])


def test_clique_becomes_a_chain_whose_last_column_keeps_the_edges():
    # columns 0, 1, 2 are dense inside and identical below (rows 4, 5): a clique; column 3 reads 0
    # only.  The chain 0 -> 1 -> 2 keeps 2 -> 4 and 2 -> 5; 0 -> 3 stays (no other path to 3).
    P = np.zeros((6, 6))
    P[1, 0] = P[2, 0] = P[2, 1] = 1
    P[[4, 5], 0] = P[[4, 5], 1] = P[[4, 5], 2] = 1
    P[3, 0] = 1
    sp_ptr, sp_idx, group, _ = _groups(_lower(P))
    children = [list(sp_idx[sp_ptr[i]:sp_ptr[i + 1]]) for i in range(6)]
    assert children == [[1, 3], [2], [4, 5], [], [], []]
    # 1 has one child: it joins 2's group; 0 (two children), 3, 4, 5 are roots of their own
    assert group[1] == group[2] and len(set(group)) == 5


def test_groups_numbered_by_smallest_vertex_not_by_root():
    # 0 -> 4 (0's only child) and 1 -> {2, 3}: group {0, 4} has root 4 but number 0
    P = np.zeros((5, 5))
    P[4, 0] = P[2, 1] = P[3, 1] = 1
    _, _, group, _ = _groups(_lower(P))
    np.testing.assert_array_equal(group, [0, 1, 2, 3, 0])


def test_divergence_accumulates_over_a_windows_attempts():
    # Level 0 = positions 0, 1 (costs 3, 2); level 1 = 2, 3 (3, 2) with edges 0 -> 2, 1 -> 3: each
    # attempt packs 3:2 or 6:4 on two cores, the same divergence d.  The second level glues only
    # when the threshold is above the running sum 2d (the original keeps one sum per window).
    cost = np.array([3.0, 2.0, 3.0, 2.0])
    level_ptr = np.array([0, 2, 4], dtype=np.int32)
    edge_ptr = np.array([0, 0, 2], dtype=np.int32)
    src, dst = np.array([0, 1], dtype=np.int32), np.array([2, 3], dtype=np.int32)
    pos_level = np.array([0, 0, 1, 1], dtype=np.int32)
    d = 0.6 * np.log2(1.2) + 0.4 * np.log2(0.8)
    step, core = _hdagg.glue(level_ptr, edge_ptr, src, dst, pos_level, cost, 2, 1.5 * d)
    np.testing.assert_array_equal(step, [0, 0, 1, 1])
    step, core = _hdagg.glue(level_ptr, edge_ptr, src, dst, pos_level, cost, 2, 2.5 * d)
    np.testing.assert_array_equal(step, [0, 0, 0, 0])
    np.testing.assert_array_equal(core, [0, 1, 0, 1])  # a component stays on one core


def test_a_core_left_without_work_ends_the_window():
    # Level 0 has two independent vertices, level 1 one vertex reading both: the window [0, 2) is
    # one component, so one of the two effective cores gets nothing and the divergence is NaN.
    cost = np.array([1.0, 1.0, 1.0])
    level_ptr = np.array([0, 2, 3], dtype=np.int32)
    edge_ptr = np.array([0, 0, 2], dtype=np.int32)
    src, dst = np.array([0, 1], dtype=np.int32), np.array([2, 2], dtype=np.int32)
    step, _ = _hdagg.glue(level_ptr, edge_ptr, src, dst, np.array([0, 0, 1], dtype=np.int32), cost, 2, 1e9)
    np.testing.assert_array_equal(step, [0, 0, 1])


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


# Supersteps of the original HDagg (threshold 0.003) on these matrices, tree-grouped / not grouped,
# from `spbench bench sptrsv-refs --hdagg build/hdagg-ref/hdagg_ref --sets generators --scale 0.1
# --cores 2,16,128` (the driver built by `make hdagg-ref` from BehroozZare/HDagg-benchmark 948b38f).
ORIGINAL_SUPERSTEPS = [
    ("lap2d-5pt", {"grid": 32}, {2: (61, 63), 16: (61, 63), 128: (61, 63)}),
    ("lap3d-27pt", {"grid": 14}, {2: (86, 90), 16: (86, 90), 128: (86, 90)}),
    ("elasticity3d", {"grid": 9, "seed": 0}, {2: (51, 111), 16: (51, 161), 128: (51, 161)}),
    ("rgg-spd", {"n": 1000}, {2: (7, 7), 16: (10, 15), 128: (10, 15)}),
    ("fem-mesh", {"cells_x": 5, "cells_y": 5, "cells_z": 5}, {2: (30, 91), 16: (30, 98), 128: (30, 98)}),
    ("bundle-adjustment", {"cameras": 20, "points": 500}, {2: (2, 2), 16: (2, 7), 128: (2, 9)}),
]


@pytest.mark.parametrize("generator,params,expected", ORIGINAL_SUPERSTEPS, ids=[g for g, _, _ in ORIGINAL_SUPERSTEPS])
def test_supersteps_equal_the_originals(generator, params, expected):
    from spbench.datasets.synthetic import generate

    dag = DAG(prepare_lower(generate(generator, params)))
    ours = {c: (hdagg.schedule(dag, c).n_supersteps, hdagg.schedule(dag, c, grouping="none").n_supersteps)
            for c in expected}
    assert ours == expected
