"""The version of the code a run executes (part of every run_id): a hash of the sources of the
experiment's package, its kernels and the data-layer modules it reads, found from the folders.

A leaf: the runner, the calibrations (which record the code they measured) and the benchmarks
import it; it finds the experiment's package by its import name.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
from pathlib import Path

__all__ = ["run_sources", "code_version"]

#: sub-packages of an experiment whose code no run executes: its report and benchmarks, and its
#: calibration (recorded in meta.json: its numbers, not its code, decide a simulated row)
NOT_RUN = ("report", "benchmarks", "calibration")
KERNEL_SUFFIXES = (".pyx", ".pxd", ".pxi", ".h")
DATASETS = "spbench.datasets"


def _folder(name: str) -> Path:
    return Path(importlib.import_module(name).__file__).resolve().parent


def _datasets_read(files: list[Path]) -> list[Path]:
    """The data-layer modules ``files`` import (at any depth), registries left out: a data set's
    checksum in the run id already pins what a name resolves to."""
    names = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(DATASETS):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    names.add(full if node.module == DATASETS and importlib.util.find_spec(full) else node.module)
    names = sorted(n for n in names - {DATASETS} if not n.endswith("registry"))
    return [Path(importlib.util.find_spec(n).origin) for n in names]


def run_sources(experiment: str) -> list[Path]:
    """The sources a run of ``experiment`` executes: every module of its package but those under
    :data:`NOT_RUN`, its kernels (``kernels/<experiment>/``) and the shared ones at the root of
    ``kernels/``, and the data-layer modules those modules import. Editing a report, a benchmark,
    a calibration or the other experiment's kernels keeps stored rows current."""
    root = _folder(f"spbench.{experiment}")
    files = [f for f in sorted(root.rglob("*.py")) if f.relative_to(root).parts[0] not in NOT_RUN]
    files += _datasets_read(files)
    kernels = _folder("spbench.kernels")
    files += [f for f in sorted(kernels.iterdir()) if f.suffix in KERNEL_SUFFIXES]
    files += [f for f in sorted((kernels / experiment).rglob("*")) if f.suffix in KERNEL_SUFFIXES]
    return files


def code_version(experiment: str) -> str:
    """Hash of the sources a run's numbers depend on (:func:`run_sources`)."""
    digest = hashlib.sha256()
    for f in run_sources(experiment):
        digest.update(f"{f.parent.name}/{f.name}".encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]
