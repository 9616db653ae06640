"""Calibrate the SpTrSV cost model (:mod:`spbench.sptrsv.model`) on this machine with our kernels.

What is measured (medians of timed solves, 2 untimed first as in §5.1):

- serial rates ``t_row``, ``t_nnz``, ``t_chain``, ``t_far``: the serial kernel on matrices built
  to differ in one term each (:mod:`spbench.sptrsv.compute_rates`), each rate a difference of two
  measured times, never a fit that could trade one rate for another;
- per-core rates at P cores: P copies of each of those matrices as a block diagonal, one
  superstep, copy p on core p (BSP kernel), so every core runs a whole matrix at once;
- the check (``families``): the generator families' lower triangles (lap2d-5pt, lap3d-27pt,
  rgg-spd: nnz/row about 3, 14 and 7), each in natural order and in wavefront (level) order,
  measured beside the model's time with those rates;
- synchronisation at P cores, measured alone, never fitted against compute
  (:mod:`spbench.sptrsv.calibration.synchronisation`): the kernels' own spin barrier (``barrier``),
  OpenMP's barrier (``barrier_omp``), the SSP kernel's weak barrier at staleness 2
  (``weak_barrier``) and the P2P kernel's flag wait (``p2p_dep``), in a microbenchmark of
  thousands of empty supersteps (and, as a check, supersteps of a fixed work item), interleaved
  rounds, median and interquartile range recorded.  Each latency is the one for which the model's
  replay of the same microbenchmark matches the measured time per superstep.  On 1 core nothing
  waits on another core: the cost per superstep is the call's own.

A per-row or per-nonzero rate at or below zero, a cross-core synchronisation below SYNC_FLOOR,
or a per-nonzero cost changing more than COMPUTE_JUMP_MAX times between 1 and 2 cores, is refused (:func:`check_physical`).  The result
also records the machine's load over the measurement (:mod:`spbench.machine.load`; `spbench
calibrate` refuses a busy machine unless ``--force``) and a machine profile (:func:`machine_profile`:
sockets, NUMA domains, copy bandwidth, the law for core counts not measured).

Bind the threads (``OMP_PROC_BIND=close OMP_PLACES=cores``, as the paper does, §5.1): unbound
threads on a small VM were seen to share one CPU for a while, making a superstep cost a context
switch (3x slower solves) in some runs and not in others.

``calibrate()`` returns a JSON-serialisable dict; :func:`save`/:func:`load` store it in
the calibration format of every experiment (:mod:`spbench.store.calibration_file`). Run ``spbench calibrate
--experiment sptrsv [--validate GRID]`` (the validation: ``spbench bench sptrsv-model``).
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from spbench.kernels.sptrsv import _sptrsv
from spbench.machine.facts import usable_cores
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import BARRIERS, WARMUP_RUNS, prepare_lower
from spbench.sptrsv import compute_rates
from spbench.sptrsv.model import simulate
from spbench.sptrsv.model_costs import RATE_KEYS, SYNC_KEYS
from spbench.sptrsv.schedule import Schedule, TaskSchedule, reorder, task_graph
from spbench.sptrsv.calibration.synchronisation import measure_sync, sync_costs

SCHEMA_VERSION = 2  # 2: t_chain is the least time of a chained row, not an addition
KIND = "sptrsv-costs"

#: (data set, params) per mode: nnz/row about 3, 14 and 7 (lower triangles).
MATRICES = {
    False: [("lap2d-5pt", {"grid": 300}), ("lap3d-27pt", {"grid": 30}),
            ("rgg-spd", {"n": 60000, "avg_degree": 12.0})],
    True: [("lap2d-5pt", {"grid": 120}), ("lap3d-27pt", {"grid": 16}),
           ("rgg-spd", {"n": 12000, "avg_degree": 12.0})],
}
REPEATS = {False: 50, True: 10}
#: interleaved rounds of the compute timings (:func:`_compute_seconds`): every matrix on every
#: kernel once a round, so a change of the machine's speed during the calibration (this project's
#: VM ran the same solve up to 1.7x faster for seconds at a time) hits every rate alike
COMPUTE_ROUNDS = {False: 5, True: 2}
#: the least a synchronisation between two cores can cost: one cache-line transfer between cores
#: takes tens of ns on any current multi-core CPU (our spin barrier: about 70 or 250 ns on this
#: project's 2-core EPYC VM, depending on where the hypervisor puts the two vCPUs); a smaller value
#: timed no synchronisation
SYNC_FLOOR = 20e-9
#: the most the per-nonzero cost may change between 1 and 2 cores, each solving its own copy
COMPUTE_JUMP_MAX = 2.0
#: the compute rates that must come out above zero (the row loop's cost per row and per nonzero)
POSITIVE_RATES = ("t_row", "t_nnz")


def _serial_times(L, repeats: int) -> np.ndarray:
    """Seconds of ``repeats`` timed serial solves (after WARMUP_RUNS untimed)."""
    times = np.empty(WARMUP_RUNS + repeats)
    x = np.zeros(L.shape[0])
    with threadpool_limits(limits=1, user_api="blas"):
        _sptrsv.serial_solve_timed(L.indptr, L.indices, L.data, np.ones(L.shape[0]), x, times)
    return times[WARMUP_RUNS:]


def schedule_times(L, run, kernel: str, repeats: int, barrier: str = "spin") -> np.ndarray:
    """Seconds of ``repeats`` timed solves of L run by a Schedule/TaskSchedule on ``kernel``
    (the layout and kernel calls of ``execute.solve_point``; WARMUP_RUNS untimed first)."""
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
    return times[WARMUP_RUNS:]


def _compute_seconds(matrices: dict, cores_list, quick: bool, groups: list) -> dict:
    """Seconds of one solve of every matrix on the serial kernel ("serial") and in one superstep
    at each P cores (P copies, str(P)): the median over COMPUTE_ROUNDS interleaved rounds of the
    median of a round's timed solves; every round's timings also go to ``groups``."""
    per_round = max(1, REPEATS[quick] // COMPUTE_ROUNDS[quick])
    runs = {"serial": {name: (lambda L=L: _serial_times(L, per_round)) for name, L in matrices.items()}}
    for P in cores_list:
        blocks = {name: _block_diagonal(L, P) for name, L in matrices.items()}
        runs[str(P)] = {name: (lambda b=b: schedule_times(*b, "bsp", per_round)) for name, b in blocks.items()}
    medians: dict = {kernel: {name: [] for name in matrices} for kernel in runs}
    for _ in range(COMPUTE_ROUNDS[quick]):
        for kernel, timers in runs.items():
            for name, timer in timers.items():
                times = timer()
                groups.append(times)
                medians[kernel][name].append(float(np.median(times)))
    return {kernel: {name: float(np.median(v)) for name, v in by_name.items()} for kernel, by_name in medians.items()}


def _family_checks(lowers, rates: dict, seconds: dict) -> list[dict]:
    """The generator families' measured seconds beside the model's with ``rates``."""
    flat = {**rates, **{f"serial_{k}": rates[k] for k in RATE_KEYS}}
    out = []
    for name, L, features in lowers:
        measured = seconds[name]
        modelled = simulate(None, DAG(L), flat, kernel="serial", cores=1)
        out.append({"matrix": name, **features, "measured": measured, "modelled": modelled,
                    "rel_error": (modelled - measured) / measured})
    return out


def _lowers(quick: bool) -> list[tuple[str, sp.csr_matrix, dict]]:
    """(label, lower triangle, its features) in natural and in wavefront order."""
    from spbench.datasets.synthetic import generate, label
    from spbench.sptrsv.schedulers import wavefront

    out = []
    for name, p in MATRICES[quick]:
        L = prepare_lower(generate(name, p))
        L_level = reorder(wavefront.schedule(DAG(L), 1), L)[0]
        for suffix, M in (("", L), (" level order", L_level)):
            out.append((label(name, p) + suffix, M, compute_rates.features_of(M)))
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


class ImplausibleCalibration(ValueError):
    """A calibration term no machine can have; the message is one line naming it."""


def per_nonzero(samples: list[dict]) -> float:
    """Seconds per nonzero of a set of compute samples: their total time over their total nonzeros
    (no fit: what a busy core inflates shows here whatever the rates' split)."""
    return float(sum(s["measured"] for s in samples) / sum(s["nnz"] for s in samples))


def check_physical(costs: dict) -> None:
    """Refuse (:class:`ImplausibleCalibration`, one line) a per-row or per-nonzero compute rate at
    or below zero, a cross-core synchronisation cost below SYNC_FLOOR or a per-nonzero cost
    changing more than COMPUTE_JUMP_MAX times between 1 and 2 cores: what a busy machine or a fit
    trading one term for another produces."""
    cores = costs["cores"]
    check_positive_rates(costs)
    for P, entry in sorted(cores.items(), key=lambda kv: int(kv[0])):
        if int(P) < 2:
            continue
        for name in SYNC_KEYS:
            value = float(entry[name])
            if value < SYNC_FLOOR:
                raise ImplausibleCalibration(
                    f"{name} at {P} cores came out {value * 1e9:.1f} ns, below the {SYNC_FLOOR * 1e9:.0f} ns "
                    "one cache-line transfer between cores takes: the timing was not a synchronisation "
                    "(a busy machine?); nothing written")
    if "1" in cores and "2" in cores and cores["1"].get("families") and cores["2"].get("families"):
        one, two = per_nonzero(cores["1"]["families"]), per_nonzero(cores["2"]["families"])
        ratio = max(one, two) / min(one, two)
        if ratio > COMPUTE_JUMP_MAX:
            raise ImplausibleCalibration(
                f"the per-nonzero cost changed {ratio:.1f}x between 1 core ({one * 1e9:.2f} ns) and 2 cores "
                f"({two * 1e9:.2f} ns), more than the {COMPUTE_JUMP_MAX:.0f}x two cores each solving their "
                "own copy can differ: a busy machine?; nothing written")


def check_positive_rates(costs: dict) -> None:
    """:class:`ImplausibleCalibration` for a per-row or per-nonzero rate at or below zero (serial or
    at a core count): a row or a nonzero takes time on any machine."""
    measured = [("serial", costs.get("serial", {}))] + [(f"{P} cores", e) for P, e in costs["cores"].items()]
    for where, entry in measured:
        for name in POSITIVE_RATES:
            if name in entry and not float(entry[name]) > 0:
                raise ImplausibleCalibration(
                    f"{name} ({where}) came out {float(entry[name]) * 1e9:.3f} ns: a row or a nonzero "
                    "takes time on any machine, so its solves' timings were not the kernel's (a busy "
                    "machine?); nothing written")


def check_terms(path, terms: dict) -> None:
    """ValueError, one line naming ``path`` and the term, for terms the cost model cannot read (a file
    edited by hand, say): ``cores`` not an object of core counts >= 1, a rate or synchronisation
    cost missing or not a finite number, or (in a calibration not kept with --force) a per-row or
    per-nonzero rate at or below zero, which would model negative solve times."""
    cores = terms.get("cores")
    if not isinstance(cores, dict) or not cores:
        raise ValueError(f"{path}: terms.cores = {cores!r:.60}, expected a JSON object of the calibrated core counts")
    for P, entry in cores.items():
        if not (P.isascii() and P.isdigit() and int(P) >= 1):
            raise ValueError(f"{path}: terms.cores: key {P!r}, expected a core count >= 1")
        _check_numbers(path, f"terms.cores.{P}", entry, RATE_KEYS + SYNC_KEYS)
    if "serial" in terms:
        _check_numbers(path, "terms.serial", terms["serial"], RATE_KEYS)
    if not terms.get("implausible"):
        try:
            check_positive_rates(terms)
        except ImplausibleCalibration as exc:
            raise ValueError(f"{path}: {str(exc).replace('; nothing written', '')}; measure it again "
                             f"(`spbench calibrate`), or keep such a calibration with --force") from None


def _check_numbers(path, where: str, entry, keys) -> None:
    """ValueError unless ``entry`` is an object holding each of ``keys`` as a finite number."""
    from spbench.store.calibration_file import finite_number

    if not isinstance(entry, dict):
        raise ValueError(f"{path}: {where} = {entry!r:.60}, expected a JSON object of costs in seconds")
    for key in keys:
        value = entry.get(key)
        if not finite_number(value):
            raise ValueError(f"{path}: {where}.{key} = {value!r:.60}, expected a finite number of seconds")


def default_core_counts(cores: int | None = None) -> list[int]:
    """Every core count a calibration measures by default: 1, 2, 4, ... up to this machine's usable
    cores, and that count itself."""
    have = cores or usable_cores()
    counts = {have}
    P = 1
    while P < have:
        counts.add(P)
        P *= 2
    return sorted(counts)


def machine_profile(cores_list, quick: bool) -> dict:
    """What a simulation on another machine needs to know about this one besides the costs:
    sockets, NUMA domains, cores per domain (sysfs), one core's copy bandwidth of a 256 MiB buffer,
    the calibrated core counts and the law the model extrapolates beyond them with."""
    from spbench.machine.facts import topology
    from spbench.sptrsv.benchmarks.kernel_bench import copy_bandwidth
    from spbench.sptrsv.model_costs import EXTRAPOLATION_LAW

    nbytes = (32 if quick else 256) * 2**20
    return {**topology(), "copy_bandwidth_bytes_per_s": copy_bandwidth(nbytes, repeats=5),
            "copy_bytes": nbytes, "calibrated_cores": list(cores_list), "law": EXTRAPOLATION_LAW}


def calibrate(cores_list=None, quick: bool = False, keep_implausible: bool = False) -> dict:
    """Measure the model's costs on this machine; JSON-serialisable (module docstring).

    ``load`` holds the machine's load over the measurement (:mod:`spbench.machine.load`); the
    caller refuses a busy one.  A term no machine can have raises :class:`ImplausibleCalibration`
    (:func:`check_physical`), unless ``keep_implausible`` (`spbench calibrate --force`): then its
    one-line reason is kept as ``implausible``. A quick calibration's small matrices at 2 cores can
    put the per-row rate within noise of zero (−0.02 ns seen on a quiet machine)."""
    from spbench.machine.facts import machine_facts
    from spbench.machine.load import LoadWatch, timing_spread

    watch = LoadWatch()
    cores_list = sorted({int(c) for c in (cores_list or default_core_counts())})
    if not cores_list or cores_list[0] < 1:
        raise ValueError(f"cores_list must hold core counts >= 1, got {cores_list}")
    have = usable_cores()
    if cores_list[-1] > have:
        raise ValueError(f"cannot calibrate at {cores_list[-1]} cores: this process runs at most "
                         f"{have} threads (the model extrapolates from the largest calibrated "
                         "count)")
    lowers = _lowers(quick)
    designed = compute_rates.matrices(quick)
    groups = []
    seconds = _compute_seconds({**designed, **{name: L for name, L, _ in lowers}}, cores_list, quick, groups)
    serial = compute_rates.record(seconds["serial"], designed)
    serial["families"] = _family_checks(lowers, serial, seconds["serial"])
    per_core = {}
    for P in cores_list:
        rates = compute_rates.record(seconds[str(P)], designed)
        families = _family_checks(lowers, rates, seconds[str(P)])
        raw = measure_sync(P, quick)
        groups.extend(raw["per_step"].values())
        per_core[str(P)] = {**rates, **sync_costs(raw, P), "per_nnz": per_nonzero(families), "families": families}
    costs = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(quick),
        "machine": machine_facts(with_mpi=False),
        "serial": serial,
        "cores": per_core,
        "profile": machine_profile(cores_list, quick),
    }
    costs["load"] = watch.figures(timing_spread(groups))
    try:
        check_physical(costs)
    except ImplausibleCalibration as exc:
        if keep_implausible:
            costs["implausible"] = str(exc).replace("; nothing written", "; kept with --force")
            return costs
        if costs["load"]["busy"]:
            raise ImplausibleCalibration(f"{exc} (the machine was busy: {costs['load']['reason']})") from None
        raise
    return costs


def default_calibration_path() -> Path:
    """Where `spbench calibrate` keeps this machine's SpTrSV costs (:func:`spbench.store.calibration_file.default_path`)."""
    from spbench.store.calibration_file import default_path
    return default_path("sptrsv")


#: the keys of :func:`calibrate`'s dict the calibration file keeps in its envelope (the rest are terms)
_ENVELOPE_KEYS = ("schema_version", "kind", "date", "quick", "machine")


def save(costs: dict, path) -> Path:
    """Write :func:`calibrate`'s dict in the calibration format of every experiment
    (:mod:`spbench.store.calibration_file`), atomically (parents created)."""
    from spbench.store.calibration_file import write_calibration
    terms = {k: v for k, v in costs.items() if k not in _ENVELOPE_KEYS}
    return write_calibration(path, "sptrsv", terms, machine=costs.get("machine", {}), created=costs.get("date"),
                             quick=costs.get("quick", False), terms_version=SCHEMA_VERSION)


def load_calibration(path) -> dict:
    """The calibration file's envelope (:func:`spbench.store.calibration_file.read_calibration`); ValueError
    with one line when it is no SpTrSV calibration of this spbench."""
    from spbench.store.calibration_file import read_calibration
    calibration = read_calibration(path, "sptrsv", "an SpTrSV calibration", SCHEMA_VERSION)
    check_terms(path, calibration["terms"])
    return calibration


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
    profile = costs.get("profile")
    if profile:
        rows.append(("profile", f"{profile['sockets']} socket(s), {profile['numa_domains']} NUMA domain(s) of "
                                f"{profile['cores_per_domain']} cores, copy "
                                f"{profile['copy_bandwidth_bytes_per_s'] / 1e9:.1f} GB/s; beyond "
                                f"{max(profile['calibrated_cores'])} cores: {profile['law']}"))
    from spbench.machine.load import describe

    load = costs.get("load")
    if load:
        rows.append(("load", describe(load)))
    if costs.get("implausible"):
        rows.append(("implausible", costs["implausible"]))
    return rows

