"""Measured Tucker runs: one MPI job per (tensor, ranks) running every scheme, K and repeat of it.

The CLI process never imports mpi4py.MPI nor loads the tensor: it points the job
at the data set's tensor store (each rank memory-maps its block), writes a job spec into the
results folder's job folder, and launches `{launcher} python -m mpi4py -m spbench.tucker.mpi.worker
SPEC` (:mod:`.job_process`: the job dies with the sweep). Rank 0 stores each finished run's row
through the results folder's :class:`spbench.store.results.ResultStore` and reports progress
(:mod:`.job_progress`); a run that fails is its own error row (:mod:`.task_loop`). After the job,
each run's row goes back to the sweep runner, which stores it: the stored row with the job's load
added, or, for a run without a row, an `error` (with the job's last error line) or `timeout` row.
A job whose MPI world is not the ranks asked for (each process's rank 0 reports its world size;
a launcher of another MPI starts one-rank processes) leaves an error row per run naming the
launcher and both sizes, as does a stored row of other ranks: never an ok row under another rank
count's point.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from spbench.store.row_builder import build_row, failure


def mpiexec_beside_python() -> Path | None:
    """The ``mpiexec`` of this Python's environment (pip's mpich), None when there is none."""
    beside = Path(sys.executable).with_name("mpiexec")
    return beside if beside.exists() else None


def default_launcher() -> str:
    """`mpiexec -n {ranks}` from this Python's environment (mixing launchers and MPI libraries aborts)."""
    beside = mpiexec_beside_python()
    return f"{shlex.quote(str(beside)) if beside else 'mpiexec'} -n {{ranks}}"


def launcher_command(template: str | None, ranks: int) -> list[str]:
    """The launcher's words for ``ranks`` ranks: ``template`` (config key ``launcher``) or the default."""
    return shlex.split((template or default_launcher()).format(ranks=ranks))


def wrong_world(launcher: str | None, ranks: int, sizes: list) -> str:
    """The error of a job asked for ``ranks`` ranks whose started processes had the MPI world
    sizes ``sizes`` (one per world, as each world's rank 0 reported it)."""
    size = "/".join(str(s) for s in sorted(set(sizes)))
    return (f"the launcher {launcher or default_launcher()!r} started {sum(sizes)} MPI process(es) of world size "
            f"{size}, expected {ranks} rank{'s' if ranks != 1 else ''}: it is not mpi4py's MPI (see docs/cluster.md)")


def mpi_module_command(module: str, args, ranks: int, launcher: str | None = None) -> list[str]:
    """``{launcher} python -m mpi4py -m MODULE ARGS...``: every MPI job of spbench starts this way,
    so an exception on one rank aborts all ranks instead of hanging in a collective."""
    return launcher_command(launcher, ranks) + [sys.executable, "-m", "mpi4py", "-m", module, *map(str, args)]


def run_mpi_batch(pending, prepared, config, store, progress):
    """Run the pending (point, point fields) pairs of one tensor, one MPI job per rank count; yield
    each run's row for the sweep runner to store.

    The job reads the data set's tensor store block by block; the workers compute the exact
    metrics of their distribution and the scheme's extra fields from them (Lite: Theorem 6.1's
    slack) and store each row through ``store`` (this process never loads the tensor); the row
    yielded is the point joined with what the worker stored and the machine's load over the job
    (``load``), or with why the job left the run without a row
    (:func:`spbench.store.row_builder.build_row`).
    Each task's start, HOOI invocations and finish are printed as the job reports them. A job that dies takes only the
    task it was running with it: the tasks it had not started run in a new job."""
    from spbench.machine.facts import usable_cores
    from spbench.machine.load import LoadWatch

    cores = usable_cores()  # rows of more ranks than cores say so: their times are time slices
    by_ranks: dict = {}
    for point, row in pending:
        by_ranks.setdefault(point.axes["ranks"], []).append((point, row))
    for ranks, items in sorted(by_ranks.items()):
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        work = [(point, _task(config, point, dict(row, started_at=now, dataset_label=prepared.label, omp_threads=1,
                                                  tensor_stats=prepared.stats, oversubscribed=ranks > cores)))
                for point, row in items]
        progress.note(f"MPI job: {items[0][0].dataset.name} at {ranks} ranks, {len(work)} runs")
        while work:
            watch = JobWatch(work, progress)
            load = LoadWatch()  # the job's ranks are waited-for children: their CPU counts as ours
            outcome = _launch(config, ranks, prepared.store, store, [task for _, task in work], watch)
            job_load = load.figures()
            wrong = watch.wrong_world(config.launcher, ranks)
            if wrong is not None and watch.finished:   # their finish was printed as the job reported it
                progress.note(f"MPI job: {wrong}; the runs it finished are stored as errors")
            retry = []
            for i, (point, task) in enumerate(work):
                run_id = task["row"]["run_id"]
                if wrong is not None:
                    measurement = failure(wrong)
                elif store.fragment(run_id).exists() and not watch.unsettled(i, outcome):
                    measurement = {**store.stored_row(run_id), "load": job_load}  # as the worker stored it
                    ran = measurement.get("ranks")
                    if isinstance(ran, int) and ran != ranks:  # its world went unreported
                        measurement = failure(wrong_world(config.launcher, ranks, [ran]))
                elif i not in watch.started and outcome.returncode not in (0, None) and not outcome.timed_out \
                        and watch.started:
                    retry.append((point, task))  # the job died in an earlier task: run this one again
                    continue
                else:
                    status, message = watch.reported.get(i) or _failure(outcome, config, started=i in watch.started)
                    measurement = failure(message, status)
                row = build_row(task["row"], measurement)
                yield row  # the sweep runner stores it
                watch.close(i, row)
            if retry:
                progress.note(f"MPI job: {len(retry)} runs not started by the failed job run in a new one")
            work = retry


def _task(config, point, row: dict) -> dict:
    axes = point.axes
    return {"row": row, "scheme": axes["algorithm"], "K": int(axes["K"]),
            "params": config.params.get(axes["algorithm"], {}), "seed": config.seed,
            "invocations": config.invocations, "init": config.init, "lanczos": config.lanczos,
            "ttm": axes.get("ttm", config.ttm)}


def _failure(outcome, config, *, started: bool) -> tuple[str, str]:
    """(status, one-line reason) of a task the job left without a row."""
    if outcome.returncode is None:
        return "error", outcome.reason
    if outcome.timed_out:
        return "timeout", (f"MPI job killed after {config.timeout:.0f} s (key 'timeout')"
                           + ("" if started else "; this run had not started"))
    if outcome.returncode != 0:
        return "error", f"MPI job exited {outcome.returncode} after {outcome.seconds:.1f} s: {outcome.reason}"
    return "error", "the MPI job ended without storing this run"


#: at most one line per this many seconds about a run's HOOI invocations (and always the last one)
DETAIL_SECONDS = 5.0


class JobWatch:
    """The job's progress events turned into the sweep's progress lines, one point per task."""

    def __init__(self, work: list, progress):
        self.work, self.progress = work, progress
        self.started: dict = {}   # task index -> when its start was reported
        self.finished: set = set()
        self.reported: dict = {}  # task index -> (status, error) of a reported failure
        self.worlds: list = []    # the MPI world size each started world's rank 0 reported
        self._said = -DETAIL_SECONDS  # when the last invocation line was printed
        self._reader = None

    def follow(self, path: Path) -> None:
        from spbench.tucker.mpi.job_progress import ProgressReader
        self._reader = ProgressReader(path)

    def poll(self) -> None:
        for event in self._reader.events() if self._reader is not None else ():
            kind = event.get("event")
            if kind == "world" and isinstance(event.get("size"), int):
                self.worlds.append(event["size"])
                continue
            i = event.get("task")
            if not isinstance(i, int) or not 0 <= i < len(self.work):
                continue
            if kind == "start" and i not in self.started:
                self.started[i] = self.progress.begin(self.work[i][0])
            elif kind == "invocation" and i in self.started:
                now, last = time.monotonic(), event.get("invocation") == event.get("invocations")
                if not last and now - self._said < DETAIL_SECONDS:
                    continue
                self._said = now
                fit = event.get("fit")
                self.progress.detail(f"HOOI invocation {event.get('invocation')}/{event.get('invocations')}"
                                     + (f", fit {fit:.6e}" if isinstance(fit, (int, float)) else ""))
            elif kind == "finish" and i in self.started and i not in self.finished:
                self.finished.add(i)
                if event.get("status", "ok") != "ok":
                    self.reported[i] = (event["status"], event.get("error") or "failed in the MPI job")
                self.progress.end(self.started[i], event.get("status", "ok"), event.get("error"))

    def wrong_world(self, launcher: str | None, ranks: int) -> str | None:
        """The error of a job whose started processes were not one world of ``ranks`` ranks (as
        their reports say: other sizes, or several worlds each running every task)."""
        if self.worlds and self.worlds != [ranks]:
            return wrong_world(launcher, ranks, self.worlds)
        return None

    def unsettled(self, i: int, outcome) -> bool:
        """Whether task ``i``'s stored row cannot be trusted: the job failed while the task ran
        and the ranks never agreed that it ended well (after one rank aborts the job, the others
        may return from a broken collective and store a row of an unfinished run)."""
        failed = outcome.timed_out or outcome.returncode != 0
        return failed and i in self.started and (i not in self.finished or i in self.reported)

    def close(self, i: int, row: dict) -> None:
        """Account for task ``i``'s row when the job did not report its finish."""
        if i in self.finished:
            return
        self.finished.add(i)
        started = self.started.get(i)
        if started is None:
            started = self.progress.begin(self.work[i][0])
        self.progress.end(started, row.get("status", "error"), row.get("error"))


def _launch(config, ranks: int, tensor_dir: Path, store, tasks: list, watch):
    """Run one worker job over ``tasks``; its spec, progress and log live in the results folder's
    job folder while it runs (the worker removes the spec once read, unless its world is not the
    one asked for; this process the rest)."""
    from spbench.tucker.mpi.job_process import run_job

    store.runs.mkdir(parents=True, exist_ok=True)
    store.jobs.mkdir(parents=True, exist_ok=True)
    fd, spec = tempfile.mkstemp(prefix=f"job-{ranks}r-", suffix=".json", dir=store.jobs)
    spec = Path(spec)
    files = (spec, spec.with_suffix(".progress"), spec.with_suffix(".log"))
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump({"tensor_dir": str(tensor_dir), "results": str(store.root), "threads": 1,
                       "progress": str(files[1]), "ranks": ranks, "launcher": config.launcher or default_launcher(),
                       "tasks": tasks}, fh)
        cmd = mpi_module_command("spbench.tucker.mpi.worker", [spec], ranks, config.launcher)
        watch.follow(files[1])
        return run_job(cmd, dict(os.environ, OMP_NUM_THREADS="1"), timeout=config.timeout, log=files[2],
                       on_poll=watch.poll)
    finally:
        for f in files:
            f.unlink(missing_ok=True)
        try:
            store.jobs.rmdir()
        except OSError:  # another job's files, or already gone
            pass
