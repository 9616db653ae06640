"""Measured SpTrSV runs: schedule, validate, reorder, time the kernel (sptrsv-elasticity §5.1)."""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from spbench.datasets.transforms import lower_triangle
from spbench.kernels.sptrsv import _sptrsv
from spbench.machine.facts import usable_cores
from spbench.sptrsv.dag import DAG, check_lower
from spbench.sptrsv.schedule import Schedule, TaskSchedule, reorder, task_graph, validate, validate_tasks
from spbench.sptrsv.schedulers import SCHEDULERS
from spbench.machine.timing import median_time

DEFAULT_BARRIER = "spin"
BARRIERS = {"spin": _sptrsv.BARRIER_SPIN, "omp": _sptrsv.BARRIER_OMP}
KERNELS = ("auto", "bsp", "ssp", "p2p")
WARMUP_RUNS = 2
RESIDUAL_TOL = 1e-12
#: seconds the calls of one scheduling time may take together: no further call starts that would,
#: at the pace so far, end past it (HDagg at the paper's sizes takes seconds a call)
SCHEDULE_BUDGET = 2.0
#: a point's scheduling time is noisy when its slowest call took more than this times the median
#: of its calls (idle OpenMP threads of another process spinning on the cores)
NOISY_SPREAD = 2.0
#: calls a noisy point needs to show: of two calls the median is their mean, and none stands out
NOISY_MIN_CALLS = 3


def prepare_lower(A) -> sp.csr_matrix:
    """Lower triangle of any square scipy sparse matrix in the kernels' layout (int32 CSR, sorted,
    duplicates summed, diagonal last); ValueError when a diagonal is missing or zero."""
    if not sp.issparse(A):
        raise ValueError(f"expected a scipy sparse matrix, got {type(A).__name__}")
    if A.shape[0] == 0:
        raise ValueError("matrix is empty (n = 0)")
    L = lower_triangle(A)
    check_lower(L)
    return L


def backward_error(L: sp.csr_matrix, x: np.ndarray, b: np.ndarray) -> float:
    """Normwise backward error ‖Lx − b‖∞ / (‖L‖∞ ‖x‖∞ + ‖b‖∞)."""
    r = np.abs(L @ x - b).max()
    norm_L = np.abs(L).sum(axis=1).max()
    denom = norm_L * np.abs(x).max() + np.abs(b).max()
    return float(r / denom) if denom > 0 else float(r)


def solve_status(residual: float, solve_time: float) -> tuple[str, str | None]:
    """(status, reason) of a measured solve: invalid when its backward error or median time is
    not a finite number (values beyond double precision) or the error exceeds RESIDUAL_TOL."""
    if not math.isfinite(residual):
        return "invalid", f"non-finite backward error ({residual}): the solve overflowed double precision"
    if not math.isfinite(solve_time):
        return "invalid", f"non-finite solve time ({solve_time})"
    if residual > RESIDUAL_TOL:
        return "invalid", f"backward error {residual:.1e} > {RESIDUAL_TOL:g}"
    return "ok", None


def _barrier_name(barrier: str) -> str:
    name = DEFAULT_BARRIER if barrier == "auto" else barrier
    if name not in BARRIERS:
        raise ValueError(f"barrier must be one of 'auto', {', '.join(map(repr, BARRIERS))}; "
                         f"got {barrier!r}")
    return name


def _kernel_plan(schedule, kernel: str, barrier: str, algorithm: str) -> tuple[str, int | None]:
    """(kernel to run, staleness its barrier uses) for a scheduler's output; ValueError if impossible.

    auto: a TaskSchedule runs "p2p", a Schedule of staleness 1 "bsp", of staleness >= 2 "ssp".
    "bsp" runs any Schedule (Remark 2.3: staleness s is valid for every t <= s) or the block grid
    of a TaskSchedule; "ssp" runs a Schedule at its own staleness (>= 1); "p2p" runs a
    TaskSchedule, or builds the task graph of a Schedule (schedule.task_graph).
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(map(repr, KERNELS))}; got {kernel!r}")
    if not isinstance(schedule, (Schedule, TaskSchedule)):
        raise ValueError(f"scheduler {algorithm!r} returned {type(schedule).__name__}, expected a "
                         "Schedule or a TaskSchedule")
    if kernel == "auto":
        if isinstance(schedule, TaskSchedule):
            kernel = "p2p"
        else:
            kernel = "bsp" if schedule.staleness == 1 else "ssp"
    if kernel != "bsp" and barrier not in ("auto", "spin"):
        raise ValueError(f"barrier {barrier!r} exists only for the BSP kernel; the {kernel} kernel "
                         "synchronises with its own spin flags (use barrier 'auto' or 'spin')")
    if kernel == "bsp":
        return kernel, 1
    if kernel == "ssp":
        if isinstance(schedule, TaskSchedule):
            raise ValueError(f"scheduler {algorithm!r} returned a task schedule (point-to-point); "
                             "run it with kernel 'p2p' or 'bsp', not 'ssp'")
        return kernel, schedule.staleness
    return kernel, None


def schedule_timing(times) -> dict:
    """The row fields of one point's scheduling time (sptrsv-elasticity Fig. 6.2, Table 6.3): the
    median of its calls' seconds, the calls, the slowest over the median (``schedule_spread``) and
    whether that exceeds :data:`NOISY_SPREAD` (None below :data:`NOISY_MIN_CALLS` calls)."""
    times = [float(t) for t in times]
    median = float(np.median(times))
    spread = max(times) / median if median > 0 else 1.0
    return {"schedule_time": median, "schedule_times": times, "schedule_calls": len(times),
            "schedule_spread": spread,
            "schedule_noisy": bool(spread > NOISY_SPREAD) if len(times) >= NOISY_MIN_CALLS else None}


def wait_policy() -> dict:
    """The row fields of what idle OpenMP threads do (unset: None): their spinning moves SpMP's
    scheduling and every point-to-point solve on a shared machine."""
    return {"omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "gomp_spincount": os.environ.get("GOMP_SPINCOUNT")}


def _more_calls(call, repeats: int, budget: float, first: float) -> list[float]:
    """Seconds of each call of ``call`` after a first one that took ``first``, up to ``repeats`` calls
    in all: none starts that would, at the median pace so far, end past ``budget`` seconds in all."""
    times = [first]
    while len(times) < repeats and sum(times) + float(np.median(times)) <= budget:
        times.append(median_time(call, 1, warmup=0))
    return times[1:]


@dataclass(frozen=True)
class SchedulePlan:
    """A scheduler's output made ready for one kernel: validated, with its task graph for P2P."""

    kernel: str
    staleness: int | None
    barrier: str
    schedule: Schedule
    tasks: TaskSchedule | None
    schedule_time: float  # seconds, median of the calls: the scheduler, plus the task graph when P2P needs one built
    schedule_times: tuple = ()  # seconds of each call, the first one's schedule kept

    def timing(self) -> dict:
        """The scheduling time's row fields (:func:`schedule_timing`)."""
        return schedule_timing(self.schedule_times or (self.schedule_time,))


def check_point(algorithm: str, cores: int, kernel: str, params: dict | None) -> None:
    """One-line ValueError for a point no kernel runs: cores below 1, an unknown kernel or
    algorithm, or the serial algorithm given more cores, parameters or a kernel; shared by the
    measured (`solve_point`) and the modelled (`model.predict_point`) paths."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(map(repr, KERNELS))}; got {kernel!r}")
    if algorithm == "serial":
        if cores != 1:
            raise ValueError(f"algorithm 'serial' runs on 1 core, got cores = {cores}")
        if params:
            raise ValueError(f"algorithm 'serial' takes no parameters, got {sorted(params)}")
        if kernel != "auto":
            raise ValueError(f"algorithm 'serial' runs the serial kernel, got kernel {kernel!r}")
    elif algorithm not in SCHEDULERS:
        raise ValueError(f"unknown algorithm {algorithm!r}; known: serial, "
                         f"{', '.join(sorted(SCHEDULERS))}")


def plan_schedule(dag, algorithm: str, cores: int, kernel: str = "auto", barrier: str = "auto",
                  params: dict | None = None, repeats: int = 1, budget: float = SCHEDULE_BUDGET,
                  deadline: float | None = None) -> SchedulePlan:
    """Run `algorithm`'s scheduler (timed), pick the kernel, and validate what that kernel will run
    (Eq. 2.5 at the kernel's staleness, or every DAG edge covered by the task graph); shared by the
    measured (`solve_point`) and the modelled (`model.predict_point`) paths.

    The scheduler is called ``repeats`` times, fewer when they would pass ``budget`` seconds
    (:func:`_more_calls`); the time is the median, the schedule the first call's: one call on a
    shared machine may take 100x its kernel (idle threads spinning). ``deadline`` (superlinear
    schedulers, key ``timeout``) binds the first call; the budget bounds the others."""
    barrier_name = _barrier_name(barrier)
    scheduler, params = SCHEDULERS[algorithm], params or {}
    start = time.perf_counter()
    result = scheduler(dag, cores, **params, **({} if deadline is None else {"deadline": deadline}))
    schedule_time = time.perf_counter() - start
    kernel_name, staleness = _kernel_plan(result, kernel, barrier, algorithm)
    if kernel_name != "bsp":
        barrier_name = "spin"
    if result.n_cores != cores:
        raise ValueError(f"scheduler {algorithm!r} returned a schedule for {result.n_cores} "
                         f"cores, asked for {cores}")
    schedule = result.schedule if isinstance(result, TaskSchedule) else result
    tasks = None
    build = kernel_name == "p2p" and not isinstance(result, TaskSchedule)
    if kernel_name == "p2p":
        if not build:
            tasks = result
        else:  # building the task graph is preprocessing: it counts as schedule time
            validate(schedule, dag)
            start = time.perf_counter()
            tasks = task_graph(schedule, dag)
            schedule_time += time.perf_counter() - start
        validate_tasks(tasks, dag)
    else:
        validate(schedule, dag)
    again = (lambda: task_graph(scheduler(dag, cores, **params), dag)) if build else (
        lambda: scheduler(dag, cores, **params))
    times = (schedule_time, *_more_calls(again, repeats, budget, schedule_time))
    return SchedulePlan(kernel_name, staleness, barrier_name, schedule, tasks, float(np.median(times)), times)


def solve_point(L, algorithm: str, cores: int, repeats: int = 100, barrier: str = "auto",
                params: dict | None = None, kernel: str = "auto", dag: DAG | None = None,
                plan: SchedulePlan | None = None) -> dict:
    """One measured point: 2 untimed then `repeats` timed solves of L x = 1 (§5.1), checked by backward error.
    `dag`: DAG(L) of an L already in the kernels' layout (`prepare_lower`), to skip rebuilding both.
    `plan`: what `plan_schedule` made of these arguments (its calls repeated), run instead of planning here.

    ``kernel`` picks the parallel kernel (see ``_kernel_plan``); the result's ``kernel`` says which
    ran and ``staleness`` the staleness its synchronisation allowed (1 for BSP, the schedule's for
    SSP, None for serial and point-to-point).  The schedule is validated for the kernel that runs.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    check_point(algorithm, cores, kernel, params)
    barrier_name = None if algorithm == "serial" else _barrier_name(barrier)
    have = usable_cores()
    if cores > have:
        raise ValueError(f"cores = {cores} exceeds the {have} hardware threads available to this "
                         "process; measure at most that many, or use execution: simulate")
    if dag is None:  # a caller running many points of one matrix prepares it and its DAG once
        L = prepare_lower(L)
        dag = DAG(L)
    n = dag.n
    b = np.ones(n)
    times = np.empty(WARMUP_RUNS + repeats)
    staleness = None
    if algorithm == "serial":
        kernel_name, supersteps, schedule_time = "serial", 1, 0.0
        x = np.zeros(n)
        with threadpool_limits(limits=1, user_api="blas"):
            _sptrsv.serial_solve_timed(L.indptr, L.indices, L.data, b, x, times)
    else:
        plan = plan or plan_schedule(dag, algorithm, cores, kernel, barrier, params)
        kernel_name, staleness, schedule_time = plan.kernel, plan.staleness, plan.schedule_time
        barrier_name, schedule, tasks = plan.barrier, plan.schedule, plan.tasks
        supersteps = schedule.n_supersteps
        L_perm, perm, block_ptr = reorder(schedule, L)
        x_perm = np.zeros(n)
        args = (L_perm.indptr, L_perm.indices, L_perm.data, b[perm], x_perm, block_ptr,
                supersteps, cores)
        with threadpool_limits(limits=1, user_api="blas"):
            if kernel_name == "bsp":
                team = _sptrsv.bsp_solve_timed(*args, BARRIERS[barrier_name], times)
            elif kernel_name == "ssp":
                team = _sptrsv.ssp_solve_timed(*args, staleness, times)
            else:
                team = _sptrsv.p2p_solve_timed(*args, tasks.parent_ptr, tasks.parent_idx, times)
        if team != cores:
            raise RuntimeError(f"OpenMP started {team} threads, asked for {cores} (check "
                               "OMP_THREAD_LIMIT; kernels built without OpenMP run 1 thread only)")
        x = np.empty(n)
        x[perm] = x_perm
    solve_times = times[WARMUP_RUNS:]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing solve is said in its status
        residual = backward_error(L, x, b)
    status, error = solve_status(residual, float(np.median(solve_times)))
    return {
        "kernel": kernel_name,
        "staleness": staleness,
        "cores": int(cores),
        "n": n,
        "nnz": dag.nnz,
        "wavefronts": dag.wavefronts,
        "supersteps": int(supersteps),
        "schedule_time": float(schedule_time),
        "solve_time": float(np.median(solve_times)),
        "solve_times": [float(t) for t in solve_times],
        "residual": residual,
        "status": status,
        **({"error": error} if error else {}),   # an ok row's error is the runner's None
        "barrier": barrier_name,
    }
