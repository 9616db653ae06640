"""The measured-run protocol solve_point (paper §5.1): result keys, residual check, refusals."""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from spbench.kernels import _build_info
from spbench.sptrsv import execute
from spbench.machine.facts import usable_cores
from spbench.sptrsv.execute import backward_error, solve_point

KEYS = {"kernel", "staleness", "cores", "n", "nnz", "wavefronts", "supersteps", "schedule_time",
        "solve_time", "solve_times", "residual", "status", "barrier"}
PARALLEL = min(2, usable_cores()) if _build_info.openmp_enabled() else 1


def test_serial_point(laplacian_2d):
    row = solve_point(laplacian_2d(30), "serial", 1, repeats=3)
    assert set(row) == KEYS
    assert row["kernel"] == "serial" and row["barrier"] is None
    assert (row["n"], row["nnz"], row["wavefronts"], row["supersteps"]) == (900, 2640, 59, 1)
    assert row["schedule_time"] == 0.0
    assert len(row["solve_times"]) == 3 and row["solve_time"] == np.median(row["solve_times"])
    assert row["status"] == "ok" and row["residual"] < 1e-15


@pytest.mark.parametrize("barrier", ["auto", "spin", "omp"])
@pytest.mark.parametrize("cores", sorted({1, PARALLEL}))
def test_wavefront_point(random_lower, cores, barrier):
    A = random_lower(500, density=0.02, seed=cores, shuffle=True)
    row = solve_point(A, "wavefront", cores, repeats=3, barrier=barrier)
    assert set(row) == KEYS
    assert row["kernel"] == "bsp" and row["cores"] == cores
    assert row["barrier"] == (execute.DEFAULT_BARRIER if barrier == "auto" else barrier)
    assert row["supersteps"] == row["wavefronts"]
    assert row["schedule_time"] > 0 and all(t > 0 for t in row["solve_times"])
    assert row["status"] == "ok" and row["residual"] < 1e-14


def test_invalid_status_on_large_backward_error():
    L = sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 1.0]]))
    assert backward_error(L, np.array([0.5, 0.5]), np.ones(2)) < 1e-16
    assert backward_error(L, np.array([0.5, 0.6]), np.ones(2)) > 1e-3


def test_refusals(laplacian_2d):
    A = laplacian_2d(5)
    too_many = usable_cores() + 1
    with pytest.raises(ValueError, match=f"cores = {too_many} exceeds"):
        solve_point(A, "wavefront", too_many, repeats=3)
    with pytest.raises(ValueError, match="runs on 1 core"):
        solve_point(A, "serial", 2, repeats=3)
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        solve_point(A, "nope", 1, repeats=3)
    with pytest.raises(ValueError, match="barrier must be one of"):
        solve_point(A, "wavefront", 1, repeats=3, barrier="mutex")
    with pytest.raises(ValueError, match="repeats"):
        solve_point(A, "serial", 1, repeats=0)


@pytest.mark.skipif(PARALLEL < 2, reason="needs OpenMP and 2 cores")
def test_team_smaller_than_asked_raises():
    """OMP_THREAD_LIMIT=1 shrinks the team: the kernel reports it and solve_point refuses."""
    code = ("import scipy.sparse as sp; from spbench.sptrsv.execute import solve_point; "
            "solve_point(sp.eye(4, format='csr'), 'wavefront', 2, repeats=1)")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode != 0
    assert "RuntimeError: OpenMP started 1 threads, asked for 2" in res.stderr


@pytest.mark.skipif(PARALLEL < 2, reason="needs OpenMP and 2 cores")
def test_bound_threads_still_count_all_cores():
    """The paper's OMP_PROC_BIND=close OMP_PLACES=cores pins the main thread; 2 cores still run."""
    code = ("import scipy.sparse as sp; from spbench.sptrsv.execute import solve_point; "
            "print(solve_point(sp.eye(4, format='csr'), 'wavefront', 2, repeats=1)['status'])")
    env = {**os.environ, "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


@pytest.mark.skipif(PARALLEL < 2, reason="needs OpenMP and 2 cores")
def test_children_spawned_unpinned_get_every_core_back():
    """Bound threads pin the main thread to one core, which a child process would inherit; spawned
    inside ``unpinned_for_children`` (an original code run beside ours) it gets all the cores."""
    code = ("import subprocess, sys, scipy.sparse as sp; from spbench.sptrsv.execute import solve_point; "
            "from spbench.machine.facts import unpinned_for_children; "
            "solve_point(sp.eye(4, format='csr'), 'wavefront', 2, repeats=1); "
            "count = [sys.executable, '-c', 'import os; print(len(os.sched_getaffinity(0)))']; "
            "pinned = subprocess.run(count, capture_output=True, text=True).stdout.strip()\n"
            "with unpinned_for_children():\n"
            "    free = subprocess.run(count, capture_output=True, text=True).stdout.strip()\n"
            "import os; print(pinned, free, len(os.sched_getaffinity(0)))")
    env = {**os.environ, "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    pinned, free, after = map(int, res.stdout.split())
    assert pinned == 1 and free >= 2 and after == 1
