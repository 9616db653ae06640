"""SpMP (Park, Smelyanskiy, Sundaram, Dubey 2014): level sets run point-to-point (sptrsv-elasticity §5.1).

The schedule and task graph of SpMP's ``LevelSchedule::constructTaskGraph`` (IntelLabs/SpMP, as
HDagg's benchmark runs it), computed in one parallel Cython pass (``kernels/sptrsv/_spmp.pyx``):

- Levels are the wavefronts of G_A (SpMP's level sets: a row joins the level after its last
  parent's), rows of a level in id order.
- Each level is cut into one task per core by SpMP's rule: row cost = nonzeros of the row of
  L + Lᵀ, thread t's task ends at the first row whose cost prefix reaches (t + 1)·⌈total / P⌉,
  and the next thread's search starts one row later. Task (l, p) is block (l, p) of the grid.
- Task edges: one per pair of tasks on different cores joined by a DAG edge. With ``reduce``,
  SpMP's approximate transitive reduction drops the edge a -> b when a reaches a parent of b in
  one step (a child of a, or a's next task on its core; the parents of b being its other-core
  parents and b's previous task on its core). ``spbench bench sptrsv-refs`` compares the levels
  and the kept edges with the original's.
- Rows are laid out by (level, core, id) (``schedule.reorder``), so each task is one contiguous
  row range and the matrix stays lower triangular for our kernels; SpMP instead makes all of a
  thread's rows contiguous (a layout, not a different schedule).

Scheduling runs on min(cores, usable cores) OpenMP threads; the result does not depend on it. In
a forked child (simulated sweeps run their points so, ``spbench.pipeline.point_process``) it runs on one:
libgomp's thread pool does not survive a fork, and a parallel region there hangs once the parent
has run one.
"""
from __future__ import annotations

import os

from spbench.kernels.sptrsv import _spmp
from spbench.machine.facts import usable_cores
from spbench.pipeline.parameters import Parameter
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.schedule import Schedule, TaskSchedule

name = "spmp"
kernel = "p2p"  # point-to-point execution of the task graph
label = "SpMP"  # its name in the paper's figures and tables
parameters = {
    "reduce": Parameter("bool", True, "drop task-graph edges implied by others (transitive reduction)",
                        nullable=False),
}
_forked = False  # set in a child forked after this module was imported


def _note_fork() -> None:
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_note_fork)


def schedule(dag: DAG, cores: int, reduce: bool = True) -> TaskSchedule:
    """SpMP's level-set tasks (one per level and core) and its (reduced) point-to-point task graph."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    threads = 1 if _forked else max(1, min(int(cores), usable_cores()))
    level, core, ptr, idx = _spmp.level_task_graph(dag.parent_ptr, dag.parent_idx, dag.child_ptr,
                                                   dag.child_idx, int(cores), bool(reduce), threads)
    return TaskSchedule(schedule=Schedule(core=core, superstep=level, n_cores=cores, staleness=1),
                        parent_ptr=ptr, parent_idx=idx)
