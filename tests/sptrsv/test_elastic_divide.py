"""ElasticDivide, SSP of staleness 2 (schedulers/elastic_divide.py, kernels/sptrsv/_elastic_divide.pyx)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

from spbench.sptrsv.dag import DAG
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import Schedule, ScheduleError, reorder, validate
from spbench.sptrsv.schedulers import SCHEDULERS, elastic_divide
from spbench.pipeline.parameters import defaults


def _cross_core_gap(s, dag):
    """Smallest σ(w) − σ(v) over edges (v, w) with π(v) ≠ π(w) (None without such edges)."""
    src, dst = dag.edges()
    cross = s.core[src] != s.core[dst]
    return int((s.superstep[dst] - s.superstep[src])[cross].min()) if cross.any() else None


def test_registered():
    assert SCHEDULERS["elastic_divide"] is elastic_divide.schedule
    assert defaults(elastic_divide.parameters) == {"sync_cost": 2000, "min_superstep_size": 20}


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_valid_on_random(random_lower, cores, seed):
    density = [0.002, 0.01, 0.05, 0.2][seed]
    dag = DAG(random_lower(600, density=density, seed=seed))
    s = elastic_divide.schedule(dag, cores)
    assert s.staleness == 2 and s.n_cores == cores
    validate(s, dag)
    gap = _cross_core_gap(s, dag)
    assert gap is None or gap >= 2  # Rule I


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_empty_offdiagonal_rows(random_lower, cores):
    dag = DAG(random_lower(500, density=0.02, seed=7, diag_only_rows=0.9))
    validate(elastic_divide.schedule(dag, cores), dag)


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_chain(cores, chain_lower):
    dag = DAG(chain_lower(2000))
    s = elastic_divide.schedule(dag, cores)
    validate(s, dag)
    assert np.all(np.diff(s.superstep) >= 0)


@pytest.mark.parametrize("cores", [1, 2, 3, 4])
def test_diagonal(cores):
    dag = DAG(prepare_lower(sp.eye(1200, format="csr")))
    s = elastic_divide.schedule(dag, cores)
    validate(s, dag)
    assert s.n_supersteps <= 2


def test_staleness_semantics(laplacian_2d):
    """Valid read as BSP too (Remark 2.3); read with staleness 3 it need not be."""
    dag = DAG(prepare_lower(laplacian_2d(30)))
    s = elastic_divide.schedule(dag, 2)
    validate(Schedule(s.core, s.superstep, 2, staleness=1), dag)
    if _cross_core_gap(s, dag) == 2:
        with pytest.raises(ScheduleError):
            validate(Schedule(s.core, s.superstep, 2, staleness=3), dag)


def test_reordered_solve_matches_serial(random_lower):
    """x from the matrix permuted by the schedule equals x of the original system."""
    L = random_lower(700, density=0.01, seed=4)
    dag = DAG(L)
    s = elastic_divide.schedule(dag, 3)
    L_perm, perm, block_ptr = reorder(s, L)
    b = np.arange(1.0, 701.0)
    x = spsolve_triangular(L.tocsr(), b, lower=True)
    x_perm = spsolve_triangular(L_perm.tocsr(), b[perm], lower=True)
    np.testing.assert_allclose(x_perm, x[perm], rtol=1e-12, atol=1e-12)
    assert block_ptr[-1] == 700


def test_rejects_bad_arguments(random_lower):
    dag = DAG(random_lower(20, seed=1))
    with pytest.raises(ValueError, match="cores"):
        elastic_divide.schedule(dag, 0)
    with pytest.raises(ValueError, match="sync_cost"):
        elastic_divide.schedule(dag, 2, sync_cost=-1)


@pytest.mark.skipif(usable_cores() < 2, reason="needs 2 hardware threads")
def test_solve_point(laplacian_2d, random_lower):
    for L in (laplacian_2d(40), random_lower(500, density=0.01, seed=2)):
        res = solve_point(L, "elastic_divide", 2, repeats=3)
        assert res["status"] == "ok"
        assert res["kernel"] in ("ssp", "bsp")
