"""MPI entry point of measured Tucker runs (DESIGN.md §4):

    mpiexec -n R python -m mpi4py -m spbench.tucker.worker SPEC.json

SPEC.json: ``{"tensor_dir": DIR, "results_dir": RUNS_DIR, "threads": 1, "tasks": [{"row": {...,
"run_id": ...}, "scheme": "lite"|"coarse"|"medium"|"hyper", "K": 10, "params": {}, "seed": 0,
"invocations": 1, "init": "random"}, ...]}``. DIR holds ``coords.npy`` (int64, nnz × N, 0-based),
``values.npy`` (float64) and ``meta.json`` (``{"dims": [...]}``); each rank memory-maps them
and reads only its contiguous block of about nnz/P elements.

Per task: the distribution in parallel (:func:`.dist_schemes.distribute`; ``dist_time`` = max
over ranks; HyperG: the offline partition time on rank 0), then HOOI
(:func:`.dist_hooi.dist_hooi`). Rank 0 writes ``RUNS_DIR/<run_id>.json`` = the task's row +
the measured fields + ``"status": "ok"`` atomically (temp file + os.replace) as soon as the task
ends. An untimed CoarseG distribution warms the allocator first (spec key ``warmup``, default
true). Optional task keys: ``tol``, ``ncv`` (Lanczos), ``save_factors`` (also write
``<run_id>.factors.npz`` with the gathered factor matrices and the core: tests).
Errors are not caught: under ``python -m mpi4py`` an exception on any rank aborts all ranks.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["main", "run_task", "write_row"]

TIMERS = ("hooi_time", "ttm_time", "svd_time", "comm_time", "fm_time", "core_time", "plan_time", "init_time")


def _partition_cache_dir() -> str:
    return str(Path(os.environ.get("SPBENCH_DATA") or "~/.cache/spbench").expanduser() / "partitions")


def write_row(results_dir, row: dict) -> Path:
    """``results_dir/<run_id>.json``, atomically (temp file in the same folder + os.replace)."""
    d = Path(results_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{row['run_id']}.json"
    fd, tmp = tempfile.mkstemp(prefix=f".{row['run_id']}.", suffix=".part", dir=d)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(row, fh, indent=1, sort_keys=True, default=_jsonable)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _jsonable(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serializable: {type(x)}")


def _peak_rss_mb() -> float:
    """Peak resident set of this process in MB (10^6 bytes; ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def hosvd_factors(comm, block, K, seed: int, tol: float) -> list:
    """HOSVD initial factors (leading left singular vectors of each unfolding, by Lanczos),
    computed on rank 0 from the gathered tensor and broadcast: O(nnz) memory on rank 0, fine for
    the sizes this machine runs; the random init needs no gathering."""
    from .hooi import init_factors
    from .tensor import SparseTensor

    coords = comm.gather(block.coords, root=0)
    values = comm.gather(block.values, root=0)
    factors = None
    if comm.rank == 0:
        tensor = SparseTensor(np.concatenate(coords), np.concatenate(values), block.dims, sum_duplicates=False)
        Ks = [int(K)] * tensor.nmodes if np.ndim(K) == 0 else [int(k) for k in K]
        factors = init_factors(tensor, Ks, "hosvd", seed, tol=tol)
    return comm.bcast(factors, root=0)


def run_task(comm, block, task: dict, *, threads: int = 1, results_dir=None) -> dict | None:
    """One task: parallel distribution, HOOI; returns the row on rank 0 (None elsewhere) and
    writes it when ``results_dir`` is given."""
    from mpi4py import MPI

    from .dist_hooi import dist_hooi, gather_factors
    from .dist_schemes import distribute

    scheme = task["scheme"]
    seed = int(task.get("seed", 0))
    params = dict(task.get("params") or {})
    if scheme == "hyper":
        params.setdefault("cache_dir", _partition_cache_dir())
    comm.Barrier()
    dt = distribute(comm, block, scheme, seed=seed, params=params)
    dist_local = dict(dt.times)
    init = task.get("init", "random")
    if init == "hosvd":
        init = hosvd_factors(comm, block, task.get("K", 10), seed, float(task.get("tol", 1e-8)))
    comm.Barrier()
    res = dist_hooi(comm, dt, task.get("K", 10), invocations=int(task.get("invocations", 1)),
                    init=init, seed=seed, threads=threads,
                    tol=float(task.get("tol", 1e-8)), ncv=task.get("ncv"))
    tmax = {k: comm.allreduce(float(res.times[k]), op=MPI.MAX) for k in TIMERS}
    dmax = {k: comm.allreduce(float(v), op=MPI.MAX) for k, v in dist_local.items()}
    rss = comm.gather(_peak_rss_mb(), root=0)
    factors = gather_factors(comm, dt.dims, res) if task.get("save_factors") else None
    if comm.rank != 0:
        return None
    if scheme == "hyper":
        dist_time = float(dt.info.get("partition_seconds", dmax["policy"]))
        kind = ("hypergraph partitioning offline on rank 0 (Mt-KaHyPar"
                + (", cached partition" if dt.info.get("cached") else "") + ")")
    else:
        dist_time = dmax["dist"]
        kind = "parallel distribution (policy computation + element exchange), max over ranks"
    K = task.get("K", 10)
    row = dict(task.get("row") or {})
    row.update({
        "execution": row.get("execution", "measured"),
        "algorithm": row.get("algorithm", scheme),
        "ranks": int(comm.size),
        "K": K,
        "modes": len(dt.dims),
        "dims": [int(d) for d in dt.dims],
        "nnz": int(dt.nnz),
        "invocations": int(task.get("invocations", 1)),
        "init": task.get("init", "random"),
        "threads": int(threads),
        "multi_policy": bool(dt.multi_policy),
        "dist_time": dist_time,
        "dist_time_kind": kind,
        "dist_policy_time": dmax["policy"],
        "dist_redistribute_time": dmax["redistribute"],
        **tmax,
        "fit": float(res.fit),
        "fits": [float(f) for f in res.fits],
        "queries": res.queries,
        "restarts": res.restarts,
        "svd_words": res.svd_words,
        "fm_words": res.fm_words,
        "svd_gather_words": res.gather_words,
        "core_words": res.core_words,
        "svd_words_total": int(sum(res.svd_words)),
        "fm_words_total": int(sum(res.fm_words)),
        "mode_measured": res.mode_stats,
        "peak_rss_mb": [float(x) for x in rss],
        "peak_rss_mb_max": float(max(rss)),
        "peak_rss_mb_mean": float(np.mean(rss)),
        "dist_info": {k: v for k, v in dt.info.items() if isinstance(v, (int, float, str, bool, list))},
        "status": "ok",
    })
    if results_dir is not None:
        if factors is not None:
            d = Path(results_dir)
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{row['run_id']}.factors.part.npz"
            np.savez(tmp, core=res.core, **{f"F{n}": F for n, F in enumerate(factors)})
            os.replace(tmp, d / f"{row['run_id']}.factors.npz")
        write_row(results_dir, row)
    return row


def main(argv=None) -> int:
    from mpi4py import MPI

    from .dist_schemes import read_block

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: mpiexec -n R python -m mpi4py -m spbench.tucker.worker SPEC.json")
    spec = json.loads(Path(argv[0]).read_text())
    comm = MPI.COMM_WORLD
    threads = int(spec.get("threads", 1))
    block = read_block(spec["tensor_dir"], comm)
    if spec.get("warmup", True) and spec.get("tasks"):
        # untimed: the first large allocations (page faults) would otherwise land in the first
        # task's dist_time
        from .dist_schemes import distribute
        distribute(comm, block, "coarse")
    for task in spec.get("tasks", []):
        run_task(comm, block, task, threads=threads, results_dir=spec["results_dir"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
