"""SPLATT's Tucker beside ours on the issue-16 tensors, interleaved in one run (tucker-lite-distribution
§8: the CSF TTM of its reference [26], SPLATT; README "The local TTM").

SPLATT is built from its public source (branch ``tucker``, not part of spbench); this module only
runs its binary. Per case of :data:`.ttm_bench.CASES` and thread count, each of ``reps`` rounds
runs ``splatt tucker -i 1 -r K -t T -v --nowrite -c N --seed 1 FILE.tns`` (``OMP_NUM_THREADS=T``,
``OPENBLAS_NUM_THREADS=1``) and reads its ``TTM`` and ``SVD`` timer lines, then times our csf TTM
of every mode once (plans built before the rounds, as SPLATT builds its CSF before its timers)
and, at one thread, one HOOI's ``svd_time`` (``lanczos: paper``, same K); items carry the medians.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np

__all__ = ["splatt_timers", "write_tns", "splatt_rounds"]


def write_tns(tensor, path) -> Path:
    """``tensor`` as FROSTT .tns text (1-based indices, then the value), what SPLATT reads."""
    import pandas as pd

    frame = pd.DataFrame(tensor.coords + 1)
    frame["value"] = tensor.values
    frame.to_csv(path, sep=" ", header=False, index=False)
    return Path(path)


def splatt_timers(splatt: str, tns, nmodes: int, K: int, threads: int) -> dict:
    """One ``splatt tucker`` iteration: its ``TTM`` and ``SVD`` timer lines, seconds."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1")
    cmd = [splatt, "tucker", "-i", "1", "-r", str(K), "-t", str(threads), "-v", "--nowrite", "-c", str(nmodes),
           "--seed", "1", str(tns)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    timers = {}
    for name in ("TTM", "SVD"):
        found = re.search(rf"^\s+{name}\s+([0-9.]+)s\s*$", out, re.M)
        if found is None:
            raise RuntimeError(f"{splatt}: no '{name}' timer line in its output")
        timers[name.lower()] = float(found.group(1))
    return timers


def _csf_ttm_seconds(plans, factors, Z, scratch, threads: int) -> float:
    from .ttm import ttm

    t0 = time.perf_counter()
    for n, plan in enumerate(plans):
        ttm(None, plan, factors, out=Z[n], scratch=scratch, threads=threads)
    return time.perf_counter() - t0


def splatt_rounds(splatt: str, cases: list[str], threads: list[int], reps: int, nell2_nnz: int, seed: int,
                  workdir, say=lambda text: None) -> list[dict]:
    """Items per case, K and thread count: SPLATT's TTM and SVD seconds, our csf TTM and (one
    thread) HOOI SVD seconds, medians of ``reps`` interleaved rounds (module docstring); the .tns
    files are written under ``workdir``."""
    from threadpoolctl import threadpool_limits

    from .factor_start import init_factors
    from .hooi import hooi
    from .ttm import build_ttm_plan, khat, ttm_scratch_len
    from .ttm_bench import CASES, _tensor
    from .bench_tensors import case_label

    items = []
    for case in cases:
        for spec in CASES[case]:
            T = _tensor(spec, nell2_nnz, seed)
            tns = write_tns(T, Path(workdir) / f"{case}.tns")
            N, K = T.nmodes, spec["K"]
            Ks = [K] * N
            F = init_factors(T, Ks, "random", seed)
            plans = [build_ttm_plan(T, n, kind="csf", K=Ks) for n in range(N)]
            Z = [np.empty((plans[n].nrows, khat(Ks, n))) for n in range(N)]
            scratch = np.empty((max(threads), max(ttm_scratch_len(Ks, n) for n in range(N))))
            for t in threads:
                say(f"{case} K={K} threads={t}")
                rounds = {"splatt_ttm": [], "splatt_svd": [], "csf_ttm": [], "spbench_svd": []}
                with threadpool_limits(limits=t):
                    _csf_ttm_seconds(plans, F, Z, scratch, t)                   # untimed
                for _ in range(reps):
                    timers = splatt_timers(splatt, tns, N, K, t)
                    rounds["splatt_ttm"].append(timers["ttm"])
                    rounds["splatt_svd"].append(timers["svd"])
                    with threadpool_limits(limits=t):
                        rounds["csf_ttm"].append(_csf_ttm_seconds(plans, F, Z, scratch, t))
                    if t == 1:
                        with threadpool_limits(limits=1):
                            rounds["spbench_svd"].append(hooi(T, Ks, lanczos="paper", seed=seed).times["svd_time"])
                med = {k: float(np.median(v)) if v else None for k, v in rounds.items()}
                items.append({"dataset": case_label(T.dims, T.nnz), "item": f"splatt K={K} threads={t}",
                              "case": case, "K": K, "threads": t, **med, "rounds": rounds,
                              "ttm_ratio": med["csf_ttm"] / med["splatt_ttm"],
                              "svd_ratio": (med["spbench_svd"] / med["splatt_svd"]) if med["spbench_svd"] else None})
    return items
