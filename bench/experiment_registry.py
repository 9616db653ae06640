"""The experiments spbench runs, by the name a config gives (``experiment:``), DESIGN.md §1.

Each is imported on first use, so `spbench --help` loads none. Adding an experiment is one
package implementing :class:`spbench.experiment.Experiment` plus one line in ``REGISTRY``.
"""
from __future__ import annotations

from .experiment import Experiment


def _sptrsv() -> Experiment:
    from .sptrsv.runner import SptrsvExperiment
    return SptrsvExperiment()


def _tucker() -> Experiment:
    from .tucker.runner import TuckerExperiment
    return TuckerExperiment()


#: experiment name -> a function making its implementation
REGISTRY = {"sptrsv": _sptrsv, "tucker": _tucker}
EXPERIMENTS = tuple(REGISTRY)


def get_experiment(name: str) -> Experiment:
    """A fresh instance of experiment ``name``; KeyError listing the known ones otherwise."""
    try:
        make = REGISTRY[name]
    except (KeyError, TypeError):
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}") from None
    return make()
