"""SpTrSV schedulers: ``SCHEDULERS[name](dag, cores, **params)`` -> Schedule or TaskSchedule (§3, §5.2).

A scheduler is one module with ``name``, ``parameters`` and ``schedule(dag, cores, **params)``;
adding it here is all the runner needs.  A TaskSchedule (SpMP) runs point-to-point.
"""
from __future__ import annotations

from typing import Callable

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
