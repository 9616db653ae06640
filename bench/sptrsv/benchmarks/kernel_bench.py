"""Kernel benchmarks measured side by side in one process (`spbench bench serial|barrier|schedulers|slope`).

serial:  our serial forward substitution vs scipy.sparse.linalg.spsolve_triangular on the same
         lower triangle, both under the paper's protocol (2 untimed, then R timed solves, §5.1),
         and the kernel's compulsory traffic in bytes/s against memory-copy bandwidth measured in
         the same run (a cache-sized copy and a 256 MiB copy).
barrier: the wavefront schedule on the BSP kernel with our spin barrier vs OpenMP's barrier,
         interleaved rounds so machine noise hits both alike.
schedulers: every scheduler on one matrix: supersteps, scheduling time, solve time (median of
         `repeats`), kernel, backward error; rounds interleaved, medians reported.
slope:   scheduling time of each scheduler over grids spanning ~30x in nnz and the fitted
         log-log slope (sptrsv-elasticity Fig. 6.2; a slope <= 1 is linear scaling).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse.linalg as spla

from spbench.datasets.synthetic import generate
from spbench.kernels.sptrsv import _sptrsv
from spbench.datasets.transforms import lower_triangle
from spbench.sptrsv.execute import WARMUP_RUNS, solve_point
from spbench.machine.timing import median_time


def _laplacian_lower(grid: int):
    return lower_triangle(generate("lap2d-5pt", {"grid": grid}))


def copy_bandwidth(nbytes: int, repeats: int = 10) -> float:
    """Bytes/s of np.copyto counting read + write, median over repeats."""
    src = np.ones(max(1, nbytes // 8))
    dst = np.empty_like(src)
    t = median_time(lambda: np.copyto(dst, src), repeats, WARMUP_RUNS)
    return 2 * src.nbytes / t


def serial_traffic_bytes(L) -> int:
    """Compulsory traffic of one forward substitution: CSR arrays and b read once, x written once."""
    n = L.shape[0]
    return L.data.nbytes + L.indices.nbytes + L.indptr.nbytes + 2 * 8 * n


def _matrix_facts(grid: int, L) -> dict:
    return {"dataset": f"lap2d-5pt[grid={grid}]", "n": int(L.shape[0]), "nnz": int(L.nnz)}


def _worst(results: list[dict]) -> str:
    """``invalid`` when any solve's backward error failed its check, else ``ok``."""
    return "invalid" if any(r["status"] != "ok" for r in results) else "ok"


def _quiet(text: str) -> None:
    """The default progress callback: says nothing."""


def bench_serial(grid: int, repeats: int, dram_bytes: int = 256 * 2**20, say=_quiet) -> list[dict]:
    """Items: scipy's solve, our serial kernel (backward error, difference to scipy, compulsory
    traffic, achieved bandwidth) and copy bandwidth of a cache-sized and a DRAM-sized buffer."""
    L = _laplacian_lower(grid)
    facts = _matrix_facts(grid, L)
    say("spbench serial kernel")
    ours = solve_point(L, "serial", 1, repeats=repeats)
    b = np.ones(L.shape[0])
    say("scipy spsolve_triangular")
    scipy_time = median_time(lambda: spla.spsolve_triangular(L, b, lower=True), repeats, WARMUP_RUNS)
    x_ref = spla.spsolve_triangular(L, b, lower=True)
    x_ours = np.empty_like(b)
    _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, x_ours)
    traffic = serial_traffic_bytes(L)
    say("copy bandwidth")
    bw_cache = copy_bandwidth(traffic)
    bw_dram = copy_bandwidth(dram_bytes)
    return [
        {**facts, "item": "scipy spsolve_triangular", "time": scipy_time},
        {**facts, "item": "spbench serial", "time": ours["solve_time"], "times": ours["solve_times"],
         "residual": ours["residual"], "status": ours["status"],
         "max_rel_diff": float(np.abs(x_ours - x_ref).max() / np.abs(x_ref).max()),
         "traffic_bytes": traffic, "bandwidth": traffic / ours["solve_time"]},
        {**facts, "item": "copy cache-sized", "bytes": traffic, "bandwidth": bw_cache},
        {**facts, "item": "copy DRAM", "bytes": dram_bytes, "bandwidth": bw_dram},
    ]


def bench_barrier(grid: int, cores: int, repeats: int, rounds: int, say=_quiet) -> list[dict]:
    """Items: the wavefront schedule on the BSP kernel with the spin and the OpenMP barrier; the
    time is the median of the rounds' medians (``times``)."""
    L = _laplacian_lower(grid)
    runs = {"spin": [], "omp": []}
    for r in range(rounds):
        say(f"round {r + 1}/{rounds}")
        for barrier in runs:
            runs[barrier].append(solve_point(L, "wavefront", cores, repeats=repeats, barrier=barrier))
    return [{**_matrix_facts(grid, L), "item": barrier, "cores": cores, "supersteps": res[-1]["supersteps"],
             "time": float(np.median([r["solve_time"] for r in res])), "times": [r["solve_time"] for r in res],
             "residual": max(r["residual"] for r in res), "status": _worst(res)} for barrier, res in runs.items()]


def bench_schedulers(grid: int, cores: int, repeats: int, rounds: int, say=_quiet) -> list[dict]:
    """Items: serial and every scheduler on its own kernel; medians over the rounds, the worst
    backward error."""
    from spbench.sptrsv.schedulers import SCHEDULERS

    L = _laplacian_lower(grid)
    algorithms = ["serial"] + list(SCHEDULERS)
    runs = {a: [] for a in algorithms}
    for r in range(rounds):
        say(f"round {r + 1}/{rounds}")
        for alg in algorithms:
            runs[alg].append(solve_point(L, alg, 1 if alg == "serial" else cores, repeats=repeats))
    return [{**_matrix_facts(grid, L), "item": alg, "cores": 1 if alg == "serial" else cores,
             "kernel": res[0]["kernel"], "supersteps": res[0]["supersteps"],
             "schedule_time": float(np.median([r["schedule_time"] for r in res])),
             "time": float(np.median([r["solve_time"] for r in res])), "times": [r["solve_time"] for r in res],
             "residual": max(r["residual"] for r in res), "status": _worst(res)} for alg, res in runs.items()]


def bench_slope(grids: list[int], trials: int, say=_quiet) -> list[dict]:
    """Items: each scheduler's scheduling time (best of ``trials``) on every grid at 2 cores and the
    fitted log-log slope against nnz."""
    from spbench.sptrsv.dag import DAG
    from spbench.sptrsv.schedulers import SCHEDULERS

    dags = [DAG(_laplacian_lower(g)) for g in grids]
    nnz = np.array([d.nnz for d in dags], dtype=float)
    items = []
    for name, scheduler in SCHEDULERS.items():
        say(name)
        times = []
        for dag in dags:
            best = np.inf
            for _ in range(trials):
                t0 = time.perf_counter()
                scheduler(dag, 2)
                best = min(best, time.perf_counter() - t0)
            times.append(best)
        items.append({"dataset": "lap2d-5pt[grid=" + ",".join(map(str, grids)) + "]", "item": name,
                      "grids": list(grids), "nnz": [int(v) for v in nnz], "schedule_times": times,
                      "slope": float(np.polyfit(np.log(nnz), np.log(times), 1)[0])})
    return items
