"""Memory that a read, conversion or generation sized by its input's own numbers (a size line, a
largest index, a parameter) would take, against what this machine has free: a one-line
DatasetError before the allocation, or when one fails anyway, instead of a MemoryError traceback.

The one reading of free memory and one way of writing a size: `spbench run`'s pre-flight check
imports them from here (the data layer sits below the sweep's modules), so the two read alike.
"""
from __future__ import annotations

from pathlib import Path

from .errors import DatasetError

__all__ = ["available_memory", "size_text", "require_memory", "out_of_memory"]

_MEMINFO = Path("/proc/meminfo")
_CGROUP = Path("/sys/fs/cgroup")


def size_text(nbytes: float) -> str:
    """``1.4 TB``, ``12.3 GB``, ``410 MB``, ``14 kB`` or ``900 B`` (powers of 10)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}" if scale >= 1e9 else f"{nbytes / scale:.0f} {unit}"
    return f"{int(nbytes)} B"


def _meminfo_available() -> int | None:
    try:
        for line in _MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory() -> tuple[int | None, str]:
    """(bytes a new allocation may still take, where the figure comes from): MemAvailable, or
    what is left under the cgroup's memory.max when less; (None, why) where neither is readable."""
    found: list[tuple[int, str]] = []
    meminfo = _meminfo_available()
    if meminfo is not None:
        found.append((meminfo, "MemAvailable"))
    try:
        limit = (_CGROUP / "memory.max").read_text().strip()
        if limit != "max":
            used = int((_CGROUP / "memory.current").read_text().strip() or 0)
            found.append((max(0, int(limit) - used), "under the cgroup's memory.max"))
    except (OSError, ValueError):
        pass
    return min(found) if found else (None, "unknown (no /proc/meminfo)")


def _free_text() -> str:
    available, where = available_memory()
    return f"{size_text(available)} is available ({where})" if available is not None else f"free memory {where}"


def require_memory(nbytes: float, what: str, basis: str) -> None:
    """A DatasetError ``WHAT needs about N of memory (BASIS) but M is available`` when ``nbytes``
    exceed the free memory; nothing when they fit or the free memory is unknown."""
    available, _ = available_memory()
    if available is not None and nbytes > available:
        raise DatasetError(f"{what} needs about {size_text(nbytes)} of memory ({basis}) but {_free_text()}")


def out_of_memory(subject, doing: str, nbytes: float | None = None, basis: str = "") -> DatasetError:
    """The DatasetError for a MemoryError caught while ``doing`` something to ``subject`` (a file, a
    generator): the estimate when known, and the memory free now."""
    need = (f"about {size_text(nbytes)} of memory" + (f", {basis}" if basis else "")) if nbytes else "more memory"
    return DatasetError(f"{subject}: out of memory {doing} ({need}; {_free_text()})")
