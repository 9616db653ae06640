"""Atomic file writes (docs/design.md, "Results"): readers see the old file or the whole new one, never a part.

Every writer of rows, calibrations, tables and figures goes through here: a temporary file in the
target folder (``.<name>.<random><suffix>``, which ``ResultStore.clean_stale`` removes after a
crash), flushed, then renamed onto the target.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_output", "atomic_write_text", "write_json", "json_ready"]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success move it onto ``path`` (mode 0644).

    The temporary name ends with ``suffix`` (default: ``path``'s own suffix) so that writers
    that infer the format from the name (matplotlib, numpy.savez) see the right extension.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.",
                               suffix=path.suffix if suffix is None else suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
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
