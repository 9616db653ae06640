"""The contract every registered SpTrSV scheduler keeps (sptrsv-elasticity §2-§5), run over the
registry so that registering a scheduler is what puts it under test: on every generator family it
assigns every row one (core, superstep), its schedule respects every dependency for the kernel it
declares (Eq. 2.5 at its staleness, or the task graph for point-to-point), and that kernel solves
to the residual bound of the measured protocol (§5.1)."""
import pytest

from spbench.datasets.synthetic import GENERATORS, generate
from spbench.machine.facts import usable_cores
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import RESIDUAL_TOL, prepare_lower, solve_point
from spbench.sptrsv.schedule import Schedule, TaskSchedule, validate, validate_tasks
from spbench.sptrsv.schedulers import REGISTRY, SCHEDULERS

#: each generator family at a size that schedules and solves in milliseconds
SMALL = {
    "lap2d-5pt": {"grid": 14},
    "lap2d-9pt": {"grid": 10},
    "lap3d-7pt": {"grid": 6},
    "lap3d-27pt": {"grid": 5},
    "elasticity3d": {"grid": 3},
    "rgg-spd": {"n": 300},
    "fem-mesh": {"element": "hex8", "dof": 2, "cells_x": 3, "cells_y": 3, "cells_z": 2},
    "bundle-adjustment": {"cameras": 6, "points": 60},
}
#: the kernel each schedule type runs on when a scheduler declares it
KERNEL_OF = {TaskSchedule: {"p2p"}, Schedule: {"bsp", "ssp"}}
CORES = sorted({1, min(2, usable_cores()), 4})


def test_every_generator_family_has_a_small_instance():
    """A newly registered generator family is put under the contract by adding it to SMALL."""
    assert set(SMALL) == set(GENERATORS)


@pytest.fixture(scope="module", params=sorted(SMALL))
def family(request):
    """(L in the kernels' layout, its DAG) of one generator family at its small size."""
    L = prepare_lower(generate(request.param, SMALL[request.param]))
    return L, DAG(L)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_schedule_places_every_row_once_and_respects_dependencies(family, name, cores):
    L, dag = family
    result = SCHEDULERS[name](dag, cores)
    assert result.n_cores == cores, f"{name} scheduled for {result.n_cores} cores, asked {cores}"
    assert REGISTRY[name].kernel in KERNEL_OF[type(result)], f"{name} declares kernel {REGISTRY[name].kernel}"
    schedule = result.schedule if isinstance(result, TaskSchedule) else result
    assert schedule.core.shape == schedule.superstep.shape == (dag.n,)   # every row exactly once
    validate(schedule, dag)                                              # Eq. 2.5 at its staleness
    if isinstance(result, TaskSchedule):
        validate_tasks(result, dag)                                      # every edge in the task graph


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_kernel_solves_to_the_residual_bound(family, name):
    L, dag = family
    cores = min(2, usable_cores())
    out = solve_point(L, name, cores, repeats=1, dag=dag)
    assert out["kernel"] == REGISTRY[name].kernel
    assert out["residual"] <= RESIDUAL_TOL and out["status"] == "ok", (name, out["residual"])
