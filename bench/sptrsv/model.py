"""SpTrSV cost model: a discrete-event pass over the actual schedule (`execution: simulate`).

The model replays a schedule the way the kernels in ``kernels/sptrsv/sptrsv_impl.h`` run it, with costs
calibrated on this machine (:mod:`spbench.sptrsv.calibration.calibrate`):

- compute of a block (rows of one core in one superstep, run in row-id order): the sum of its
  rows' costs (:func:`row_costs`), ``t_row + nnz · t_nnz + far · t_far`` a row, ``far`` its reads
  of x more than ``FAR_ROWS`` rows back in the kernel's layout (likely cache misses); a
  ``chained`` row (it reads the row run just before it: natural order on a stencil is all
  chained, a wavefront's rows are independent) cannot start its last multiply-add before the
  previous row's result is stored, so it takes at least ``t_chain``, the latency of that
  dependency: ``max(t_row + nnz · t_nnz + far · t_far, t_chain)``.  Short chained rows wait on
  it, long ones hide it behind their own loads (:func:`row_features`);
- serial: the same over all rows in natural order, with the serial kernel's rates;
- BSP (sptrsv-elasticity §2.2, staleness 1): every superstep ends at the slowest core's finish
  plus the barrier latency ``barrier``: ``Σ_s (max_p C[s, p] + barrier)``;
- SSP, staleness S (Algorithm 4.1, §4.1 weak barrier): core p starts superstep s when it has
  finished s − 1 and every other core q has arrived after s − S, seen ``weak_barrier`` seconds
  after q arrived; a core with no rows in s skips the wait (still arrives, at no cost).  The
  solve ends when all cores have arrived after the last superstep, seen ``weak_barrier`` later
  (the kernel's final wait).  So with S ≥ 2 the latency overlaps the compute of superstep s − 1,
  the §6.4 argument;
- P2P (SpMP): task (s, p) starts when core p finished its previous task and all parent tasks
  finished, plus ``p2p_dep`` per parent it checks (empty tasks check none); ends like SSP.

``costs`` is either a calibration or flat costs; :func:`costs_for`
(:mod:`spbench.sptrsv.model_costs`) turns either into the flat costs of one core count, also one
the calibration did not measure.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from spbench.sptrsv.dag import DAG
from spbench.sptrsv.model_costs import RATE_KEYS, SYNC_KEYS, costs_for
from spbench.sptrsv.schedule import Schedule, TaskSchedule, task_graph

SIM_KERNELS = ("serial", "bsp", "ssp", "p2p")
FAR_ROWS = 2048  # an x entry this many rows (16 KiB) back counts as a far read
#: the parts a modelled solve time splits into (:func:`simulate_terms`), stored in rows' ``model.terms``
TERMS = ("work", "imbalance", "synchronisation")


def row_features(dag: DAG, block: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(chained, far) per row for rows laid out and run as ``schedule.reorder`` does.

    Rows are ordered by (block, id) (``block`` None: one block, the serial natural order), which
    is also where x lives in memory.  ``chained``: the row reads the row run just before it in its
    block.  ``far``: how many of its off-diagonal reads lie more than ``FAR_ROWS`` positions back
    in that layout (an x entry likely out of L1: irregular matrices such as rgg-spd).
    """
    src, dst = dag.edges()
    if block is None:
        pos = np.arange(dag.n, dtype=np.int64)
        hit = src == dst - 1
    else:
        ids = np.arange(dag.n)
        order = np.lexsort((ids, block))
        pos = np.empty(dag.n, dtype=np.int64)
        pos[order] = ids
        hit = (pos[src] == pos[dst] - 1) & (block[src] == block[dst])
    chained = np.zeros(dag.n, dtype=bool)
    chained[dst[hit]] = True
    far = np.bincount(dst[pos[dst] - pos[src] > FAR_ROWS], minlength=dag.n)
    return chained, far


def row_costs(dag: DAG, block: np.ndarray | None, t_row: float, t_nnz: float, t_chain: float = 0.0,
              t_far: float = 0.0) -> np.ndarray:
    """Seconds of every row laid out in ``block`` (None: the serial natural order), the module
    docstring's compute rule: ``t_row + nnz · t_nnz + far · t_far``, at least ``t_chain`` when chained."""
    cost = t_row + dag.weights.astype(np.float64) * t_nnz
    if t_chain or t_far:
        chained, far = row_features(dag, block)
        cost = cost + far * t_far
        cost = np.where(chained, np.maximum(cost, t_chain), cost)
    return cost


def block_costs(schedule: Schedule, dag: DAG, t_row: float, t_nnz: float,
                t_chain: float = 0.0, t_far: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(compute seconds, row count) of every block, each shaped (supersteps, cores)."""
    P = schedule.n_cores
    steps = max(schedule.n_supersteps, 1)
    block = schedule.superstep.astype(np.int64) * P + schedule.core
    rows = np.bincount(block, minlength=steps * P).reshape(steps, P)
    cost = row_costs(dag, block, t_row, t_nnz, t_chain, t_far)
    return np.bincount(block, weights=cost, minlength=steps * P).reshape(steps, P), rows


def _bsp(compute: np.ndarray, barrier: float) -> float:
    return float(np.sum(compute.max(axis=1) + barrier))


def _ssp(compute: np.ndarray, rows: np.ndarray, staleness: int, latency: float) -> float:
    steps, P = compute.shape
    S = int(staleness)
    history: list[np.ndarray] = []  # arrival times of the last S supersteps, oldest first
    own = np.zeros(P)
    idx = np.arange(P)
    for s in range(steps):
        ready = own
        if s >= S and P > 1:
            prev = history[0]  # arrivals after superstep s - S
            first = int(np.argmax(prev))
            top = prev[first]
            second = np.max(np.delete(prev, first))
            others = np.where(idx == first, second, top)
            ready = np.maximum(own, others + latency)
        start = np.where(rows[s] > 0, ready, own)
        own = start + compute[s]
        history.append(own)
        if len(history) > S:
            history.pop(0)
    return float(own.max() + latency)


def _p2p(compute: np.ndarray, rows: np.ndarray, ptr: np.ndarray, idx: np.ndarray, dep: float,
         latency: float) -> float:
    """P2P replay; task t = s·P + p has parents ``idx[ptr[t]:ptr[t + 1]]``."""
    steps, P = compute.shape
    end = np.zeros(steps * P)
    own = np.zeros(P)
    for s in range(steps):
        lo, hi = s * P, s * P + P
        counts = np.diff(ptr[lo:hi + 1]).astype(np.int64)
        ready = own
        if counts.any():
            seg = np.repeat(np.arange(P), counts)
            parent_end = np.zeros(P)
            np.maximum.at(parent_end, seg, end[idx[ptr[lo]:ptr[hi]]])
            ready = np.maximum(own, parent_end) + counts * dep
        start = np.where(rows[s] > 0, ready, own)
        own = start + compute[s]
        end[lo:hi] = own
    return float(own.max() + latency)


def _serial_time(dag: DAG, flat: Mapping, cores: int) -> float:
    if cores != 1:
        raise ValueError(f"the serial kernel runs on 1 core, got cores = {cores}")
    return float(row_costs(dag, None, *(flat[f"serial_{k}"] for k in RATE_KEYS)).sum())


def _blocks(schedule_or_tasks, dag: DAG, costs: Mapping, kernel: str, cores: int):
    """(compute, rows, schedule, task graph or None, flat costs) of a parallel solve, checked."""
    if kernel not in SIM_KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(map(repr, SIM_KERNELS))}; "
                         f"got {kernel!r}")
    flat = costs_for(costs, cores)
    if not isinstance(schedule_or_tasks, (Schedule, TaskSchedule)):
        raise ValueError(f"kernel {kernel!r} needs a Schedule or TaskSchedule, got "
                         f"{type(schedule_or_tasks).__name__}")
    schedule = (schedule_or_tasks.schedule if isinstance(schedule_or_tasks, TaskSchedule)
                else schedule_or_tasks)
    if schedule.n_cores != cores:
        raise ValueError(f"schedule is for {schedule.n_cores} cores, asked to simulate {cores}")
    if schedule.n != dag.n:
        raise ValueError(f"schedule has {schedule.n} vertices, the DAG has {dag.n}")
    if kernel == "ssp" and isinstance(schedule_or_tasks, TaskSchedule):
        raise ValueError("a task schedule (point-to-point) cannot run on the SSP kernel")
    compute, rows = block_costs(schedule, dag, *(flat[k] for k in RATE_KEYS))
    tasks = None
    if kernel == "p2p":
        tasks = (schedule_or_tasks if isinstance(schedule_or_tasks, TaskSchedule)
                 else task_graph(schedule, dag))
    return compute, rows, schedule, tasks, flat


def _replay(kernel: str, compute: np.ndarray, rows: np.ndarray, schedule: Schedule, tasks, flat: Mapping) -> float:
    """Seconds of one solve on ``kernel`` given every block's compute seconds."""
    if kernel == "bsp":
        return _bsp(compute, flat["barrier"])
    if kernel == "ssp":
        return _ssp(compute, rows, schedule.staleness, flat["weak_barrier"])
    return _p2p(compute, rows, tasks.parent_ptr, tasks.parent_idx, flat["p2p_dep"], flat["weak_barrier"])


def simulate(schedule_or_tasks, dag: DAG, costs: Mapping, *, kernel: str, cores: int) -> float:
    """Modelled seconds of one solve of ``dag`` under ``schedule_or_tasks`` on ``kernel``.

    ``kernel``: "serial" (schedule ignored, may be None), "bsp" (any Schedule, or a
    TaskSchedule's block grid), "ssp" (a Schedule, at its own staleness) or "p2p" (a
    TaskSchedule, or a Schedule whose task graph is built).  The schedule is not validated here
    (``predict_point`` does, as ``solve_point`` does).
    """
    if kernel == "serial":
        return _serial_time(dag, costs_for(costs, cores), cores)
    return _replay(kernel, *_blocks(schedule_or_tasks, dag, costs, kernel, cores))


def simulate_terms(schedule_or_tasks, dag: DAG, costs: Mapping, *, kernel: str, cores: int) -> dict:
    """:func:`simulate`'s solve time split into TERMS, which add up to it (seconds).

    ``work``: all blocks' compute over the cores (a perfectly balanced solve without waiting);
    ``imbalance``: what the schedule's dependencies and uneven blocks add to it with free
    synchronisation (the replay with every latency 0); ``synchronisation``: what the latencies add
    on top (after SSP's and P2P's overlap).  Serial: all of it is work.  Which term differs most
    between two schedules is what decides their order (sptrsv-elasticity §6.2-6.4)."""
    if kernel == "serial":
        return {"work": _serial_time(dag, costs_for(costs, cores), cores), "imbalance": 0.0,
                "synchronisation": 0.0}
    compute, rows, schedule, tasks, flat = _blocks(schedule_or_tasks, dag, costs, kernel, cores)
    total = _replay(kernel, compute, rows, schedule, tasks, flat)
    free = _replay(kernel, compute, rows, schedule, tasks, {**flat, **dict.fromkeys(SYNC_KEYS, 0.0)})
    work = float(compute.sum()) / cores
    return {"work": work, "imbalance": free - work, "synchronisation": total - free}


def sync_bench_time(kernel: str, steps: int, cores: int, compute: float, latency: float, *,
                    staleness: int = 2, weak_barrier: float = 0.0) -> float:
    """Modelled seconds of the synchronisation microbenchmark (``_sptrsv.sync_bench_timed``,
    :func:`synchronisation.measure_sync`): ``steps`` supersteps of ``compute`` seconds on each of
    ``cores`` cores, synchronised by ``kernel``'s rule with ``latency``: "bsp" (barrier), "ssp" (weak
    barrier at ``staleness``) or "p2p" (flag wait: task (s, p) on task (s − 1, p + 1 mod P), ending
    with ``weak_barrier``), the same replay :func:`simulate` runs on a schedule."""
    grid = np.full((steps, cores), float(compute))
    rows = np.ones((steps, cores), dtype=np.int64)
    if kernel == "bsp":
        return _bsp(grid, latency)
    if kernel == "ssp":
        return _ssp(grid, rows, staleness, latency)
    if kernel == "p2p":
        t = np.arange(steps * cores)
        has = t >= cores
        ptr = np.concatenate(([0], np.cumsum(has))).astype(np.int64)
        s, p = t[has] // cores, t[has] % cores
        idx = (s - 1) * cores + (p + 1) % cores
        return _p2p(grid, rows, ptr, idx, latency, weak_barrier)
    raise ValueError(f"kernel must be 'bsp', 'ssp' or 'p2p', got {kernel!r}")


def _model_info(flat: dict, kernel: str, costs: Mapping) -> dict:
    info = {"kind": "discrete-event", "kernel": kernel,
            "calibrated_cores": flat["calibrated_cores"], "extrapolated": flat["extrapolated"]}
    if "law" in flat:  # synchronisation costs of a core count the calibration did not measure
        info.update(law=flat["law"], numa_step=flat["numa_step"])
    if kernel == "serial":
        info.update({k: flat[f"serial_{k}"] for k in RATE_KEYS})
    else:
        info.update({k: flat[k] for k in RATE_KEYS})
        info.update({k: flat[k] for k in SYNC_KEYS})
    if "date" in costs:
        info["calibration_date"] = costs["date"]
    machine = costs.get("machine")
    if isinstance(machine, Mapping):
        info["calibration_machine"] = {k: machine.get(k) for k in ("host", "cpu", "cores")}
    return info


def predict_point(L, algorithm: str, cores: int, costs: Mapping, params: dict | None = None,
                  kernel: str = "auto", barrier: str = "auto", dag: DAG | None = None, plan=None) -> dict:
    """A simulated point: the row ``execute.solve_point`` returns, with a modelled solve time
    (``dag`` and ``plan``, an ``execute.SchedulePlan`` of repeated calls, as in ``solve_point``).

    The scheduler really runs (``schedule_time`` is measured) for any ``cores``, also beyond this
    machine; the schedule is validated for the kernel it runs on exactly as ``solve_point`` does;
    the solve is :func:`simulate`.  ``residual`` is None and ``model`` holds the costs used and the
    solve time's TERMS (``model["terms"]``, seconds, :func:`simulate_terms`).
    """
    from spbench.sptrsv.execute import check_point, plan_schedule, prepare_lower

    check_point(algorithm, cores, kernel, params)
    if dag is None:  # a caller running many points of one matrix prepares it and its DAG once
        L = prepare_lower(L)
        dag = DAG(L)
    flat = costs_for(costs, cores)
    staleness = None
    if algorithm == "serial":
        kernel_name, supersteps, schedule_time, barrier_name = "serial", 1, 0.0, None
        terms = simulate_terms(None, dag, flat, kernel="serial", cores=1)
    else:
        plan = plan or plan_schedule(dag, algorithm, cores, kernel, barrier, params)
        kernel_name, staleness, schedule_time = plan.kernel, plan.staleness, plan.schedule_time
        barrier_name, schedule = plan.barrier, plan.schedule
        run = plan.tasks if plan.kernel == "p2p" else schedule
        supersteps = schedule.n_supersteps
        if kernel_name == "bsp" and barrier_name == "omp":
            flat["barrier"] = flat["barrier_omp"]
        terms = simulate_terms(run, dag, flat, kernel=kernel_name, cores=cores)
    solve = sum(terms[k] for k in TERMS)
    status, reason = ("ok", None) if math.isfinite(solve) else \
        ("invalid", f"non-finite modelled solve time ({solve}): a calibration term too large for double precision")
    return {
        "kernel": kernel_name,
        "staleness": staleness,
        "cores": int(cores),
        "n": dag.n,
        "nnz": dag.nnz,
        "wavefronts": dag.wavefronts,
        "supersteps": int(supersteps),
        "schedule_time": float(schedule_time),
        "solve_time": float(solve),
        "solve_times": [float(solve)],
        "residual": None,
        "status": status,
        **({"error": reason} if reason else {}),   # as execute.solve_point: an ok row's error is the runner's None
        "barrier": barrier_name,
        "model": {**_model_info(flat, kernel_name, costs), "terms": terms},
    }


def barrier_sweep(schedule_ssp: Schedule, dag: DAG, costs: Mapping,
                  latencies: Sequence[float]):
    """The same SSP schedule under the BSP and SSP models, barrier latency varied (§6.4).

    For every latency λ both the BSP barrier and the SSP weak barrier cost λ (compute rates from
    ``costs`` at the schedule's core count).  Returns a DataFrame [latency, bsp_time, ssp_time,
    ratio = bsp_time / ssp_time]: ratio > 1 where SSP beats BSP.
    """
    import pandas as pd

    if not isinstance(schedule_ssp, Schedule):
        raise ValueError(f"barrier_sweep needs a Schedule, got {type(schedule_ssp).__name__}")
    P = schedule_ssp.n_cores
    base = costs_for(costs, P)
    rows = []
    for lam in latencies:
        lam = float(lam)
        if lam < 0:
            raise ValueError(f"latencies must be >= 0, got {lam}")
        flat = {**base, "barrier": lam, "weak_barrier": lam}
        bsp = simulate(schedule_ssp, dag, flat, kernel="bsp", cores=P)
        ssp = simulate(schedule_ssp, dag, flat, kernel="ssp", cores=P)
        rows.append({"latency": lam, "bsp_time": bsp, "ssp_time": ssp, "ratio": bsp / ssp})
    return pd.DataFrame(rows, columns=["latency", "bsp_time", "ssp_time", "ratio"])


def validate_model(L, algorithms: Sequence[str], cores_list: Sequence[int], costs: Mapping,
                   repeats: int = 20, params: Mapping | None = None, rounds: int = 1):
    """Measured (``solve_point``) next to predicted (``predict_point``) solve times.

    "serial" is run at 1 core only.  With ``rounds`` > 1 the measured points run that many times,
    interleaved (machine noise hits all alike), and ``measured`` is the median of the rounds'
    medians.  Returns a DataFrame [algorithm, cores, kernel, supersteps, measured, predicted,
    rel_error = (predicted − measured) / measured].
    """
    import pandas as pd

    from spbench.sptrsv.execute import solve_point

    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    params = params or {}
    points = [(a, int(c)) for a in algorithms for c in cores_list if a != "serial" or c == 1]
    runs: dict[tuple, list] = {p: [] for p in points}
    for _ in range(rounds):
        for algorithm, cores in points:
            p = params.get(algorithm) or None
            runs[(algorithm, cores)].append(
                solve_point(L, algorithm, cores, repeats=repeats, params=p))
    rows = []
    for algorithm, cores in points:
        measured = runs[(algorithm, cores)]
        predicted = predict_point(L, algorithm, cores, costs, params=params.get(algorithm) or None)
        m = float(np.median([r["solve_time"] for r in measured]))
        q = predicted["solve_time"]
        rows.append({"algorithm": algorithm, "cores": cores, "kernel": measured[0]["kernel"],
                     "supersteps": measured[0]["supersteps"], "measured": m, "predicted": q,
                     "rel_error": (q - m) / m})
    return pd.DataFrame(rows, columns=["algorithm", "cores", "kernel", "supersteps", "measured",
                                       "predicted", "rel_error"])
