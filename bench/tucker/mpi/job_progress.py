"""Progress of a running MPI job, from its ranks to the sweep that launched it.

The worker appends one JSON line per event to a file the launcher names in the job spec; the
launcher tails it while it waits for the job and prints each event like the sweep's own points:
``start`` (a task begins), ``invocation`` (one HOOI invocation ended, with its fit) and ``finish``
(the task's status and error). A file, not a pipe, because the ranks' stdout goes through the
MPI launcher (buffered, interleaved, or on other nodes), while the results folder is shared.
Events are short single ``write`` calls on a file opened for appending, so a line from another
rank never interleaves with one from rank 0.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

__all__ = ["ProgressWriter", "ProgressReader"]


class ProgressWriter:
    """``writer(event, **fields)``: append ``{"event": event, "t": unix time, **fields}`` to ``path``
    (no-op without a path); every rank may write, and in a healthy job only rank 0 does."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = None if path is None else Path(path)

    def __call__(self, event: str, **fields) -> None:
        if self.path is None:
            return
        line = json.dumps({"event": event, "t": time.time(), **fields}, default=float) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


class ProgressReader:
    """The events appended to ``path`` since the last call (complete lines only)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._offset = 0
        self._partial = b""

    def events(self) -> list[dict]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:  # a line we cannot read is skipped, never fatal
                continue
        return out
