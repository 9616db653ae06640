"""One HOOI invocation: spbench (Cython TTM + Lanczos) against ``pyttb.tucker_als``.

    python -m spbench.tucker.hooi_bench [--threads 1] [--skip-pyttb-4way] [--out FILE.json]

Cases (the issue's sizes): ``3way`` 2000×1500×1000 with 200k nonzeros, core 10³; ``4way``
500×400×300×200 with 200k nonzeros, core 10⁴.  Coordinates uniform at random (duplicates summed),
values uniform in [0, 1), seeded.  Both solvers start from the same factors (seeded normal,
orthonormalized; pyttb ignores the first mode's, as does HOOI) and do one invocation
(pyttb: ``stoptol=0, maxiters=1``).

Each solver runs in its own child process (``--child``), with ``OMP_NUM_THREADS`` /
``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` = ``--threads``; the child reports the wall time
of the solver call, its fit and ``ru_maxrss`` (peak resident memory of the child, including the
interpreter and the tensor: the ``base`` column is the peak of a child that only builds the
tensor and the factors).

TTM throughput: the Cython kernel alone on every mode (median of ``--reps`` runs after one
untimed run), for N = 3, 4 and K = 10, 20, as elements/s and GFLOP/s (``hooi.ttm_flops``: 2·K̂_n
per element plus the partial Kronecker products), next to a numpy matmul peak (n = 2048, same
thread count, best of 3) measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

CASES = {
    "3way": {"dims": (2000, 1500, 1000), "nnz": 200_000, "K": 10},
    "4way": {"dims": (500, 400, 300, 200), "nnz": 200_000, "K": 10},
}


def make_tensor(dims, nnz: int, seed: int = 0):
    """Uniform random coordinates and values (seeded)."""
    from .tensor import SparseTensor

    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, L, nnz) for L in dims], axis=1)
    return SparseTensor(coords, rng.random(nnz), dims)


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def _child(solver: str, dims, nnz: int, K: int, seed: int, threads: int) -> dict:
    """Run inside the child process: build the tensor and factors, run the solver once."""
    from .factor_start import init_factors
    from .hooi import hooi

    T = make_tensor(dims, nnz, seed)
    Ks = [K] * len(dims)
    F0 = init_factors(T, Ks, "random", seed)
    out = {"solver": solver, "nnz": T.nnz}
    if solver == "base":
        pass
    elif solver == "spbench":
        small = make_tensor((20, 20, 20), 200, seed)           # load the kernel and BLAS
        hooi(small, 2, threads=threads)
        t0 = time.perf_counter()
        res = hooi(T, Ks, init=F0, threads=threads, lanczos="converged")
        out["time"] = time.perf_counter() - t0
        out["fit"] = res.fit
        out["times"] = res.times
        out["queries"] = res.queries
        out["restarts"] = res.restarts
    elif solver == "pyttb":
        import pyttb as ttb

        X = ttb.sptensor(T.coords, T.values[:, None], tuple(T.dims))
        t0 = time.perf_counter()
        _, _, info = ttb.tucker_als(X, Ks, stoptol=0, maxiters=1, init=[F.copy() for F in F0],
                                    printitn=0)
        out["time"] = time.perf_counter() - t0
        out["fit"] = float(info["fit"])
    else:
        raise ValueError(f"unknown solver {solver!r}")
    out["maxrss_mb"] = _maxrss_mb()
    return out


def run_child(solver: str, case: str, seed: int, threads: int, timeout: float) -> dict:
    """Run one solver in a fresh interpreter and parse its JSON line."""
    spec = CASES[case]
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    cmd = [sys.executable, "-m", "spbench.tucker.hooi_bench", "--child", solver, "--case", case,
           "--seed", str(seed), "--threads", str(threads)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"solver": solver, "status": "timeout"}
    if proc.returncode != 0:
        return {"solver": solver, "status": "error", "stderr": proc.stderr[-2000:]}
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    res = json.loads(line)
    res["status"] = "ok"
    res["case"] = case
    res["K"] = spec["K"]
    return res


def matmul_peak(threads: int, n: int = 2048) -> float:
    """numpy matmul GFLOP/s (best of 3) with BLAS limited to ``threads``."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    A, B = rng.random((n, n)), rng.random((n, n))
    best = np.inf
    with threadpool_limits(limits=threads):
        A @ B
        for _ in range(3):
            t0 = time.perf_counter()
            A @ B
            best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def ttm_throughput(nmodes: int, K: int, threads: int, seed: int, reps: int = 3) -> dict:
    """The TTM kernel on every mode of the case with ``nmodes`` modes, core K per mode."""
    from .factor_start import init_factors
    from .ttm import TTMPlan, khat, ttm, ttm_flops, ttm_scratch_len

    spec = CASES["3way" if nmodes == 3 else "4way"]
    T = make_tensor(spec["dims"], spec["nnz"], seed)
    Ks = [K] * nmodes
    F = init_factors(T, Ks, "random", seed)
    total_t, total_flops = 0.0, 0.0
    scratch = np.empty((threads, max(ttm_scratch_len(Ks, n) for n in range(nmodes))))
    for n in range(nmodes):
        plan = TTMPlan.build(T, n)
        out = np.empty((plan.nrows, khat(Ks, n)))
        ttm(T, plan, F, out=out, scratch=scratch, threads=threads)
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            ttm(T, plan, F, out=out, scratch=scratch, threads=threads)
            ts.append(time.perf_counter() - t0)
        total_t += float(np.median(ts))
        total_flops += ttm_flops(T.nnz, Ks, n)
    return {"N": nmodes, "K": K, "time": total_t, "elements_per_s": nmodes * T.nnz / total_t,
            "gflops": total_flops / total_t / 1e9}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", default="3way,4way")
    ap.add_argument("--skip-pyttb-4way", action="store_true", help="do not run pyttb on the 4-way case")
    ap.add_argument("--skip-pyttb", action="store_true", help="do not run pyttb at all")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per child process, seconds")
    ap.add_argument("--reps", type=int, default=3, help="TTM throughput repetitions")
    ap.add_argument("--out", default=None, help="write the raw results as JSON here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--case", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        spec = CASES[args.case]
        print(json.dumps(_child(args.child, spec["dims"], spec["nnz"], spec["K"], args.seed,
                                args.threads)))
        return 0

    rows = []
    for case in args.cases.split(","):
        spec = CASES[case]
        row = {"case": case, "dims": spec["dims"], "nnz": spec["nnz"], "K": spec["K"]}
        for solver in ("base", "spbench", "pyttb"):
            if solver == "pyttb" and (args.skip_pyttb or (case == "4way" and args.skip_pyttb_4way)):
                row[solver] = {"status": "skipped"}
                continue
            row[solver] = run_child(solver, case, args.seed, args.threads, args.timeout)
            print(f"# {case} {solver}: {row[solver]}", file=sys.stderr, flush=True)
        rows.append(row)
    peak = matmul_peak(args.threads)
    thr = [ttm_throughput(N, K, args.threads, args.seed, args.reps) for N in (3, 4) for K in (10, 20)]

    print(f"threads={args.threads}  numpy matmul peak {peak:.1f} GFLOP/s\n")
    print("| case | nnz | core | spbench s | pyttb s | speed-up | spbench fit | pyttb fit | "
          "spbench MB | pyttb MB | base MB | memory ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        s, p, b = row["spbench"], row["pyttb"], row["base"]
        ok = p.get("status") == "ok" and s.get("status") == "ok"
        print(f"| {row['case']} {'×'.join(map(str, row['dims']))} | {row['nnz']} | "
              f"{row['K']}^{len(row['dims'])} | {s.get('time', float('nan')):.3f} | "
              f"{p.get('time', float('nan')):.2f} | "
              f"{(p['time'] / s['time']) if ok else float('nan'):.0f}× | {s.get('fit', float('nan')):.10g} | "
              f"{p.get('fit', float('nan')):.10g} | {s.get('maxrss_mb', float('nan')):.0f} | "
              f"{p.get('maxrss_mb', float('nan')):.0f} | {b.get('maxrss_mb', float('nan')):.0f} | "
              f"{(p['maxrss_mb'] / s['maxrss_mb']) if ok else float('nan'):.1f}× |")
    print("\n| TTM N | K | time s (all modes) | Melements/s | GFLOP/s | % of matmul peak |")
    print("|---|---|---|---|---|---|")
    for t in thr:
        print(f"| {t['N']} | {t['K']} | {t['time']:.3f} | {t['elements_per_s'] / 1e6:.2f} | "
              f"{t['gflops']:.2f} | {100 * t['gflops'] / peak:.1f} |")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"schema_version": 1, "threads": args.threads, "matmul_gflops": peak,
                       "hooi": rows, "ttm": thr}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
