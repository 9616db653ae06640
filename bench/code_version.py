"""The version of the code a run executes (part of every run_id): a hash of the
kernel sources and of the files the experiment's package lists in ``RUN_SOURCES``.

A leaf: the runner, the calibrations (which record the code they measured) and the benchmarks
import it; it finds the experiment's package by its import name.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path

__all__ = ["run_sources", "code_version"]


def _entry_files(root: Path, entry: str) -> list[Path]:
    """One ``RUN_SOURCES`` entry: a glob relative to the package folder, or a module of another
    package by its name (``spbench.datasets.sparse_tensor``)."""
    if entry.startswith("spbench."):
        return [Path(importlib.util.find_spec(entry).origin)]
    return sorted(root.glob(entry))


def run_sources(experiment: str) -> list[Path]:
    """The sources a run of ``experiment`` executes: every kernel source (.pyx, .pxd, .pxi, .h) and
    the files its package lists in ``RUN_SOURCES`` (algorithms, runtime path); benchmarks,
    calibrations and profiles are left out, so editing them keeps stored rows current."""
    package = importlib.import_module(f"spbench.{experiment}")
    root = Path(package.__file__).resolve().parent
    kernels = Path(importlib.import_module("spbench.kernels").__file__).resolve().parent
    files = [f for entry in package.RUN_SOURCES for f in _entry_files(root, entry)]
    files += [f for ext in ("pyx", "pxd", "pxi", "h") for f in sorted(kernels.rglob(f"*.{ext}"))]
    return files


def code_version(experiment: str) -> str:
    """Hash of the sources a run's numbers depend on (:func:`run_sources`)."""
    digest = hashlib.sha256()
    for f in run_sources(experiment):
        digest.update(f"{f.parent.name}/{f.name}".encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]
