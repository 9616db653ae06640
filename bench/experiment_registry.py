"""The experiments spbench runs, by the name a config gives (``experiment:``), and every kind of
stored rows `spbench profile` and `spbench compare` read, by the rows' ``experiment`` (docs/design.md,
"The Experiment interface").

Each is imported on first use, so `spbench --help` loads none. Adding an experiment is one
package implementing :class:`spbench.experiment.Experiment` plus one line in ``REGISTRY``; a kind
of rows no sweep runs (those of `spbench bench …`) is a :class:`spbench.experiment.RowKind` and
one line in ``ROW_KINDS``.
"""
from __future__ import annotations

from spbench.experiment import Experiment, RowKind


def _sptrsv() -> Experiment:
    from spbench.sptrsv.experiment import SptrsvExperiment
    return SptrsvExperiment()


def _tucker() -> Experiment:
    from spbench.tucker.experiment import TuckerExperiment
    return TuckerExperiment()


def _benchmarks() -> RowKind:
    from spbench.harness.row_kind import BenchRows
    return BenchRows()


#: experiment name -> a function making its implementation
REGISTRY = {"sptrsv": _sptrsv, "tucker": _tucker}
EXPERIMENTS = tuple(REGISTRY)
#: every kind of stored rows: the experiments', then those of commands that are no sweep
ROW_KINDS = {**REGISTRY, "bench": _benchmarks}


def get_experiment(name: str) -> Experiment:
    """A fresh instance of experiment ``name``, its algorithms with those plugins add
    (:func:`spbench.plugins.load_plugins`); KeyError listing the known ones otherwise (a kind of
    rows no sweep runs is refused, saying what writes them)."""
    from spbench.plugins import load_plugins

    try:
        make = REGISTRY[name]
    except (KeyError, TypeError):
        known = f"known: {', '.join(EXPERIMENTS)}"
        if isinstance(name, str) and name in ROW_KINDS:
            raise KeyError(f"experiment {name!r} names the rows {ROW_KINDS[name]().written_by} writes, which "
                           f"no sweep runs; {known}") from None
        raise KeyError(f"unknown experiment {name!r}; {known}") from None
    load_plugins()
    return make()


def declared_options() -> dict[str, dict]:
    """Each experiment's own config keys (:attr:`spbench.experiment.Experiment.options`), by name in
    the registry's order; no plugin is loaded (plugins add algorithms, not keys), so a plugin that
    cannot be loaded keeps no `spbench run --help` from showing."""
    return {name: make().options for name, make in REGISTRY.items()}


def get_row_kind(name: str) -> RowKind:
    """The kind of rows whose ``experiment`` is ``name``; KeyError listing the known ones otherwise."""
    try:
        make = ROW_KINDS[name]
    except (KeyError, TypeError):
        raise KeyError(f"rows of experiment {name!r}; expected one of {', '.join(ROW_KINDS)}") from None
    return make()
