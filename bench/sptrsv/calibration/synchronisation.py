"""The SpTrSV calibration's synchronisation costs, measured alone and never fitted against compute:
a microbenchmark of empty supersteps (and, as a check, of a fixed work item) per kernel's
synchronisation, and the latency for which the model's replay of it matches the measured time."""
from __future__ import annotations

import numpy as np

from spbench.kernels.sptrsv import _sptrsv
from spbench.sptrsv.execute import WARMUP_RUNS
from spbench.sptrsv.model import sync_bench_time

#: synchronisation microbenchmark (:func:`measure_sync`): supersteps per run, timed runs per
#: round, rounds, and the fixed work item of the second variant (dependent multiply-adds, about
#: 0.4 µs on a 2.5 GHz core: of the order of a barrier, so overlap shows)
SYNC_STEPS = {False: 4000, True: 1000}
SYNC_RUNS = {False: 15, True: 6}
SYNC_ROUNDS = {False: 5, True: 2}
SYNC_WORK = 200
SSP_STALENESS = 2
SYNC_BENCH_KINDS = ("none", "spin", "omp", "weak", "flag")


def _sync_per_step(kind: str, cores: int, steps: int, work: int, runs: int) -> np.ndarray:
    """Seconds per superstep of ``runs`` timed runs of the synchronisation microbenchmark
    (``_sptrsv.sync_bench_timed``; the first WARMUP_RUNS untimed)."""
    times = np.empty(WARMUP_RUNS + runs)
    team = _sptrsv.sync_bench_timed(kind, cores, steps, work, SSP_STALENESS, times)
    if team != cores:
        raise RuntimeError(f"OpenMP started {team} threads, asked for {cores}")
    return times[WARMUP_RUNS:] / steps


def measure_sync(cores: int, quick: bool) -> dict:
    """Raw timings of the kernels' own synchronisation at ``cores`` threads: seconds per superstep
    of every microbenchmark kind (``none``: the work alone) on empty supersteps and on supersteps
    of SYNC_WORK multiply-adds, in interleaved rounds (machine noise hits every kind alike)."""
    steps, runs = SYNC_STEPS[quick], SYNC_RUNS[quick]
    timings: dict[str, list[float]] = {}
    for _ in range(SYNC_ROUNDS[quick]):
        for work in (0, SYNC_WORK):
            for kind in SYNC_BENCH_KINDS:
                timings.setdefault(f"{kind}@{work}", []).extend(
                    _sync_per_step(kind, cores, steps, work, runs).tolist())
    return {"steps": steps, "work": SYNC_WORK, "staleness": SSP_STALENESS, "per_step": timings}


#: microbenchmark kind -> (the cost it gives, the model's kernel for it)
SYNC_TERMS = {"spin": ("barrier", "bsp"), "omp": ("barrier_omp", "bsp"),
               "weak": ("weak_barrier", "ssp"), "flag": ("p2p_dep", "p2p")}
#: supersteps of the model run each latency is solved on (the per-step steady state)
MODEL_STEPS = 256


def _latency_for(kernel: str, cores: int, compute: float, per_step: float, weak: float = 0.0) -> float:
    """The latency for which the model's microbenchmark (:func:`model.sync_bench_time`) takes
    ``per_step`` seconds per superstep when each superstep's work takes ``compute``."""
    if cores == 1:  # nothing to wait for: the call's own cost per superstep (the model waits only across cores)
        return max(0.0, per_step - compute)

    def per_step_model(lam):
        return sync_bench_time(kernel, MODEL_STEPS, cores, compute, lam, staleness=SSP_STALENESS,
                               weak_barrier=weak) / MODEL_STEPS
    return _solve_latency(per_step_model, per_step)


def sync_costs(raw: dict, cores: int) -> dict:
    """Synchronisation costs from :func:`measure_sync`'s timings, no compute rate involved.

    Every latency comes from empty supersteps: the one for which the model's run of the same
    microbenchmark (compute = the ``none`` run's seconds per superstep) matches the measured
    median; BSP: per-step time minus compute; SSP at staleness 2: the weak barrier overlaps one
    superstep, so about twice the per-step time; P2P: per-step time minus compute.  The
    fixed-work supersteps then check it: ``check[name]`` is the model's per-step time with that
    latency against the measured one (the relative error)."""
    med = {k: float(np.median(v)) for k, v in raw["per_step"].items()}
    spread = {k: _relative_iqr(v) for k, v in raw["per_step"].items()}
    out: dict = {}
    check: dict = {}
    for work in (0, raw["work"]):
        compute = med[f"none@{work}"]
        weak = out.get("weak_barrier", 0.0)
        for kind in ("spin", "omp", "weak", "flag"):
            name, kernel = SYNC_TERMS[kind]
            if work == 0:
                lam = _latency_for(kernel, cores, compute, med[f"{kind}@0"],
                                   weak=out.get("weak_barrier", 0.0))
                out[name] = lam
            else:
                modelled = sync_bench_time(kernel, MODEL_STEPS, cores, compute, out[name],
                                           staleness=raw["staleness"], weak_barrier=weak) / MODEL_STEPS
                measured = med[f"{kind}@{work}"]
                check[name] = {"measured_per_step": measured, "modelled_per_step": modelled,
                               "rel_error": (modelled - measured) / measured}
    out["sync_bench"] = {"steps": raw["steps"], "work": raw["work"], "staleness": raw["staleness"],
                         "median_per_step": med, "relative_iqr": spread, "check_fixed_work": check}
    return out


def _relative_iqr(times) -> float:
    q1, q2, q3 = np.percentile(np.asarray(times, dtype=float), [25, 50, 75])
    return float((q3 - q1) / q2) if q2 > 0 else 0.0


def _solve_latency(model, measured: float) -> float:
    """λ ≥ 0 with model(λ) = measured (model non-decreasing); 0 when even λ = 0 is too slow."""
    if model(0.0) >= measured:
        return 0.0
    lo, hi = 0.0, measured
    while model(hi) < measured:
        hi *= 2
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if model(mid) < measured:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
