"""SSP/BSP schedules (π, σ), their validity check and the locality reordering (sptrsv-elasticity Def. 2.1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spbench.sptrsv.dag import DAG, check_lower


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
