"""The worker's task loop under MPI: a task failing on every rank is its own error row and the
loop goes on; a task failing on one rank while the others wait in a collective takes the job
down after the grace period, its row written by the failing rank.

    mpiexec -n 2 python -m mpi4py tests/tucker/mpi_scripts/check_task_loop.py RUNS_DIR PROGRESS

Tasks: ok, fail on every rank, ok, fail on rank 1 only (rank 0 waits in a Barrier), never reached.
"""
import sys
from pathlib import Path

from mpi4py import MPI

from spbench.tucker.mpi.job_progress import ProgressWriter
from spbench.tucker.mpi.task_loop import run_tasks
from spbench.store.atomic_files import write_json


def write_row(runs, row):
    """The task's row as the loop leaves it (a fragment per task; the rows are no sweep's)."""
    write_json(Path(runs) / f"{row['run_id']}.json", row)


def main():
    comm = MPI.COMM_WORLD
    runs, progress = sys.argv[1], sys.argv[2]

    def run_one(task, report):
        kind = task["kind"]
        if kind == "every":
            raise ValueError("bad on every rank")
        if kind == "alone" and comm.rank == 1:
            raise RuntimeError("rank 1 only")
        comm.Barrier()
        if comm.rank == 0:
            if report is not None:
                report("invocation", invocation=1, invocations=1, fit=0.5)
            return {**task["row"], "status": "ok"}
        return None

    tasks = [{"kind": kind, "row": {"run_id": f"t{i}-{kind}"}}
             for i, kind in enumerate(["ok", "every", "ok", "alone", "never"])]
    run_tasks(comm, tasks, run_one, report=ProgressWriter(progress), grace=1.0,
              store_row=lambda row: write_row(runs, row))


if __name__ == "__main__":
    main()
