"""SSP (paper Algorithm 4.1) and point-to-point kernels against the serial kernel and scipy; kernel routing."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spbench.kernels import _build_info
from spbench.kernels.sptrsv import _sptrsv
from spbench.sptrsv import execute
from spbench.sptrsv.dag import DAG
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import Schedule, reorder, task_graph, validate, validate_tasks
from spbench.sptrsv.schedulers import wavefront

OMP = _build_info.openmp_enabled()
THREADS = [1, 2, 3] if OMP else [1]  # 3 is oversubscribed on the 2-core box: yield fallback
PARALLEL = min(2, usable_cores()) if OMP else 1


def _serial(L, b):
    x = np.zeros(L.shape[0])
    _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, x)
    return x


def _greedy_ssp(dag, cores, staleness, seed=0, gap=0):
    """Random cores, ASAP supersteps under Eq. 2.5 for ``staleness``; ``gap`` extra empty steps."""
    rng = np.random.default_rng(seed)
    core = rng.integers(0, cores, dag.n).astype(np.int32)
    step = np.zeros(dag.n, dtype=np.int32)
    for v in range(dag.n):
        for u in dag.parents(v):
            need = step[u] + (staleness if core[u] != core[v] else 0)
            step[v] = max(step[v], need)
        if gap and rng.random() < 0.1:
            step[v] += gap
    return Schedule(core=core, superstep=step, n_cores=cores, staleness=staleness)


def _run(L, schedule, kernel, staleness=None, reps=1, tasks=None):
    """Reorder and solve L x = b with b = 1..n; x in the original order."""
    n = L.shape[0]
    b = np.linspace(1.0, 2.0, n)
    L_perm, perm, block_ptr = reorder(schedule, L)
    x_perm = np.full(n, np.nan)  # a row read before it is computed poisons the result
    times = np.zeros(reps)
    args = (L_perm.indptr, L_perm.indices, L_perm.data, b[perm], x_perm, block_ptr,
            max(schedule.n_supersteps, 1), schedule.n_cores)
    if kernel == "ssp":
        team = _sptrsv.ssp_solve_timed(*args, staleness, times)
    else:
        team = _sptrsv.p2p_solve_timed(*args, tasks.parent_ptr, tasks.parent_idx, times)
    assert team == schedule.n_cores
    assert np.all(times > 0)
    x = np.empty(n)
    x[perm] = x_perm
    return x, b


def _check(L, x, b):
    np.testing.assert_allclose(x, _serial(L, b), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(x, spla.spsolve_triangular(L.tocsr(), b, lower=True), rtol=1e-12)


@pytest.mark.parametrize("cores", THREADS)
@pytest.mark.parametrize("seed", [0, 1])
def test_ssp_hand_built_staleness_2(random_lower, cores, seed):
    L = random_lower(300, density=0.03, seed=seed)
    dag = DAG(L)
    schedule = _greedy_ssp(dag, cores, 2, seed=seed, gap=3)  # empty supersteps skip the wait
    validate(schedule, dag)
    for staleness in (2, 1):  # Remark 2.3: also valid, and run, at staleness 1
        x, b = _run(L, schedule, "ssp", staleness)
        _check(L, x, b)


@pytest.mark.parametrize("cores", THREADS)
def test_ssp_on_bsp_schedule(laplacian_2d, cores):
    L = prepare_lower(laplacian_2d(25))
    schedule = wavefront.schedule(DAG(L), cores)
    x, b = _run(L, schedule, "ssp", 1, reps=20)
    _check(L, x, b)


@pytest.mark.parametrize("cores", THREADS)
def test_ssp_spaced_wavefront_staleness_3(random_lower, cores):
    L = random_lower(200, density=0.05, seed=7)
    base = wavefront.schedule(DAG(L), cores)
    spaced = Schedule(base.core, 3 * base.superstep, cores, staleness=3)
    validate(spaced, DAG(L))
    x, b = _run(L, spaced, "ssp", 3, reps=10)
    _check(L, x, b)


def test_ssp_diagonal_and_single_row(random_lower):
    for n in (1, 40):
        L = random_lower(n, diag_only_rows=1.0, seed=n)
        schedule = wavefront.schedule(DAG(L), THREADS[-1])
        x, b = _run(L, schedule, "ssp", 2)
        np.testing.assert_allclose(x, b / L.diagonal())


@pytest.mark.parametrize("cores", THREADS)
@pytest.mark.parametrize("reduce", [False, True])
def test_p2p_matches_serial(random_lower, cores, reduce):
    L = random_lower(400, density=0.02, seed=cores)
    dag = DAG(L)
    for schedule in (wavefront.schedule(dag, cores), _greedy_ssp(dag, cores, 1, seed=3, gap=2)):
        tasks = task_graph(schedule, dag, reduce=reduce)
        validate_tasks(tasks, dag)
        x, b = _run(L, schedule, "p2p", tasks=tasks, reps=10)
        _check(L, x, b)


def test_p2p_all_rows_on_one_thread(random_lower):
    L = random_lower(100, seed=2)
    cores = THREADS[-1]
    schedule = Schedule(np.zeros(100), np.zeros(100), cores)
    tasks = task_graph(schedule, DAG(L))
    assert tasks.n_task_edges == 0
    x, b = _run(L, schedule, "p2p", tasks=tasks)
    _check(L, x, b)


def test_kernel_argument_checks(random_lower):
    L = random_lower(10, seed=0)
    b, x = np.ones(10), np.zeros(10)
    block_ptr = np.array([0, 5, 10], dtype=np.int32)
    with pytest.raises(ValueError, match="staleness must be >= 1"):
        _sptrsv.ssp_solve_timed(L.indptr, L.indices, L.data, b, x, block_ptr, 2, 1, 0, np.zeros(1))
    with pytest.raises(ValueError, match="block_ptr must have"):
        _sptrsv.ssp_solve_timed(L.indptr, L.indices, L.data, b, x, block_ptr, 1, 1, 1, np.zeros(1))
    ptr = np.array([0, 0, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="earlier step"):  # a task waiting on itself would hang
        _sptrsv.p2p_solve_timed(L.indptr, L.indices, L.data, b, x, block_ptr, 2, 1, ptr,
                                np.array([1], dtype=np.int32), np.zeros(1))
    with pytest.raises(ValueError, match="task_parent_ptr must have"):
        _sptrsv.p2p_solve_timed(L.indptr, L.indices, L.data, b, x, block_ptr, 2, 1, ptr[:2],
                                np.zeros(0, dtype=np.int32), np.zeros(1))


# ---- solve_point kernel routing ------------------------------------------------------------

def _spaced_wavefront(dag, cores):
    base = wavefront.schedule(dag, cores)
    return Schedule(base.core, 2 * base.superstep, cores, staleness=2)


@pytest.fixture
def with_ssp_scheduler(monkeypatch):
    monkeypatch.setitem(execute.SCHEDULERS, "spaced", _spaced_wavefront)


@pytest.mark.parametrize("kernel, expected, staleness",
                         [("auto", "ssp", 2), ("ssp", "ssp", 2), ("bsp", "bsp", 1),
                          ("p2p", "p2p", None)])
def test_solve_point_routes_staleness_2(random_lower, with_ssp_scheduler, kernel, expected,
                                        staleness):
    row = solve_point(random_lower(300, density=0.03, seed=1), "spaced", PARALLEL, repeats=3,
                      kernel=kernel)
    assert (row["kernel"], row["staleness"], row["barrier"]) == (expected, staleness, "spin")
    assert row["status"] == "ok"


@pytest.mark.parametrize("kernel, expected, staleness",
                         [("auto", "bsp", 1), ("ssp", "ssp", 1), ("p2p", "p2p", None)])
def test_solve_point_routes_bsp_schedule(random_lower, kernel, expected, staleness):
    row = solve_point(random_lower(300, density=0.03, seed=2), "wavefront", PARALLEL, repeats=3,
                      kernel=kernel)
    assert (row["kernel"], row["staleness"]) == (expected, staleness)
    assert row["status"] == "ok"


def test_solve_point_refusals(laplacian_2d, with_ssp_scheduler):
    A = laplacian_2d(5)
    with pytest.raises(ValueError, match="kernel must be one of"):
        solve_point(A, "wavefront", 1, repeats=1, kernel="gpu")
    with pytest.raises(ValueError, match="serial kernel"):
        solve_point(A, "serial", 1, repeats=1, kernel="bsp")
    with pytest.raises(ValueError, match="only for the BSP kernel"):
        solve_point(A, "spaced", 1, repeats=1, barrier="omp")
    with pytest.raises(ValueError, match="not 'ssp'"):
        solve_point(A, "spmp", 1, repeats=1, kernel="ssp")


@pytest.mark.skipif(PARALLEL < 2, reason="needs OpenMP and 2 cores")
def test_ssp_kernel_rejects_invalid_schedule(laplacian_2d, monkeypatch):
    """A BSP-only schedule labelled staleness 2 is refused before anything runs."""
    monkeypatch.setitem(execute.SCHEDULERS, "liar", lambda dag, cores: Schedule(
        wavefront.schedule(dag, cores).core, dag.levels(), cores, staleness=2))
    with pytest.raises(ValueError, match="breaks Eq. 2.5"):
        solve_point(laplacian_2d(6), "liar", PARALLEL, repeats=1)


@pytest.mark.skipif(not OMP, reason="needs OpenMP")
@pytest.mark.parametrize("kernel", ["ssp", "p2p"])
@pytest.mark.parametrize("cores", [2, 3])
def test_waits_for_a_slow_parent(kernel, cores):
    """Core 0 runs a long chain; the last core's single row needs its end: only the wait saves it."""
    n = 20001
    L = sp.diags([np.full(n - 1, -0.5), np.ones(n)], [-1, 0], format="csr")
    L = prepare_lower(L)
    core = np.zeros(n, dtype=np.int32)
    step = np.zeros(n, dtype=np.int32)
    core[-1] = cores - 1
    step[-1] = 2
    schedule = Schedule(core, step, cores, staleness=2)
    validate(schedule, DAG(L))
    tasks = task_graph(schedule, DAG(L)) if kernel == "p2p" else None
    x, b = _run(L, schedule, kernel, staleness=2, tasks=tasks)
    _check(L, x, b)
