"""Result storage (DESIGN.md §5): one JSON fragment per run, written atomically, and meta.json.

`results/<sweep>/runs/<run_id>.json` holds one row; a crash or Ctrl-C loses at most the run in
flight, concurrent jobs never share a file, and loading all fragments gives one tidy DataFrame.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from spbench.atomic_files import write_json

#: a stored run with one of these statuses is not run again on resume
FINAL_STATUSES = ("ok", "invalid", "skipped")
#: temp files a killed writer leaves in runs/: this process's rows (.*.tmp), an MPI worker's (.*.part*)
STALE_PATTERNS = (".*.tmp", ".*.part", ".*.part.*")


class ResultsBusy(RuntimeError):
    """Another sweep holds the results folder's lock; the message names its pid."""


class ResultStore:
    """The results folder of one sweep: fragments under runs/, meta.json beside them."""

    def __init__(self, root):
        self.root = Path(root)
        self.runs = self.root / "runs"

    def fresh(self) -> None:
        """Forget every stored run (the `--fresh` flag)."""
        if self.runs.exists():
            shutil.rmtree(self.runs)
        meta = self.root / "meta.json"
        if meta.exists():
            meta.unlink()

    @property
    def jobs(self) -> Path:
        """Job files of the sweep writing here (MPI job specs, progress, logs): removed when a job
        ends and, for a job killed with its sweep, by the next sweep that takes the lock."""
        return self.root / ".jobs"

    def clean_stale(self) -> int:
        """Remove temp files left by a killed writer (and its job files); return how many."""
        stale = [p for pattern in STALE_PATTERNS for p in self.runs.glob(pattern)] if self.runs.is_dir() else []
        for p in stale:
            p.unlink(missing_ok=True)
        if self.jobs.is_dir():
            stale += list(self.jobs.iterdir())
            shutil.rmtree(self.jobs, ignore_errors=True)
        return len(stale)

    @contextmanager
    def lock(self, *, wait: bool = False, on_wait=None):
        """Hold the folder's lock (an flock on ``.lock``, released by the kernel however the process
        ends) while a sweep writes here. Held by another sweep: ResultsBusy naming its pid, or with
        ``wait`` block until it is free (``on_wait(message)`` once). A folder this call created and
        left holding nothing but the lock is removed again."""
        created = not self.root.exists()
        path = self.root / ".lock"
        fh = _acquire(path, wait, on_wait)
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()} {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(sys.argv)}\n")
            fh.flush()
            yield self
        finally:
            path.unlink(missing_ok=True)  # while still held: a waiter re-checks the inode it locked
            fh.close()
            if created:
                try:
                    self.root.rmdir()
                except OSError:
                    pass

    def done(self) -> dict:
        """run_id → status of every stored fragment."""
        out = {}
        if self.runs.is_dir():
            for p in self.runs.glob("*.json"):
                try:
                    out[p.stem] = json.loads(p.read_text()).get("status")
                except (OSError, json.JSONDecodeError):
                    continue
        return out

    def write_row(self, row: dict) -> Path:
        """Store one run's row as runs/<run_id>.json, atomically."""
        return write_json(self.runs / f"{row['run_id']}.json", row)

    def read_meta(self) -> dict | None:
        path = self.root / "meta.json"
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError:
            return None

    def write_meta(self, meta: dict) -> None:
        write_json(self.root / "meta.json", meta)


def _acquire(path: Path, wait: bool, on_wait):
    """Open and flock ``path``; retry when the file was replaced meanwhile (a holder removes it)."""
    told = False
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)  # a holder that created the folder removes it
        fh = open(path, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().split(" ", 1)[0] or "?"
            if not wait:
                fh.close()
                raise ResultsBusy(f"{path.parent}: another sweep (pid {holder}) is writing here; wait for it "
                                  f"to end, rerun with --wait, or choose another --out") from None
            if on_wait is not None and not told:
                on_wait(f"{path.parent} is in use by the sweep of pid {holder}; waiting for it to end")
                told = True
            fcntl.flock(fh, fcntl.LOCK_EX)
        except OSError as exc:  # a file system without locks (say, Lustre mounted without -o flock)
            print(f"spbench: warning: {path.parent}: cannot lock the results folder ({exc.strerror}); "
                  f"make sure no other sweep writes into it", file=sys.stderr)
            return fh
        try:
            same = os.fstat(fh.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fh
        fh.close()


def find_result_dirs(path) -> list[Path]:
    """The sweep folders under path: path itself when it has runs/, else its children that do."""
    path = Path(path)
    if (path / "runs").is_dir():
        return [path]
    return sorted(p for p in path.iterdir() if (p / "runs").is_dir()) if path.is_dir() else []


def load_rows(path) -> pd.DataFrame:
    """All rows of one results folder (or of every sweep folder under it) as one DataFrame."""
    rows = []
    for folder in find_result_dirs(path):
        for frag in sorted((folder / "runs").glob("*.json")):
            try:
                row = json.loads(frag.read_text())
            except json.JSONDecodeError as exc:
                raise ValueError(f"{frag}: not a valid result fragment ({exc.msg})") from None
            rows.append(row)
    return pd.DataFrame(rows)
