"""Wavefront (level-set) scheduler: one superstep per level of G_A (sptrsv-elasticity §1, Table A.1)."""
from __future__ import annotations

import numpy as np

from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule

name = "wavefront"
kernel = "bsp"  # the kernel its schedules run on by default (staleness 1)
label = "Wavefront"  # its name in the paper's figures and tables
parameters: dict = {}  # none


def schedule(dag: DAG, cores: int) -> Schedule:
    """Superstep = wavefront; each level split by row id into `cores` contiguous chunks of balanced weight."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    level = dag.levels()
    order = np.lexsort((np.arange(dag.n), level))
    w = dag.weights[order].astype(np.float64)
    level_sorted = level[order]
    totals = np.bincount(level_sorted, weights=w)
    prefix = np.cumsum(w) - w
    level_start = np.concatenate(([0.0], np.cumsum(totals)[:-1]))
    within = prefix - level_start[level_sorted]
    core_sorted = np.floor(cores * (within + 0.5 * w) / totals[level_sorted]).astype(np.int64)
    core = np.empty(dag.n, dtype=np.int32)
    core[order] = np.clip(core_sorted, 0, cores - 1)
    return Schedule(core=core, superstep=level, n_cores=cores, staleness=1)
