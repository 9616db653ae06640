"""The local TTM, ``ttm: csf`` against ``ttm: paper`` in one run (tucker-lite-distribution §8 and
Appendix A):

    spbench bench ttm [--threads 1,2] [--cases 3way,4way,nell2] [--out DIR]

Cases: ``3way`` 2000×1500×1000 and ``4way`` 500×400×300×200, 200k uniform nonzeros
(:func:`.bench_tensors.make_tensor`), K = 10; ``nell2`` the nell2 stand-in (power-law slices,
``--nell2-nnz``, default 5M) at K = 10 and 20. Per case, thread count and kernel: the plans of
every mode are built once (``plan s``, bytes per nonzero of the plans), one untimed call per mode,
then ``--reps`` rounds calling paper and csf alternately on every mode; the time is the median
over rounds of the sum over modes. GFLOP/s counts the flops each kernel performs
(``plan.flops(K)``); ``flop reduction`` = paper flops / csf flops; the share is of a numpy matmul
peak (n = 2048, same thread count, best of 3) measured in the same run.
"""
from __future__ import annotations

import time

import numpy as np

from spbench.tucker.benchmarks.bench_tensors import case_label, make_tensor, matmul_peak

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

    from spbench.tucker.hooi.factor_start import init_factors
    from spbench.tucker.hooi.ttm import build_ttm_plan, khat, ttm, ttm_scratch_len

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


def bench_ttm(cases: list[str], threads: list[int], nell2_nnz: int, reps: int, seed: int,
              say=lambda text: None) -> list[dict]:
    """Items: per case, K and thread count, the paper and the csf kernel (time, GFLOP/s, flops,
    plan bytes per nonzero and build time; ``max_rel_diff`` between the two results), and the
    numpy matmul peak per thread count."""
    items = [{"dataset": "numpy matmul n=2048", "item": f"matmul threads={t}", "threads": t,
              "gflops": matmul_peak(t)} for t in threads]
    for case in cases:
        for spec in CASES[case]:
            T = _tensor(spec, nell2_nnz, seed)
            facts = {"dataset": case_label(T.dims, T.nnz), "case": case, "nnz": int(T.nnz), "dims": list(T.dims),
                     "K": spec["K"]}
            for t in threads:
                say(f"{case} K={spec['K']} threads={t}")
                res = compare(T, spec["K"], t, reps, seed)
                items += [{**facts, "item": f"{kind} K={spec['K']} threads={t}", "kind": kind, "threads": t,
                           "time": res[kind]["time"], "times": res[kind]["rounds"], "gflops": res[kind]["gflops"],
                           "flops": res[kind]["flops"], "bytes_per_nnz": res[kind]["bytes_per_nnz"],
                           "plan_time": res[kind]["plan_s"], "max_rel_diff": res["max_rel_diff"]} for kind in KINDS]
    return items
