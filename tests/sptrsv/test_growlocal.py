"""GrowLocal BSP scheduler (schedulers/growlocal.py, kernels/sptrsv/_grow_local.pyx)."""

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.sptrsv.dag import DAG
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import validate
from spbench.sptrsv.schedulers import SCHEDULERS, growlocal, wavefront
from spbench.pipeline.parameters import defaults


def test_registered():
    assert SCHEDULERS["growlocal"] is growlocal.schedule
    assert defaults(growlocal.parameters) == {"sync_cost": 500, "min_superstep_size": 20}


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_valid_on_random(random_lower, cores, seed):
    density = [0.002, 0.01, 0.05, 0.2][seed]
    dag = DAG(random_lower(600, density=density, seed=seed))
    s = growlocal.schedule(dag, cores)
    assert s.staleness == 1 and s.n_cores == cores
    validate(s, dag)
    assert set(np.unique(s.superstep)) == set(range(s.n_supersteps))  # BSP: no empty superstep


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_empty_offdiagonal_rows(random_lower, cores):
    dag = DAG(random_lower(500, density=0.02, seed=7, diag_only_rows=0.9))
    validate(growlocal.schedule(dag, cores), dag)


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_chain(cores, chain_lower):
    """No parallelism: every superstep is one piece of the chain on a single core."""
    dag = DAG(chain_lower(3000))
    s = growlocal.schedule(dag, cores)
    validate(s, dag)
    for step in range(s.n_supersteps):
        assert np.unique(s.core[s.superstep == step]).size == 1
    assert s.n_supersteps <= 10


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_diagonal(cores):
    """All parallel: at most two supersteps (α grows by 1.5x), every core busy in the first."""
    dag = DAG(prepare_lower(sp.eye(1200, format="csr")))
    s = growlocal.schedule(dag, cores)
    validate(s, dag)
    assert s.n_supersteps <= 2
    assert np.all(np.bincount(s.core[s.superstep == 0], minlength=cores) > 0)


def test_single_vertex():
    dag = DAG(prepare_lower(sp.eye(1, format="csr")))
    s = growlocal.schedule(dag, 3)
    assert s.core.tolist() == [0] and s.superstep.tolist() == [0]


def test_core_exclusivity():
    """A child whose parents in this superstep are all on core p runs on p in the same superstep."""
    A = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 1]]))
    dag = DAG(prepare_lower(A))
    s = growlocal.schedule(dag, 2)
    assert s.core.tolist() == [0, 0, 0] and s.superstep.tolist() == [0, 0, 0]


def test_far_fewer_supersteps_than_wavefronts(laplacian_2d):
    dag = DAG(prepare_lower(laplacian_2d(120)))
    s = growlocal.schedule(dag, 2)
    assert s.n_supersteps * 5 <= wavefront.schedule(dag, 2).n_supersteps == dag.wavefronts


def test_sync_cost_parameter(laplacian_2d):
    """Larger L means longer supersteps (fewer of them)."""
    dag = DAG(prepare_lower(laplacian_2d(100)))
    counts = [growlocal.schedule(dag, 2, sync_cost=L).n_supersteps for L in (20, 500, 5000)]
    assert counts[0] > counts[1] >= counts[2]


def test_rejects_bad_arguments(random_lower):
    dag = DAG(random_lower(20, seed=1))
    with pytest.raises(ValueError, match="cores"):
        growlocal.schedule(dag, 0)
    with pytest.raises(ValueError, match="sync_cost"):
        growlocal.schedule(dag, 2, sync_cost=-1)
    with pytest.raises(ValueError, match="min_superstep_size"):
        growlocal.schedule(dag, 2, min_superstep_size=0)


@pytest.mark.skipif(usable_cores() < 2, reason="needs 2 hardware threads")
def test_solve_point(laplacian_2d):
    res = solve_point(laplacian_2d(40), "growlocal", 2, repeats=3)
    assert res["status"] == "ok" and res["kernel"] == "bsp"
    assert res["supersteps"] < res["wavefronts"]
