"""SSP/BSP schedules (π, σ), their validity check and the locality reordering (sptrsv-elasticity Def. 2.1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spbench.sptrsv.dag import DAG, check_lower


class ScheduleTimeout(RuntimeError):
    """A scheduler given a deadline (``deadline``, a ``time.monotonic()`` time) passed it."""


class ScheduleError(ValueError):
    """A schedule that breaks Definition 2.1 (Eq. 2.5) or is malformed."""


@dataclass(frozen=True, eq=False)
class Schedule:
    """Core π(v) and superstep σ(v) of every vertex; staleness s (1 = BSP), Definition 2.1."""

    core: np.ndarray
    superstep: np.ndarray
    n_cores: int
    staleness: int = 1

    def __post_init__(self):
        core = np.ascontiguousarray(self.core, dtype=np.int32)
        superstep = np.ascontiguousarray(self.superstep, dtype=np.int32)
        if core.ndim != 1 or core.shape != superstep.shape:
            raise ScheduleError(f"core and superstep must be 1-D of equal length, got shapes "
                                f"{core.shape} and {superstep.shape}")
        if int(self.n_cores) < 1 or int(self.staleness) < 1:
            raise ScheduleError(f"n_cores and staleness must be >= 1, got {self.n_cores} and "
                                f"{self.staleness}")
        object.__setattr__(self, "core", core)
        object.__setattr__(self, "superstep", superstep)
        object.__setattr__(self, "n_cores", int(self.n_cores))
        object.__setattr__(self, "staleness", int(self.staleness))

    @property
    def n(self) -> int:
        """Number of scheduled vertices."""
        return int(self.core.size)

    @property
    def n_supersteps(self) -> int:
        """max σ + 1 (empty supersteps included)."""
        return int(self.superstep.max()) + 1 if self.core.size else 0


def validate(schedule: Schedule, dag: DAG) -> None:
    """Raise ScheduleError unless every edge (v, w) has σ(v) + s·[π(v) ≠ π(w)] ≤ σ(w).

    Eq. 2.5 prints the Kronecker delta δ_{π(v),π(w)}; by Remark 2.2 (s = 1 is BSP, where a parent
    on the same core may share the superstep) the factor is 1 for *different* cores, as here.
    """
    if schedule.n != dag.n:
        raise ScheduleError(f"schedule assigns {schedule.n} vertices, the DAG has {dag.n}: "
                            "every vertex needs exactly one (core, superstep)")
    bad = np.flatnonzero((schedule.core < 0) | (schedule.core >= schedule.n_cores))
    if bad.size:
        v = bad[0]
        raise ScheduleError(f"vertex {v} is on core {schedule.core[v]}, outside "
                            f"[0, {schedule.n_cores})")
    bad = np.flatnonzero(schedule.superstep < 0)
    if bad.size:
        v = bad[0]
        raise ScheduleError(f"vertex {v} has negative superstep {schedule.superstep[v]}")
    src, dst = dag.edges()
    core, step, s = schedule.core, schedule.superstep, schedule.staleness
    cross = core[src] != core[dst]
    earliest = step[src].astype(np.int64) + s * cross
    bad = np.flatnonzero(earliest > step[dst])
    if bad.size:
        k = bad[0]
        v, w = int(src[k]), int(dst[k])
        rule = f"σ(w) >= σ(v) + {s} across cores" if cross[k] else "σ(w) >= σ(v) on one core"
        raise ScheduleError(
            f"edge ({v} -> {w}) breaks Eq. 2.5 (staleness {s}): parent {v} on core {core[v]} "
            f"superstep {step[v]}, child {w} on core {core[w]} superstep {step[w]}; need {rule}"
            f" ({bad.size} violating edges in total)")


def reorder(schedule: Schedule, L: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Permute L by (superstep, core, row id) so block (s, p) is a contiguous row range (§4.2).

    Returns ``(L_perm, perm, block_ptr)``: L_perm = P L Pᵀ with row k = original row perm[k],
    so b_perm = b[perm] and x_original[perm] = x_perm; block (s, p) is rows
    ``block_ptr[s*P + p]:block_ptr[s*P + p + 1]``.  Raises ScheduleError if L_perm is not lower
    triangular (the schedule is invalid for L).
    """
    check_lower(L)
    n = L.shape[0]
    if schedule.n != n:
        raise ScheduleError(f"schedule has {schedule.n} vertices, matrix has {n} rows")
    ids = np.arange(n, dtype=np.int32)
    perm = np.lexsort((ids, schedule.core, schedule.superstep)).astype(np.int32)
    iperm = np.empty(n, dtype=np.int32)
    iperm[perm] = ids
    lengths = np.diff(L.indptr)[perm]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    gather = np.repeat(L.indptr[perm].astype(np.int64) - indptr[:-1], lengths)
    gather += np.arange(L.nnz, dtype=np.int64)
    L_perm = sp.csr_matrix((L.data[gather], iperm[L.indices[gather]], indptr.astype(np.int32)),
                           shape=(n, n))
    L_perm.sort_indices()
    try:
        check_lower(L_perm)
    except ValueError as exc:
        raise ScheduleError(f"reordered matrix is not lower triangular: {exc}") from exc
    P = schedule.n_cores
    counts = np.bincount(schedule.superstep.astype(np.int64) * P + schedule.core,
                         minlength=schedule.n_supersteps * P)
    block_ptr = np.zeros(counts.size + 1, dtype=np.int32)
    np.cumsum(counts, out=block_ptr[1:])
    return L_perm, perm, block_ptr


@dataclass(frozen=True, eq=False)
class TaskSchedule:
    """A schedule run point-to-point: block (s, p) of ``schedule`` is task t = s·P + p (SpMP).

    Core p runs its tasks in order of s; before task t it waits for the finished flags of its
    parents ``parent_idx[parent_ptr[t]:parent_ptr[t + 1]]`` (tasks of other cores and earlier
    steps).  Rows are laid out exactly as :func:`reorder` lays out ``schedule``, so the same
    permuted matrix serves the P2P and (when ``schedule`` is valid) the BSP/SSP kernels.
    Check with :func:`validate_tasks`.
    """

    schedule: Schedule
    parent_ptr: np.ndarray
    parent_idx: np.ndarray

    def __post_init__(self):
        if not isinstance(self.schedule, Schedule):
            raise ScheduleError(f"schedule must be a Schedule, got {type(self.schedule).__name__}")
        ptr = np.ascontiguousarray(self.parent_ptr, dtype=np.int32)
        idx = np.ascontiguousarray(self.parent_idx, dtype=np.int32)
        if ptr.ndim != 1 or idx.ndim != 1 or ptr.size != self.n_tasks + 1:
            raise ScheduleError(f"parent_ptr must have n_tasks + 1 = {self.n_tasks + 1} entries, "
                                f"got shape {ptr.shape}")
        if ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0):
            raise ScheduleError("parent_ptr must be non-decreasing from 0 to len(parent_idx)")
        object.__setattr__(self, "parent_ptr", ptr)
        object.__setattr__(self, "parent_idx", idx)

    @property
    def n(self) -> int:
        return self.schedule.n

    @property
    def n_cores(self) -> int:
        return self.schedule.n_cores

    @property
    def n_supersteps(self) -> int:
        """Steps of the task grid (the tasks per core, empty ones included)."""
        return self.schedule.n_supersteps

    @property
    def n_tasks(self) -> int:
        return self.schedule.n_supersteps * self.schedule.n_cores

    @property
    def n_task_edges(self) -> int:
        return int(self.parent_idx.size)


def task_graph(schedule: Schedule, dag: DAG, reduce: bool = True) -> TaskSchedule:
    """Point-to-point task graph of a schedule: task(v) = σ(v)·P + π(v), an edge a -> t for every
    DAG edge between different cores.

    Same-core edges are dropped (program order covers them); of a task's parents on one core only
    the latest step is kept (program order on that core implies the earlier ones); with ``reduce``
    the 2-hop rules of ``_taskgraph.reduce_parents`` drop further implied edges.  Requires every
    cross-core edge to go to a later step and same-core edges not backwards (any valid schedule).
    """
    from spbench.kernels.sptrsv import _taskgraph

    if schedule.n != dag.n:
        raise ScheduleError(f"schedule has {schedule.n} vertices, the DAG has {dag.n}")
    P = schedule.n_cores
    n_steps = max(schedule.n_supersteps, 1)
    src, dst = dag.edges()
    core, step = schedule.core, schedule.superstep
    cross = core[src] != core[dst]
    bad = np.flatnonzero((cross & (step[src] >= step[dst])) | (step[src] > step[dst]))
    if bad.size:
        v, w = int(src[bad[0]]), int(dst[bad[0]])
        raise ScheduleError(f"edge ({v} -> {w}) goes from core {core[v]} step {step[v]} to core "
                            f"{core[w]} step {step[w]}: no task order can honour it")
    task = step.astype(np.int64) * P + core
    child = task[dst[cross]]
    parent = task[src[cross]]
    # one parent per (child, parent core): the latest step
    order = np.lexsort((parent // P, parent % P, child))
    child, parent = child[order], parent[order]
    keep = np.ones(child.size, dtype=bool)
    if child.size:
        keep[:-1] = (child[1:] != child[:-1]) | (parent[1:] % P != parent[:-1] % P)
    child, parent = child[keep], parent[keep]
    ptr = np.zeros(n_steps * P + 1, dtype=np.int32)
    np.cumsum(np.bincount(child, minlength=n_steps * P), out=ptr[1:])
    idx = parent.astype(np.int32)
    if reduce:
        ptr, idx = _taskgraph.reduce_parents(ptr, idx, n_steps, P)
    return TaskSchedule(schedule=schedule, parent_ptr=ptr, parent_idx=idx)


def validate_tasks(tasks: TaskSchedule, dag: DAG) -> None:
    """Raise ScheduleError unless point-to-point execution of ``tasks`` honours every DAG edge.

    Parents must be tasks of another core at an earlier step (so the spin waits cannot deadlock);
    an edge (v, w) is honoured when v's task runs before w's on the same core (same task: rows
    run in id order), or when v's task is reachable from w's task through parent edges and
    program order (exact, via ``_taskgraph.known_done``: memory n_tasks × P int32).
    """
    from spbench.kernels.sptrsv import _taskgraph

    schedule = tasks.schedule
    if schedule.n != dag.n:
        raise ScheduleError(f"schedule assigns {schedule.n} vertices, the DAG has {dag.n}")
    P = schedule.n_cores
    core, step = schedule.core, schedule.superstep
    if np.any((core < 0) | (core >= P)) or np.any(step < 0):
        raise ScheduleError(f"cores must lie in [0, {P}) and supersteps be >= 0")
    idx = tasks.parent_idx
    child = np.repeat(np.arange(tasks.n_tasks), np.diff(tasks.parent_ptr))
    bad = np.flatnonzero((idx < 0) | (idx >= tasks.n_tasks) | (idx // P >= child // P)
                         | (idx % P == child % P))
    if bad.size:
        k = bad[0]
        raise ScheduleError(f"task {child[k]} has parent task {idx[k]}: parents must be tasks of "
                            "another core at an earlier step")
    K = _taskgraph.known_done(tasks.parent_ptr, idx, max(schedule.n_supersteps, 1), P)
    src, dst = dag.edges()
    same = core[src] == core[dst]
    task_dst = step[dst].astype(np.int64) * P + core[dst]
    ok = np.where(same, step[src] <= step[dst], K[task_dst, core[src]] >= step[src])
    bad = np.flatnonzero(~ok)
    if bad.size:
        v, w = int(src[bad[0]]), int(dst[bad[0]])
        raise ScheduleError(f"edge ({v} -> {w}) is not covered: task (step {step[v]}, core "
                            f"{core[v]}) is not guaranteed to finish before task (step {step[w]}, "
                            f"core {core[w]}) starts ({bad.size} uncovered edges in total)")
