"""HDagg (Zarebavani, Cheshmi, Liu, Strout, Mehri Dehnavi 2022): grouped, glued level sets (BSP).

Equal to the original implementation the paper ran (sptrsv-elasticity §5.1: HDagg-benchmark's
``src/hdagg/hdagg.cpp``, the ``SpTrSv_LL_Tree_HDAGG`` path: partialSparsification,
treeBasedGrouping, HDAGG with bin packing): the same superstep of every row on every matrix
compared (``spbench bench sptrsv-refs``; docs/performance.md has the table).

1. Partial sparsification: runs of columns forming a dense clique with identical columns below
   become chains (only the run's last column keeps its edges out of the run), then an edge
   i -> j is dropped when a child k of i also has the child j.
2. Tree-based grouping: a vertex with exactly one remaining child joins the child's group, so
   groups are in-trees; groups are numbered by their smallest vertex; cost = Σ row nnz.
3. Level sets of the group DAG (longest path), groups of a level in number order.
4. Gluing: a window [lb, ub) of levels grows one level at a time; each attempt bin-packs the
   window's connected components onto the cores (below) and adds the packing's divergence
   Σ_{i<e} (c_i/C)·log2((c_i/C)·e) to one running sum per window (the original never resets it
   between attempts); the level joins while the sum stays < ``threshold`` (0.003, the original's
   constant).  e = ``cores``, or the first level's width when that is narrower; a wider level
   restores ``cores``; a core among the e with no work makes the sum NaN and ends the window.
   The first level is always a window.
5. Bin-packing: components in order of their first group (level, then number); fewer than
   ``cores``: one per core; else a core takes components while its load is below (cost not yet
   placed) / (cores not yet filled), the last core takes the rest.

Differences that do not change the result: the original finds cliques in ``cores`` blocks of
columns at once, and a clique crossing a block edge is written by two threads (a data race);
we find them in one pass, which is what the original computes when the block's own thread writes
last (it did on every matrix compared).  Its connected components come from parallel hooking,
ours from union-find; both label a component by its first position.  Ties of the divergence at
the threshold could differ in the last bit (compiler contraction of ``+= f * log2``), never seen.

Result: a staleness-1 Schedule, superstep = window, core = the bin of the vertex's component.
Every edge inside a window joins one component (same core), the others go to later windows.
Cost: each gluing attempt re-packs the whole window, O(Σ_windows levels × groups in the window),
as the original; with one core the answer (one window) is returned directly.
"""
from __future__ import annotations

import numpy as np

from spbench.kernels.sptrsv import _hdagg
from spbench.pipeline.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule, ScheduleTimeout

name = "hdagg"
superlinear = True  # its gluing re-packs whole windows: `execution: schedule` gives it a time budget
kernel = "bsp"  # the kernel its schedules run on by default (staleness 1)
label = "HDagg"  # its name in the paper's figures and tables
parameters = {
    "threshold": Parameter("float", 0.003, "load-balance divergence below which consecutive levels are "
                           "glued into one superstep", low=0.0, nullable=False),
    "grouping": Parameter("str", "tree", "tree: sparsify and group in-trees first (the original's "
                          "SpTrSv_LL_Tree_HDAGG); none: glue the rows' own levels (its SpTrSv_LL_HDAGG)",
                          choices=("tree", "none"), nullable=False),
}


def _csr_by(key: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable order of range(len(key)) grouped by key, with the int32 pointer array."""
    order = np.argsort(key, kind="stable").astype(np.int32)
    ptr = np.zeros(n_keys + 1, dtype=np.int32)
    np.cumsum(np.bincount(key, minlength=n_keys), out=ptr[1:])
    return ptr, order


def schedule(dag: DAG, cores: int, threshold: float = 0.003, grouping: str = "tree",
             deadline: float | None = None) -> Schedule:
    """Sparsified, tree-grouped DAG (or the rows themselves); glued level windows as supersteps,
    components bin-packed. ``deadline``: a ``time.monotonic()`` time past which the gluing stops
    and ScheduleTimeout is raised (no schedule)."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    if not threshold >= 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    if grouping not in ("tree", "none"):
        raise ValueError(f"grouping must be 'tree' or 'none', got {grouping!r}")
    if cores == 1:  # one bin is always balanced (divergence 0): everything glues into one window
        zeros = np.zeros(dag.n, dtype=np.int32)
        return Schedule(core=zeros, superstep=zeros, n_cores=1, staleness=1)
    if grouping == "tree":
        sp_ptr, sp_idx = _hdagg.sparsified_children(dag.n, dag.child_ptr, dag.child_idx)
        group, glevel = _hdagg.tree_groups(dag.n, sp_ptr, sp_idx)
    else:  # every row its own group, all edges (they give the same levels and components)
        sp_ptr, sp_idx = dag.child_ptr.astype(np.int64), dag.child_idx
        group, glevel = np.arange(dag.n, dtype=np.int32), dag.levels().astype(np.int32)
    n_groups = glevel.size
    cost = np.bincount(group, weights=dag.weights, minlength=n_groups)
    src = np.repeat(group, np.diff(sp_ptr))
    dst = group[sp_idx]
    cross = src != dst
    src, dst = src[cross], dst[cross]
    # position of each group: by level, then group number (the original's level sets)
    n_levels = int(glevel.max()) + 1
    level_ptr, order = _csr_by(glevel, n_levels)
    pos = np.empty(n_groups, dtype=np.int32)
    pos[order] = np.arange(n_groups, dtype=np.int32)
    edge_ptr, by_level = _csr_by(glevel[dst], n_levels)
    pstep, pcore = _hdagg.glue(level_ptr, edge_ptr, np.ascontiguousarray(pos[src[by_level]]),
                               np.ascontiguousarray(pos[dst[by_level]]), np.ascontiguousarray(glevel[order]),
                               np.ascontiguousarray(cost[order]), cores, float(threshold),
                               float(deadline) if deadline is not None else 0.0)
    if pstep is None:
        raise ScheduleTimeout(f"HDagg passed its deadline while gluing {n_levels} levels")
    vpos = pos[group]
    return Schedule(core=pcore[vpos], superstep=pstep[vpos], n_cores=cores, staleness=1)
