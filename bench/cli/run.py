"""`spbench run CONFIG`: a sweep's points run and stored, resumably; `--dry-run`, Slurm arrays and
batch-job lines (docs/design.md, "Data flow"). The flags of one experiment's keys are declared by the
experiments and added from the registry (:mod:`spbench.cli.run_flags`)."""
from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from spbench.cli.errors import UsageFailure
from spbench.cli.run_flags import ExperimentFlag, RunCommand


@click.command(cls=RunCommand, flags_after="fallback")  # then the experiments' flags (run_flags.py)
@click.argument("config_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Results folder (default results/<name>/).")
@click.option("--execution", type=click.Choice(["measured", "mpi", "simulate", "schedule"]), default=None,
              help="Override the config's execution.")
@click.option("--repeats", type=int, default=None, help="Timed runs per point (override).")
@click.option("--runs", type=int, default=None, help="Independent repetitions of each point (override).")
@click.option("--fallback", type=click.Choice(["error", "standin"]), default=None,
              help="What to do when a real data set is not cached and cannot be fetched (override).")
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
def run(config_file, out_dir, execution, repeats, runs, fallback, scale, machine_file, resume, dry_run, no_preflight,
        wait, quiet, shard, slurm_array, submit, batch_job, **experiment_flags):
    """Run the sweep in CONFIG_FILE; rows land in results/<name>/runs/ one file per run.

    Exit code: 0 when every point is ok (or stored before), 1 when any ended error, timeout or
    invalid, or when a write fails mid-sweep (a full disk: the rows stored are kept), 2 for a bad
    config or data set, a point that would not fit in memory (or stores on disk), a busy results
    folder or one nothing can be written into (nothing written)."""
    from spbench.store.atomic_files import WriteFailed
    from spbench.pipeline.config import ConfigError, load_config
    from spbench.pipeline.preflight import skipped
    from spbench.store.results import ResultsBusy
    from spbench.pipeline.runner import RunError, SweepStopped, run_sweep
    from spbench.pipeline.shard import parse_shard
    from spbench.pipeline.sweep import expand

    try:
        config = load_config(config_file).with_overrides(execution=execution, repeats=repeats, runs=runs,
                                                          fallback=fallback, scale=scale, **experiment_flags,
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
    from spbench.experiment_registry import get_experiment
    from spbench.pipeline.preflight import available_memory, data_disk, size_text
    from spbench.pipeline.runner import RunError, estimate_points, stored_points

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


#: the options of `spbench run` an array job's tasks repeat when given (with the experiments' flags taking a value)
FORWARDED = ("out_dir", "execution", "repeats", "runs", "fallback", "scale")


def _slurm_array(config, config_file, points, count, submit):
    """`--slurm-array N`: the array job's sbatch command (printed, or submitted with --submit); the
    run flags given on this command line travel with it."""
    from spbench.pipeline.slurm_array import array_command, render, submit as submit_job

    ctx = click.get_current_context()
    flags = []
    for param in ctx.command.get_params(ctx):
        if param.name not in FORWARDED and not (isinstance(param, ExperimentFlag) and not param.is_flag):
            continue
        value = ctx.params.get(param.name)
        if value is not None and ctx.get_parameter_source(param.name) == click.core.ParameterSource.COMMANDLINE:
            flags += [param.opts[0], str(value)]
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

    from spbench.experiment_registry import get_experiment

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
