"""GrowLocal BSP scheduler (Böhnlein et al. 2025; sptrsv-elasticity §1, §3): OSP's GrowLocalAutoCores.

Supersteps are grown by attempts with a vertex limit α (20, then α ← α + 1; α ← α + ⌊α/2⌋):
core 0 takes up to α vertices, cores 1..P−1 take vertices until their weight reaches the running
maximum. A core takes from its own ready heap first (children all of whose parents assigned in
this superstep are on that core: core exclusivity), then the smallest id of the global ready
set. An attempt is kept while β = Σ_p Ω_p / (max_p Ω_p + L) > 0.97·best; growth stops when
max_p Ω_p ≥ 4L and Σ/max < max(2, 0.8·desired), and always continues while max_p Ω_p ≤ L.
desired starts at P (as the reference) and is updated to 0.3·desired + 0.6·best + 0.1·P.

``sync_cost`` L defaults to 500, the value of the reference benchmark app
(``apps/maxbsp_ssp_sptrsv.cpp``, ``defaultSynchronisationCosts``) with which the 54 supersteps on
the 300×300 Laplacian were measured. Vertex weight = row nnz including the diagonal. The result
is the reference's (core, superstep) vertex for vertex (tests pin checksums of the C++ output).
"""
from __future__ import annotations

import numpy as np

from spbench.kernels.sptrsv import _grow_local
from spbench.pipeline.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule

#: the kernels compute 4 x L in int64 (the parallel-check weight), so L stays below a quarter of its range
SYNC_COST_MAX = (2**63 - 1) // 4

name = "growlocal"
kernel = "bsp"  # the kernel its schedules run on by default (staleness 1)
label = "GrowLocal"  # its name in the paper's figures and tables
parameters = {
    "sync_cost": Parameter("int", 500, "synchronisation cost L in the superstep-growth test "
                           "(the reference app's value)", low=0, high=SYNC_COST_MAX,
                           nullable=False),
    "min_superstep_size": Parameter("int", 20, "initial alpha: vertices per core tried in a new superstep",
                                    low=1, nullable=False, ctype="int32"),
}


def check_parameters(cores: int, sync_cost: int, min_superstep_size: int) -> None:
    """The checks GrowLocal and ElasticDivide share: P >= 1, L >= 0, initial alpha >= 1."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    if sync_cost < 0:
        raise ValueError(f"sync_cost must be >= 0, got {sync_cost}")
    if min_superstep_size < 1:
        raise ValueError(f"min_superstep_size must be >= 1, got {min_superstep_size}")


def schedule(dag: DAG, cores: int, sync_cost: int = 500, min_superstep_size: int = 20) -> Schedule:
    """BSP schedule (staleness 1) of `dag` on `cores` cores; deterministic for a fixed input."""
    check_parameters(cores, sync_cost, min_superstep_size)
    core = np.empty(dag.n, dtype=np.int32)
    step = np.empty(dag.n, dtype=np.int32)
    _grow_local.grow_local(dag.parent_ptr, dag.child_ptr, dag.child_idx,
                           np.ascontiguousarray(dag.weights, dtype=np.int64), int(cores),
                           int(sync_cost), int(min_superstep_size), core, step)
    return Schedule(core=core, superstep=step, n_cores=cores, staleness=1)
