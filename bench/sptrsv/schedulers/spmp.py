"""SpMP (Park, Smelyanskiy, Sundaram, Dubey 2014): level sets run point-to-point (sptrsv-elasticity §5.1).

Follows SpMP's ``LevelSchedule`` (jspark1105/SpMP, ``LevelSchedule.cpp``) with these choices:

- Levels are the wavefronts of G_A (longest path from a source, ``DAG.levels``), not SpMP's BFS
  levels on the symmetrised pattern; both are level sets in which no level depends on itself.
- Each level, rows in id order, is cut into ``cores`` contiguous chunks of equal nnz by prefix
  sums (the split of ``wavefront.schedule``); chunk p of level l is task (l, p) on core p.
- Rows are laid out by (level, core, id) (``schedule.reorder``), so each task is one contiguous
  row range and the matrix stays lower triangular for our kernels; SpMP instead makes all of a
  thread's rows contiguous, which breaks triangularity.
- Task edges: one per DAG edge between different cores; edges inside a core are dropped (program
  order), of a task's parents on one core only the latest is kept, and with ``reduce`` the 2-hop
  rules of ``_taskgraph.reduce_parents`` drop edges implied by another parent (SpMP's approximate
  transitive reduction, slightly stronger).
"""
from __future__ import annotations

from spbench.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import TaskSchedule, task_graph
from spbench.sptrsv.schedulers import wavefront

name = "spmp"
kernel = "p2p"  # point-to-point execution of the task graph
label = "SpMP"  # its name in the paper's figures and tables
parameters = {
    "reduce": Parameter("bool", True, "drop task-graph edges implied by others (transitive reduction)",
                        nullable=False),
}


def schedule(dag: DAG, cores: int, reduce: bool = True) -> TaskSchedule:
    """Level-set tasks of equal nnz per core and level, with a reduced point-to-point task graph."""
    levels = wavefront.schedule(dag, cores)
    return task_graph(levels, dag, reduce=bool(reduce))
