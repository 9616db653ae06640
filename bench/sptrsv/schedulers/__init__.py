"""SpTrSV schedulers: ``SCHEDULERS[name](dag, cores, **params)`` -> Schedule or TaskSchedule (§3, §5.2).

A scheduler is one module with ``name``, ``parameters`` (declarations: type, default, range,
meaning; :class:`spbench.parameters.Parameter`) and ``schedule(dag, cores, **params)``; adding
it here is all the runner needs.  A TaskSchedule (SpMP) runs point-to-point.
"""
from __future__ import annotations

from typing import Callable

from spbench.parameters import defaults
from spbench.sptrsv.schedule import Schedule, TaskSchedule
from spbench.sptrsv.schedulers import hdagg, spmp, wavefront
from spbench.sptrsv.schedulers import elastic_divide, growlocal

SCHEDULERS: dict[str, Callable[..., Schedule | TaskSchedule]] = {
    wavefront.name: wavefront.schedule,
    hdagg.name: hdagg.schedule,
    spmp.name: spmp.schedule,
    growlocal.name: growlocal.schedule,
    elastic_divide.name: elastic_divide.schedule,
}

#: each scheduler's declared parameters, name -> {key: Parameter} (the config layer checks ``params:``)
PARAMETERS: dict[str, dict] = {m.name: m.parameters for m in (wavefront, hdagg, spmp, growlocal, elastic_divide)}


def effective_parameters(name: str, given: dict) -> dict:
    """The scheduler's declared defaults overridden by the given values (what a row records)."""
    return {**defaults(PARAMETERS[name]), **given}
