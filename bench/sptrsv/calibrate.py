"""Calibrate the SpTrSV cost model (:mod:`spbench.sptrsv.model`) on this machine with our kernels.

What is measured (medians of timed solves, 2 untimed first as in §5.1):

- serial rates ``t_row``, ``t_nnz``, ``t_chain``, ``t_far``: the serial kernel on the lower
  triangles of a few generated matrices of different nnz/row (lap2d-5pt, lap3d-27pt, rgg-spd),
  each in natural order and permuted to wavefront (level) order, where no row reads the row just
  before it; fitted by non-negative least squares on relative error (each sample counts alike)
  to ``rows · t_row + nnz · t_nnz + chained · t_chain + far · t_far`` (``model.row_features``);
- per-core rates at P cores: P copies of each of those matrices as a block diagonal, one
  superstep, copy p on core p (BSP kernel), so every core runs a whole matrix at once; same fit;
- synchronisation at P cores on the wavefront schedule of lap2d-9pt (hundreds of short
  supersteps, cross-core reads as in real schedules): the BSP kernel with the spin barrier
  (``barrier``) and OpenMP's (``barrier_omp``), the SSP kernel at staleness 1 on the same
  schedule (``weak_barrier``: arrive-to-seen latency of the weak barrier) and the
  point-to-point kernel on its task graph (SpMP's execution; ``p2p_dep``: cost per dependency),
  in interleaved rounds (median of the rounds).  Each is the value for which
  :func:`model.simulate` of that schedule equals the measured time (bisection; the model is
  monotone in it), so it also absorbs what the compute model misses there (cross-core reads of
  x).  On 1 core nothing waits on another core, so ``weak_barrier`` and ``p2p_dep`` are 0 there.
  (A pure chain, row i on core i mod P, gave ~2x higher latencies here: there every superstep
  also waits for one cross-core read of x, which real schedules overlap.)

Bind the threads (``OMP_PROC_BIND=close OMP_PLACES=cores``, as the paper does, §5.1): unbound
threads on a small VM were seen to share one CPU for a while, making a superstep cost a context
switch (3x slower solves) in some runs and not in others.

``calibrate()`` returns a JSON-serialisable dict; :func:`save`/:func:`load` store it in
the calibration format of every experiment (:mod:`spbench.calibration`). Run ``spbench calibrate
--experiment sptrsv [--validate GRID]`` (the validation: ``spbench bench sptrsv-model``).
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

from spbench.kernels import _sptrsv
from spbench.machine import usable_cores
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import BARRIERS, WARMUP_RUNS, prepare_lower
from spbench.sptrsv.model import RATE_KEYS, row_features, simulate
from spbench.sptrsv.schedule import Schedule, TaskSchedule, reorder, task_graph

SCHEMA_VERSION = 1
KIND = "sptrsv-costs"

#: (data set, params) per mode: nnz/row about 3, 14 and 7 (lower triangles).
MATRICES = {
    False: [("lap2d-5pt", {"grid": 300}), ("lap3d-27pt", {"grid": 30}),
            ("rgg-spd", {"n": 60000, "avg_degree": 12.0})],
    True: [("lap2d-5pt", {"grid": 120}), ("lap3d-27pt", {"grid": 16}),
           ("rgg-spd", {"n": 12000, "avg_degree": 12.0})],
}
REPEATS = {False: 50, True: 10}
#: sync costs come from the wavefront schedule of this matrix (many short supersteps)
SYNC_MATRIX = {False: ("lap2d-9pt", {"grid": 150}), True: ("lap2d-9pt", {"grid": 60})}
SYNC_REPEATS = {False: 20, True: 5}
SYNC_ROUNDS = {False: 5, True: 1}


def _median(times: np.ndarray) -> float:
    return float(np.median(times[WARMUP_RUNS:]))


def _time_serial(L, repeats: int) -> float:
    times = np.empty(WARMUP_RUNS + repeats)
    x = np.zeros(L.shape[0])
    with threadpool_limits(limits=1, user_api="blas"):
        _sptrsv.serial_solve_timed(L.indptr, L.indices, L.data, np.ones(L.shape[0]), x, times)
    return _median(times)


def time_schedule(L, run, kernel: str, repeats: int, barrier: str = "spin") -> float:
    """Median seconds of ``repeats`` timed solves of L run by a Schedule/TaskSchedule on ``kernel``
    (the layout and kernel calls of ``execute.solve_point``)."""
    schedule = run.schedule if isinstance(run, TaskSchedule) else run
    P = schedule.n_cores
    L_perm, perm, block_ptr = reorder(schedule, L)
    n = L.shape[0]
    b = np.ones(n)[perm]
    x = np.zeros(n)
    times = np.empty(WARMUP_RUNS + repeats)
    args = (L_perm.indptr, L_perm.indices, L_perm.data, b, x, block_ptr, schedule.n_supersteps, P)
    with threadpool_limits(limits=1, user_api="blas"):
        if kernel == "bsp":
            team = _sptrsv.bsp_solve_timed(*args, BARRIERS[barrier], times)
        elif kernel == "ssp":
            team = _sptrsv.ssp_solve_timed(*args, schedule.staleness, times)
        elif kernel == "p2p":
            team = _sptrsv.p2p_solve_timed(*args, run.parent_ptr, run.parent_idx, times)
        else:
            raise ValueError(f"kernel must be 'bsp', 'ssp' or 'p2p', got {kernel!r}")
    if team != P:
        raise RuntimeError(f"OpenMP started {team} threads, asked for {P}")
    return _median(times)


def _fit_rates(samples: list[dict]) -> dict:
    """Non-negative rates (RATE_KEYS) minimising the relative error of the compute model."""
    A = np.array([[s["rows"], s["nnz"], s["chained"], s["far"]] for s in samples], dtype=float)
    T = np.array([s["measured"] for s in samples], dtype=float)
    coef, _ = nnls(A / T[:, None], np.ones(T.size))
    for s, fitted in zip(samples, A @ coef):
        s["fitted"] = float(fitted)
    return dict(zip(RATE_KEYS, (float(c) for c in coef)))


def _lowers(quick: bool) -> list[tuple[str, sp.csr_matrix, dict]]:
    """(label, lower triangle, its features) in natural and in wavefront order."""
    from spbench.datasets.synthetic import generate, label
    from spbench.sptrsv.schedulers import wavefront

    out = []
    for name, p in MATRICES[quick]:
        L = prepare_lower(generate(name, p))
        dag = DAG(L)
        L_level = reorder(wavefront.schedule(dag, 1), L)[0]
        for suffix, M, d in (("", L, dag), (" level order", L_level, DAG(L_level))):
            chained, far = row_features(d)
            features = {"rows": d.n, "nnz": d.nnz, "chained": int(chained.sum()),
                        "far": int(far.sum())}
            out.append((label(name, p) + suffix, M, features))
    return out


def _block_diagonal(L, copies: int):
    """P copies of L on the diagonal, one superstep, copy p on core p."""
    B = prepare_lower(sp.block_diag([L] * copies, format="csr"))
    n = L.shape[0]
    core = np.repeat(np.arange(copies, dtype=np.int32), n)
    return B, Schedule(core=core, superstep=np.zeros(n * copies, dtype=np.int32), n_cores=copies)


def chain(n: int, cores: int, staleness: int = 1) -> tuple[sp.csr_matrix, Schedule]:
    """Bidiagonal L (row i reads row i − 1), scheduled row i -> core i mod P, superstep i."""
    L = sp.diags([np.full(n - 1, -0.5), np.full(n, 2.0)], [-1, 0], format="csr")
    L = prepare_lower(L)
    i = np.arange(n, dtype=np.int32)
    return L, Schedule(core=i % cores, superstep=i, n_cores=cores, staleness=staleness)


def _solve_latency(model, measured: float) -> float:
    """λ ≥ 0 with model(λ) = measured (model non-decreasing); 0 when even λ = 0 is too slow."""
    if model(0.0) >= measured:
        return 0.0
    lo, hi = 0.0, measured
    while model(hi) < measured:
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if model(mid) < measured:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _sync_costs(cores: int, rates: dict, serial: dict, quick: bool) -> dict:
    from spbench.datasets.synthetic import generate, label
    from spbench.sptrsv.schedulers import wavefront

    repeats = SYNC_REPEATS[quick]
    name, params = SYNC_MATRIX[quick]
    L = prepare_lower(generate(name, params))
    dag = DAG(L)
    schedule = wavefront.schedule(dag, cores)
    base = {**rates, **{f"serial_{k}": serial[k] for k in RATE_KEYS}}
    tasks = task_graph(schedule, dag) if cores > 1 else None
    runs = {"bsp": [], "bsp_omp": [], "ssp": [], "p2p": []}
    for _ in range(SYNC_ROUNDS[quick]):  # interleaved: machine noise hits every kernel alike
        runs["bsp"].append(time_schedule(L, schedule, "bsp", repeats, "spin"))
        runs["bsp_omp"].append(time_schedule(L, schedule, "bsp", repeats, "omp"))
        if cores > 1:
            runs["ssp"].append(time_schedule(L, schedule, "ssp", repeats))
            runs["p2p"].append(time_schedule(L, tasks, "p2p", repeats))
    measured = {"matrix": label(name, params), "schedule": "wavefront",
                "supersteps": schedule.n_supersteps,
                **{k: float(np.median(v)) for k, v in runs.items() if v}}
    def bsp(lam):
        return simulate(schedule, dag, {**base, "barrier": lam}, kernel="bsp", cores=cores)

    out = {
        "barrier": _solve_latency(bsp, measured["bsp"]),
        "barrier_omp": _solve_latency(bsp, measured["bsp_omp"]),
        "weak_barrier": 0.0,
        "p2p_dep": 0.0,
    }
    if cores > 1:
        out["weak_barrier"] = _solve_latency(
            lambda lam: simulate(schedule, dag, {**base, "weak_barrier": lam}, kernel="ssp",
                                 cores=cores), measured["ssp"])
        weak = out["weak_barrier"]
        out["p2p_dep"] = _solve_latency(
            lambda d: simulate(tasks, dag, {**base, "weak_barrier": weak, "p2p_dep": d},
                               kernel="p2p", cores=cores), measured["p2p"])
    out["measured"] = measured
    return out


def calibrate(cores_list=(1, 2), quick: bool = False) -> dict:
    """Measure the model's costs on this machine; JSON-serialisable (module docstring)."""
    from spbench.machine import machine_facts

    cores_list = sorted({int(c) for c in cores_list})
    if not cores_list or cores_list[0] < 1:
        raise ValueError(f"cores_list must hold core counts >= 1, got {cores_list}")
    have = usable_cores()
    if cores_list[-1] > have:
        raise ValueError(f"cannot calibrate at {cores_list[-1]} cores: this process runs at most "
                         f"{have} threads (the model extrapolates from the largest calibrated "
                         "count)")
    repeats = REPEATS[quick]
    lowers = _lowers(quick)
    samples = [{"matrix": name, **features, "measured": _time_serial(L, repeats)}
               for name, L, features in lowers]
    serial = {**_fit_rates(samples), "fit": samples}
    per_core = {}
    for P in cores_list:
        samples = []
        for name, L, features in lowers:
            B, schedule = _block_diagonal(L, P)
            samples.append({"matrix": name, **features,
                            "measured": time_schedule(B, schedule, "bsp", repeats)})
        rates = _fit_rates(samples)
        entry = {**rates, **_sync_costs(P, rates, serial, quick), "fit": samples}
        per_core[str(P)] = entry
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(quick),
        "machine": machine_facts(with_mpi=False),
        "serial": serial,
        "cores": per_core,
    }


def default_calibration_path() -> Path:
    """Where `spbench calibrate` keeps this machine's SpTrSV costs (:func:`spbench.calibration.default_path`)."""
    from spbench.calibration import default_path
    return default_path("sptrsv")


#: the keys of :func:`calibrate`'s dict the calibration file keeps in its envelope (the rest are terms)
_ENVELOPE_KEYS = ("schema_version", "kind", "date", "quick", "machine")


def save(costs: dict, path) -> Path:
    """Write :func:`calibrate`'s dict in the calibration format of every experiment
    (:mod:`spbench.calibration`), atomically (parents created)."""
    from spbench.calibration import write_calibration
    terms = {k: v for k, v in costs.items() if k not in _ENVELOPE_KEYS}
    return write_calibration(path, "sptrsv", terms, machine=costs.get("machine", {}), created=costs.get("date"),
                             quick=costs.get("quick", False), terms_version=SCHEMA_VERSION)


def load_calibration(path) -> dict:
    """The calibration file's envelope (:func:`spbench.calibration.read_calibration`); ValueError
    with one line when it is no SpTrSV calibration of this spbench."""
    from spbench.calibration import read_calibration
    return read_calibration(path, "sptrsv", "an SpTrSV calibration", SCHEMA_VERSION)


def model_costs(calibration: dict) -> dict:
    """A calibration file's envelope as the cost model reads it: :func:`calibrate`'s dict."""
    return {"schema_version": calibration["terms_version"], "kind": KIND, "date": calibration["created"],
            "quick": calibration["quick"], "machine": calibration["machine"], **calibration["terms"]}


def load(path) -> dict:
    """Read a calibration written by :func:`save`, as :func:`calibrate` returned it."""
    return model_costs(load_calibration(path))


def summary(costs: dict) -> list[tuple[str, str]]:
    """(quantity, value) rows for a table."""
    ns = 1e9
    s = costs["serial"]
    rows = [("machine", f"{costs['machine'].get('cpu')} ({costs['machine'].get('cores')} cores), "
                        f"{costs['date']}{', quick' if costs.get('quick') else ''}"),
            ("serial", ", ".join(f"{k} {s[k] * ns:.2f} ns" for k in RATE_KEYS))]
    for P, e in costs["cores"].items():
        rows.append((f"{P} cores", ", ".join(f"{k} {e[k] * ns:.2f} ns" for k in RATE_KEYS) + ", "
                                   f"barrier {e['barrier'] * ns:.0f} ns "
                                   f"(omp {e['barrier_omp'] * ns:.0f}), "
                                   f"weak barrier {e['weak_barrier'] * ns:.0f} ns, "
                                   f"p2p per dependency {e['p2p_dep'] * ns:.0f} ns"))
    return rows
