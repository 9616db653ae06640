"""Why wavefront and SpMP beat serial at ONE core (`spbench bench order`, `make bench-order`).

At 1 core a schedule is only a row order. The serial kernel in natural order makes each row of a
banded lower triangle wait for the row just before it (x[i-1] is an operand of row i), so the
core runs one dependency chain; in level (wavefront) order consecutive rows are independent and
the out-of-order core overlaps them. This bench measures it side by side: the SAME serial kernel
on the natural-order matrix and on the wavefront-permuted one (and SpMP's 1-core order), plus the
wavefront schedule on the BSP kernel at 1 core, interleaved rounds, medians (sptrsv-elasticity
§5.1 protocol: 2 untimed then R timed solves). It also counts how often a row depends on the
row right before it, the chain the natural order builds.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from spbench.datasets.synthetic import generate
from spbench.kernels.sptrsv import _sptrsv
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import WARMUP_RUNS, prepare_lower, solve_point
from spbench.sptrsv.schedule import TaskSchedule, reorder
from spbench.sptrsv.schedulers import SCHEDULERS

#: the item timing the wavefront schedule itself (BSP kernel, 1 core) beside the three row orders
BSP_ITEM = "wavefront BSP kernel"
MATRICES = (("lap2d-5pt", {"grid": 120}), ("lap3d-7pt", {"grid": 24}),
            ("lap2d-5pt", {"grid": 400}), ("lap3d-7pt", {"grid": 60}))


def serial_time(L: sp.csr_matrix, repeats: int) -> float:
    """Median of ``repeats`` timed serial solves of L x = 1 after the untimed warm-up."""
    n = L.shape[0]
    b, x = np.ones(n), np.zeros(n)
    times = np.empty(WARMUP_RUNS + repeats)
    with threadpool_limits(limits=1, user_api="blas"):
        _sptrsv.serial_solve_timed(L.indptr, L.indices, L.data, b, x, times)
    return float(np.median(times[WARMUP_RUNS:]))


def order_of(algorithm: str, dag: DAG, L: sp.csr_matrix) -> sp.csr_matrix:
    """L permuted into ``algorithm``'s 1-core schedule order (superstep, then row id)."""
    result = SCHEDULERS[algorithm](dag, 1)
    schedule = result.schedule if isinstance(result, TaskSchedule) else result
    return reorder(schedule, L)[0]


def chained_rows(L: sp.csr_matrix) -> float:
    """Fraction of rows i > 0 with L[i, i-1] != 0: rows that wait for the row just before them."""
    rows = np.repeat(np.arange(L.shape[0]), np.diff(L.indptr))
    return float(np.count_nonzero(L.indices == rows - 1) / max(1, L.shape[0] - 1))


def bench_matrix(name: str, params: dict | None, repeats: int, rounds: int) -> list[dict]:
    """One matrix: a generator with ``params``, or (``params`` None) a registry data set, its
    stand-in when the real matrix is not cached. Items: the serial kernel in natural, wavefront
    and SpMP order (with the fraction of rows chained to the row before) and the wavefront
    schedule on the BSP kernel; each time the median of the rounds' medians (``times``)."""
    source = "synthetic"
    if params is None:
        from spbench.datasets.registry import resolve
        loaded = resolve(name).load(fetch=False, standin=True)
        A, source = loaded.matrix, loaded.source
    else:
        A = generate(name, params)
    L = prepare_lower(A)
    dag = DAG(L)
    orders = {"natural": L, "wavefront": order_of("wavefront", dag, L), "spmp": order_of("spmp", dag, L)}
    times: dict[str, list[float]] = {k: [] for k in [*orders, BSP_ITEM]}
    for _ in range(rounds):
        for key, M in orders.items():
            times[key].append(serial_time(M, repeats))
        times[BSP_ITEM].append(solve_point(L, "wavefront", 1, repeats=repeats, dag=dag)["solve_time"])
    label = name if params is None else f"{name}[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]"
    return [{"dataset": label, "dataset_source": source, "item": key, "n": int(L.shape[0]), "nnz": int(L.nnz),
             "time": float(np.median(v)), "times": v,
             **({"chained": chained_rows(orders[key])} if key in orders else {})}
            for key, v in times.items()]
