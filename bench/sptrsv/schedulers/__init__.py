"""SpTrSV schedulers: ``SCHEDULERS[name](dag, cores, **params) -> Schedule`` (sptrsv-elasticity §3, §5.2).

A scheduler is one module with ``name``, ``parameters`` and ``schedule(dag, cores, **params)``;
adding it here is all the runner needs.
"""
from __future__ import annotations

from typing import Callable

from spbench.sptrsv.schedule import Schedule
from spbench.sptrsv.schedulers import wavefront

SCHEDULERS: dict[str, Callable[..., Schedule]] = {
    wavefront.name: wavefront.schedule,
}
