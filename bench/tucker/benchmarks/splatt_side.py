"""SPLATT's Tucker beside ours on the issue-16 tensors, interleaved in one run (tucker-lite-distribution
§8: the CSF TTM of its reference [26], SPLATT; docs/performance.md, "The local TTM").

SPLATT is built from its public source (branch ``tucker``, not part of spbench); this module only
runs its binary (``spbench bench splatt --binary PATH``). Per case of :data:`.ttm_bench.CASES` and
thread count, each of ``reps`` rounds runs ``splatt tucker -i I --tol 0 -r K -t T -v --nowrite -c N
--seed 1 FILE.tns`` (``OMP_NUM_THREADS=T``, ``OPENBLAS_NUM_THREADS=1``; ``--tol 0``: all I
iterations) and reads its ``TTM`` and ``SVD`` timer lines (sums over the I iterations, printed in
milliseconds: I iterations make its SVD tens of ms) and its ``CSF`` line (its N trees built), then
times our csf plans' build (every mode, the measured path's kernel), our csf TTM of every mode once
(plans built before the rounds, as SPLATT builds its CSF before its timers) and, at one thread,
a HOOI of I invocations' ``svd_time`` (``lanczos: paper``, same K). Items carry the medians per
iteration; ratios are the table's.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np

from spbench.machine.facts import unpinned_for_children

__all__ = ["splatt_timers", "write_tns", "splatt_rounds", "linked_blas", "our_blas"]


def write_tns(tensor, path) -> Path:
    """``tensor`` as FROSTT .tns text (1-based indices, then the value), what SPLATT reads."""
    import pandas as pd

    frame = pd.DataFrame(tensor.coords + 1)
    frame["value"] = tensor.values
    frame.to_csv(path, sep=" ", header=False, index=False)
    return Path(path)


def splatt_timers(splatt: str, tns, nmodes: int, K: int, threads: int, iterations: int = 1) -> dict:
    """``splatt tucker`` for ``iterations`` iterations: its ``TTM`` and ``SVD`` timer lines, seconds
    per iteration, and its ``CSF`` line (``csf``: seconds to build its N trees, ``-c N``, sorts
    included; None when it prints none)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1")
    cmd = [splatt, "tucker", "-i", str(iterations), "--tol", "0", "-r", str(K), "-t", str(threads), "-v",
           "--nowrite", "-c", str(nmodes), "--seed", "1", str(tns)]
    with unpinned_for_children():  # its threads bind as its OpenMP says, not to our pinned main thread's core
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    timers = {}
    for name in ("TTM", "SVD"):
        found = re.search(rf"^\s+{name}\s+([0-9.]+)s\s*$", out, re.M)
        if found is None:
            raise RuntimeError(f"{splatt}: no '{name}' timer line in its output")
        timers[name.lower()] = float(found.group(1)) / iterations
    found = re.search(r"^\s+CSF\s+([0-9.]+)s\s*$", out, re.M)
    timers["csf"] = float(found.group(1)) if found else None
    return timers


def linked_blas(binary: str) -> str:
    """The BLAS/LAPACK libraries ``binary`` links (``ldd``), or ``""`` when that cannot be told."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return ", ".join(line.split("=>")[-1].split("(")[0].strip() for line in out.splitlines()
                     if re.search(r"blas|lapack", line, re.I))


def our_blas() -> str:
    """The BLAS libraries this process loaded (threadpoolctl): API, version, library."""
    from threadpoolctl import threadpool_info

    return ", ".join(f"{i.get('internal_api')} {i.get('version')} ({Path(i.get('filepath', '')).name})"
                     for i in threadpool_info() if i.get("user_api") == "blas")


def _csf_ttm_seconds(plans, factors, Z, scratch, threads: int) -> float:
    from spbench.tucker.hooi.ttm import ttm

    t0 = time.perf_counter()
    for n, plan in enumerate(plans):
        ttm(None, plan, factors, out=Z[n], scratch=scratch, threads=threads)
    return time.perf_counter() - t0


def _csf_build_seconds(T, Ks, threads: int) -> float:
    """Seconds to build our csf plan of every mode (one tree per mode, as SPLATT's ``-c N``) as the
    measured path does at ``threads`` threads (:meth:`.csf.CSFPlan.from_columns`, its counting sorts
    and gathers on the threads, as SPLATT sorts on its threads)."""
    from spbench.tucker.hooi.ttm import build_ttm_plan

    t0 = time.perf_counter()
    for n in range(T.nmodes):
        build_ttm_plan(T, n, kind="csf", K=Ks, threads=threads)
    return time.perf_counter() - t0


def splatt_rounds(splatt: str, cases: list[str], threads: list[int], reps: int, nell2_nnz: int, seed: int,
                  workdir, say=lambda text: None, iterations: int = 1) -> list[dict]:
    """Items per case, K and thread count: SPLATT's TTM and SVD seconds per iteration and its CSF
    build, our csf TTM, (one thread) HOOI SVD seconds per iteration and our plans' build, medians of
    ``reps`` interleaved rounds of ``iterations`` iterations (module docstring); the .tns files are
    written under ``workdir``."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.factor_start import init_factors
    from spbench.tucker.hooi.loop import hooi
    from spbench.tucker.hooi.ttm import build_ttm_plan, khat, ttm_scratch_len
    from spbench.tucker.benchmarks.ttm_bench import CASES, _tensor
    from spbench.tucker.benchmarks.bench_tensors import case_label

    items, blas = [], {"splatt_blas": linked_blas(splatt), "spbench_blas": our_blas()}
    for case in cases:
        for spec in CASES[case]:
            T = _tensor(spec, nell2_nnz, seed)
            tns = Path(workdir) / f"{case}.tns"
            if spec is CASES[case][0]:
                write_tns(T, tns)
            N, K = T.nmodes, spec["K"]
            Ks = [K] * N
            F = init_factors(T, Ks, "random", seed)
            plans = [build_ttm_plan(T, n, kind="csf", K=Ks) for n in range(N)]
            Z = [np.empty((plans[n].nrows, khat(Ks, n))) for n in range(N)]
            scratch = np.empty((max(threads), max(ttm_scratch_len(Ks, n) for n in range(N))))
            for t in threads:
                say(f"{case} K={K} threads={t}")
                rounds = {"splatt_ttm": [], "splatt_svd": [], "splatt_csf": [], "csf_ttm": [], "spbench_svd": [],
                          "csf_build": []}
                with threadpool_limits(limits=t):
                    _csf_ttm_seconds(plans, F, Z, scratch, t)                   # untimed
                for _ in range(reps):
                    timers = splatt_timers(splatt, tns, N, K, t, iterations)
                    rounds["splatt_ttm"].append(timers["ttm"])
                    rounds["splatt_svd"].append(timers["svd"])
                    if timers["csf"] is not None:
                        rounds["splatt_csf"].append(timers["csf"])
                    with threadpool_limits(limits=t):
                        rounds["csf_build"].append(_csf_build_seconds(T, Ks, t))
                        rounds["csf_ttm"].append(_csf_ttm_seconds(plans, F, Z, scratch, t))
                    if t == 1:
                        with threadpool_limits(limits=1):
                            run = hooi(T, Ks, lanczos="paper", seed=seed, invocations=iterations)
                        rounds["spbench_svd"].append(run.times["svd_time"] / iterations)
                med = {k: float(np.median(v)) if v else None for k, v in rounds.items()}
                items.append({"dataset": case_label(T.dims, T.nnz), "item": f"splatt K={K} threads={t}",
                              "case": case, "dims": list(T.dims), "nnz": int(T.nnz), "K": K, "threads": t,
                              "iterations": iterations, **med, "rounds": rounds, **blas})
    return items
