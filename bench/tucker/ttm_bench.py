"""The local TTM, ``ttm: csf`` against ``ttm: paper`` in one run (tucker-lite-distribution §8 and
Appendix A):

    python -m spbench.tucker.ttm_bench [--threads 1,2] [--cases 3way,4way,nell2] [--out FILE.json]

Cases (issue 16): ``3way`` 2000×1500×1000 and ``4way`` 500×400×300×200, 200k uniform nonzeros
(:func:`.hooi_bench.make_tensor`), K = 10; ``nell2`` the nell2 stand-in (power-law slices,
``--nell2-nnz``, default 5M) at K = 10 and 20. Per case, thread count and kernel: the plans of
every mode are built once (``plan s``, bytes per nonzero of the plans), one untimed call per mode,
then ``--reps`` rounds calling paper and csf alternately on every mode; the time is the median
over rounds of the sum over modes. GFLOP/s counts the flops each kernel performs
(``plan.flops(K)``); ``flop reduction`` = paper flops / csf flops; the share is of a numpy matmul
peak (n = 2048, same thread count, best of 3) measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from .hooi_bench import make_tensor, matmul_peak

KINDS = ("paper", "csf")
CASES = {
    "3way": [{"dims": (2000, 1500, 1000), "nnz": 200_000, "K": 10}],
    "4way": [{"dims": (500, 400, 300, 200), "nnz": 200_000, "K": 10}],
    "nell2": [{"standin": "nell2", "K": 10}, {"standin": "nell2", "K": 20}],
}


def _tensor(spec: dict, nell2_nnz: int, seed: int):
    if "standin" in spec:
        from spbench.datasets.tensor_registry import standin
        return standin(spec["standin"], nnz=nell2_nnz, seed=seed)
    return make_tensor(spec["dims"], spec["nnz"], seed)


def compare(T, K: int, threads: int, reps: int, seed: int = 0) -> dict:
    """paper and csf on every mode of ``T`` with core K per mode, interleaved; see the module
    docstring."""
    from threadpoolctl import threadpool_limits

    from .factor_start import init_factors
    from .ttm import build_ttm_plan, khat, ttm, ttm_scratch_len

    N = T.nmodes
    Ks = [K] * N
    F = init_factors(T, Ks, "random", seed)
    scratch = np.empty((threads, max(ttm_scratch_len(Ks, n) for n in range(N))))
    out = {}
    plans = {}
    for kind in KINDS:
        t0 = time.perf_counter()
        plans[kind] = [build_ttm_plan(T, n, kind=kind, K=Ks) for n in range(N)]
        nbytes = sum(p.nbytes for p in plans[kind]) + (T.coords.nbytes + T.values.nbytes if kind == "paper" else 0)
        out[kind] = {"plan_s": time.perf_counter() - t0, "flops": sum(p.flops(Ks) for p in plans[kind]),
                     "bytes_per_nnz": nbytes / max(T.nnz, 1), "rounds": []}
    Z = [np.empty((plans["csf"][n].nrows, khat(Ks, n))) for n in range(N)]
    with threadpool_limits(limits=threads):
        check = []
        for kind in KINDS:                                   # untimed, and the results compared
            check.append([ttm(T, plans[kind][n], F, out=Z[n], scratch=scratch, threads=threads).copy()
                          for n in range(N)])
        diff = max(float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300)) for a, b in zip(*check))
        for _ in range(reps):
            for kind in KINDS:
                t0 = time.perf_counter()
                for n in range(N):
                    ttm(T, plans[kind][n], F, out=Z[n], scratch=scratch, threads=threads)
                out[kind]["rounds"].append(time.perf_counter() - t0)
    for kind in KINDS:
        r = out[kind]
        r["time"] = float(np.median(r["rounds"]))
        r["gflops"] = r["flops"] / r["time"] / 1e9
    out["max_rel_diff"] = diff
    out["flop_reduction"] = out["paper"]["flops"] / out["csf"]["flops"]
    out["speedup"] = out["paper"]["time"] / out["csf"]["time"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--cases", default="3way,4way,nell2")
    ap.add_argument("--nell2-nnz", type=int, default=5_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    try:
        threads = [int(t) for t in args.threads.split(",")]
        cases = args.cases.split(",")
        unknown = [c for c in cases if c not in CASES]
        if unknown or min(threads) < 1:
            raise ValueError
    except ValueError:
        print(f"ttm_bench: --threads expects integers >= 1 and --cases names out of {', '.join(CASES)}",
              file=sys.stderr)
        return 2
    rows = []
    peaks = {t: matmul_peak(t) for t in threads}
    for case in cases:
        for spec in CASES[case]:
            T = _tensor(spec, args.nell2_nnz, args.seed)
            for t in threads:
                res = compare(T, spec["K"], t, args.reps, args.seed)
                res.update(case=case, nnz=T.nnz, dims=list(T.dims), K=spec["K"], threads=t,
                           matmul_gflops=peaks[t])
                rows.append(res)
                print(f"# {case} K={spec['K']} threads={t}: paper {res['paper']['time']:.4f} s, "
                      f"csf {res['csf']['time']:.4f} s", file=sys.stderr, flush=True)
    print("| tensor | nnz | K | threads | paper s | csf s | speed-up | flop reduction | paper GFLOP/s "
          "| csf GFLOP/s | csf % of matmul peak | csf B/nnz | paper B/nnz | csf plan s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        p, c = r["paper"], r["csf"]
        print(f"| {r['case']} {'×'.join(map(str, r['dims']))} | {r['nnz']} | {r['K']} | {r['threads']} | "
              f"{p['time']:.4f} | {c['time']:.4f} | {r['speedup']:.2f}× | {r['flop_reduction']:.2f}× | "
              f"{p['gflops']:.2f} | {c['gflops']:.2f} | {100 * c['gflops'] / r['matmul_gflops']:.1f} | "
              f"{c['bytes_per_nnz']:.0f} | {p['bytes_per_nnz']:.0f} | {c['plan_s']:.2f} |")
    print(f"\nmatmul peak GFLOP/s: {', '.join(f'{t} thread(s) {g:.1f}' for t, g in peaks.items())}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"schema_version": 1, "rows": rows, "matmul_gflops": peaks}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
