"""`spbench bench sptrsv-model`: measured and predicted SpTrSV solves side by side, on a lap2d-5pt
grid or on an SpTrSV config's measured data sets (the calibration's validation; `spbench calibrate
--validate SIZE` runs it after calibrating). The model reads a calibration (``--calibration``,
default this machine's, as `spbench calibrate --experiment sptrsv` writes it).
"""
from __future__ import annotations

from pathlib import Path

from spbench.harness.calibration_option import read_calibration
from spbench.harness.options import BadOption, parse_ints, parse_names, within_machine
from spbench.sptrsv.benchmarks.declarations import MODEL_ALGORITHMS

__all__ = ["check", "measure"]


def _config(path, scale: str):
    """The SpTrSV config at ``path`` at ``scale``, stand-ins for matrices not cached; BadOption when it
    is not one."""
    from spbench.pipeline.config import ConfigError, load_config

    try:
        config = load_config(path).with_overrides(scale=scale, fallback="standin")
    except ConfigError as exc:
        raise BadOption(f"--config: {exc}") from None
    if config.experiment != "sptrsv":
        raise BadOption(f"--config: {path} is a {config.experiment} config, expected an SpTrSV one")
    return config


def check(o: dict) -> dict:
    """The options the rows store: the config's source (or the grid), the schedulers (the config's
    when --algorithms is not given), the core counts (the calibrated ones when --cores is not given;
    each calibrated and on this machine) and the calibration's path."""
    from spbench.sptrsv.schedulers import REGISTRY, SERIAL

    config = _config(o["config"], o["scale"]) if o["config"] else None
    algorithms = o["algorithms"]
    if algorithms is None:
        algorithms = ",".join(dict(config.sweep).get("algorithm", ())) if config else MODEL_ALGORITHMS
    chosen = parse_names("--algorithms", algorithms, (SERIAL.name, *REGISTRY))
    costs, path = read_calibration("sptrsv", o["calibration"])
    counts = parse_ints("--cores", o["cores"]) if o["cores"] else sorted(int(c) for c in costs["cores"])
    uncalibrated = [c for c in counts if str(c) not in costs["cores"]]
    if uncalibrated:
        raise BadOption(f"--cores: {path} calibrates {', '.join(costs['cores'])} cores, "
                        f"not {', '.join(map(str, uncalibrated))}")
    for c in counts:
        within_machine(c)
    return {"grid": None if config else o["grid"], "config": config.source if config else None,
            "scale": o["scale"] if config else None, "cores": counts, "algorithms": chosen, "repeats": o["repeats"],
            "rounds": o["rounds"], "calibration": path}


def _matrices(o: dict, say):
    """(name, lower triangle, per-algorithm parameters) of every matrix validated."""
    from spbench.sptrsv.execute import prepare_lower

    if o["config"] is None:
        from spbench.datasets.synthetic import generate

        yield f"lap2d-5pt[grid={o['grid']}]", prepare_lower(generate("lap2d-5pt", {"grid": o["grid"]})), {}
        return
    from spbench.experiment_registry import get_experiment
    from spbench.pipeline.sweep import expand

    unscaled = _config(Path(o["config"]), "full")
    config = unscaled.with_overrides(scale=o["scale"])
    experiment = get_experiment("sptrsv")
    # the data sets the config as written measures (not its schedule-only ones), at --scale
    measured = {p.dataset.name for p in expand(unscaled.with_overrides(execution="measured"))}
    datasets = [d for d, full in zip(config.datasets, unscaled.datasets) if full.name in measured]
    for i, dataset in enumerate(datasets, 1):
        prepared = experiment.prepare(dataset, config)
        if prepared.failure is not None:
            say(f"[{i}/{len(datasets)}] {dataset.name}: skipped ({prepared.failure})")
            continue
        say(f"[{i}/{len(datasets)}] {dataset.name}")
        yield dataset.name, prepared.lower, config.params


def measure(o: dict, run) -> list[dict]:
    """One item per matrix, scheduler and core count: the measured solve beside the predicted one."""
    from spbench.sptrsv.model import validate_model

    costs, _ = read_calibration("sptrsv", o["calibration"])
    what = o["config"] or f"lap2d-5pt grid {o['grid']}"
    run.say(f"{what}: {', '.join(o['algorithms'])} at {o['cores']} cores, {o['rounds']} rounds of "
            f"{o['repeats']} solves")
    rows = []
    for label, lower, params in _matrices(o, run.say):
        df = validate_model(lower, o["algorithms"], o["cores"], costs, repeats=o["repeats"], rounds=o["rounds"],
                            params=params)
        rows += [{"item": f"{label + ' ' if o['config'] else ''}{r['algorithm']} {r['cores']} cores",
                  "dataset": label, "algorithm": r["algorithm"], "cores": int(r["cores"]), "kernel": r["kernel"],
                  "supersteps": int(r["supersteps"]), "time": float(r["measured"]),
                  "predicted_time": float(r["predicted"]), "rel_error": float(r["rel_error"])}
                 for r in df.to_dict("records")]
    return rows
