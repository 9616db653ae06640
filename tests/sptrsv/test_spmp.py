"""SpMP scheduler: level-set tasks, reduced task graph that still implies every dependency."""
import bisect

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.kernels import _build_info
from spbench.sptrsv.dag import DAG
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import prepare_lower, solve_point
from spbench.sptrsv.schedule import (Schedule, ScheduleError, TaskSchedule, task_graph,
                                     validate, validate_tasks)
from spbench.sptrsv.schedulers import SCHEDULERS, spmp, wavefront
from spbench.pipeline.parameters import defaults

PARALLEL = min(2, usable_cores()) if _build_info.openmp_enabled() else 1


def _edges(tasks):
    child = np.repeat(np.arange(tasks.n_tasks), np.diff(tasks.parent_ptr))
    return set(zip(child.tolist(), tasks.parent_idx.tolist()))


def _spmp_by_the_rules(dag, P, reduce=True):
    """SpMP's LevelSchedule written out plainly: (core of every row, task edges (child, parent) in grid ids)."""
    level = dag.levels()
    cost = 1 + np.diff(dag.parent_ptr) + np.diff(dag.child_ptr)  # row nnz of L + L^T
    core = np.empty(dag.n, dtype=np.int64)
    for lv in range(dag.wavefronts):
        rows = np.flatnonzero(level == lv)
        before = np.concatenate(([0], np.cumsum(cost[rows])[:-1])).tolist()
        per_thread = -(-int(cost[rows].sum()) // P)
        r = prev = 0
        for t in range(P):
            if r < len(rows):
                r = bisect.bisect_left(before, (t + 1) * per_thread, r, len(rows))
            core[rows[prev:min(r, len(rows))]] = t
            prev = min(r, len(rows))
            r += 1
    grid = level * P + core
    cells = sorted(set(grid.tolist()), key=lambda g: (g % P, g // P))  # thread by thread, levels ascending
    sid = {g: k for k, g in enumerate(cells)}
    task = np.array([sid[g] for g in grid.tolist()])
    thread = [g % P for g in cells]
    src, dst = dag.edges()
    cross = [(int(task[a]), int(task[b])) for a, b in zip(src, dst) if core[a] != core[b]]
    out = {t: set() for t in range(len(cells))}
    into = {t: set() for t in range(len(cells))}
    for a, b in cross:
        out[a].add(b)
        into[b].add(a)
    edges = set()
    for a in out:
        nxt = {a + 1} if a + 1 < len(cells) and thread[a + 1] == thread[a] else set()
        for b in out[a]:
            prev = {b - 1} if b > 0 and thread[b - 1] == thread[b] else set()
            if not reduce or not (out[a] | nxt) & (into[b] | prev):
                edges.add((cells[b], cells[a]))
    return core, edges


def _cases(random_lower, laplacian_2d):
    chain = prepare_lower(sp.diags([np.ones(59), np.full(60, 3.0)], [-1, 0]))
    return [random_lower(300, density=0.03, seed=1), random_lower(500, density=0.005, seed=2),
            chain, random_lower(40, diag_only_rows=1.0, seed=3),
            random_lower(200, density=0.05, seed=4, diag_only_rows=0.6),
            prepare_lower(laplacian_2d(12)), random_lower(1, seed=0)]


def test_registered():
    assert SCHEDULERS["spmp"] is spmp.schedule
    assert spmp.name == "spmp" and defaults(spmp.parameters) == {"reduce": True}


@pytest.mark.parametrize("cores", [1, 2, 3, 7])
def test_valid_and_reduction_keeps_dependencies(random_lower, laplacian_2d, cores):
    for L in _cases(random_lower, laplacian_2d):
        dag = DAG(L)
        tasks = spmp.schedule(dag, cores)
        assert isinstance(tasks, TaskSchedule) and tasks.n_cores == cores
        validate(tasks.schedule, dag)  # the level grid is itself a BSP schedule
        assert tasks.n_supersteps == dag.wavefronts
        validate_tasks(tasks, dag)  # every DAG edge implied by the reduced graph
        full = spmp.schedule(dag, cores, reduce=False)
        validate_tasks(full, dag)
        assert _edges(tasks) <= _edges(full)
        if cores == 1:
            assert tasks.n_task_edges == 0


def test_reduction_drops_edges_on_a_dense_dag(random_lower):
    dag = DAG(random_lower(400, density=0.05, seed=9))
    reduced, full = spmp.schedule(dag, 4), spmp.schedule(dag, 4, reduce=False)
    assert 0 < reduced.n_task_edges < full.n_task_edges


def test_validate_tasks_catches_a_missing_dependency(random_lower):
    dag = DAG(random_lower(300, density=0.03, seed=1))
    tasks = spmp.schedule(dag, 2)
    assert tasks.n_task_edges > 0
    caught = 0
    for k in range(tasks.n_task_edges):  # SpMP's reduction is approximate: only some edges are needed
        ptr = tasks.parent_ptr.copy()
        ptr[np.searchsorted(ptr, k, side="right"):] -= 1  # drop parent k
        broken = TaskSchedule(tasks.schedule, ptr, np.delete(tasks.parent_idx, k))
        try:
            validate_tasks(broken, dag)
        except ScheduleError as exc:
            assert "is not covered" in str(exc)
            caught += 1
    assert caught > 0
    first_child = int(np.flatnonzero(np.diff(tasks.parent_ptr))[0])
    self_loop = tasks.parent_idx.copy()
    self_loop[0] = first_child  # a task waiting on itself would hang the kernel
    with pytest.raises(ScheduleError, match="parents must be tasks of another core"):
        validate_tasks(TaskSchedule(tasks.schedule, tasks.parent_ptr, self_loop), dag)


def test_task_graph_refuses_same_step_cross_core_edge():
    L = prepare_lower(sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0]])))
    with pytest.raises(ScheduleError, match="no task order"):
        task_graph(Schedule([0, 1], [0, 0], 2), DAG(L))


def test_equal_cost_chunks_per_level(random_lower):
    dag = DAG(random_lower(2000, density=0.001, seed=5, diag_only_rows=0.0))
    cost = 1 + np.diff(dag.parent_ptr) + np.diff(dag.child_ptr)  # SpMP's cost: row nnz of L + L^T
    s = spmp.schedule(dag, 2).schedule
    for level in range(min(dag.wavefronts, 3)):
        rows = np.flatnonzero(s.superstep == level)
        if rows.size < 50:
            continue
        assert np.all(np.diff(s.core[rows]) >= 0)  # contiguous chunks in id order
        loads = np.bincount(s.core[rows], weights=cost[rows], minlength=2)
        assert abs(loads[0] - loads[1]) <= 2 * cost[rows].max()


@pytest.mark.parametrize("cores", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("reduce", [True, False])
def test_equals_spmp_rules(random_lower, laplacian_2d, cores, reduce):
    """The parallel kernel gives SpMP's cuts and (reduced) task graph, written out plainly above."""
    for L in _cases(random_lower, laplacian_2d):
        dag = DAG(L)
        tasks = spmp.schedule(dag, cores, reduce=reduce)
        core, edges = _spmp_by_the_rules(dag, cores, reduce)
        np.testing.assert_array_equal(tasks.schedule.core, core)
        assert _edges(tasks) == edges


@pytest.mark.parametrize("cores", [32, 64, 128])
def test_equals_spmp_rules_at_many_cores_and_any_thread_count(random_lower, laplacian_2d, cores):
    """At up to 128 cores (most tasks hold a row or two, most unreduced edges are implied) the
    kernel's cuts and reduced graph are SpMP's rules on 1, 2 and 3 OpenMP threads, array for array."""
    from spbench.kernels.sptrsv import _spmp

    for L in _cases(random_lower, laplacian_2d) + [random_lower(1500, density=0.02, seed=11),
                                                   prepare_lower(laplacian_2d(30))]:
        dag = DAG(L)
        core, edges = _spmp_by_the_rules(dag, cores)
        first = None
        for threads in (1, 2, 3):
            got = _spmp.level_task_graph(dag.parent_ptr, dag.parent_idx, dag.child_ptr, dag.child_idx,
                                         cores, True, threads)
            np.testing.assert_array_equal(got[0], dag.levels())
            np.testing.assert_array_equal(got[1], core)
            child = np.repeat(np.arange(len(got[2]) - 1), np.diff(got[2]))
            assert set(zip(child.tolist(), got[3].tolist())) == edges
            if first is None:
                first = got
            for a, b in zip(got, first):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cores", [2, 5])
def test_levels_are_the_wavefront_schedules(random_lower, laplacian_2d, cores):
    """Old and new SpMP share the level grid: the wavefront schedule's supersteps, row for row."""
    for L in _cases(random_lower, laplacian_2d):
        dag = DAG(L)
        np.testing.assert_array_equal(spmp.schedule(dag, cores).schedule.superstep,
                                      wavefront.schedule(dag, cores).superstep)


def test_deterministic(random_lower):
    dag = DAG(random_lower(300, density=0.03, seed=1))
    a, b = spmp.schedule(dag, 3), spmp.schedule(dag, 3)
    np.testing.assert_array_equal(a.schedule.core, b.schedule.core)
    np.testing.assert_array_equal(a.parent_ptr, b.parent_ptr)
    np.testing.assert_array_equal(a.parent_idx, b.parent_idx)


@pytest.mark.parametrize("cores", sorted({1, PARALLEL}))
def test_solve_point_runs_p2p(random_lower, laplacian_2d, cores):
    for A in (random_lower(400, density=0.02, seed=cores, shuffle=True), laplacian_2d(20)):
        row = solve_point(A, "spmp", cores, repeats=3)
        assert (row["kernel"], row["staleness"], row["barrier"]) == ("p2p", None, "spin")
        assert row["status"] == "ok"
        assert row["supersteps"] == row["wavefronts"]
        row = solve_point(A, "spmp", cores, repeats=3, kernel="bsp")
        assert row["kernel"] == "bsp" and row["status"] == "ok"


@pytest.mark.skipif(PARALLEL < 2, reason="needs OpenMP and two cores")
def test_schedules_in_a_forked_child_after_the_parent_ran_openmp(random_lower):
    """Simulated sweeps fork their points: a second OpenMP team there would hang, one thread does not."""
    import os
    import signal
    import time

    dag = DAG(random_lower(300, density=0.03, seed=1))
    expected = spmp.schedule(dag, 2)  # the parent's OpenMP pool now exists
    pid = os.fork()
    if pid == 0:
        tasks = spmp.schedule(dag, 2)
        os._exit(0 if np.array_equal(tasks.parent_idx, expected.parent_idx) else 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("SpMP's scheduler hung in a forked child")
