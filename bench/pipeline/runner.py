"""Run a sweep: points → runs → one stored row each, resumable, with progress on stderr.

Data flows one way (docs/design.md, "Data flow"): the runner locks the results folder, loads every data set
before it writes anything (a bad file is a one-line RunError and the folder stays as it was),
runs every point not already stored with a final status, writes each row atomically as soon as it
exists, and moves rows that no longer belong to the sweep (changed code or data) aside. What a
point means is the experiment's (:class:`spbench.experiment.Experiment`, from the registry): it
checks the points, prepares each data set and runs each point, giving its measurement; one whose
points of one data set run together in one job (Tucker under MPI: one launch per (tensor, ranks))
returns `run(pending, prepared, config, store, progress)` from `batch_runner(config)`, which yields
their rows. Every row is the point's fields joined with its measurement
(:func:`spbench.store.row_builder.build_row`) and is written in one place, :func:`_run_pending`.
Before anything is locked or loaded, the experiment's estimates of each point's peak memory and of
the stores still to generate are checked against this machine (:mod:`.preflight`). Simulated
points run in a child process per data set (:mod:`.point_process`), so one the operating system
kills is an error row, not the sweep's end.
"""
from __future__ import annotations

import itertools
import sys
import time
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timezone

from spbench.datasets import conversion_progress

from spbench.machine import facts as machine

from spbench.pipeline import preflight
from spbench.store.code_version import code_version, run_sources  # noqa: F401  (run_sources: the sources code_version hashes)
from spbench.pipeline.config import Config
from spbench.experiment import RunError
from spbench.experiment_registry import get_experiment
from spbench.store.atomic_files import WriteFailed
from spbench.machine.load import LoadWatch
from spbench.pipeline.point_process import run_apart
from spbench.store.results import FINAL_STATUSES, ResultStore
from spbench.store.row_builder import build_row, failure
from spbench.pipeline.shard import Shard, slurm_provenance
from spbench.pipeline.sweep import SCHEMA_VERSION, Point, expand, run_id, run_parameters, sweep_settings
from spbench.pipeline import sweep_folder


def _fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@dataclass
class Progress:
    """Points done/total, the current point, elapsed time and an ETA, one line each on stderr."""

    total: int
    quiet: bool = False
    stream: object = None
    done: int = 0
    ran: int = 0
    run_seconds: float = 0.0
    start: float = field(default_factory=time.monotonic)

    def _say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream or sys.stderr, flush=True)

    def note(self, text: str) -> None:
        self._say(f"spbench: {text}")

    def skip(self, point: Point) -> None:
        self.done += 1

    def begin(self, point: Point) -> float:
        elapsed = time.monotonic() - self.start
        remaining = self.total - self.done
        eta = f"ETA {_fmt_duration(self.run_seconds / self.ran * remaining)}" if self.ran else "ETA ?"
        self._say(f"[{self.done + 1}/{self.total}] {point.label} · elapsed {_fmt_duration(elapsed)} · {eta}")
        return time.monotonic()

    def detail(self, text: str) -> None:
        """A line about the point in flight (say, an MPI job's HOOI invocation), with the elapsed time."""
        self._say(f"    {text} · elapsed {_fmt_duration(time.monotonic() - self.start)}")

    def end(self, started: float, status: str, error: str | None = None) -> None:
        self.done += 1
        self.ran += 1
        self.run_seconds += time.monotonic() - started
        if status != "ok":
            self._say(f"    {status}: {error}" if error else f"    status: {status}")


@dataclass
class SweepSummary:
    """What a sweep did: points stored before, run now, their statuses and their distinct errors."""

    total: int = 0
    skipped: int = 0
    ran: int = 0
    statuses: dict = field(default_factory=dict)
    superseded: int = 0
    errors: dict = field(default_factory=dict)  # first line of each distinct error -> rows, first seen first

    @property
    def failed(self) -> int:
        """Rows of this sweep that ended error, timeout or invalid (exit code 1)."""
        return sum(n for status, n in self.statuses.items() if status not in ("ok", "skipped"))


class SweepStopped(RuntimeError):
    """A write failed once the sweep had started (a full disk, say): the message says which file,
    why, and what stays stored; ``summary`` is what the sweep did until then (exit code 1)."""

    def __init__(self, failure: WriteFailed, summary: SweepSummary, out_dir):
        kept = summary.skipped + summary.ran
        super().__init__(f"{failure}; the sweep stopped: {kept} of {summary.total} points stay stored in {out_dir} "
                         f"({summary.ran} run now); rerun the same command to resume")
        self.summary = summary


def run_sweep(config: Config, out_dir, *, fresh: bool = False, quiet: bool = False,
              stream=None, wait: bool = False, shard: Shard | None = None,
              check_resources: bool = True) -> SweepSummary:
    """Run every point of the sweep (of its ``shard`` only, when given) that is not stored yet;
    return what happened.

    Nothing is written before every data set has loaded (a bad file is a RunError naming it), and
    the results folder is locked while the sweep writes into it (ResultsBusy, or ``wait``); the
    shards of one sweep each lock their own part and write into the folder side by side. A point
    whose estimated peak memory exceeds what is free, or stores that do not fit on the disk, are a
    RunError before any of that (unless ``check_resources`` is off). A results folder nothing can be
    written into is a WriteFailed before anything runs; a write that fails later (a full disk) is
    SweepStopped, the rows stored until then kept. A fragment holding no row is moved to
    runs/corrupt/ with a line saying so, also with ``quiet``, and its point runs again."""
    experiment = get_experiment(config.experiment)
    points = expand(config)
    if shard is not None:
        if fresh:
            raise RunError(f"--fresh with --shard {shard.label}: a shard cannot forget the other shards' "
                           f"rows; remove {out_dir} once, then run the shards")
        points = shard.select(points)
    experiment.check_points(config, points)
    if check_resources:
        preflight.check(experiment.estimate_points(config, points), config.source)
    store = ResultStore(out_dir, shard=shard.tag if shard else None)
    sweep_folder.check_one_sweep(store.root, config.name, config.experiment)  # before the lock makes a folder
    progress = Progress(total=len(points), quiet=quiet, stream=stream)
    summary = SweepSummary(total=len(points))
    with store.lock(wait=wait, on_wait=lambda text: print(f"spbench: {text}", file=stream or sys.stderr,
                                                          flush=True)):
        sweep_folder.check_one_sweep(store.root, config.name, config.experiment)  # a sweep that wrote meanwhile
        try:
            with conversion_progress.reporting(stream, enabled=not quiet):   # a .tns converted on first use
                loaded = load_datasets(experiment, config, points, stream=stream)
            _sweep_loaded(experiment, config, store, loaded, progress, summary, fresh=fresh, shard=shard,
                          stream=stream)
        except WriteFailed as exc:
            raise SweepStopped(exc, summary, out_dir) from None
    return summary


def _sweep_loaded(experiment, config: Config, store: ResultStore, loaded, progress: Progress,
                  summary: SweepSummary, *, fresh: bool, shard: Shard | None, stream) -> None:
    """The locked part of :func:`run_sweep` once every data set has loaded: refuse stored rows of
    other settings (unless ``fresh``), move its points' outdated rows aside, then run and store
    what is not stored yet, counting into ``summary``. With ``fresh`` every point runs again and
    each stored row of the same settings stays until its point's new row replaces it."""
    version = code_version(config.experiment)
    settings = sweep_settings(config, experiment.calibration)
    wanted = {_identity(p.dataset.name, p.repeat, config.execution, p.axes): rid
              for p, rid in _run_ids(config, loaded.points(), loaded.checksum, version, settings)}
    _supersede_up_front(store, config, settings, wanted, fresh=fresh, summary=summary, stream=stream)
    store.clean_stale()
    for line in store.set_aside_corrupt():
        print(f"spbench: warning: {line}", file=stream or sys.stderr, flush=True)
    _write_meta(store, config, settings, calibration=experiment.calibration, shard=shard)
    watch = LoadWatch()  # measured times are costs only on a quiet machine: meta.json says how quiet
    stored = {} if fresh else store.done()
    base = {**_base_row(config, version), "shard": shard.label if shard else None, **slurm_provenance(),
            "settings": settings}
    with experiment.sweep_scratch(config):
        _run_groups(experiment, config, store, loaded, progress, summary, stored, base, version, settings)
    if config.execution == "measured":
        store.update_meta(load=watch.figures())


def _run_groups(experiment, config: Config, store: ResultStore, loaded, progress: Progress, summary: SweepSummary,
                stored: dict, base: dict, version: str, settings: dict) -> None:
    """Run and store each data set's points not stored yet, counting into ``summary``."""
    for ds_points in loaded.groups():
        prepared = loaded.take(ds_points[0].dataset)
        pending = []
        for point, rid in _run_ids(config, ds_points, lambda _: prepared.checksum, version, settings):
            if stored.get(rid) in FINAL_STATUSES:
                summary.skipped += 1
                progress.skip(point)
                continue
            pending.append((point, {**base, **experiment.dataset_fields(prepared), "run_id": rid,
                                    "dataset": point.dataset.name, "repeat": point.repeat,
                                    "params": config.params.get(point.axes.get("algorithm"), {}),
                                    **point.axes}))
        for row in _run_pending(experiment, config, store, progress, prepared, pending):
            _count(summary, row)


def _supersede_up_front(store: ResultStore, config: Config, settings: dict, wanted: dict, *, fresh: bool,
                        summary: SweepSummary, stream) -> None:
    """Before the first point runs (:mod:`.sweep_folder`): rows of other settings refused in one
    line (RunError), or with ``fresh`` moved aside as a whole; the sweep's points' rows of older
    code or data, or of repeats it no longer runs, moved aside. Each move is said on stderr with
    where the rows are (also with --quiet: they leave the profile)."""
    execution = _row_execution(config.execution)
    found = sweep_folder.plan(store.runs, execution, settings, wanted, config.runs, _identity)
    if found.conflicts and not fresh:
        raise RunError(sweep_folder.conflict_message(store.root, execution, found.conflicts, settings))
    say = lambda text: print(f"spbench: {text}", file=stream or sys.stderr, flush=True)  # noqa: E731
    for rows, why in ((found.conflicts, "made with other settings"),
                      (found.stale, "of an older code/data version"),
                      (found.schema, f"of another row schema (this spbench writes schema {SCHEMA_VERSION})"),
                      (found.extra, f"of repeats this sweep no longer runs (runs: {config.runs})"),
                      (found.legacy, "written before rows recorded their settings")):
        if rows:
            where = store.supersede([frag for frag, _ in rows])
            summary.superseded += len(rows)
            say(f"moved {len(rows)} rows {why} to {where} (kept there, left out of the profile)")


def _base_row(config: Config, version: str) -> dict:
    git = machine.git_state()
    return {"schema_version": SCHEMA_VERSION, "experiment": config.experiment, "config": config.name,
            "execution": _row_execution(config.execution),
            "git_sha": git.get("sha"), "git_dirty": git.get("dirty"),
            "host": machine.machine_facts(with_mpi=False)["host"], "code_version": version}


def _run_ids(config: Config, points, checksum, version: str, settings: dict):
    """(point, run_id) of each point; ``checksum(dataset name)`` is its data set's checksum."""
    for point in points:
        yield point, run_id(run_parameters(config, point, settings), checksum(point.dataset.name), version)


def _run_pending(experiment, config: Config, store: ResultStore, progress: Progress, prepared, pending):
    """Run one data set's pending points and store each row as it ends (the one place a sweep
    writes rows: those of its own process and those an experiment's batch job yields); yield it."""
    for row in _finished_rows(experiment, config, store, progress, prepared, pending):
        store.write_row(row)
        yield row


def _finished_rows(experiment, config: Config, store: ResultStore, progress: Progress, prepared, pending):
    """Each pending (point, point fields) pair's row as its run ends: as one batch when the
    experiment batches them (its job's rows, built there), else each point's measurement
    (simulated ones in a child process) joined with its point (:func:`build_row`)."""
    batch = experiment.batch_runner(config)
    if batch is not None and pending:
        yield from batch(pending, prepared, config, store, progress)
        return

    def compute(i: int) -> dict:
        return _point_measurement(experiment, pending[i][0], prepared, config)

    events = run_apart(len(pending), compute) if config.execution == "simulate" else _run_here(len(pending), compute)
    started: dict = {}
    with closing(events):
        for kind, i, measurement in events:
            point, fields = pending[i]
            if kind == "start":
                started[i] = (progress.begin(point), datetime.now(timezone.utc).isoformat(timespec="seconds"))
                continue
            row = build_row({**fields, "started_at": started[i][1]}, _with_nulls(measurement))
            yield row
            progress.end(started[i][0], row["status"], row["error"])


def _run_here(count: int, compute):
    """``run_apart``'s events for points run in this process (measured ones: timing-sensitive)."""
    for i in range(count):
        yield "start", i, None
        yield "row", i, compute(i)


def _point_measurement(experiment, point, prepared, config: Config) -> dict:
    """One point's measurement; a Python exception is the point's error, not the sweep's."""
    try:
        return experiment.run(point, prepared, config)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        return failure(f"{type(exc).__name__}: {exc}")


def _with_nulls(measurement: dict) -> dict:
    """An in-process point's measurement with ``error`` and ``omp_threads`` null unless it gives them."""
    return {**measurement, "error": measurement.get("error"), "omp_threads": measurement.get("omp_threads")}


class LoadedDatasets:
    """Every data set of a sweep, loaded once before anything is written (a bad file stops the
    sweep with nothing in the results folder). Only the first is kept in memory; the others are
    loaded again when their points run, so a sweep holds one data set at a time (a measured sweep
    in passes loads each data set again in each pass)."""

    def __init__(self, experiment, config: Config, groups: list, first, checksums: dict):
        self._experiment, self._config, self._groups, self._first = experiment, config, groups, first
        self._checksums = checksums

    def checksum(self, name: str) -> str:
        """The checksum data set ``name`` had when it was loaded before the sweep."""
        return self._checksums[name]

    def points(self) -> list:
        """Every point of the sweep, in its order."""
        return [p for group in self._groups for p in group]

    def groups(self):
        """The sweep's points cut where the data set changes, in the sweep's order (one group per
        data set, or per data set and pass when a measured sweep runs in passes)."""
        return list(self._groups)

    def take(self, dataset):
        """The prepared data set (the kept first one, else loaded again)."""
        if self._first is not None and self._first[0] == dataset.name:
            prepared, self._first = self._first[1], None
            return prepared
        return _prepare(self._experiment, dataset, self._config)


def load_datasets(experiment, config: Config, points, *, stream=None) -> LoadedDatasets:
    """Load every data set of ``points`` (RunError naming the first that fails) and print each one's
    warnings (say, a non-symmetric matrix) on stderr, also with --quiet."""
    groups = [list(run) for _, run in itertools.groupby(points, key=lambda p: p.dataset.name)]
    first, checksums = None, {}
    for ds_points in groups:
        name = ds_points[0].dataset.name
        if name in checksums:
            continue
        prepared = _prepare(experiment, ds_points[0].dataset, config)
        checksums[name] = prepared.checksum
        for warning in getattr(prepared, "warnings", ()):
            print(f"spbench: warning: {warning}", file=stream or sys.stderr, flush=True)
        if first is None:
            first = (name, prepared)
    return LoadedDatasets(experiment, config, groups, first, checksums)


def _prepare(experiment, dataset, config: Config):
    try:
        return experiment.prepare(dataset, config)
    except WriteFailed:  # a store or cache file that could not be written (a full disk): exit 1, not bad input
        raise
    except (ValueError, OSError) as exc:  # DatasetError is a ValueError
        path = str(getattr(dataset, "params", {}).get("path") or "")
        where = f" ({path})" if path and path not in str(exc) else ""
        raise RunError(f"data set '{dataset.name}'{where}: {exc}") from None


def stored_points(config: Config, points, out_dir) -> set:
    """The points already stored in ``out_dir`` with a final status (``--dry-run``); the data sets
    are loaded only when the folder holds rows."""
    store = ResultStore(out_dir)
    stored = {rid for rid, status in store.done().items() if status in FINAL_STATUSES}
    if not stored:
        return set()
    experiment = get_experiment(config.experiment)
    experiment.check_points(config, points)  # the calibration simulated points use is a setting
    version = code_version(config.experiment)
    settings = sweep_settings(config, experiment.calibration)
    loaded = load_datasets(experiment, config, points)
    return {point for point, rid in _run_ids(config, points, loaded.checksum, version, settings) if rid in stored}


def estimate_points(config: Config, points) -> list:
    """The experiment's pre-flight estimates of ``points`` (``--dry-run`` prints them)."""
    return get_experiment(config.experiment).estimate_points(config, points)


def _count(summary: SweepSummary, row: dict) -> None:
    summary.ran += 1
    summary.statuses[row["status"]] = summary.statuses.get(row["status"], 0) + 1
    if row["status"] not in ("ok", "skipped"):
        message = (row.get("error") or f"status {row['status']}").strip().splitlines()[0]
        summary.errors[message] = summary.errors.get(message, 0) + 1


def _row_execution(execution: str) -> str:
    """What rows record: measured, simulated, or schedule (schedules computed, no solve timed)."""
    return {"measured": "measured", "mpi": "measured", "schedule": "schedule"}.get(execution, "simulated")


def _identity(dataset: str, repeat: int, execution: str, axes: dict) -> tuple:
    """What makes a row the same point: data set, axes, repeat and execution (not code or data version)."""
    execution = _row_execution(execution)
    return (dataset, int(repeat), execution, tuple(sorted((k, str(v)) for k, v in axes.items())))


def _write_meta(store: ResultStore, config: Config, settings: dict, calibration: dict | None = None,
                shard: Shard | None = None) -> None:
    """meta.json (:meth:`ResultStore.record_writer`): machine, versions, git state, the config, the
    settings of each execution's rows (``settings``: execution -> :func:`spbench.pipeline.sweep.sweep_settings`)
    and the cost-model calibration simulated rows used; a different machine is recorded, not hidden,
    and said on stderr. Each Slurm job (or array task) that wrote here is listed under ``slurm_jobs``."""
    job = slurm_provenance()
    execution = _row_execution(config.execution)
    other = store.record_writer(
        config.name, config.raw, created={"config_file": config.source, "experiment": config.experiment},
        fields={"calibration": calibration} if execution == "simulated" else None,
        merged={"settings": {execution: settings}},
        appended={"slurm_jobs": {"shard": shard.label if shard else None, **job}} if job["slurm_job_id"] else None)
    if other is not None:
        print(f"spbench: warning: {store.root} holds rows from another machine "
              f"({other.get('host')}, {other.get('cpu')}); rows carry their host", file=sys.stderr)
