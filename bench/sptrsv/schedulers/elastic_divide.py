"""ElasticDivide SSP scheduler, staleness 2 (sptrsv-elasticity §3, Alg. 3.1); OSP's GrowLocalSSP.

Rule I: v is assignable to core p in superstep s iff every parent w has σ(w) + 2·[π(w) ≠ p] ≤ s;
a child becomes ready on p at max(s, σ of same-core parents, σ + 2 of cross-core parents).
Rule II: own-core ready vertices first (a heap per core whose entries expire into the global pool
two supersteps later), then the smallest id of the globally ready run. Vertices ready at s + 1
and s + 2 wait in a ring of two (per-core and global) lists. Attempts grow α as GrowLocal
(20, α ← α + 1; α ← α + ⌊α/2⌋) and are kept while β = Σ Ω_p / (max Ω_p + L) > 0.99·best; growth
stops on the parallelism check (max ≥ 4L and Σ/max < max(2, 0.8·desired)), or when an attempt
takes more than max(⌊20·desired⌋, ⌈(|ready now| + |ready at s+1|)/2⌉) vertices from the global
pool ("not enough assignable vertices for the next superstep"; own-heap vertices do not count;
waived once 3/4 of the vertices are placed and nothing waits for later supersteps), or when the
global pool is exhausted; it continues while max Ω_p ≤ L.

``sync_cost`` L defaults to 2000, the constant of Algorithm 3.1 (line 14); the reference app
``apps/maxbsp_ssp_sptrsv.cpp`` runs with 500. desired starts at P, as in the reference. The result
is the reference's (core, superstep) vertex for vertex (tests pin checksums of the C++ output).
"""
from __future__ import annotations

import numpy as np

from spbench.kernels.sptrsv import _elastic_divide
from spbench.pipeline.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule
from spbench.sptrsv.schedulers.growlocal import SYNC_COST_MAX, check_parameters

name = "elastic_divide"
STALENESS = 2
kernel = "ssp"  # stale-synchronous kernel, staleness 2 (Algorithm 4.1)
label = "ElasticDivide"  # its name in the paper's figures and tables
parameters = {
    "sync_cost": Parameter("int", 2000, "synchronisation cost L (Algorithm 3.1, line 14)", low=0,
                           high=SYNC_COST_MAX, nullable=False),
    "min_superstep_size": Parameter("int", 20, "initial alpha: vertices per core tried in a new superstep",
                                    low=1, nullable=False, ctype="int32"),
}


def schedule(dag: DAG, cores: int, sync_cost: int = 2000, min_superstep_size: int = 20) -> Schedule:
    """SSP schedule of staleness 2 of `dag` on `cores` cores; deterministic for a fixed input."""
    check_parameters(cores, sync_cost, min_superstep_size)
    core = np.empty(dag.n, dtype=np.int32)
    step = np.empty(dag.n, dtype=np.int32)
    _elastic_divide.elastic_divide(dag.parent_ptr, dag.parent_idx, dag.child_ptr, dag.child_idx,
                               np.ascontiguousarray(dag.weights, dtype=np.int64), int(cores),
                               STALENESS, int(sync_cost), int(min_superstep_size), core, step)
    return Schedule(core=core, superstep=step, n_cores=cores, staleness=STALENESS)
