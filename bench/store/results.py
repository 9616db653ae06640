"""Result storage (docs/design.md, "Results"): one JSON fragment per run, written atomically, and meta.json.

`results/<sweep>/runs/<run_id>.json` holds one row; a crash or Ctrl-C loses at most the run in
flight, concurrent jobs never share a file, and loading all fragments gives one tidy DataFrame. A
fragment that holds no row (cut off by a full disk, edited by hand) is set aside in runs/corrupt/
by a sweep, and left out with its reason by a reader that asks for that.

:class:`ResultStore` is the one way rows and meta.json are written, by every writer: the sweep
runner, the MPI worker's rank 0 (which opens the store by its path) and `spbench bench`, each
storing rows built by :func:`spbench.store.row_builder.build_row`. A row is checked against its
kind's declared fields (:mod:`spbench.store.row_schema`) before it is written.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from spbench.store.atomic_files import WriteFailed, json_ready, probe_folder, write_json
from spbench.store.row_schema import CorruptRow, RowSchemaError, check_row, read_row

#: a stored run with one of these statuses is not run again on resume
FINAL_STATUSES = ("ok", "invalid", "skipped")
#: temp files a killed writer leaves in runs/: this process's rows (.*.tmp), an MPI worker's (.*.part*)
STALE_PATTERNS = (".*.tmp", ".*.part", ".*.part.*")


class ResultsBusy(RuntimeError):
    """Another sweep holds the results folder's lock; the message names its pid."""


class InvalidRow(WriteFailed):
    """A row that is not as its kind declares (a field undeclared, missing or of another type):
    it is not written; the message names its fragment and every problem, on one line."""


class ResultStore:
    """The results folder of one sweep: fragments under runs/, meta.json beside them. A store
    opened for one shard of the sweep (``shard`` = '0-of-4', `spbench run --shard`) has its own
    lock and job folder, so the shards of one sweep write into one folder side by side. A store
    opened with ``checked=False`` is a scratch folder whose rows its caller reads back itself (the
    MPI worker's rows behind a calibration or a benchmark item): they are written unchecked."""

    def __init__(self, root, shard: str | None = None, *, checked: bool = True):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.shard = shard
        self.checked = checked

    def fresh(self) -> int:
        """Start over (`spbench bench --fresh`): every stored row moves to runs/superseded/ (kept,
        out of the report) and meta.json goes; return how many rows moved."""
        frags = sorted(self.runs.glob("*.json")) if self.runs.is_dir() else []
        self.supersede(frags)
        (self.root / "meta.json").unlink(missing_ok=True)
        return len(frags)

    def supersede(self, frags) -> Path:
        """Move each fragment of ``frags`` to runs/superseded/ (kept, out of the report; one moved
        meanwhile by a shard of the same sweep is passed over); return that folder."""
        return self._set_aside(frags, "superseded")

    def _set_aside(self, frags, folder: str) -> Path:
        target = self.runs / folder
        for frag in frags:
            try:
                target.mkdir(exist_ok=True)
                frag.replace(target / frag.name)
            except FileNotFoundError:
                continue
            except OSError as err:
                raise WriteFailed.from_os_error(target / frag.name, err) from None
        return target

    @property
    def jobs(self) -> Path:
        """Job files of the sweep writing here (MPI job specs, progress, logs): removed when a job
        ends and, for a job killed with its sweep, by the next sweep that takes the lock."""
        return self.root / (f".jobs.{self.shard}" if self.shard else ".jobs")

    def clean_stale(self) -> int:
        """Remove temp files left by a killed writer (and its job files); return how many. A shard
        leaves runs/ alone: the temp files there may be another shard's rows in flight."""
        stale = [p for pattern in STALE_PATTERNS for p in self.runs.glob(pattern)] \
            if self.runs.is_dir() and not self.shard else []
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
        ``wait`` block until it is free (``on_wait(message)`` once). The folders this call created
        (the results folder and any missing parent) are removed again when they hold nothing. A shard locks ``.lock.<shard>``; a whole
        sweep and a shard of it never write at once (ResultsBusy for whichever comes second). The
        folders this call created (the results folder, and its parents that did not exist) are removed
        again when they hold nothing. A folder nothing can be written into, and a folder where the
        store writes a file (meta.json, its lock files), is a WriteFailed before anything is (:func:`probe_folder`)."""
        probe_folder(self.root)
        if self.runs.exists() or self.runs.is_symlink():   # a file (or a dangling link) named runs: refused here
            probe_folder(self.runs)
        path = self.root / (f".lock.{self.shard}" if self.shard else ".lock")
        for file in (self.root / "meta.json", self.root / ".meta.lock", path):   # a folder named so: refused here
            if file.is_dir():
                raise WriteFailed(file, "a folder, not a file", errno.EISDIR)
        created = [p for p in (self.root.absolute(), *self.root.absolute().parents) if not p.exists()]
        fh = _acquire(path, wait, on_wait)
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()} {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(sys.argv)}\n")
            fh.flush()
            others = [self.root / ".lock"] if self.shard else sorted(self.root.glob(".lock.*"))
            for other in others:
                holder = _holder(other)
                if holder is not None:
                    raise ResultsBusy(f"{self.root}: {'the whole sweep' if self.shard else 'a shard of the sweep'} "
                                      f"(pid {holder}) is writing here; wait for it to end or choose another --out")
            yield self
        finally:
            path.unlink(missing_ok=True)  # while still held: a waiter re-checks the inode it locked
            fh.close()
            for folder in created:  # deepest first; one that holds anything now stays, and so do its parents
                try:
                    folder.rmdir()
                except OSError:
                    break

    @contextmanager
    def meta_lock(self):
        """Held while meta.json is read and rewritten, so shards writing at once each add theirs."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".meta.lock", "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX)
            except OSError:  # no locks on this file system: as without shards
                pass
            yield

    def done(self) -> dict:
        """run_id → status of every stored row of this schema (fragments that hold no row, and rows
        of another ``schema_version`` under a matching run_id, left out: their points are not stored)."""
        out = {}
        for p in self.runs.glob("*.json") if self.runs.is_dir() else []:
            try:
                out[p.stem] = read_row(p).get("status")
            except RowSchemaError:
                continue
        return out

    def set_aside_corrupt(self) -> list[str]:
        """Move every fragment in runs/ that holds no row (see :class:`CorruptRow`) to
        runs/corrupt/, so its point runs again instead of being silently replaced; return one line
        per fragment saying what was wrong and where it went. Rows of another schema stay."""
        said = []
        for frag in sorted(self.runs.glob("*.json")) if self.runs.is_dir() else []:
            try:
                read_row(frag)
            except CorruptRow as exc:
                target = self._set_aside([frag], "corrupt") / frag.name
                said.append(f"{exc}; moved to {target} (a point it held runs again)")
            except ValueError:  # a row of another schema version: not this sweep's to move
                continue
        return said

    def fragment(self, run_id: str) -> Path:
        """Where the row of ``run_id`` is stored: runs/<run_id>.json."""
        return self.runs / f"{run_id}.json"

    def write_row(self, row: dict) -> Path:
        """Store one run's row as runs/<run_id>.json, atomically, once it is as its kind declares
        (InvalidRow, nothing written, otherwise). Takes no lock: each row is its own file renamed
        into place, and the folder's lock, held by the sweep or benchmark writing here (and over
        the MPI jobs it launches, whose rank 0 writes through a store of its own), keeps other
        writers out."""
        path = self.fragment(row.get("run_id", "?"))
        problems = self._row_problems(row, path) if self.checked else []
        if problems:
            raise InvalidRow(path, "a row not as declared: " + "; ".join(problems))
        return write_json(path, row)

    def stored_row(self, run_id: str) -> dict:
        """The row stored for ``run_id`` (another process's: an MPI job's, before the sweep adds the
        figures known only after the job, its machine load); RowSchemaError when it holds none."""
        return read_row(self.fragment(run_id))

    def rows(self):
        """Every stored row of this folder (fragments that hold no row left out)."""
        for frag in sorted(self.runs.glob("*.json")) if self.runs.is_dir() else []:
            try:
                yield read_row(frag)
            except RowSchemaError:
                continue

    def next_repeat(self, **match) -> int:
        """1 + the largest ``repeat`` of the stored rows whose fields equal ``match`` (compared as
        stored, so a tuple matches its JSON list); 0 when none does (`spbench bench`: each
        invocation is the next repeat)."""
        want = json.loads(json.dumps(json_ready(match), default=str))
        repeats = [int(row.get("repeat", 0)) for row in self.rows()
                   if all(row.get(k) == v for k, v in want.items())]
        return max(repeats, default=-1) + 1

    def _row_problems(self, row: dict, path: Path) -> list[str]:
        """What keeps ``row`` from being stored: no row of this schema, or its kind's declared
        fields (:meth:`spbench.experiment.RowKind.row_problems`) not met."""
        from spbench.experiment_registry import get_row_kind

        try:
            check_row(row, path)
            kind = get_row_kind(row.get("experiment"))
        except (RowSchemaError, KeyError) as exc:
            return [str(exc).strip("'\"")]
        return kind.row_problems(row)

    def read_meta(self) -> dict | None:
        """meta.json as a mapping; None when there is none, or it holds no JSON object (cut off,
        edited by hand): a writer then records it anew."""
        try:
            return self._parse_meta()
        except (OSError, ValueError):
            return None

    def _parse_meta(self) -> dict | None:
        """meta.json as a mapping, None when there is none or it holds JSON that is no object;
        OSError or ValueError when it cannot be read as JSON (cut off, not UTF-8)."""
        path = self.root / "meta.json"
        if not path.exists():
            return None
        meta = json.loads(path.read_bytes().decode("utf-8"))
        return meta if isinstance(meta, dict) else None

    def _meta_to_rewrite(self) -> dict | None:
        """:meth:`read_meta` for a writer about to rewrite meta.json (under its lock): a meta.json
        that cannot be read as JSON (cut off, not UTF-8) is moved to runs/corrupt/meta-<UTC time>.json
        first, said in one warning line, so the machine history it held is kept, not overwritten."""
        path = self.root / "meta.json"
        try:
            return self._parse_meta()
        except (OSError, ValueError) as exc:
            reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        corrupt = self.runs / "corrupt"
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target, n = corrupt / f"meta-{stamp}.json", 0
        while target.exists():   # another set aside within the same second
            n += 1
            target = corrupt / f"meta-{stamp}-{n}.json"
        try:
            corrupt.mkdir(parents=True, exist_ok=True)
            path.replace(target)
        except OSError as err:
            raise WriteFailed.from_os_error(target, err) from None
        print(f"spbench: warning: {path}: not readable JSON ({reason}); moved to {target} (the machine history "
              f"it held is kept there) and recorded anew", file=sys.stderr, flush=True)
        return None

    def record_writer(self, sweep: str, config: dict, *, created: dict | None = None, fields: dict | None = None,
                      merged: dict | None = None, appended: dict | None = None) -> dict | None:
        """Record in meta.json, under its lock, who writes here now (sweeps and benchmarks alike):
        made on the first write with the sweep's name, this machine's facts and ``created`` (keys
        kept from then on); a machine other than the recorded one (host, cpu, cores) appended to
        ``other_machines``, not hidden; ``config`` and ``fields`` set; each mapping of ``merged``
        (key -> mapping) merged into the mapping at its key; each entry of ``appended``
        (key -> entry) appended to its list; stamped ``created_at``/``updated_at``. Returns the
        recorded machine when it is another one (the caller says so), else None."""
        from spbench.machine import facts as machine

        facts = machine.machine_facts()
        now = _now()
        other = None
        with self.meta_lock():
            meta = self._meta_to_rewrite()
            if meta is None:
                meta = {"sweep": sweep, "created_at": now, "machine": facts, **(created or {})}
            else:
                old = meta.get("machine")
                if not isinstance(old, dict):   # none recorded (meta.json edited by hand): this machine's
                    meta["machine"] = facts
                elif any(old.get(k) != facts.get(k) for k in ("host", "cpu", "cores")):
                    _append(meta, "other_machines", {"at": now, "machine": facts})
                    other = old
            meta.update({"config": config, **(fields or {})})
            for key, entries in (merged or {}).items():
                meta[key] = {**(meta.get(key) if isinstance(meta.get(key), dict) else {}), **entries}
            for key, entry in (appended or {}).items():
                _append(meta, key, {"at": now, **entry})
            meta["updated_at"] = now
            write_json(self.root / "meta.json", meta)
        return other

    def update_meta(self, **fields) -> None:
        """Set ``fields`` in meta.json under its lock (figures known once a sweep ends, as the
        machine's load over a measured sweep); stamped ``updated_at``."""
        with self.meta_lock():
            meta = self._meta_to_rewrite() or {}
            meta.update(fields)
            meta["updated_at"] = _now()
            write_json(self.root / "meta.json", meta)


def _append(meta: dict, key: str, entry: dict) -> None:
    """Append ``entry`` to meta.json's list at ``key`` (anything else there, edited by hand, is replaced)."""
    meta[key] = [*(meta[key] if isinstance(meta.get(key), list) else []), entry]


def _now() -> str:
    """meta.json's time stamps: UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


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


def _holder(path: Path) -> str | None:
    """The pid written in a lock file another process holds now; None when nobody holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd) as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return fh.read().split(" ", 1)[0] or "?"
        except OSError:
            return None
        return None


def find_result_dirs(path) -> list[Path]:
    """The sweep folders under path: path itself when it has runs/, else its children that do."""
    path = Path(path)
    if (path / "runs").is_dir():
        return [path]
    return sorted(p for p in path.iterdir() if (p / "runs").is_dir()) if path.is_dir() else []


def load_rows(path, *, corrupt: list | None = None) -> "pandas.DataFrame":
    """All rows of one results folder (or of every sweep folder under it) as one DataFrame; a row of
    another schema version is a one-line RowSchemaError (a ValueError). A fragment that holds no
    row is a CorruptRow too, unless ``corrupt`` is a list: then its one-line reason is appended
    there and the other rows load. (pandas is imported here, not with the module: every MPI rank
    writes through :class:`ResultStore`, and pandas would add about 60 MB to each rank's peak.)"""
    import pandas as pd

    return pd.DataFrame([row for folder in find_result_dirs(path) for _, row in stored_rows(folder, corrupt=corrupt)])


def stored_rows(folder, *, corrupt: list | None = None):
    """(fragment, row) of each runs/*.json of one sweep folder, by file name; errors as :func:`load_rows`."""
    for frag in sorted((Path(folder) / "runs").glob("*.json")):
        try:
            yield frag, read_row(frag)
        except CorruptRow as exc:
            if corrupt is None:
                raise
            corrupt.append(str(exc))
