"""MPI entry point of measured Tucker runs (docs/design.md, "Running a point"):

    mpiexec -n R python -m mpi4py -m spbench.tucker.mpi.worker SPEC.json

SPEC.json: ``{"tensor_dir": DIR, "results": RESULTS, "threads": 1, "tasks": [{"row": {...,
"run_id": ...}, "scheme": "lite"|"coarse"|"medium"|"hyper", "K": 10, "params": {}, "seed": 0,
"invocations": 1, "init": "random"}, ...]}``. DIR is a tensor store
(``spbench.datasets.tensor_store``: per-mode coordinate columns, values, header); each rank
reads only its contiguous block of about nnz/P elements, once per scheme.

Per task: the heap's free pages are returned and the peak resident size is reset (so a scheme's
peak does not depend on the tasks before it), the distribution computed in parallel
(:func:`.distribute.distribute`; ``dist_time`` = max over ranks; HyperG: the offline partition
time on rank 0), then HOOI (:func:`.hooi.hooi_distributed`), then the distribution's exact
metrics from the ranks' own counts (:mod:`.rank_usage`) and the fields the scheme adds to them
(:meth:`spbench.tucker.schemes.Scheme.metrics_beyond`: Lite's Theorem 6.1 slack). The task's row
is its point (the spec's ``row``) joined with the measured fields and ``"status": "ok"``
(:func:`spbench.store.row_builder.build_row`); rank 0 stores it, as every row of the job, in one
place (``store_row`` in :func:`main`, called by the task loop) through the results folder RESULTS
(:class:`spbench.store.results.ResultStore`: ``RESULTS/runs/<run_id>.json``, checked against the row's
declared fields, atomically) as soon as the task ends; spec key ``scratch`` (true: a folder whose
rows the caller reads back itself, a calibration's or a benchmark's, not a sweep's results) writes
them unchecked. The sweep that launched the job holds the folder's lock meanwhile. An untimed
CoarseG distribution warms the allocator first (spec key ``warmup``, default true). Optional task keys: ``lanczos`` ("paper", the default, or "converged"), ``tol``, ``ncv``,
``ttm`` ("csf", the default, or "paper": the local TTM kernel), ``trace_messages`` (every message's
entry and exit kept, :func:`.hooi.hooi_distributed`; the row then also carries ``rank_times``, every
rank's timers with its waiting told apart, :func:`with_waits`: the model validation), ``save_factors`` (also write
``runs/<run_id>.factors.npz`` with the gathered factor matrices and the core: tests). Schemes
registered by plugins (:mod:`spbench.plugins`, ``$SPBENCH_PLUGINS``) are loaded first, as in the
process that launched the job.
A task's exception is that task's error row and the next task runs (:mod:`.task_loop`); a fit,
time or residual that is not finite makes the row ``invalid`` with the reason
(:mod:`spbench.tucker.row_status`). Spec key ``progress``: the file rank 0 reports its world size,
each task's start, invocations and finish to (:mod:`.job_progress`); spec keys ``ranks`` and
``launcher``: the world the job asked for and the launcher that started it; a world of another
size (another MPI's launcher starting one-rank processes) stores every task as an error row
naming both and runs nothing. The spec file is removed once every rank has read it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from spbench.store.atomic_files import atomic_output
from spbench.store.row_builder import build_row, failure, invalid

__all__ = ["main", "run_task"]

#: HOOI's timers as a row carries them: the slowest rank's (largest ``hooi_time``), so that its
#: partition (``ttm_time`` + ``svd_time`` + ``comm_time`` + ``other_time``, :data:`.hooi.PARTITION`)
#: adds up to the row's ``hooi_time``, the max over ranks; ``plan_time``/``init_time``: max over ranks
TIMERS = ("hooi_time", "ttm_time", "svd_time", "comm_time", "other_time", "fm_time", "core_time")
SETUP_TIMERS = ("plan_time", "init_time")


def run_task(comm, block, task: dict, *, threads: int = 1, store=None, progress=None) -> dict | None:
    """One task: parallel distribution, HOOI, the run's own metrics; returns its row on rank 0
    (None elsewhere): the task's point (its spec ``row``) joined with what the run measured
    (:func:`spbench.store.row_builder.build_row`), which the task loop stores. ``store`` (a
    :class:`spbench.store.results.ResultStore`): where ``save_factors`` puts the factors. ``block``: this rank's input
    block, or a callable reading it (then read for this task and dropped once distributed, so
    HOOI's peak does not hold it). The peak resident size is reset first, so
    ``peak_rss_mb_max`` is this scheme's. ``progress(event, **fields)``: rank 0's
    reports to the launching process."""
    from spbench.tucker.mpi.distribute import distribute
    from spbench.tucker.hooi.loop import NormOverflow, gather_factors, hooi_distributed
    from spbench.tucker.rank_usage import distributed_metrics, peak_rss_mb, reset_peak_rss
    from spbench.tucker.row_status import nonfinite_reason
    from spbench.tucker.schemes import get_scheme

    scheme = task["scheme"]
    declared = get_scheme(scheme)
    seed = int(task.get("seed", 0))
    params = declared.with_run_params(dict(task.get("params") or {}))
    K = task.get("K", 10)
    lanczos = task.get("lanczos", "paper")
    ttm = task.get("ttm", "csf")
    _clean_slate()
    reset_peak_rss()
    if callable(block):
        block = block()
    comm.Barrier()
    # the sets carry no global ids and the block's policies go once used: HOOI needs neither
    dt = distribute(comm, block, scheme, seed=seed, params=params, ids=False, keep_owners=False)
    del block
    dist_local = dict(dt.times)
    peak_dist = peak_rss_mb()
    _clean_slate()
    reset_peak_rss()
    comm.Barrier()
    report = progress if (progress is not None and comm.rank == 0) else None
    held = sum(s.size for s in (dt.sets if dt.multi_policy else dt.sets[:1]))
    try:
        res = hooi_distributed(comm, dt, K, invocations=int(task.get("invocations", 1)),
                               init=task.get("init", "random"), seed=seed, threads=threads,
                               tol=float(task.get("tol", 1e-8)), lanczos=lanczos, ncv=task.get("ncv"),
                               progress=report, release_input=True, ttm=ttm,
                               trace_messages=bool(task.get("trace_messages", False)))
    except NormOverflow as exc:   # raised on every rank alike: this task's row says why, no HOOI ran
        return _unfit_row(comm, task, str(exc))
    tmax = slowest_rank_times(comm.allgather({k: float(res.times[k]) for k in TIMERS}))
    per_rank = comm.gather(rank_timers(res), root=0) if task.get("trace_messages") else None
    tmax.update({k: comm.allreduce(float(res.times[k]), op=_max()) for k in SETUP_TIMERS})
    dmax = {k: comm.allreduce(float(v), op=_max()) for k, v in dist_local.items()}
    words_max = int(comm.allreduce(int(res.words_sent_recv), op=_max()))
    resid = [float(comm.allreduce(float(r), op=_max())) for r in res.residuals]
    inv = int(task.get("invocations", 1))
    Ks = [int(K)] * len(dt.dims) if np.ndim(K) == 0 else [int(k) for k in K]
    flops = sum(pl.ttm.flops(Ks) for pl in res.plans) * inv          # this rank's TTM kernel flops
    flops_sum = float(comm.allreduce(flops))
    flops_max = float(comm.allreduce(flops, op=_max()))
    met = distributed_metrics(comm, dt, res.plans, K, [q // inv for q in res.queries])
    factors = gather_factors(comm, dt.dims, res) if task.get("save_factors") else None
    held_max = int(comm.allreduce(int(held), op=_max()))
    peak_hooi = peak_rss_mb()
    rss = comm.gather(max(peak_dist, peak_hooi), root=0)
    phases = {"distribution": comm.allreduce(peak_dist, op=_max()), "hooi": comm.allreduce(peak_hooi, op=_max())}
    del res.plans
    if comm.rank != 0:
        return None
    if declared.offline_partition is not None:
        dist_time = float(dt.info.get("partition_seconds", dmax["policy"]))
    else:
        dist_time = dmax["dist"]
    kind = declared.dist_time_kind("measured", cached=bool(dt.info.get("cached")))
    point = task.get("row") or {}
    metrics = met.row()
    measured = {**metrics, **{k: v for k, v in declared.metrics_beyond(metrics["mode_metrics"], int(dt.nnz),
                                                                        int(comm.size)).items()
                              if k not in point and k not in metrics}}
    measured.update({
        "execution": point.get("execution", "measured"),
        "algorithm": point.get("algorithm", scheme),
        "ranks": int(comm.size),
        "K": K,
        "modes": len(dt.dims),
        "dims": [int(d) for d in dt.dims],
        "nnz": int(dt.nnz),
        "invocations": inv,
        "init": task.get("init", "random"),
        "lanczos": lanczos,
        "ttm": ttm,
        "ttm_kernel_flops": flops_sum,
        "ttm_kernel_flops_max": flops_max,
        "threads": int(threads),
        "multi_policy": bool(dt.multi_policy),
        "dist_time": dist_time,
        "dist_time_kind": kind,
        "dist_policy_time": dmax["policy"],
        "dist_redistribute_time": dmax["redistribute"],
        **tmax,
        "hooi_time_kind": HOOI_TIME_KIND,
        "fit": float(res.fit),
        "fits": [float(f) for f in res.fits],
        "queries": res.queries,
        "restarts": res.restarts,
        "lanczos_residual_max": resid,
        "svd_words": res.svd_words,
        "fm_words": res.fm_words,
        "svd_gather_words": res.svd_gather_words,
        "core_words": res.core_words,
        "svd_words_total": int(sum(res.svd_words)),
        "fm_words_total": int(sum(res.fm_words)),
        "words_per_rank_max": words_max,
        "peak_rss_mb": [float(x) for x in rss],
        "peak_rss_mb_max": float(max(rss)),
        "peak_rss_mb_mean": float(np.mean(rss)),
        "held_nonzeros_max": held_max,
        "peak_rss_mb_phases": phases,
        "peak_rss_kind": "per-scheme peak resident size (VmHWM reset before the scheme), per rank",
        "metrics_source": "computed by the MPI ranks from their own distribution",
        "dist_info": {k: v for k, v in dt.info.items() if isinstance(v, (int, float, str, bool, list))},
        "status": "ok",
    })
    if per_rank is not None:
        measured["rank_times"] = with_waits(per_rank)
    row = build_row(point, invalid(measured, nonfinite_reason(build_row(point, measured), norm=res.norm)))
    if store is not None and factors is not None:
        with atomic_output(store.runs / f"{row['run_id']}.factors.npz", suffix=".part.npz") as tmp:
            np.savez(tmp, core=res.core, **{f"F{n}": F for n, F in enumerate(factors)})
    return row


def rank_timers(res) -> dict:
    """One rank's timers (task key ``trace_messages``): its partition, each mode's, its messages
    per model term ([calls, words, seconds]) and its message trace."""
    return {"times": {k: float(res.times[k]) for k in TIMERS},
            "modes": [{k: float(v) for k, v in m.items()} for m in res.mode_times],
            "messages": {k: [int(v[0]), int(v[1]), float(v[2])] for k, v in res.messages.items()},
            "trace": res.message_trace or []}


def with_waits(per_rank: list) -> list:
    """``rank_times``: every rank's :func:`rank_timers` with its waiting for the other ranks told
    apart from its transfers (:func:`.hooi.split_waits`): ``wait_time`` in its times and in each
    mode's (within ``comm_time``), each message term's [calls, words, seconds, of them waiting];
    the trace itself dropped. Without a consistent trace the waits are None."""
    from spbench.tucker.hooi.loop import split_waits

    waits = split_waits([r["trace"] for r in per_rank])
    out = []
    for p, r in enumerate(per_rank):
        times, modes = dict(r["times"]), [dict(m) for m in r["modes"]]
        messages = {k: v + [None] for k, v in r["messages"].items()}
        times["wait_time"] = None if waits is None else float(sum(waits[p]))
        for m in modes:
            m["wait_time"] = None if waits is None else 0.0
        if waits is not None:
            for (term, mode, _, _), w in zip(r["trace"], waits[p]):
                messages[term][3] = (messages[term][3] or 0.0) + w
                if mode >= 0:
                    modes[mode]["wait_time"] += w
        out.append({"times": times, "modes": modes, "messages": messages})
    return out


def _unfit_row(comm, task: dict, reason: str) -> dict | None:
    """The invalid row of a task whose tensor HOOI cannot run on (rank 0 returns it)."""
    if comm.rank != 0:
        return None
    return build_row(task.get("row") or {}, {"ranks": int(comm.size), **failure(reason, "invalid")})


#: what a measured row's HOOI timers are
HOOI_TIME_KIND = ("measured: the slowest rank's HOOI time (max over ranks) and that rank's ttm/svd/comm/other "
                  "times, which add up to it")


def slowest_rank_times(per_rank: list) -> dict:
    """The timers of the rank with the largest ``hooi_time`` (``per_rank``: one dict per rank)."""
    return dict(max(per_rank, key=lambda t: t["hooi_time"]))


def _max():
    from mpi4py import MPI
    return MPI.MAX


def _clean_slate() -> None:
    """Collect garbage and return the heap's free pages before a phase's peak is measured."""
    import gc

    from spbench.tucker.hooi.loop import return_free_memory

    gc.collect()
    return_free_memory()


def main(argv=None) -> int:
    from mpi4py import MPI

    from spbench.plugins import load_plugins
    from spbench.store.results import ResultStore
    from spbench.tucker.mpi.distribute import read_block
    from spbench.tucker.mpi.job_progress import ProgressWriter
    from spbench.tucker.mpi.launch import wrong_world
    from spbench.tucker.mpi.task_loop import GRACE_SECONDS, run_tasks

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: mpiexec -n R python -m mpi4py -m spbench.tucker.mpi.worker SPEC.json")
    spec = json.loads(Path(argv[0]).read_text())
    comm = MPI.COMM_WORLD
    store = ResultStore(spec["results"], checked=not spec.get("scratch", False))

    def store_row(row: dict) -> None:
        """The one place the worker writes a row (rank 0, or a rank failing alone before it aborts)."""
        store.write_row(row)

    report = ProgressWriter(spec.get("progress"))
    if comm.rank == 0:
        report("world", size=int(comm.size))
    if spec.get("ranks") is not None and comm.size != int(spec["ranks"]):
        # another MPI's launcher (or none) started this process: its world is not the job's; the
        # spec stays for the other processes it started, each of which says the same
        if comm.rank == 0:
            message = wrong_world(spec.get("launcher"), int(spec["ranks"]), [int(comm.size)])
            for task in spec.get("tasks", []):
                store_row(build_row(task.get("row") or {}, failure(message)))
        return 1
    comm.Barrier()
    if comm.rank == 0 and spec.get("remove_spec", True):  # read by every rank: the job needs it no more
        Path(argv[0]).unlink(missing_ok=True)
    threads = int(spec.get("threads", 1))
    load_plugins()

    def block():
        return read_block(spec["tensor_dir"], comm)

    if spec.get("warmup", True) and spec.get("tasks"):
        # untimed: the first large allocations (page faults) would otherwise land in the first
        # task's dist_time
        from spbench.tucker.mpi.distribute import distribute
        distribute(comm, block(), "coarse", ids=False, keep_owners=False)

    def run_one(task, progress):
        return run_task(comm, block, task, threads=threads, store=store, progress=progress)

    run_tasks(comm, spec.get("tasks", []), run_one, store_row=store_row,
              report=report, grace=float(spec.get("failure_grace", GRACE_SECONDS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
