"""Atomic file writes (docs/design.md, "Results"): readers see the old file or the whole new one, never a part.

Every writer of rows, calibrations, tables and figures goes through here: a temporary file in the
target folder (``.<name>.<random><suffix>``, which ``ResultStore.clean_stale`` removes after a
crash), flushed, then renamed onto the target. A write that fails (full disk, read-only file
system, no permission, a file where a folder should be) is a :class:`WriteFailed` naming the path and
the cause; :func:`probe_folder` finds the failures knowable before anything is written.
"""
from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["WriteFailed", "probe_folder", "atomic_output", "atomic_write_text", "write_json", "json_ready"]

#: free bytes below which a folder counts as on a full disk (a row is a few KB)
MIN_FREE_BYTES = 64 * 1024


class WriteFailed(OSError):
    """A file or folder could not be written; the message is one line naming the path and the cause."""

    def __init__(self, path, cause: str, code: int | None = None):
        super().__init__(code, cause)
        self.path, self.cause = Path(path), cause

    def __str__(self) -> str:
        return f"{self.path}: cannot write ({self.cause})"

    @classmethod
    def from_os_error(cls, path, exc: OSError) -> "WriteFailed":
        """``exc``, raised while writing ``path``, as a WriteFailed naming ``path``."""
        if isinstance(exc, WriteFailed):
            return exc
        return cls(path, exc.strerror or str(exc) or type(exc).__name__, exc.errno)


def _first_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def probe_folder(folder: str | os.PathLike) -> None:
    """Check that files can be written in ``folder`` (created, with its parents, when missing):
    a WriteFailed otherwise, for a path that is a file, a read-only file system, no permission or
    a full disk. Leaves nothing behind: a temporary file is made and removed, and the folders this
    call created are removed again."""
    folder = Path(folder)
    existing = _first_existing(folder.absolute())
    if not existing.is_dir():
        raise WriteFailed(existing, "a file, not a folder", errno.ENOTDIR)
    created = [p for p in (folder.absolute(), *folder.absolute().parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):  # a sweep holding the folder cleans temp files
            os.unlink(tmp)
        stat = os.statvfs(folder)
    except OSError as exc:
        raise WriteFailed.from_os_error(folder, exc) from None
    finally:
        for p in created:  # deepest first
            with contextlib.suppress(OSError):
                p.rmdir()
    free = stat.f_bavail * stat.f_frsize
    if free < MIN_FREE_BYTES:
        raise WriteFailed(folder, f"no space left on device: {free} bytes free", errno.ENOSPC)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success move it onto ``path`` (mode 0644).

    The temporary name ends with ``suffix`` (default: ``path``'s own suffix) so that writers
    that infer the format from the name (matplotlib, numpy.savez) see the right extension. An
    OSError while the file is made, written or moved is a :class:`WriteFailed` naming ``path``.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.",
                                   suffix=path.suffix if suffix is None else suffix)
        os.close(fd)
    except OSError as exc:
        raise WriteFailed.from_os_error(path, exc) from None
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise WriteFailed.from_os_error(path, exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically, flushed to disk, and return the path."""
    with atomic_output(path, suffix=".tmp") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def json_ready(value):
    """JSON has no NaN/inf: NaN becomes null, ±inf the strings 'inf'/'-inf' (numpy values too)."""
    if hasattr(value, "item") and not hasattr(value, "__len__"):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def write_json(path: str | os.PathLike, obj, *, indent: int = 1, default=_json_default) -> Path:
    """Write ``obj`` as sorted, indented JSON to ``path`` atomically (numpy values as plain ones;
    ``default`` converts anything else JSON does not know, as in :func:`json.dumps`)."""
    return atomic_write_text(path, json.dumps(json_ready(obj), default=default, indent=indent,
                                              sort_keys=True) + "\n")
