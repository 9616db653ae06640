"""`spbench bench preflight`: the pre-flight's memory estimate of sweep points (:mod:`.preflight`,
the experiments' ``estimate_points``) beside the peak each point reaches when run alone.

Each chosen point is cut out of its config into a one-point config (its data set, its axis values,
one run) and run by `spbench run` in a child process, after its data set was prepared in a process
of its own (stores generated, transforms cached: the peaks are those of a warm cache). The
measured peak is the ranks' per-scheme peaks summed where the stored row carries them (measured
Tucker: every rank of the job runs on this machine, which is what the estimate counts), else the
largest process of the child's tree (ru_maxrss from os.wait4, as ``/usr/bin/time`` reports it).
An estimate is within 25% when it differs from the measured peak by at most a quarter of it.

Which points: per config, ``points`` of them spread over the config's estimates from the smallest
to the largest (the largest always among them); by default :data:`DEFAULT_PLAN`, one entry per
kind of shipped config (SpTrSV measured and simulated, Tucker simulated at small and full size,
Tucker measured under MPI).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spbench.harness.preflight_table import WITHIN

__all__ = ["Selection", "DEFAULT_PLAN", "bench_preflight", "spread", "within", "one_point_raw", "prepare_alone"]


@dataclass(frozen=True)
class Selection:
    """Points of one config to measure: ``points`` of them at ``scale`` (``execution`` overrides the
    config's; ``only``: keep only points whose label contains this text)."""

    config: str
    scale: str = "full"
    execution: str | None = None
    points: int = 2
    only: str = ""


#: every kind of shipped config, small where `--scale small` is quick, plus one full-size simulated
#: nell1 point and the measured MPI config at its own size
DEFAULT_PLAN = (
    Selection("configs/smoke.yaml"),
    Selection("configs/sptrsv_suitesparse.yaml", "small"),
    Selection("configs/sptrsv_metis.yaml", "small", points=1),
    Selection("configs/sptrsv_ichol.yaml", "small", points=1),
    Selection("configs/sptrsv_suitesparse.yaml", "small", "simulate"),
    Selection("configs/smoke_tucker.yaml", points=1),
    Selection("configs/tucker_32.yaml", "small"),
    Selection("configs/tucker_512.yaml", "small"),
    Selection("configs/tucker_big.yaml", "small", points=1),
    Selection("configs/tucker_hyper.yaml", "small"),
    Selection("configs/tucker_nell2_full.yaml", "small", points=1),
    Selection("configs/tucker_512.yaml", points=1, only="nell1 algorithm=lite"),
    Selection("configs/tucker_measured.yaml"),
)


def spread(count: int, total: int) -> list[int]:
    """``count`` indices of 0 .. total-1 evenly spaced from the last one down (the last always in)."""
    if count >= total:
        return list(range(total))
    if count == 1:
        return [total - 1]
    return sorted({round(i * (total - 1) / (count - 1)) for i in range(count)})


def within(estimate: float | None, measured: float | None) -> bool | None:
    """Whether ``estimate`` is within :data:`WITHIN` of ``measured`` (None when either is missing)."""
    if not estimate or not measured:
        return None
    return abs(estimate - measured) <= WITHIN * measured


def one_point_raw(config, point) -> dict:
    """The YAML of a config holding only ``point``: its data set entry, one value per axis, one run,
    no include/exclude."""
    raw = {k: v for k, v in config.raw.items() if k not in ("include", "exclude", "sweep", "datasets", "runs")}
    index = [d.name for d in config.datasets].index(point.dataset.name)
    raw.update(name=f"{config.name}-point", datasets=[config.raw["datasets"][index]],
               sweep={axis: [value] for axis, value in point.values}, runs=1)
    return raw


def _config(path, scale: str, execution: str | None):
    from spbench.pipeline.config import load_config

    return load_config(path).with_overrides(scale=scale, execution=execution)


def _chosen(selection: Selection, say) -> list:
    """(config, point, memory Estimate or None) of the points the selection measures."""
    from spbench.pipeline.runner import estimate_points
    from spbench.pipeline.sweep import expand

    config = _config(selection.config, selection.scale, selection.execution)
    points = [p for p in expand(config) if p.repeat == 0 and selection.only in p.label]
    peaks = {e.point: e for e in estimate_points(config, points) if e.resource == "memory"}
    ranked = sorted(points, key=lambda p: (peaks[p].nbytes if p in peaks else 0))
    say(f"{selection.config} ({config.scale}, {config.execution}): {len(points)} points, measuring "
        f"{min(selection.points, len(points))}")
    return [(config, ranked[i], peaks.get(ranked[i])) for i in spread(selection.points, len(ranked))]


#: the measuring parent: a small interpreter that forks the command and reports its tree's ru_maxrss.
#: A child exec'd straight from this (large) process would inherit its high-water mark: Linux
#: keeps the peak of the address space a process leaves at exec in its ru_maxrss
_LAUNCHER = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[2], sys.argv[2:])\n"
             "_, status, usage = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
             "sys.exit(os.waitstatus_to_exitcode(status))\n")


def _run_child(cmd: list[str], work: Path, timeout: float) -> tuple[int | None, int, float]:
    """(exit status or None on timeout, ru_maxrss of the command's tree in bytes, seconds); the
    child reads no cached distribution counts (``SPBENCH_COUNTS_CACHE=0``): a point is measured
    cold, as the pre-flight estimates it, whatever ran before."""
    peak_file = work / "maxrss_kb"
    start = time.monotonic()
    with open(work / "log.txt", "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(peak_file), *cmd], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, SPBENCH_COUNTS_CACHE="0"))
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
    seconds = time.monotonic() - start
    kb = peak_file.read_text().strip() if peak_file.is_file() else ""
    return code, int(kb) * 1024 if kb.isdigit() else 0, seconds


def prepare_alone(config_path: str, scale: str, execution: str) -> None:
    """Prepare every data set of a config (stores generated, transforms cached) in this process:
    the step before a point is measured, run in a process of its own."""
    from spbench.experiment_registry import get_experiment

    config = _config(config_path, scale, execution)
    for dataset in config.datasets:
        get_experiment(config.experiment).prepare(dataset, config)


def _stored_row(out: Path) -> dict | None:
    rows = sorted((out / "runs").glob("*.json")) if (out / "runs").is_dir() else []
    return json.loads(rows[0].read_text()) if rows else None


def _measured(row: dict | None, tree_bytes: int) -> tuple[int, str]:
    """(measured peak bytes, what it is): the ranks' peaks summed when the row has them."""
    ranks = (row or {}).get("peak_rss_mb")
    if isinstance(ranks, list) and ranks:
        return int(sum(ranks) * 1e6), f"{len(ranks)} ranks' peaks summed (VmHWM of the scheme)"
    return tree_bytes, "largest process (ru_maxrss)"


def measure_point(config, point, estimate, scale: str, work: Path, timeout: float, costs: Path | None = None) -> dict:
    """One point cut out of ``config``, its data set prepared in a process of its own, then run alone
    by `spbench run` in a child (modelled with the calibration ``costs`` when given); its item."""
    import yaml

    work.mkdir(parents=True, exist_ok=True)
    one = work / "point.yaml"
    one.write_text(yaml.safe_dump(one_point_raw(config, point), sort_keys=False))
    prepared = subprocess.run([sys.executable, "-c", "import sys; from spbench.harness.preflight_bench import "
                               "prepare_alone; prepare_alone(*sys.argv[1:])", str(one), scale, config.execution],
                              capture_output=True, text=True, timeout=timeout)
    base = {"dataset": point.dataset.name, "item": f"{config.name} {config.execution} {point.label}",
            "config": config.source, "scale": scale, "execution": config.execution, "point": point.label}
    if prepared.returncode != 0:
        return {**base, "peak_kind": "-", "time": 0.0, "status": "error",
                "error": f"preparing its data set failed: {(prepared.stderr.strip().splitlines() or ['?'])[-1]}"}
    cmd = [sys.executable, "-m", "spbench.cli", "run", str(one), "--out", str(work / "out"), "--quiet",
           "--no-preflight", "--execution", config.execution, *(["--scale", scale] if scale != "full" else []),
           *(["--machine", str(costs)] if costs else [])]
    code, tree, seconds = _run_child(cmd, work, timeout)
    row = _stored_row(work / "out")
    peak, kind = _measured(row, tree)
    item = {**base, "estimate_bytes": estimate.nbytes if estimate else None,
            "estimate_basis": estimate.basis if estimate else "the experiment estimates nothing",
            "peak_bytes": peak, "peak_kind": kind, "largest_process_bytes": tree, "time": seconds,
            "ratio": estimate.nbytes / peak if estimate and peak else None,
            "within": within(estimate.nbytes if estimate else None, peak)}
    if code is None:
        item.update(status="timeout", error=f"no row after {timeout:.0f} s")
    elif row is None or row.get("status") != "ok":
        tail = (work / "log.txt").read_text(errors="replace").strip().splitlines()[-1:] or [f"exit {code}"]
        item.update(status="error", error=(row or {}).get("error") or tail[0])
    return item


def bench_preflight(plan, work_dir: Path, timeout: float, say=lambda text: None) -> list[dict]:
    """Items: every chosen point of ``plan`` (Selections), measured one after the other; the
    one-point configs and their results live under ``work_dir`` (the caller removes it)."""
    chosen = [(sel, *c) for sel in plan for c in _chosen(sel, say)]
    costs: dict = {}
    items = []
    for i, (sel, config, point, estimate) in enumerate(chosen, 1):
        key = (config.experiment, config.execution)
        if key not in costs:
            costs[key] = _calibration_if_missing(config, point, Path(work_dir), say)
        say(f"[{i}/{len(chosen)}] {config.name} {point.label}")
        items.append(measure_point(config, point, estimate, sel.scale, Path(work_dir) / f"p{i}", timeout,
                                   costs[key]))
    return items


def _calibration_if_missing(config, point, work: Path, say) -> Path | None:
    """None when ``config``'s simulated points can run here; else a quick calibration of its
    experiment measured into ``work`` (a simulated point's memory does not depend on the costs)."""
    from spbench.experiment import RunError
    from spbench.experiment_registry import get_experiment

    if config.execution != "simulate":
        return None
    experiment = get_experiment(config.experiment)
    try:
        experiment.check_points(config, [point])
        return None
    except RunError:
        say(f"no {config.experiment} calibration here: measuring a quick one for the simulated points")
    work.mkdir(parents=True, exist_ok=True)
    measured = experiment.measure_calibration(True, (), force=True)
    return experiment.save_calibration(measured, work / f"{config.experiment}.json")

