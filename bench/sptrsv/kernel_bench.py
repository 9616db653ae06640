"""Kernel benchmarks measured side by side in one process (`make bench-serial`, `make bench-barrier`).

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

import argparse
import sys
import time

import numpy as np
import scipy.sparse.linalg as spla

from spbench.datasets.synthetic import generate
from spbench.kernels import _sptrsv
from spbench.datasets.transforms import lower_triangle
from spbench.sptrsv.execute import WARMUP_RUNS, solve_point


def _laplacian_lower(grid: int):
    return lower_triangle(generate("lap2d-5pt", {"grid": grid}))


def _median_time(fn, repeats: int) -> float:
    for _ in range(WARMUP_RUNS):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def copy_bandwidth(nbytes: int, repeats: int = 10) -> float:
    """Bytes/s of np.copyto counting read + write, median over repeats."""
    src = np.ones(max(1, nbytes // 8))
    dst = np.empty_like(src)
    t = _median_time(lambda: np.copyto(dst, src), repeats)
    return 2 * src.nbytes / t


def serial_traffic_bytes(L) -> int:
    """Compulsory traffic of one forward substitution: CSR arrays and b read once, x written once."""
    n = L.shape[0]
    return L.data.nbytes + L.indices.nbytes + L.indptr.nbytes + 2 * 8 * n


def bench_serial(grid: int, repeats: int) -> list[tuple[str, str]]:
    L = _laplacian_lower(grid)
    ours = solve_point(L, "serial", 1, repeats=repeats)
    b = np.ones(L.shape[0])
    scipy_time = _median_time(lambda: spla.spsolve_triangular(L, b, lower=True), repeats)
    x_ref = spla.spsolve_triangular(L, b, lower=True)
    x_ours = np.empty_like(b)
    _sptrsv.serial_solve(L.indptr, L.indices, L.data, b, x_ours)
    traffic = serial_traffic_bytes(L)
    bw_cache = copy_bandwidth(traffic)
    bw_dram = copy_bandwidth(256 * 2**20)
    achieved = traffic / ours["solve_time"]
    return [
        ("matrix", f"lower triangle of lap2d-5pt, grid {grid}: n = {L.shape[0]:,}, nnz = {L.nnz:,}"),
        ("scipy spsolve_triangular (median)", f"{scipy_time * 1e3:.3f} ms"),
        ("spbench serial kernel (median)", f"{ours['solve_time'] * 1e3:.3f} ms"),
        ("speed-up over scipy", f"{scipy_time / ours['solve_time']:.1f}x"),
        ("kernel backward error", f"{ours['residual']:.1e}"),
        ("max |x_ours - x_scipy| / max |x_scipy|", f"{np.abs(x_ours - x_ref).max() / np.abs(x_ref).max():.1e}"),
        ("kernel compulsory traffic", f"{traffic / 2**20:.2f} MiB per solve"),
        ("kernel achieved bandwidth", f"{achieved / 1e9:.2f} GB/s"),
        (f"copy bandwidth, {traffic / 2**20:.1f} MiB (cache-sized)", f"{bw_cache / 1e9:.2f} GB/s"),
        ("copy bandwidth, 256 MiB (DRAM)", f"{bw_dram / 1e9:.2f} GB/s"),
        ("kernel / DRAM copy bandwidth", f"{achieved / bw_dram:.2f}"),
    ]


def bench_barrier(grid: int, cores: int, repeats: int, rounds: int) -> list[tuple[str, str]]:
    L = _laplacian_lower(grid)
    times = {"spin": [], "omp": []}
    supersteps = None
    for _ in range(rounds):
        for barrier in ("spin", "omp"):
            res = solve_point(L, "wavefront", cores, repeats=repeats, barrier=barrier)
            times[barrier].append(res["solve_time"])
            supersteps = res["supersteps"]
    spin, omp = np.median(times["spin"]), np.median(times["omp"])
    return [
        ("matrix", f"lower triangle of lap2d-5pt, grid {grid}: n = {L.shape[0]:,}, nnz = {L.nnz:,}"),
        ("schedule", f"wavefront, {cores} cores, {supersteps} supersteps"),
        ("spin barrier (median of rounds)", f"{spin * 1e3:.3f} ms ({spin / supersteps * 1e9:.0f} ns per superstep)"),
        ("OpenMP barrier (median of rounds)", f"{omp * 1e3:.3f} ms ({omp / supersteps * 1e9:.0f} ns per superstep)"),
        ("OpenMP / spin", f"{omp / spin:.2f}"),
    ]


def bench_schedulers(grid: int, cores: int, repeats: int, rounds: int) -> list[tuple]:
    from spbench.sptrsv.schedulers import SCHEDULERS

    L = _laplacian_lower(grid)
    algorithms = ["serial"] + list(SCHEDULERS)
    runs = {a: [] for a in algorithms}
    for _ in range(rounds):
        for alg in algorithms:
            runs[alg].append(solve_point(L, alg, 1 if alg == "serial" else cores, repeats=repeats))
    rows = [("matrix", f"lower triangle of lap2d-5pt, grid {grid}: n = {L.shape[0]:,}, nnz = {L.nnz:,}; "
                       f"{cores} cores, {rounds} rounds of {repeats} timed solves")]
    for alg in algorithms:
        res = runs[alg]
        solve = np.median([r["solve_time"] for r in res])
        sched = np.median([r["schedule_time"] for r in res])
        worst = max(r["residual"] for r in res)
        rows.append((alg, f"kernel {res[0]['kernel']}, {res[0]['supersteps']} supersteps, schedule "
                          f"{sched * 1e3:.2f} ms, solve {solve * 1e3:.3f} ms, backward error <= {worst:.1e}"))
    return rows


def bench_slope(grids: list[int], trials: int) -> list[tuple]:
    from spbench.sptrsv.dag import DAG
    from spbench.sptrsv.schedulers import SCHEDULERS

    dags = [DAG(_laplacian_lower(g)) for g in grids]
    nnz = np.array([d.nnz for d in dags], dtype=float)
    rows = [("grids", f"{grids} (nnz {int(nnz[0]):,} to {int(nnz[-1]):,}, {nnz[-1] / nnz[0]:.1f}x)")]
    for name, scheduler in SCHEDULERS.items():
        times = []
        for dag in dags:
            best = np.inf
            for _ in range(trials):
                t0 = time.perf_counter()
                scheduler(dag, 2)
                best = min(best, time.perf_counter() - t0)
            times.append(best)
        slope = np.polyfit(np.log(nnz), np.log(times), 1)[0]
        rows.append((name, f"slope {slope:.2f}; times (ms, min of {trials}) "
                           + " / ".join(f"{t * 1e3:.2f}" for t in times)))
    return rows


def _print_table(rows) -> None:
    print("| quantity | value |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spbench.sptrsv.kernel_bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("serial", help="our serial kernel vs scipy, and bandwidth")
    s.add_argument("--grid", type=int, default=400)
    s.add_argument("--repeats", type=int, default=100)
    b = sub.add_parser("barrier", help="spin vs OpenMP barrier on the BSP kernel")
    b.add_argument("--grid", type=int, default=300)
    b.add_argument("--cores", type=int, default=2)
    b.add_argument("--repeats", type=int, default=100)
    b.add_argument("--rounds", type=int, default=5)
    c = sub.add_parser("schedulers", help="every scheduler: supersteps, scheduling and solve time")
    c.add_argument("--grid", type=int, default=300)
    c.add_argument("--cores", type=int, default=2)
    c.add_argument("--repeats", type=int, default=100)
    c.add_argument("--rounds", type=int, default=3)
    sl = sub.add_parser("slope", help="scheduling time vs nnz, log-log slope per scheduler")
    sl.add_argument("--grids", default="100,200,350,550")
    sl.add_argument("--trials", type=int, default=7)
    args = parser.parse_args(argv)
    if args.what == "serial":
        _print_table(bench_serial(args.grid, args.repeats))
    elif args.what == "barrier":
        _print_table(bench_barrier(args.grid, args.cores, args.repeats, args.rounds))
    elif args.what == "schedulers":
        _print_table(bench_schedulers(args.grid, args.cores, args.repeats, args.rounds))
    else:
        _print_table(bench_slope([int(g) for g in args.grids.split(",")], args.trials))
    return 0


if __name__ == "__main__":
    sys.exit(main())
