"""MPI micro-benchmark for the Tucker cost model (:mod:`.model`, :mod:`.calibrate`):

    mpiexec -n 2 python -m mpi4py -m spbench.tucker.calibration.mpi_microbench OUT.json [--quick]

Times, on ``MPI.COMM_WORLD``, the communication patterns of the distributed HOOI (:mod:`.hooi`)
at several message sizes (float64 words):

* ping-pong between ranks 0 and 1 (Send/Recv; one-way time = round trip / 2);
* Allreduce (SUM) of w words (the y·Z reduction, the Lanczos Gram–Schmidt reductions, the core);
* Alltoallv with w words to every other rank (the oracle's point-to-point reductions, the
  factor transfer);
* Allgatherv with w words from every rank (the TSQR of the dense Lanczos fallback).

Each call is timed as HOOI makes it: the Alltoallv through the code's own :class:`.mpi.Exchange`
(the oracle's and the factor transfer's wrapper), and before every call each rank writes a buffer of
twice its L2 cache (:func:`.calibrate_ttm.l2_cache_bytes`), as the Lanczos step's products and
Gram–Schmidt between two messages do, so the message meets the caches HOOI leaves (on this 2-core
VM a 10-word Allreduce takes 7 µs back to back and 12 µs after 1 MB written; HOOI's calls at two
ranks took a median of 18–35 µs).
For each pattern the median over repetitions of the max over ranks is kept, and a straight line
t = α + β·w is fitted by least squares (weighted by 1/t so the small messages, where α lives,
count as much as the large ones). Rank 0 writes OUT.json: ``{"ranks", "cores", "oversubscribed",
"patterns": {name: {"words": [...], "seconds": [...], "alpha": s, "beta": s/word}}}``.

Numbers measured with more ranks than cores (oversubscribed: ranks time-share a core and wait
for a time slice) are meaningless as latencies: the file says so (``oversubscribed: true``) and
:func:`.calibrate.calibrate` refuses to use them.
"""
from __future__ import annotations

import json
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


def _timed(comm, fn, reps: int, evict: np.ndarray) -> float:
    """Median over ``reps`` of the max over ranks of one call's seconds (after 2 warm-ups), each
    call after ``evict`` is written (untimed)."""
    from mpi4py import MPI
    for _ in range(2):
        fn()
    ts = []
    for _ in range(reps):
        evict += 1.0
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

    from spbench.tucker.calibration.calibrate_ttm import l2_cache_bytes
    from spbench.tucker.mpi.collectives import Exchange

    P, p = comm.size, comm.rank
    evict = np.ones(int(2 * l2_cache_bytes()) // 8)
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
            res["pingpong"]["seconds"].append(_timed(comm, pingpong, reps, evict) / 2)

        def allreduce():
            comm.Allreduce(buf, rbuf, op=MPI.SUM)

        res["allreduce"]["words"].append(w)
        res["allreduce"]["seconds"].append(_timed(comm, allreduce, reps, evict))

        counts = np.full(P, w, dtype=np.int64)
        counts[p] = 0                                 # nothing to self, as in the oracle plans
        exchange = Exchange(counts, counts)
        sbuf = np.ones(int(counts.sum()))

        def alltoallv():
            exchange(comm, sbuf)

        res["alltoallv"]["words"].append(w)
        res["alltoallv"]["seconds"].append(_timed(comm, alltoallv, reps, evict))

        gcounts = np.full(P, w, dtype=np.int32)
        gdispl = np.arange(P, dtype=np.int32) * w
        gout = np.empty(P * w)

        def allgatherv():
            comm.Allgatherv([buf, MPI.DOUBLE], [gout, (gcounts, gdispl), MPI.DOUBLE])

        # words a rank RECEIVES (the model's unit for the Allgatherv)
        res["allgatherv"]["words"].append(w * (P - 1))
        res["allgatherv"]["seconds"].append(_timed(comm, allgatherv, reps, evict))
    for name, d in res.items():
        if d["words"]:
            d["alpha"], d["beta"] = fit_line(d["words"], d["seconds"])
    return {k: v for k, v in res.items() if v["words"]}


def main(argv=None) -> int:
    from mpi4py import MPI

    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    args = [a for a in argv if a != "--quick"]
    if len(args) != 1:
        raise SystemExit("usage: mpiexec -n 2 python -m mpi4py -m spbench.tucker.calibration.mpi_microbench OUT.json [--quick]")
    comm = MPI.COMM_WORLD
    patterns = run(comm, QUICK_SIZES if quick else SIZES, quick=quick)
    comm.Barrier()
    if comm.rank == 0:
        from spbench.machine import usable_cores
        cores = usable_cores()
        out = {"ranks": comm.size, "cores": cores, "oversubscribed": comm.size > cores,
               "library": MPI.Get_library_version().rstrip("\x00").strip().splitlines()[0],
               "quick": quick, "patterns": patterns}
        Path(args[0]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
