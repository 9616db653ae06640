"""``execution: schedule``: compute and validate a schedule at any core count, time no solve.

A schedule's supersteps and work distribution depend on the matrix and the core count only, and
the schedulers are serial, so Table 6.1 (supersteps vs wavefronts) and Figure 6.2 (scheduling
time vs nnz) are exact at 16-128 cores on a machine with two (sptrsv-elasticity §6.3, §6.5).
Every schedule is validated (Definition 2.1, Eq. 2.5) for the kernel it would run on; rows carry
no solve time.
"""
from __future__ import annotations

import time

import numpy as np

from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import SCHEDULE_BUDGET, plan_schedule
from spbench.sptrsv.schedule import Schedule, ScheduleTimeout
from spbench.sptrsv.schedulers import SUPERLINEAR


def work_balance(schedule: Schedule, dag: DAG) -> dict:
    """The schedule's work (row nnz) per (superstep, core): its critical work and balance.

    ``work_critical`` = Σ_s max_p W(s, p), the compute time of the schedule with free barriers;
    ``work_balance`` = total / (P · work_critical), 1 when every superstep is split evenly;
    ``work_speedup_bound`` = total / work_critical, the speed-up the schedule allows at best.
    """
    cells = schedule.superstep.astype(np.int64) * schedule.n_cores + schedule.core
    per_cell = np.bincount(cells, weights=dag.weights, minlength=schedule.n_supersteps * schedule.n_cores)
    critical = float(per_cell.reshape(schedule.n_supersteps, schedule.n_cores).max(axis=1).sum())
    total = float(dag.weights.sum())
    return {"work_total": total, "work_critical": critical,
            "work_balance": total / (schedule.n_cores * critical) if critical else 1.0,
            "work_speedup_bound": total / critical if critical else 1.0}


def schedule_point(dag: DAG, algorithm: str, cores: int, kernel: str = "auto", params: dict | None = None,
                   budget: float | None = None, repeats: int = 1) -> dict:
    """One schedule-only row: the scheduler timed (the median of ``repeats`` calls, fewer past
    ``SCHEDULE_BUDGET`` or ``budget`` seconds: ``plan_schedule``), its schedule validated, no solve.

    ``budget``: seconds a superlinear scheduler (``SUPERLINEAR``: HDagg) may take; past them the
    row has status ``timeout`` and no schedule (sptrsv-elasticity Fig. 6.2: its time grows faster
    than the nonzeros, so at the matrices' full sizes it is bounded per matrix)."""
    if algorithm == "serial":
        raise ValueError("execution 'schedule' has nothing to compute for algorithm 'serial' "
                         "(exclude it: {algorithm: serial, execution: schedule})")
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    deadline = time.monotonic() + budget if budget is not None and algorithm in SUPERLINEAR else None
    calls = SCHEDULE_BUDGET if budget is None else min(SCHEDULE_BUDGET, budget)
    try:
        plan = plan_schedule(dag, algorithm, cores, kernel, "auto", params, repeats, calls, deadline)
    except ScheduleTimeout:
        return {"cores": int(cores), "n": dag.n, "nnz": dag.nnz, "wavefronts": dag.wavefronts, "status": "timeout",
                "error": f"{algorithm}: no schedule within its budget of {budget:g} s (key 'timeout')"}
    return {
        "kernel": plan.kernel,
        "staleness": plan.staleness,
        "cores": int(cores),
        "n": dag.n,
        "nnz": dag.nnz,
        "wavefronts": dag.wavefronts,
        "supersteps": int(plan.schedule.n_supersteps),
        **plan.timing(),
        **work_balance(plan.schedule, dag),
        "status": "ok",
    }
