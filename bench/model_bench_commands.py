"""``spbench bench sptrsv-model|tucker-model``: the cost models against measurement, stored as rows
like any benchmark.

``sptrsv-model`` puts measured and predicted SpTrSV solves side by side on a lap2d-5pt grid;
``tucker-model`` runs the MPI worker on a stand-in tensor beside the modelled times
(:mod:`spbench.tucker.calibration.model_validation`). The Tucker model at the papers' scale is the simulated
sweep's (``spbench run configs/tucker_scaling.yaml``: the same model over each distribution's exact
counts). Each reads a
calibration (``--calibration``, default this machine's, as `spbench calibrate --experiment NAME`
writes it); `spbench calibrate --validate SIZE` calls the experiment's one after calibrating.
"""
from __future__ import annotations

from pathlib import Path

import click

from spbench.bench_commands import (BenchCommand, check_cores, common_options, measure_and_store, parse_ints,
                                    parse_names)
from spbench.cli_errors import UsageFailure

#: the Tucker cost model's options (spbench.tucker.hooi.lanczos.LANCZOS_MODES, spbench.tucker.model.cost_model.TTM_COSTS),
#: spelled here so that building the command line imports no experiment
LANCZOS = ("paper", "converged")
TTM = ("csf", "paper")
SPTRSV_ALGORITHMS = "serial,wavefront,growlocal,elastic_divide,spmp"


def _calibration_option(fn):
    return click.option("--calibration", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="Calibration file (default this machine's, from spbench calibrate).")(fn)


def _read_calibration(name: str, experiment: str, path):
    """The calibration as the experiment's cost model reads it, and its path; one line when it cannot be."""
    from spbench.experiment_registry import get_experiment

    chosen = get_experiment(experiment)
    path = path or chosen.calibration_path()
    try:
        return chosen.read_calibration(path), str(path)
    except (OSError, ValueError) as exc:
        raise UsageFailure(f"spbench bench {name}: --calibration: {exc}") from None


@click.command("sptrsv-model", cls=BenchCommand)
@click.option("--grid", type=click.IntRange(min=2), default=300, show_default=True, help="lap2d-5pt grid side.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Validate on this SpTrSV config's data sets and schedulers instead of the grid.")
@click.option("--scale", type=click.Choice(("full", "small")), default="full", show_default=True,
              help="With --config: small = its stand-ins at about 1/8 of the rows.")
@click.option("--cores", default=None, help="Comma-separated core counts (default: the calibrated ones).")
@click.option("--algorithms", default=None, help=f"Comma-separated [default: {SPTRSV_ALGORITHMS}, or the config's].")
@click.option("--repeats", type=click.IntRange(min=1), default=50, show_default=True,
              help="Timed solves per measured point.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Interleaved rounds per measured point.")
@_calibration_option
@common_options
def sptrsv_model(grid, config_path, scale, cores, algorithms, repeats, rounds, calibration, out_dir, fresh, quiet):
    """Measured against predicted SpTrSV solves on lap2d-5pt or a config's data sets (the calibration's
    validation)."""
    from spbench.sptrsv.schedulers import REGISTRY, SERIAL

    name = "sptrsv-model"
    unscaled = _sptrsv_config(name, config_path, "full") if config_path else None
    config = unscaled.with_overrides(scale=scale) if config_path else None
    if algorithms is None:
        algorithms = ",".join(dict(config.sweep).get("algorithm", ())) if config else SPTRSV_ALGORITHMS
    chosen = parse_names(name, "--algorithms", algorithms, (SERIAL.name, *REGISTRY))
    costs, path = _read_calibration(name, "sptrsv", calibration)
    counts = parse_ints(name, "--cores", cores) if cores else sorted(int(c) for c in costs["cores"])
    uncalibrated = [c for c in counts if str(c) not in costs["cores"]]
    if uncalibrated:
        raise UsageFailure(f"spbench bench {name}: --cores: {path} calibrates {', '.join(costs['cores'])} cores, "
                           f"not {', '.join(map(str, uncalibrated))}")
    for c in counts:
        check_cores(name, c)

    def matrices(say):
        """(name, lower triangle, per-algorithm parameters) of every matrix validated."""
        from spbench.sptrsv.execute import prepare_lower
        if config is None:
            from spbench.datasets.synthetic import generate
            yield f"lap2d-5pt[grid={grid}]", prepare_lower(generate("lap2d-5pt", {"grid": grid})), {}
            return
        from spbench.experiment_registry import get_experiment
        from spbench.sweep import expand
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

    def measure(say):
        from spbench.sptrsv.model import validate_model

        say(f"{config.source if config else f'lap2d-5pt grid {grid}'}: {', '.join(chosen)} at {counts} cores, "
            f"{rounds} rounds of {repeats} solves")
        rows = []
        for label, lower, params in matrices(say):
            df = validate_model(lower, chosen, counts, costs, repeats=repeats, rounds=rounds, params=params)
            rows += [{"item": f"{label + ' ' if config else ''}{r['algorithm']} {r['cores']} cores", "dataset": label,
                      "algorithm": r["algorithm"], "cores": int(r["cores"]), "kernel": r["kernel"],
                      "supersteps": int(r["supersteps"]), "time": float(r["measured"]),
                      "predicted_time": float(r["predicted"]), "rel_error": float(r["rel_error"])}
                     for r in df.to_dict("records")]
        return rows

    options = {"grid": None if config else grid, "config": config.source if config else None,
               "scale": scale if config else None, "cores": counts, "algorithms": chosen, "repeats": repeats,
               "rounds": rounds, "calibration": path}
    measure_and_store(name, options, "sptrsv", measure, out_dir, fresh, quiet)


def _sptrsv_config(name: str, path: Path, scale: str):
    """The SpTrSV config at ``path`` at ``scale``, stand-ins for matrices not cached; one line when it is not one."""
    from spbench.config import ConfigError, load_config

    try:
        config = load_config(path).with_overrides(scale=scale, fallback="standin")
    except ConfigError as exc:
        raise UsageFailure(f"spbench bench {name}: --config: {exc}") from None
    if config.experiment != "sptrsv":
        raise UsageFailure(f"spbench bench {name}: --config: {path} is a {config.experiment} config, expected an "
                           "SpTrSV one")
    return config


@click.command("tucker-model", cls=BenchCommand)
@click.option("--tensor", default="nell2", show_default=True, help="The paper tensor whose stand-in runs.")
@click.option("--nnz", type=click.IntRange(min=1), default=200_000, show_default=True)
@click.option("--ranks", default="1,2", show_default=True, help="Comma-separated rank counts.")
@click.option("--schemes", default="coarse,medium,lite", show_default=True)
@click.option("-K", "--K", "K", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--lanczos", type=click.Choice(LANCZOS), default="paper", show_default=True)
@click.option("--ttm", type=click.Choice(TTM), default="csf", show_default=True)
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the validation table here as CSV.")
@_calibration_option
@common_options
def tucker_model(tensor, nnz, ranks, schemes, K, lanczos, ttm, repeats, csv_path, calibration, out_dir, fresh,
                 quiet):
    """Measured (the MPI worker) against modelled Tucker times on a stand-in tensor."""
    from spbench.datasets.tensor_registry import TENSORS
    from spbench.tucker.schemes import SCHEMES

    name = "tucker-model"
    if tensor not in TENSORS:
        raise UsageFailure(f"spbench bench {name}: --tensor: expected one of {', '.join(TENSORS)}, got {tensor!r}")
    counts = parse_ints(name, "--ranks", ranks)
    chosen = parse_names(name, "--schemes", schemes, SCHEMES)
    costs, path = _read_calibration(name, "tucker", calibration)

    def measure(say):
        from spbench.datasets.tensor_registry import standin, standin_label
        from spbench.tucker.calibration.model_validation import TIME_KEYS, validate

        label = standin_label(tensor, nnz=nnz)
        say(f"{label}: {', '.join(chosen)} at {counts} ranks, {repeats} repeats each")
        df = validate({label: standin(tensor, nnz=nnz)}, chosen, counts, costs, K=K, lanczos=lanczos, ttm=ttm,
                      repeats=repeats)
        if csv_path is not None:
            df.to_csv(csv_path, index=False)
        return [{"item": f"{r['scheme']} P={r['ranks']}", "dataset": label, "scheme": r["scheme"],
                 "ranks": int(r["ranks"]), "K": int(r["K"]), "lanczos": r["lanczos"], "ttm": r["ttm"],
                 "queries": [int(q) for q in r["queries"]], "time": float(r["measured_hooi_time"]),
                 **{f"{w}_{k}": float(r[f"{w}_{k}"]) for k in TIME_KEYS
                    for w in ("measured", "predicted", "rel_error")}}
                for r in df.to_dict("records")]

    options = {"tensor": tensor, "nnz": nnz, "ranks": counts, "schemes": chosen, "K": K, "lanczos": lanczos,
               "ttm": ttm, "repeats": repeats, "calibration": path}
    measure_and_store(name, options, "tucker", measure, out_dir, fresh, quiet)


#: the commands `spbench bench` adds to its own
MODEL_COMMANDS = (sptrsv_model, tucker_model)
