"""MPI micro-benchmark for the Tucker cost model (:mod:`.model`, :mod:`.calibrate`):

    mpiexec -n 2 python -m mpi4py -m spbench.tucker.mpi_microbench OUT.json [--quick]

Times, on ``MPI.COMM_WORLD``, the four communication patterns of the distributed HOOI
(:mod:`.dist_hooi`) at several message sizes (float64 words):

* ping-pong between ranks 0 and 1 (Send/Recv; one-way time = round trip / 2);
* Allreduce (SUM) of w words (the y·Z reduction, the core);
* Alltoallv with w words to every other rank (the oracle's point-to-point reductions, the
  factor transfer);
* Allgatherv with w words from every rank (the replicated Lanczos basis).

Rank 0 also times, on ``MPI.COMM_SELF``, the distributed oracle's own work per query
(:class:`.dist_hooi.DistOracle` at one rank minus the plain Z·x / Zᵀ·y it wraps: index gathers,
``np.add.at``, buffers, the self-collectives) for two slice counts L (``oracle_overhead``).

For each pattern the median over repetitions of the max over ranks is kept, and a straight line
t = α + β·w is fitted by least squares (weighted by 1/t so the small messages, where α lives,
count as much as the large ones). Rank 0 writes OUT.json: ``{"ranks", "cores", "oversubscribed",
"patterns": {name: {"words": [...], "seconds": [...], "alpha": s, "beta": s/word}},
"oracle_overhead": [{"L": ..., "seconds": per query}, ...]}``.

Numbers measured with more ranks than cores (oversubscribed: ranks time-share a core and wait
for a time slice) are meaningless as latencies: the file says so (``oversubscribed: true``) and
:func:`.calibrate.calibrate` refuses to use them.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["main", "fit_line"]

SIZES = (1, 16, 256, 4096, 32768, 262144)
QUICK_SIZES = (1, 256, 8192, 65536)


def fit_line(words, seconds) -> tuple[float, float]:
    """(α, β) of t = α + β·w by least squares weighted by 1/t; both clipped at ≥ 0."""
    w = np.asarray(words, dtype=float)
    t = np.asarray(seconds, dtype=float)
    wt = 1.0 / np.maximum(t, 1e-12)
    A = np.stack([np.ones_like(w), w], axis=1) * wt[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, t * wt, rcond=None)
    if beta < 0:        # flat curve: pure latency
        alpha, beta = float(np.median(t)), 0.0
    if alpha < 0:       # pure bandwidth: refit through the origin
        alpha, beta = 0.0, float(np.sum(w * t * wt ** 2) / np.sum((w * wt) ** 2))
    return float(alpha), float(beta)


def _reps(words: int, quick: bool) -> int:
    base = 20 if quick else 60
    return max(5, min(base, int(base * 4096 / max(words, 4096))))


def _timed(comm, fn, reps: int) -> float:
    """Median over ``reps`` of the max over ranks of one call's seconds (after 2 warm-ups)."""
    from mpi4py import MPI
    for _ in range(2):
        fn()
    ts = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    local = np.array(ts)
    out = np.empty_like(local)
    comm.Allreduce(local, out, op=MPI.MAX)
    return float(np.median(out))


def run(comm, sizes, quick: bool = False) -> dict:
    from mpi4py import MPI
    P, p = comm.size, comm.rank
    res = {name: {"words": [], "seconds": []} for name in ("pingpong", "allreduce", "alltoallv", "allgatherv")}
    for w in sizes:
        reps = _reps(w, quick)
        buf = np.ones(w)
        rbuf = np.empty(w)

        def pingpong():
            if p == 0:
                comm.Send([buf, MPI.DOUBLE], dest=1, tag=7)
                comm.Recv([rbuf, MPI.DOUBLE], source=1, tag=7)
            elif p == 1:
                comm.Recv([rbuf, MPI.DOUBLE], source=0, tag=7)
                comm.Send([buf, MPI.DOUBLE], dest=0, tag=7)

        if P >= 2:
            res["pingpong"]["words"].append(w)
            res["pingpong"]["seconds"].append(_timed(comm, pingpong, reps) / 2)

        def allreduce():
            comm.Allreduce(buf, rbuf, op=MPI.SUM)

        res["allreduce"]["words"].append(w)
        res["allreduce"]["seconds"].append(_timed(comm, allreduce, reps))

        counts = np.full(P, w, dtype=np.int32)
        counts[p] = 0                                 # nothing to self, as in the oracle plans
        displ = np.zeros(P, dtype=np.int32)
        np.cumsum(counts[:-1], out=displ[1:])
        rcounts = np.full(P, w, dtype=np.int32)
        rcounts[p] = 0
        rdispl = np.zeros(P, dtype=np.int32)
        np.cumsum(rcounts[:-1], out=rdispl[1:])
        sbuf = np.ones(int(counts.sum()))
        rbuf2 = np.empty(int(rcounts.sum()))

        def alltoallv():
            comm.Alltoallv([sbuf, (counts, displ), MPI.DOUBLE], [rbuf2, (rcounts, rdispl), MPI.DOUBLE])

        res["alltoallv"]["words"].append(w)
        res["alltoallv"]["seconds"].append(_timed(comm, alltoallv, reps))

        gcounts = np.full(P, w, dtype=np.int32)
        gdispl = np.arange(P, dtype=np.int32) * w
        gout = np.empty(P * w)

        def allgatherv():
            comm.Allgatherv([buf, MPI.DOUBLE], [gout, (gcounts, gdispl), MPI.DOUBLE])

        # words a rank RECEIVES (the model's unit for the Allgatherv of owned rows)
        res["allgatherv"]["words"].append(w * (P - 1))
        res["allgatherv"]["seconds"].append(_timed(comm, allgatherv, reps))
    for name, d in res.items():
        if d["words"]:
            d["alpha"], d["beta"] = fit_line(d["words"], d["seconds"])
    return {k: v for k, v in res.items() if v["words"]}


def oracle_overhead(quick: bool = False, seed: int = 0) -> list:
    """Per-query seconds of DistOracle's own work at one rank (COMM_SELF), for two L."""
    from mpi4py import MPI

    from .dist_hooi import DistOracle, _Clock, build_mode_plans
    from .dist_schemes import distribute, split_block
    from .tensor import SparseTensor

    rng = np.random.default_rng(seed)
    comm = MPI.COMM_SELF
    out = []
    reps = 50 if quick else 200
    for L in (2000, 20000):
        dims = (L, 200, 50)
        nnz = 40_000
        T = SparseTensor(np.stack([rng.integers(0, d, size=nnz) for d in dims], axis=1), rng.random(nnz), dims)
        dt = distribute(comm, split_block(T, comm), "coarse")
        _, plans = build_mode_plans(comm, dt)
        pl = plans[0]
        Z = rng.standard_normal((pl.r_p, 100))
        orc = DistOracle(comm, Z, pl, _Clock())
        x, y = rng.standard_normal(100), rng.standard_normal(pl.m)

        def med(fn):
            fn()
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            return float(np.median(ts))

        extra = 0.5 * (med(lambda: orc.matvec(x)) - med(lambda: Z @ x)
                       + med(lambda: orc.rmatvec(y)) - med(lambda: Z.T @ y))
        out.append({"L": int(pl.m), "seconds": max(extra, 0.0)})
    return out


def main(argv=None) -> int:
    from mpi4py import MPI

    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    args = [a for a in argv if a != "--quick"]
    if len(args) != 1:
        raise SystemExit("usage: mpiexec -n 2 python -m mpi4py -m spbench.tucker.mpi_microbench OUT.json [--quick]")
    comm = MPI.COMM_WORLD
    patterns = run(comm, QUICK_SIZES if quick else SIZES, quick=quick)
    overhead = oracle_overhead(quick) if comm.rank == 0 else None
    comm.Barrier()
    if comm.rank == 0:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover
            cores = os.cpu_count() or 1
        out = {"ranks": comm.size, "cores": cores, "oversubscribed": comm.size > cores,
               "library": MPI.Get_library_version().rstrip("\x00").strip().splitlines()[0],
               "quick": quick, "patterns": patterns,
               "oracle_overhead": overhead}
        Path(args[0]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
