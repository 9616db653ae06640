"""Measured Tucker runs: one MPI job per (tensor, ranks) running every scheme, K and repeat of it.

The CLI process never imports mpi4py.MPI (DESIGN.md §4): it exports the tensor once as memory-
mappable .npy files, writes a job spec, and launches `{launcher} python -m mpi4py -m
spbench.tucker.worker SPEC` (an exception on one rank aborts all of them). Rank 0 stores each
finished run's row itself; a run without a row after the job is recorded `error` (with the
job's last stderr line) or `timeout`.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np


def default_launcher() -> str:
    """`mpiexec -n {ranks}` from this Python's environment (mixing launchers and MPI libraries aborts)."""
    beside = Path(sys.executable).with_name("mpiexec")
    return f"{shlex.quote(str(beside)) if beside.exists() else 'mpiexec'} -n {{ranks}}"


def launcher_command(template: str, ranks: int) -> list[str]:
    return shlex.split((template or default_launcher()).format(ranks=ranks))


def tensor_export_dir(checksum: str) -> Path:
    return Path(os.environ.get("SPBENCH_DATA") or "~/.cache/spbench").expanduser() / "tensors" / checksum


def export_tensor(tensor, checksum: str) -> Path:
    """coords.npy, values.npy and meta.json of a tensor, written once per checksum (atomic folder rename)."""
    final = tensor_export_dir(checksum)
    if (final / "meta.json").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{checksum[:12]}.", dir=final.parent))
    try:
        np.save(tmp / "coords.npy", np.ascontiguousarray(tensor.coords, dtype=np.int64))
        np.save(tmp / "values.npy", np.ascontiguousarray(tensor.values, dtype=np.float64))
        (tmp / "meta.json").write_text(json.dumps({"dims": [int(d) for d in tensor.dims], "nnz": int(tensor.nnz)}))
        try:
            os.replace(tmp, final)
        except OSError:  # another job exported it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def run_mpi_batch(pending, prepared, config, store, progress, metrics=None):
    """Run the pending (point, base row) pairs of one tensor, one MPI job per rank count; yield rows.

    `metrics(point, prepared, config, queries)`: the scheme's exact metrics, merged into each
    measured row (the measured fields win), so one row holds both the times and the metrics."""
    tensor_dir = export_tensor(prepared.tensor, prepared.checksum)
    by_ranks: dict = {}
    for point, row in pending:
        by_ranks.setdefault(point.axes["ranks"], []).append((point, row))
    for ranks, items in sorted(by_ranks.items()):
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        tasks = []
        for point, row in items:
            axes = point.axes
            row = dict(row, started_at=now, dataset_label=prepared.label, omp_threads=1)
            tasks.append({"row": row, "scheme": axes["algorithm"], "K": int(axes["K"]),
                          "params": config.params.get(axes["algorithm"], {}), "seed": config.seed,
                          "invocations": config.invocations, "init": config.init,
                          "lanczos": config.lanczos})
        started = progress.begin(items[0][0])
        progress.note(f"MPI job: {items[0][0].dataset.name} at {ranks} ranks, {len(tasks)} runs")
        failure = _launch(config, ranks, tensor_dir, store.runs, tasks)
        for (point, _), task in zip(items, tasks):
            path = store.runs / f"{task['row']['run_id']}.json"
            if path.exists():
                row = json.loads(path.read_text())
                if metrics is not None and row.get("status") == "ok" and "mode_metrics" not in row:
                    row = {**metrics(point, prepared, config, queries=row.get("queries")), **row}
                    store.write_row(row)
            else:
                status, message = failure or ("error", "the MPI job ended without storing this run")
                row = dict(task["row"], status=status, error=message)
                store.write_row(row)
            yield row
        progress.done += len(items) - 1
        progress.end(started, "ok" if failure is None else failure[0])


def _launch(config, ranks: int, tensor_dir: Path, runs_dir: Path, tasks: list):
    """Run one worker job; None when it exited 0, else (status, one-line reason)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="spbench-job-", delete=False) as fh:
        json.dump({"tensor_dir": str(tensor_dir), "results_dir": str(runs_dir), "threads": 1, "tasks": tasks}, fh)
        spec = fh.name
    cmd = launcher_command(config.launcher, ranks) + [sys.executable, "-m", "mpi4py", "-m",
                                                      "spbench.tucker.worker", spec]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=config.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return "timeout", f"MPI job killed after {config.timeout:.0f} s (key 'timeout')"
        except KeyboardInterrupt:
            os.killpg(proc.pid, 9)
            raise
    except OSError as exc:
        return "error", f"cannot start {cmd[0]}: {exc.strerror}"
    finally:
        os.unlink(spec)
    if proc.returncode != 0:
        lines = [l for l in err.strip().splitlines() if l.strip()]
        reason = next((l for l in reversed(lines) if "Error" in l or "error" in l), lines[-1] if lines else "")
        return "error", f"MPI job exited {proc.returncode} after {time.monotonic() - start:.1f} s: {reason.strip()}"
    return None
