"""HDagg (Zarebavani, Cheshmi, Liu, Strout, Mehri Dehnavi 2022): grouped, glued level sets (BSP).

Follows sympiler/aggregation's ``src/hdagg/hdagg.cpp``:

1. Partial sparsification: an edge j -> i with a 2-hop path j -> k -> i is dropped (only for the
   grouping; dependencies below use all edges).  The chains-of-identical-columns step is omitted.
2. Tree-based grouping: a vertex with exactly one remaining child joins the child's group, so
   groups are in-trees; group cost = Σ row nnz (vertex weights).
3. Level sets of the group DAG (longest path).
4. Gluing: consecutive levels [lb, ub) form one superstep while the load-balance divergence
   Σ_i (c_i/C)·log2((c_i/C)·cores_eff) of the bin-packed window stays < ``threshold`` (0.003);
   here cores_eff = ``cores`` (a window whose components cannot fill every core counts as
   unbalanced); a single level is always a window.
5. Bin-packing: the window's connected components (group edges inside the window), in order of
   their smallest group (= root vertex) id, go to core 0, 1, ... in turn, a core taking components
   until its load reaches (cost not yet placed) / (cores not yet filled).

Result: a staleness-1 Schedule, superstep = window, core = the bin of the vertex's component.
Every edge inside a window joins one component (same core), the others go to later windows.
Cost: each gluing attempt re-packs the whole window, O(Σ_windows levels × groups in the window);
with one core the answer (one window) is returned directly.
"""
from __future__ import annotations

import numpy as np

from spbench.kernels import _dag, _hdagg
from spbench.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule

name = "hdagg"
kernel = "bsp"  # the kernel its schedules run on by default (staleness 1)
label = "HDagg"  # its name in the paper's figures and tables
parameters = {
    "threshold": Parameter("float", 0.003, "load-balance divergence below which consecutive levels are "
                           "glued into one superstep", low=0.0, nullable=False),
}


def _csr_by(key: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable order of range(len(key)) grouped by key, with the int32 pointer array."""
    order = np.argsort(key, kind="stable").astype(np.int32)
    ptr = np.zeros(n_keys + 1, dtype=np.int32)
    np.cumsum(np.bincount(key, minlength=n_keys), out=ptr[1:])
    return ptr, order


def schedule(dag: DAG, cores: int, threshold: float = 0.003) -> Schedule:
    """Groups (tree-based), glued level windows as supersteps, components bin-packed onto cores."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    if not threshold >= 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    if cores == 1:  # one bin is always balanced (divergence 0): everything glues into one window
        zeros = np.zeros(dag.n, dtype=np.int32)
        return Schedule(core=zeros, superstep=zeros, n_cores=1, staleness=1)
    group = _hdagg.tree_groups(dag.n, dag.parent_ptr, dag.parent_idx)
    n_groups = int(group.max()) + 1
    cost = np.bincount(group, weights=dag.weights, minlength=n_groups).astype(np.int64)
    src, dst = dag.edges()
    gsrc, gdst = group[src], group[dst]
    cross = gsrc != gdst
    pairs = np.unique(gdst[cross].astype(np.int64) * n_groups + gsrc[cross])
    edge_dst = (pairs // n_groups).astype(np.int32)
    edge_src = (pairs % n_groups).astype(np.int32)
    # groups are numbered topologically (edge_src < edge_dst): CSR of group parents -> levels
    gptr = np.zeros(n_groups + 1, dtype=np.int32)
    np.cumsum(np.bincount(edge_dst, minlength=n_groups), out=gptr[1:])
    glevel = _dag.levels(gptr, edge_src).astype(np.int32)
    n_levels = int(glevel.max()) + 1
    level_ptr, level_groups = _csr_by(glevel, n_levels)
    edge_ptr, by_level = _csr_by(glevel[edge_dst], n_levels)
    gstep, gcore = _hdagg.glue(level_ptr, level_groups, edge_ptr,
                               np.ascontiguousarray(edge_src[by_level]),
                               np.ascontiguousarray(edge_dst[by_level]), glevel, cost, cores,
                               float(threshold))
    return Schedule(core=gcore[group], superstep=gstep[group], n_cores=cores, staleness=1)
