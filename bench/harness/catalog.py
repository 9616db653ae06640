"""Every benchmark `spbench bench` knows, by name, read from the declarations.

Each experiment declares its benchmarks in ``spbench.<experiment>.benchmarks.declarations``
(a ``BENCHMARKS`` tuple of :class:`~spbench.harness.declaration.Benchmark`); those of the data
layer and the pre-flight, which belong to neither, in :mod:`spbench.harness.shared_benchmarks`. The modules
are found from the folders (``<package>/benchmarks/declarations.py``), not listed by hand;
importing them imports no measuring code. :func:`register` adds one more (a test's, or a plugin's
``register()``: plugins named in ``$SPBENCH_PLUGINS`` are loaded whenever the benchmarks are read,
so a benchmark outside the package is a command, and its rows profile, with no file here edited).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from spbench.harness.declaration import Benchmark

__all__ = ["declaration_modules", "declared", "find", "register", "unregister", "units"]

#: the declarations of benchmarks no experiment owns
SHARED = "spbench.harness.shared_benchmarks"
#: benchmarks registered at run time, by name
_REGISTERED: dict[str, Benchmark] = {}


def declaration_modules() -> tuple[str, ...]:
    """The modules holding declarations: each experiment's (by folder name), then the shared one."""
    found = sorted(Path(__file__).resolve().parents[1].glob("*/benchmarks/declarations.py"))
    return (*(f"spbench.{path.parents[1].name}.benchmarks.declarations" for path in found), SHARED)


def declared() -> dict[str, Benchmark]:
    """Benchmark name → declaration, the declared ones then the registered ones (plugins, which
    may register benchmarks, loaded first: :func:`spbench.plugins.load_plugins`)."""
    from spbench.plugins import load_plugins

    load_plugins()
    found: dict[str, Benchmark] = {}
    for module in declaration_modules():
        for benchmark in importlib.import_module(module).BENCHMARKS:
            if benchmark.name in found:
                raise ValueError(f"benchmark {benchmark.name} is declared twice (again in {module})")
            found[benchmark.name] = benchmark
    return {**found, **_REGISTERED}


def find(name: str) -> Benchmark:
    """The declaration of benchmark ``name``; KeyError naming the known ones otherwise."""
    known = declared()
    if name not in known:
        raise KeyError(f"no benchmark {name!r}; known: {', '.join(sorted(known))}")
    return known[name]


def register(benchmark: Benchmark) -> Benchmark:
    """Add ``benchmark`` to those `spbench bench` runs (replacing one of its name) and return it."""
    _REGISTERED[benchmark.name] = benchmark
    return benchmark


def unregister(name: str) -> None:
    """Forget a benchmark :func:`register` added."""
    _REGISTERED.pop(name, None)


def units() -> dict[str, str]:
    """The units of the figures the declared benchmarks' rows carry beyond the shared ones
    (``UNITS`` of each declarations module, then each declaration's own ``units``)."""
    found: dict[str, str] = {}
    for module in declaration_modules():
        found.update(getattr(importlib.import_module(module), "UNITS", {}))
    for benchmark in declared().values():
        found.update(benchmark.units)
    return found
