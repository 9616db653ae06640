"""GrowLocal and ElasticDivide against OneStopParallel (branch ssp_kernel) built from source: the
(core, superstep) arrays of both are pinned by digest on grids and on an irregular pattern, and
both are deterministic (sptrsv-elasticity §4, §5; the reference C++ gives identical arrays)."""
import numpy as np
import pytest

from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.schedule import validate
from spbench.sptrsv.schedulers import SCHEDULERS

#: per scheduler, (grid, cores) on lap2d-5pt: (supersteps, sha256[:16] of the int32 core array then
#: the superstep array). GrowLocal: GrowLocalAutoCores at L = 500 (54 supersteps on 300 x 300 at 2
#: cores is also the count of OneStopParallel's own benchmark app); ElasticDivide: GrowLocalSSP<..., 2>
#: at L = 2000.
GRIDS = {
    "growlocal": {(300, 2): (54, "75427dade02c3b89"), (300, 4): (64, "0b94ffd9f14f8fc1"),
                  (100, 2): (15, "0072fa43ee754efd")},
    "elastic_divide": {(300, 2): (628, "1831f5d44f3f6ac7"), (300, 4): (496, "c9b07f0b0d38980f"),
                       (100, 2): (195, "b51ad449088907bc"), (100, 3): (194, "d6b1e4febd478cb2")},
}
#: the same on the patterned_lower fixture, per (sync_cost, cores)
PATTERNED = {
    "growlocal": {(500, 2): (4, "33c025f8eda025a9"), (500, 3): (2, "416b80c59c17be73"),
                  (50, 2): (17, "1fedc935637bb55e"), (50, 3): (3, "9fb588fa3aaca690")},
    "elastic_divide": {(2000, 2): (8, "ea9cb5108e96bcac"), (2000, 3): (8, "354f687500ebdec3"),
                       (200, 2): (10, "750d20629641fc44"), (200, 3): (9, "c8c29b76c1a4d3fb")},
}


@pytest.mark.parametrize("name, grid, cores", [(n, g, c) for n, ref in GRIDS.items() for g, c in sorted(ref)])
def test_grid_schedules_equal_the_reference(laplacian_2d, schedule_digest, name, grid, cores):
    dag = DAG(prepare_lower(laplacian_2d(grid)))
    s = SCHEDULERS[name](dag, cores)
    validate(s, dag)
    assert (s.n_supersteps, schedule_digest(s)) == GRIDS[name][(grid, cores)]


@pytest.mark.parametrize("name, sync_cost, cores",
                         [(n, L, c) for n, ref in PATTERNED.items() for L, c in sorted(ref)])
def test_irregular_schedules_equal_the_reference(patterned_lower, schedule_digest, name, sync_cost, cores):
    dag = DAG(patterned_lower)
    s = SCHEDULERS[name](dag, cores, sync_cost=sync_cost)
    validate(s, dag)
    assert (s.n_supersteps, schedule_digest(s)) == PATTERNED[name][(sync_cost, cores)]


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_deterministic(random_lower, name):
    dag = DAG(random_lower(800, density=0.01, seed=11))
    a, b = SCHEDULERS[name](dag, 3), SCHEDULERS[name](dag, 3)
    np.testing.assert_array_equal(a.core, b.core)
    np.testing.assert_array_equal(a.superstep, b.superstep)
