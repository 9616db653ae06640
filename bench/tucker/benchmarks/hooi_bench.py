"""One HOOI invocation: spbench (Cython TTM + Lanczos) against ``pyttb.tucker_als``.

    spbench bench hooi [--threads 1] [--skip-pyttb-4way] [--out DIR]

Cases (the issue's sizes): ``3way`` 2000×1500×1000 with 200k nonzeros, core 10³; ``4way``
500×400×300×200 with 200k nonzeros, core 10⁴.  Coordinates uniform at random (duplicates summed),
values uniform in [0, 1), seeded.  Both solvers start from the same factors (seeded normal,
orthonormalized; pyttb ignores the first mode's, as does HOOI) and do one invocation
(pyttb: ``stoptol=0, maxiters=1``).

Each solver runs in its own child process (:data:`CHILD_SCRIPT`), with ``OMP_NUM_THREADS`` /
``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` = ``--threads``; the child reports the wall time
of the solver call, its fit and ``ru_maxrss`` (peak resident memory of the child, including the
interpreter and the tensor: the ``base`` column is the peak of a child that only builds the
tensor and the factors).

TTM throughput: the local TTM kernels alone on every mode, ``csf`` (HOOI's default) and the
paper's element-wise one called alternately (median of ``--reps`` rounds after one untimed call),
for N = 3, 4 and K = 10, 20, as elements/s and GFLOP/s of the flops each kernel performs, next to
a numpy matmul peak (n = 2048, same thread count, best of 3) measured in the same run.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

from spbench.tucker.benchmarks.bench_tensors import case_label, make_tensor, matmul_peak

CASES = {
    "3way": {"dims": (2000, 1500, 1000), "nnz": 200_000, "K": 10},
    "4way": {"dims": (500, 400, 300, 200), "nnz": 200_000, "K": 10},
}


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def _child(solver: str, dims, nnz: int, K: int, seed: int, threads: int) -> dict:
    """Run inside the child process: build the tensor and factors, run the solver once."""
    from spbench.tucker.hooi.factor_start import init_factors
    from spbench.tucker.hooi.loop import hooi

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


#: what a child process runs: ``_child`` of (solver, case, seed, threads) from argv, one JSON line out
CHILD_SCRIPT = ("import json, sys\nfrom spbench.tucker.benchmarks.hooi_bench import CASES, _child\n"
                "solver, case, seed, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
                "spec = CASES[case]\n"
                "print(json.dumps(_child(solver, spec['dims'], spec['nnz'], spec['K'], seed, threads)))\n")


def run_child(solver: str, case: str, seed: int, threads: int, timeout: float) -> dict:
    """Run one solver in a fresh interpreter and parse its JSON line."""
    spec = CASES[case]
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    cmd = [sys.executable, "-c", CHILD_SCRIPT, solver, case, str(seed), str(threads)]
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


def ttm_throughput(nmodes: int, K: int, threads: int, seed: int, reps: int = 3) -> dict:
    """The local TTM on every mode of the case with ``nmodes`` modes, core K per mode: ``csf``
    (HOOI's default kernel: ``time``, ``elements_per_s``, ``gflops`` of the flops it performs) and
    the paper's element-wise kernel beside it (``paper_*``), called alternately
    (:func:`.ttm_bench.compare`, median of ``reps`` rounds)."""
    from spbench.tucker.benchmarks.ttm_bench import compare

    spec = CASES["3way" if nmodes == 3 else "4way"]
    T = make_tensor(spec["dims"], spec["nnz"], seed)
    res = compare(T, K, threads, reps, seed)
    csf, paper = res["csf"], res["paper"]
    return {"N": nmodes, "K": K, "ttm": "csf", "time": csf["time"], "elements_per_s": nmodes * T.nnz / csf["time"],
            "gflops": csf["gflops"], "paper_time": paper["time"], "paper_gflops": paper["gflops"],
            "speedup": res["speedup"], "flop_reduction": res["flop_reduction"]}


def bench_hooi(cases: list[str], threads: int, seed: int, skip_pyttb: bool, skip_pyttb_4way: bool,
               timeout: float, reps: int, say=lambda text: None) -> list[dict]:
    """Items: each case's solvers (base, spbench, pyttb: time, fit, peak RSS; ``skipped`` when
    asked), the TTM kernel's throughput for N = 3, 4 and K = 10, 20, and the numpy matmul peak."""
    items = []
    for case in cases:
        spec = CASES[case]
        facts = {"dataset": case_label(spec["dims"], spec["nnz"]), "case": case, "dims": list(spec["dims"]),
                 "nnz": spec["nnz"], "K": spec["K"], "threads": threads}
        for solver in ("base", "spbench", "pyttb"):
            item = {**facts, "item": f"{solver} threads={threads}", "solver": solver}
            if solver == "pyttb" and (skip_pyttb or (case == "4way" and skip_pyttb_4way)):
                items.append({**item, "status": "skipped"})
                continue
            say(f"{case} {solver}")
            res = run_child(solver, case, seed, threads, timeout)
            items.append({**item, "status": res["status"], "error": res.get("stderr"),
                          **{k: res[k] for k in ("time", "fit", "maxrss_mb", "queries", "restarts") if k in res},
                          **({"phase_times": res["times"]} if "times" in res else {})})
    say("numpy matmul peak and TTM throughput")
    items.append({"dataset": "numpy matmul n=2048", "item": f"matmul threads={threads}", "threads": threads,
                  "gflops": matmul_peak(threads)})
    for N in (3, 4):
        for K in (10, 20):
            t = ttm_throughput(N, K, threads, seed, reps)
            spec = CASES["3way" if N == 3 else "4way"]
            items.append({"dataset": case_label(spec["dims"], spec["nnz"]), "item": f"ttm K={K} threads={threads}",
                          "threads": threads, **t})
    return items
