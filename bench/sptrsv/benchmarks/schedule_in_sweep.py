"""`spbench bench schedule-in-sweep`: a point's scheduling time inside `spbench run` beside the same
scheduler timed standalone in the same process (sptrsv-elasticity Fig. 6.2, Table 6.3).

Each round runs a one-point `execution: schedule` sweep per scheduler (its `schedule_time` the
median of `schedule_repeats` calls, ``execute.plan_schedule``) and times the scheduler bare on the
sweep's own DAG, the median of as many calls; the rounds visit every case in turn
(``spbench.machine.timing.interleaved_medians``), so drift hits both alike. On a quiet machine the ratio
should be within :data:`WITHIN`: further off, the sweep adds a cost of its own to the times Fig.
6.2's slope and Table 6.3's amortisation are built from.
"""
from __future__ import annotations

import io
from pathlib import Path

from spbench.store.results import stored_rows
from spbench.sptrsv.execute import wait_policy
from spbench.machine.timing import interleaved_medians, median_time

__all__ = ["ALGORITHMS", "WITHIN", "bench_schedule_in_sweep", "schedule_in_sweep_table"]

#: the schedulers compared: SpMP's OpenMP pass is the one idle threads slow, GrowLocal is serial
ALGORITHMS = ("spmp", "growlocal")
#: in-sweep over standalone scheduling time a quiet machine keeps within
WITHIN = 1.2


def _config(grid: int, cores: int, algorithm: str, repeats: int):
    from spbench.pipeline.config import parse_config

    return parse_config({"name": f"schedule-in-sweep-{algorithm}", "experiment": "sptrsv", "execution": "schedule",
                         "datasets": [{"lap2d-5pt": {"grid": grid}}], "schedule_repeats": repeats,
                         "sweep": {"algorithm": [algorithm], "cores": [cores]}}, "schedule-in-sweep")


def _in_sweep(config, folder: Path, rows: list):
    """A sampler: run the one-point sweep afresh in ``folder``, keep its row, return its schedule_time."""
    from spbench.pipeline.runner import run_sweep

    def sample() -> float:
        run_sweep(config, folder, fresh=True, quiet=True, stream=io.StringIO(), check_resources=False)
        (_, row), = stored_rows(folder)
        if row["status"] != "ok":
            raise RuntimeError(f"{config.name}: the sweep's point ended {row['status']}: {row['error']}")
        rows.append(row)
        return row["schedule_time"]
    return sample


def _standalone(algorithm: str, dag, cores: int, repeats: int, times: list):
    """A sampler: the median of ``repeats`` bare calls of the scheduler, also kept in ``times``."""
    from spbench.sptrsv.schedulers import SCHEDULERS

    scheduler = SCHEDULERS[algorithm]

    def sample() -> float:
        times.append(median_time(lambda: scheduler(dag, cores), repeats, warmup=0))
        return times[-1]
    return sample


def bench_schedule_in_sweep(grid: int, cores: int, repeats: int, rounds: int, work: Path, say) -> list[dict]:
    """Items: per scheduler, the in-sweep scheduling time (median over the rounds of the rows'
    ``schedule_time``) beside the standalone one, their ratio and the rounds whose calls were noisy."""
    from spbench.experiment_registry import get_experiment

    configs = {a: _config(grid, cores, a, repeats) for a in ALGORITHMS}
    first = configs[ALGORITHMS[0]]
    prepared = get_experiment("sptrsv").prepare(first.datasets[0], first)  # the DAG the sweep schedules
    rows: dict[str, list] = {a: [] for a in ALGORITHMS}
    bare: dict[str, list] = {a: [] for a in ALGORITHMS}
    samplers = []
    for a in ALGORITHMS:
        samplers += [_in_sweep(configs[a], work / a, rows[a]), _standalone(a, prepared.dag, cores, repeats, bare[a])]
    say(f"lap2d-5pt grid {grid}: {', '.join(ALGORITHMS)} at {cores} cores, {rounds} rounds of {repeats} calls")
    medians = interleaved_medians(samplers, rounds)
    items = []
    for i, a in enumerate(ALGORITHMS):
        kept = rows[a][-rounds:]  # after the warm-up visit's
        items.append({"item": a, "dataset": f"lap2d-5pt[grid={grid}]", "cores": cores, "n": prepared.dag.n,
                      "nnz": prepared.dag.nnz, "schedule_calls": [int(r["schedule_calls"]) for r in kept],
                      "schedule_time": medians[2 * i], "schedule_times": [r["schedule_time"] for r in kept],
                      "standalone_time": medians[2 * i + 1], "standalone_times": bare[a][-rounds:],
                      "ratio": medians[2 * i] / medians[2 * i + 1],
                      "noisy_rounds": sum(r["schedule_noisy"] is True for r in kept), **wait_policy()})
    return items


def schedule_in_sweep_table(rows: list[dict]) -> str:
    """The in-sweep and standalone scheduling times per scheduler and whether they agree within WITHIN."""
    p = rows[0]["params"]
    lines = [f"{rows[0]['dataset']}: n = {rows[0]['n']:,}, nnz = {rows[0]['nnz']:,}; {p['cores']} cores, "
             f"{p['rounds']} interleaved rounds, each time the median of {p['repeats']} calls "
             f"(OMP_WAIT_POLICY {rows[0].get('omp_wait_policy')}, GOMP_SPINCOUNT {rows[0].get('gomp_spincount')})", "",
             "| scheduler | in sweep (ms) | standalone (ms) | in sweep / standalone | within "
             f"{WITHIN:g}x | noisy rounds |", "|---|---|---|---|---|---|"]
    for r in rows:
        spread = lambda ts: "–".join(f"{t * 1e3:.3f}" for t in (min(ts), max(ts)))  # noqa: E731
        lines.append(f"| {r['item']} | {r['schedule_time'] * 1e3:.3f} ({spread(r['schedule_times'])}) | "
                     f"{r['standalone_time'] * 1e3:.3f} ({spread(r['standalone_times'])}) | {r['ratio']:.2f} | "
                     f"{'yes' if 1 / WITHIN <= r['ratio'] <= WITHIN else 'no'} | {r['noisy_rounds']} of {p['rounds']} |")
    return "\n".join(lines)
