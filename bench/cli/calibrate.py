"""`spbench calibrate`: an experiment's cost-model terms measured on this machine (or read), then
optionally validated against measurement and put beside an earlier calibration."""
from __future__ import annotations

from pathlib import Path

import click

from spbench.cli.errors import OneLineCommand, UsageFailure
from spbench.experiment_registry import EXPERIMENTS


def _print_agreement(chosen, other_path: Path, measured: dict, path: Path, quiet: bool) -> None:
    """`spbench calibrate --agree OTHER.json`: OTHER (a) beside this calibration (b), point by point."""
    try:
        other = chosen.read_calibration(other_path)
    except (OSError, ValueError) as exc:
        raise UsageFailure(f"spbench calibrate: --agree: {exc}") from None
    say = None if quiet else (lambda what: click.echo(f"  model at {what}", err=True))
    rows = chosen.calibration_agreement(other, measured, on_point=say)
    if not rows:
        click.echo("--agree: the two calibrations have no figure in common")
        return
    keys = [k for k in rows[0] if k not in ("a", "b", "rel_diff")]
    click.echo(f"\n{other_path} (a) beside {path} (b):")
    click.echo(" | ".join(keys + ["a", "b", "(b - a) / a"]))
    for r in rows:
        click.echo(" | ".join([str(r[k]) for k in keys] + [f"{r['a']:.4g}", f"{r['b']:.4g}", f"{r['rel_diff']:+.1%}"]))
    totals = [r for r in rows if r.get("quantity") == "hooi_time"]
    for label, pick in (("largest difference", rows), ("largest difference of a modelled HOOI time", totals)):
        if pick:
            worst = max(pick, key=lambda r: abs(r["rel_diff"]))
            click.echo(f"{label} {worst['rel_diff']:+.1%}: " + ", ".join(f"{k} {worst[k]}" for k in keys))


@click.command(cls=OneLineCommand)
@click.option("--experiment", type=click.Choice(EXPERIMENTS), default=EXPERIMENTS[0], show_default=True,
              help="The experiment whose cost model to calibrate.")
@click.option("--cores", default=None,
              help="SpTrSV: core counts to calibrate, comma separated (default 1, 2, 4, ... up to this machine's cores).")
@click.option("--force", is_flag=True, help="Keep a calibration measured on a busy machine, or with a term that "
              "cannot be right (refused otherwise; the file notes why).")
@click.option("--quick", is_flag=True, help="Small inputs and few repeats (seconds).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Calibration file (default $SPBENCH_DATA/calibration/<experiment>-<host>.json).")
@click.option("--costs", "costs_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Use this calibration instead of measuring one (with --validate: validate it).")
@click.option("--validate", type=click.IntRange(min=1), default=None, metavar="SIZE",
              help="Then put the model beside measurement (spbench bench sptrsv-model --grid SIZE, or "
                   "tucker-model --nnz SIZE; their other options there) and store the rows.")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --validate: results folder (default results/bench-<validation>/).")
@click.option("--quiet", "-q", is_flag=True, help="With --validate: no progress on stderr.")
@click.option("--agree", "agree_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="OTHER.json",
              help="Then put this calibration beside OTHER.json (an earlier one): the figures each predicts "
                   "and how far apart they are.")
@click.pass_context
def calibrate(ctx, experiment, cores, force, quick, out_path, costs_path, validate, results_dir, quiet, agree_path):
    """Measure this machine's costs for the cost model `execution: simulate` uses: SpTrSV (per row /
    nonzero, barrier, weak barrier, P2P wait) or Tucker (TTM, oracle, Lanczos, MPI latency and
    per-word cost from a 2-rank micro-benchmark); --validate SIZE then stores the model's
    validation rows (`spbench profile` reads them)."""
    from spbench.store.atomic_files import WriteFailed, probe_folder
    from spbench.experiment_registry import get_experiment

    chosen = get_experiment(experiment)
    if costs_path is not None and out_path is not None:
        raise UsageFailure("spbench calibrate: --costs reads a calibration and --out writes one; give one of them")
    if validate is None and results_dir is not None:
        raise UsageFailure("spbench calibrate: --results: only with --validate (where its rows go)")
    # what would fail after minutes of measuring fails now: the folders written into, the file compared with
    outputs = []
    if costs_path is None:
        outputs.append(("--out" if out_path else "the calibration's folder",
                        (out_path or chosen.calibration_path()).parent))
    if validate is not None:
        outputs.append(("--results" if results_dir else "--validate",
                        results_dir or Path("results") / f"bench-{chosen.validation[0]}"))
    for option, folder in outputs:
        try:
            probe_folder(folder)
        except WriteFailed as exc:
            raise UsageFailure(f"spbench calibrate: {option}: {exc}") from None
    if agree_path is not None:
        try:
            chosen.read_calibration(agree_path)
        except (OSError, ValueError) as exc:
            raise UsageFailure(f"spbench calibrate: --agree: {exc}") from None
    if costs_path is not None:
        try:
            measured, path = chosen.read_calibration(costs_path), costs_path
        except (OSError, ValueError) as exc:
            raise UsageFailure(f"spbench calibrate: --costs: {exc}") from None
    else:
        from spbench.machine.load import MachineBusy, check_now, require_quiet

        what = f"spbench calibrate --experiment {experiment}"
        cores_list = _core_counts(cores)
        try:
            if not force:  # before minutes of measuring: is someone else using the cores right now?
                require_quiet(check_now(), what)
            measured = chosen.measure_calibration(quick, cores_list, force)
            if not force:
                require_quiet(measured.get("load", {}), what)
        except MachineBusy as exc:
            raise UsageFailure(str(exc)) from None
        except ValueError as exc:
            raise UsageFailure(f"{what}: {exc}") from None
        path = chosen.save_calibration(measured, out_path or chosen.calibration_path())
    for name, value in chosen.calibration_summary(measured):
        click.echo(f"{name:<10} {value}")
    click.echo(f"calibration {'read from' if costs_path else 'written to'} {path}")
    if agree_path is not None:
        _print_agreement(chosen, agree_path, measured, path, quiet)
    if validate is not None:
        name, size_option = chosen.validation
        ctx.invoke(_bench_command(ctx, name), calibration=Path(path), out_dir=results_dir, quiet=quiet,
                   **{size_option: validate})


def _core_counts(cores: str | None) -> tuple:
    """--cores as the core counts it lists (empty: the calibration's default); a UsageFailure naming
    --cores, before any measuring, for a count that is no integer, below 1 or given twice."""
    if not cores:
        return ()
    try:
        counts = tuple(int(c) for c in cores.split(","))
    except ValueError:
        raise UsageFailure(f"--cores: expected core counts separated by commas, got {cores!r}") from None
    low = [c for c in counts if c < 1]
    if low:
        raise UsageFailure(f"--cores: expected core counts >= 1, got {low[0]} in {cores!r}")
    twice = sorted({c for c in counts if counts.count(c) > 1})
    if twice:
        raise UsageFailure(f"--cores: core count {twice[0]} given twice in {cores!r}; expected each core count once")
    return counts


def _bench_command(ctx, name: str):
    """The `spbench bench NAME` command --validate runs (built from its declaration when asked for)."""
    from spbench.cli.bench import bench

    return bench.get_command(ctx, name)
