"""The worker's task loop: each task's failure is that task's own row, the other tasks still run.

An exception in one task (a scheme's bad parameter, a grid that does not fit P) is caught on every
rank; the ranks then agree on the outcome with a non-blocking Allreduce on a duplicate of the
communicator (so it never matches a collective of the task). When every rank arrives, rank 0
stores the task's row: the one the task returned, or its error row with the first failing rank's
message, and the loop goes on (a task that ends with a row of another status, ``invalid``, reports
that status and its reason). A rank that failed alone while the others wait in a collective of the
task cannot be joined: after ``grace`` seconds it stores the error row itself and aborts the job;
the launcher then runs the remaining tasks in a new job (:mod:`.launch`).
"""
from __future__ import annotations

import time
import traceback

import numpy as np

from spbench.store.row_builder import build_row, failure

__all__ = ["run_tasks", "GRACE_SECONDS"]

#: how long a failed rank waits for the others to arrive before it takes the job down
GRACE_SECONDS = 30.0


def _message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    return text + (f" (at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno})" if frame else "")


def _everyone_arrived(control, failed: bool, grace: float) -> bool:
    """Join the task's outcome Allreduce; a failed rank gives up after ``grace`` seconds."""
    from mpi4py import MPI

    flag, out = np.array([int(failed)], dtype=np.int32), np.zeros(1, dtype=np.int32)
    request = control.Iallreduce(flag, out, op=MPI.MAX)
    if not failed:
        request.Wait()
        return True
    deadline = time.monotonic() + grace
    while not request.Test():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def run_tasks(comm, tasks: list, run_one, *, store_row, report, grace: float = GRACE_SECONDS) -> int:
    """Run ``run_one(task, progress)`` for every task; return how many failed. ``run_one`` returns
    the task's row on rank 0 (:func:`spbench.store.row_builder.build_row` of its point, the task's
    ``row``, and what it measured); its status (and error) is what its finish reports.

    ``store_row(row)`` stores each task's row, that of ``run_one`` or the error row of a failed
    task (its point joined with the failure), once per task: on rank 0, or on a rank failing alone
    before it aborts the job; ``report(event, **fields)`` tells the launcher (rank 0 reports start,
    the invocations and finish; a rank failing alone reports its own finish before aborting)."""
    control = comm.Dup()
    failures = 0
    for i, task in enumerate(tasks):
        root = comm.rank == 0
        if root:
            report("start", task=i, scheme=task.get("scheme"), K=task.get("K"))
        error, row = None, None
        try:
            row = run_one(task, (lambda event, **fields: report(event, task=i, **fields)) if root else None)
        except Exception as exc:  # noqa: BLE001 - any failure of a task is that task's row
            error = _message(exc)
        alone = not _everyone_arrived(control, error is not None, grace)
        if alone:
            row = _error_row(task, f"rank {comm.rank}: {error} (the other ranks did not fail with it; job aborted)")
        else:
            errors = control.gather(error, root=0)
            if not root:
                continue
            failed = [(rank, e) for rank, e in enumerate(errors) if e]
            if failed:
                failures += 1
                rank, first = failed[0]
                same = len(failed) == comm.size and all(e == first for _, e in failed)
                row = _error_row(task, first if same else f"rank {rank}: {first}")
        store_row(row)
        status = row.get("status", "ok")
        report("finish", task=i, status=status, **({"error": row.get("error")} if status != "ok" else {}))
        if alone:
            comm.Abort(1)
    control.Free()
    return failures


def _error_row(task: dict, message: str) -> dict:
    """The row of a task that failed: its point (the task's ``row``) joined with the failure."""
    return build_row(task.get("row") or {}, failure(message))
