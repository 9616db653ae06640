"""The `spbench` command: run sweeps, profile results, manage data sets, report the machine."""
from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import click

from . import __version__
from .cli_errors import OneLineCommand, UsageFailure
from .experiment_registry import EXPERIMENTS


def _datasets_group() -> click.Group:
    from .dataset_commands import datasets
    from .standin_commands import standin_search

    datasets.add_command(standin_search)
    return datasets


def _bench_group() -> click.Group:
    """`spbench bench`: its commands are built from the benchmarks' declarations when asked for."""
    from .bench_commands import bench

    return bench


class TopGroup(click.Group):
    """The `spbench` group: the command groups kept in their own modules are imported when called
    (``LAZY``: name -> loader and the short help `spbench --help` shows), so `--help` loads neither
    them nor what they import (scipy, pandas, an experiment)."""

    LAZY = {"bench": (_bench_group, "Benchmarks measured side by side; rows land in results/bench-NAME/ "
                                    "(spbench profile/compare read them)."),
            "datasets": (_datasets_group, "The papers' data sets: SuiteSparse matrices, generators, FROSTT "
                                          "tensors and their stand-ins.")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def invoke(self, ctx):
        """A write that fails where a command does not say more (a full disk, a read-only folder)
        is one line naming the path and the cause, exit code 1; a plugin that cannot be loaded
        (``$SPBENCH_PLUGINS``) one line naming it, exit code 2."""
        from .atomic_files import WriteFailed
        from .plugins import PluginError

        try:
            return super().invoke(ctx)
        except WriteFailed as exc:
            raise click.ClickException(str(exc)) from None
        except PluginError as exc:
            raise UsageFailure(str(exc)) from None

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            self.add_command(self.LAZY[name][0](), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        limit = formatter.width - 6 - max(map(len, self.list_commands(ctx)))
        rows = [(name, self.commands[name].get_short_help_str(limit) if name in self.commands
                 else click.Command(name, short_help=self.LAZY[name][1]).get_short_help_str(limit))
                for name in self.list_commands(ctx) if name in self.LAZY or not self.commands[name].hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=TopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="spbench")
def main():
    """Benchmarks for sparse HPC kernels: distributed sparse Tucker and parallel SpTrSV."""


@main.command()
@click.argument("config_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Results folder (default results/<name>/).")
@click.option("--execution", type=click.Choice(["measured", "mpi", "simulate", "schedule"]), default=None,
              help="Override the config's execution.")
@click.option("--repeats", type=int, default=None, help="Timed runs per point (override).")
@click.option("--runs", type=int, default=None, help="Independent repetitions of each point (override).")
@click.option("--barrier", type=click.Choice(["auto", "spin", "omp"]), default=None,
              help="BSP barrier for SpTrSV (override).")
@click.option("--fallback", type=click.Choice(["error", "standin"]), default=None,
              help="What to do when a real data set is not cached and cannot be fetched (override).")
@click.option("--launcher", default=None, help="Tucker MPI launcher template, e.g. 'srun -n {ranks}' (override).")
@click.option("--oversubscribe", is_flag=True, default=None, help="Tucker MPI: allow more ranks than cores.")
@click.option("--timeout", type=float, default=None, help="Tucker MPI: seconds per (tensor, ranks) job; SpTrSV "
              "`--execution schedule`: seconds an HDagg schedule may take, past them a timeout row (override).")
@click.option("--duplicates", type=click.Choice(["sum", "error"]), default=None,
              help="Tucker: a .tns file's repeated coordinates: add their values (default, with a warning) or "
                   "refuse the file (override).")
@click.option("--scale", type=click.Choice(["full", "small", "paper"]), default=None,
              help="small: a quick pass (stand-ins ~1/8 the rows or 1/100 the nonzeros, at most 10 repeats, "
                   "1 run; results in results/<name>_small/). paper (SpTrSV): the paper matrices' stand-ins at "
                   "their own rows and nonzeros (results/<name>_paper/).")
@click.option("--machine", "machine_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="simulate: model with this machine profile, a file `spbench calibrate` wrote (maybe on another "
                   "machine; overrides the config's costs).")
@click.option("--resume/--fresh", default=True, help="Skip stored runs (default), or run every point again: a "
              "stored row stays until its point's new row replaces it; rows of other settings move to runs/superseded/.")
@click.option("--dry-run", is_flag=True, help="Print the points (marking those already stored) with each one's "
              "estimated peak memory and the disk its stores still take, and exit.")
@click.option("--no-preflight", is_flag=True, help="Run even when a point's estimated peak memory exceeds the "
              "free memory or the stores to generate exceed the free disk (also SPBENCH_NO_PREFLIGHT=1).")
@click.option("--wait", is_flag=True, help="When another sweep is writing into the results folder, wait for it.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr (the summary and errors still show).")
@click.option("--shard", default=None, metavar="I/N",
              help="Run only shard I of N (from 0) of the sweep's points, beside the other shards in one folder.")
@click.option("--slurm-array", "slurm_array", type=int, default=None, metavar="N",
              help="Print the sbatch command running this sweep as a job array of N shards, and exit.")
@click.option("--submit", is_flag=True, help="With --slurm-array: submit the array job instead of printing it.")
@click.option("--batch-job", is_flag=True, help="Print, as shell assignments, what a batch job of this config needs "
              "(NAME: the results folder's name; FLAGS: the experiment's run flags; its environment), and exit.")
def run(config_file, out_dir, execution, repeats, runs, barrier, fallback, launcher, oversubscribe, timeout,
        duplicates, scale, machine_file, resume, dry_run, no_preflight, wait, quiet, shard, slurm_array, submit, batch_job):
    """Run the sweep in CONFIG_FILE; rows land in results/<name>/runs/ one file per run.

    Exit code: 0 when every point is ok (or stored before), 1 when any ended error, timeout or
    invalid, or when a write fails mid-sweep (a full disk: the rows stored are kept), 2 for a bad
    config or data set, a point that would not fit in memory (or stores on disk), a busy results
    folder or one nothing can be written into (nothing written)."""
    from .atomic_files import WriteFailed
    from .config import ConfigError, load_config
    from .preflight import skipped
    from .results import ResultsBusy
    from .runner import RunError, SweepStopped, run_sweep, stored_points
    from .shard import parse_shard
    from .sweep import expand

    try:
        config = load_config(config_file).with_overrides(execution=execution, repeats=repeats, runs=runs,
                                                          barrier=barrier, fallback=fallback, launcher=launcher,
                                                          oversubscribe=oversubscribe, timeout=timeout,
                                                          duplicates=duplicates, scale=scale,
                                                          costs=None if machine_file is None else str(machine_file))
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    for warning in config.warnings:
        click.echo(f"spbench: warning: {warning}", err=True)
    if batch_job:
        click.echo("\n".join(batch_job_lines(config)))
        return
    points = expand(config)
    if slurm_array is not None:
        _slurm_array(config, config_file, points, slurm_array, submit)
        return
    try:
        part = parse_shard(shard) if shard is not None else None
    except ValueError as exc:
        raise UsageFailure(f"--shard: {exc}") from None
    if part is not None:
        points = part.select(points)
    out = out_dir or Path("results") / config.name
    if dry_run:
        _dry_run(config, points, out, resume)
        return
    terminated = []

    def on_sigterm(signum, frame):  # a job's time limit: stop like Ctrl-C (the MPI job goes too)
        terminated.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        summary = run_sweep(config, out, fresh=not resume, quiet=quiet, wait=wait, shard=part,
                            check_resources=not skipped(no_preflight))
    except (RunError, ResultsBusy, WriteFailed) as exc:
        raise UsageFailure(str(exc)) from None
    except SweepStopped as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo(f"\nspbench: {'terminated' if terminated else 'interrupted'}; stored runs are kept in {out}, "
                   + ("rerun the same command to resume" if resume else
                      "those not run again yet as they were; rerun without --fresh to resume"), err=True)
        sys.exit(128 + signal.SIGTERM if terminated else 130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    for line in summary_lines(summary, out):
        click.echo(line, err=True)
    if summary.failed:
        sys.exit(1)


def _dry_run(config, points, out, resume) -> None:
    """`--dry-run`: the points (marking those stored) with each one's estimated peak memory, the
    disk the stores still to generate take, and what this machine has free."""
    from .experiment_registry import get_experiment
    from .preflight import available_memory, data_disk, size_text
    from .runner import RunError, estimate_points, stored_points

    try:
        estimates = estimate_points(config, points)
        stored = stored_points(config, points, out) if resume else set()
    except RunError as exc:
        raise UsageFailure(str(exc)) from None
    available, where = available_memory()
    peaks = {e.point: e for e in estimates if e.resource == "memory"}
    for i, p in enumerate(points, 1):
        peak = peaks.get(p)
        over = available is not None and peak is not None and peak.nbytes > available
        click.echo(f"{i:4d}  {p.label}" + ("  (stored)" if p in stored else "")
                   + (f"  peak ~{size_text(peak.nbytes)} ({peak.basis})" if peak else "")
                   + ("  OVER the free memory" if over else ""))
    for disk in (e for e in estimates if e.resource == "disk"):
        click.echo(f"      disk: {disk.name}: {size_text(disk.nbytes)} ({disk.basis})")
    if estimates:
        folder, free = data_disk()
        click.echo(f"      memory available {size_text(available) if available is not None else '?'} ({where}); "
                   f"disk free {size_text(free)} at {folder}")
    click.echo(f"{len(points)} points ({len(stored)} already stored in {out}), "
               f"{get_experiment(config.experiment).work_per_point(config)}, execution {config.execution}"
               + (f", scale {config.scale}" if config.scale != "full" else ""))


def _slurm_array(config, config_file, points, count, submit):
    """`--slurm-array N`: the array job's sbatch command (printed, or submitted with --submit); the
    run flags given on this command line travel with it."""
    from .slurm_array import array_command, render, submit as submit_job

    ctx = click.get_current_context()
    flags = []
    for name in ("out_dir", "execution", "repeats", "runs", "barrier", "fallback", "launcher", "timeout", "duplicates",
                 "scale"):
        value = ctx.params.get(name)
        if value is not None and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
            flags += [f"--{'out' if name == 'out_dir' else name}", str(value)]
    try:
        command = array_command(config, config_file, points, count, flags)
        click.echo(submit_job(command) if submit else render(command))
    except ValueError as exc:
        raise UsageFailure(str(exc)) from None


def batch_job_lines(config) -> list[str]:
    """Shell lines configs/slurm/spbench.sbatch evaluates: NAME (the results folder's name, a scale's
    suffix included), FLAGS (the experiment's `spbench run` flags, before the job's own) and the
    experiment's environment for the job (:meth:`spbench.experiment.Experiment.batch_job`)."""
    import os
    import shlex

    from .experiment_registry import get_experiment

    flags, env = get_experiment(config.experiment).batch_job(os.environ)
    return [f"NAME={shlex.quote(config.name)}", f"FLAGS=({' '.join(map(shlex.quote, flags))})",
            *(f"export {key}={shlex.quote(str(value))}" for key, value in env.items())]


#: distinct error messages the closing lines of `spbench run` show
SHOWN_ERRORS = 3


def summary_lines(summary, out) -> list[str]:
    """The closing lines of a sweep: statuses, then the first few distinct error messages."""
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())) or "none"
    lines = [f"spbench: {summary.total} points: {summary.skipped} already stored, {summary.ran} run "
             f"({statuses}); results in {out}"]
    if summary.failed:
        lines.append(f"spbench: {summary.failed} run{'s' if summary.failed != 1 else ''} failed; "
                     f"first distinct errors:")
        for message, count in list(summary.errors.items())[:SHOWN_ERRORS]:
            lines.append(f"  [{count}x] {message}")
        if len(summary.errors) > SHOWN_ERRORS:
            lines.append(f"  ... {len(summary.errors) - SHOWN_ERRORS} more distinct errors in the rows' 'error' field")
    return lines


@main.command()
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "plots_dir", type=click.Path(path_type=Path), default=Path("plots"),
              help="Where the tables and figures go (one folder per sweep).")
@click.option("--force", is_flag=True, help="Redo every folder's report, also those whose rows and code did not "
              "change since it was written.")
def profile(results_dir, plots_dir, force):
    """Tables and figures from RESULTS_DIR (one sweep folder, or a folder of them); a folder whose
    rows, meta.json and profile code did not change since its report is skipped (--force redoes it).

    Exit code: 0; 1 when fragments holding no row, or rows not as their kind declares, were left out
    (listed on stderr), a folder's rows could not be profiled (one line, the other folders are) or a
    write failed part way (that folder's old report and the reports written before it are kept); 2
    for a folder without results, a row of another schema version, or an --out nothing can be
    written into (nothing written). Each report is swapped in whole (spbench.report.profile_folders)."""
    from spbench.report.profile_folders import profile_folders

    profile_folders(results_dir, plots_dir, force)


def _fraction(option: str, text: str) -> float:
    """A fraction given as 5% or 0.05 (UsageFailure naming the option otherwise)."""
    value = text.strip()
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise UsageFailure(f"{option}: expected a fraction such as 5% or 0.05, got {text!r}") from None


@main.command()
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--metric", default=None, help="Row column to compare (default: the experiment's, solve_time "
              "for SpTrSV, hooi_time for Tucker, else dist_time).")
@click.option("--threshold", default="5%", show_default=True,
              help="Smallest ratio change flagged, as 5% or 0.05: a point is flagged when its change is shown "
                   "to lie beyond 1 + threshold (or below 1 / (1 + threshold)).")
@click.option("--fdr", default="5%", show_default=True,
              help="False discovery rate of the Benjamini-Hochberg adjustment over all compared points.")
@click.option("--fail", is_flag=True, help="Exit 1 when any point is flagged as a regression.")
@click.option("--cross-machine", is_flag=True, help="Compare folders measured on different machines.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Write compare.md, compare.csv and the figure compare.png/.pdf here (nothing is written "
                   "without it).")
def compare(base, new, metric, threshold, fdr, fail, cross_machine, out_dir):
    """Ratio NEW/BASE per matched point with a t-interval over the runs, Benjamini-Hochberg adjusted
    p-values and the geometric mean; flags regressions and improvements, says which points are
    inconclusive (one run on a side). Exit 0, 1 with --fail on a regression, 2 for bad input or no
    matched point (one line, nothing written)."""
    from .atomic_files import WriteFailed, probe_folder
    from .compare import CompareError, compare as run_compare, report_lines, write_outputs

    try:
        result = run_compare(base, new, metric=metric, threshold=_fraction("--threshold", threshold),
                             fdr=_fraction("--fdr", fdr), cross_machine=cross_machine)
        if out_dir is not None:
            probe_folder(out_dir)
    except CompareError as exc:
        raise UsageFailure(str(exc)) from None
    except WriteFailed as exc:
        raise UsageFailure(f"--out: {exc}") from None
    click.echo("\n".join(report_lines(result)))
    if out_dir is not None:
        written = write_outputs(result, out_dir)
        click.echo(f"spbench: {len(written)} files in {out_dir}", err=True)
    if fail and result.regressions:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(as_json):
    """Machine, build and MPI facts (what every results folder's meta.json records)."""
    from .machine import machine_facts

    facts = machine_facts()
    if as_json:
        click.echo(json.dumps(facts, indent=1, sort_keys=True))
        return
    omp, mpi, git = facts["openmp"], facts["mpi"], facts["git"]
    lines = [
        f"spbench      {facts['spbench']}",
        f"host         {facts['host']}",
        f"cpu          {facts['cpu']} ({facts['arch']})",
        f"cores        {facts['cores']} usable, {facts['logical_cpus']} logical",
        f"memory       {facts['memory_gib']} GiB",
        f"openmp       {'enabled' if omp.get('enabled') else 'disabled'}, {omp.get('threads')} threads"
        + (f" ({omp['error']})" if omp.get("error") else ""),
        f"mpi          {mpi.get('library') or 'unavailable: ' + str(mpi.get('error'))}"
        + (f" (MPI {mpi['standard']})" if mpi.get("standard") else ""),
        f"git          {git.get('sha') or 'not a git checkout'}" + (" (dirty)" if git.get("dirty") else ""),
    ]
    lines += [f"{name:<12} {ver or 'not installed'}" for name, ver in facts["versions"].items()]
    click.echo("\n".join(lines))


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


@main.command(cls=OneLineCommand)
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
    from .atomic_files import WriteFailed, probe_folder
    from .experiment_registry import get_experiment

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
        from .machine_load import MachineBusy, check_now, require_quiet

        what = f"spbench calibrate --experiment {experiment}"
        try:
            cores_list = tuple(int(c) for c in cores.split(",")) if cores else ()
        except ValueError:
            raise UsageFailure(f"--cores: expected core counts separated by commas, got {cores!r}") from None
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
        ctx.invoke(_bench_group().get_command(ctx, name), calibration=Path(path), out_dir=results_dir, quiet=quiet,
                   **{size_option: validate})


if __name__ == "__main__":
    main()
