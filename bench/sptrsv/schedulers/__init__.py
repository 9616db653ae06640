"""SpTrSV schedulers: ``SCHEDULERS[name](dag, cores, **params)`` -> Schedule or TaskSchedule (§3, §5.2).

A scheduler is one module with ``name``, ``kernel`` (the kernel its schedules run on: what
``kernel: auto`` means), ``label`` (its name in the paper's figures), ``parameters``
(declarations: type, default, range, meaning; :class:`spbench.pipeline.parameters.Parameter`) and
``schedule(dag, cores, **params)``; one line in ``MODULES`` is all the runner, the sweep and
the profile need. A TaskSchedule (SpMP) runs point-to-point.
"""
from __future__ import annotations

from typing import Callable

from spbench.experiment import Algorithm
from spbench.pipeline.parameters import defaults
from spbench.sptrsv.schedule import Schedule, TaskSchedule
from spbench.sptrsv.schedulers import hdagg, spmp, wavefront
from spbench.sptrsv.schedulers import elastic_divide, growlocal

#: the registered scheduler modules, in the order of the paper's tables
MODULES = (wavefront, hdagg, spmp, growlocal, elastic_divide)
#: the serial baseline the schedulers are measured against: the natural row order on one core
SERIAL = Algorithm("serial", "Serial", "scheduler", {}, "serial")

#: each scheduler's declaration (name, label, parameters, kernel), by name
REGISTRY: dict[str, Algorithm] = {m.name: Algorithm(m.name, m.label, "scheduler", m.parameters, m.kernel)
                                  for m in MODULES}
SCHEDULERS: dict[str, Callable[..., Schedule | TaskSchedule]] = {m.name: m.schedule for m in MODULES}
#: schedulers whose time grows faster than the nonzeros (sptrsv-elasticity Fig. 6.2: HDagg); their
#: ``schedule`` takes ``deadline`` and `execution: schedule` runs them under the key ``timeout``
SUPERLINEAR: tuple = tuple(m.name for m in MODULES if getattr(m, "superlinear", False))
#: each scheduler's declared parameters, name -> {key: Parameter} (the config layer checks ``params:``)
PARAMETERS: dict[str, dict] = {name: alg.parameters for name, alg in REGISTRY.items()}


def effective_parameters(name: str, given: dict) -> dict:
    """The scheduler's declared defaults overridden by the given values (what a row records)."""
    return {**defaults(PARAMETERS[name]), **given}
