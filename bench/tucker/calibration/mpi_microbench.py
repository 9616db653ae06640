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
VM a 10-word Allreduce takes 7 µs back to back and 12 µs after 1 MB written, barrier skew included).
Every (pattern, size) call is timed once per round, in turn (:data:`ROUNDS` rounds), from the last
rank's entry to each rank's exit (the transfer, without any rank's waiting for another); for each the
median over rounds of the max over ranks is kept, and a straight line
t = α + β·w is fitted by least squares (weighted by 1/t so the small messages, where α lives,
count as much as the large ones).

The per-message cost depends on where the data MPI touches sits when the call starts: HOOI's
messages come between steps that stream each rank's Z and Lanczos vectors (tucker-lite §4.2, §5),
and a step whose data fits in the L2 cache leaves MPI's buffers and structures there, one streaming
gigabytes leaves them in memory (on this VM, 2026-12-05: an Allreduce of a word 2.5 µs after 4 KiB
read, 4.1 µs after 2 MiB, 7.9 µs after 8 MiB, 44 µs after 256 MiB; an Alltoallv 4.3, 8.3, 18, 100 µs).
So α is measured again on a ladder of working sets (:data:`ALPHA_LADDER`, bytes): before each call
each rank reads a buffer of that many bytes, as a step's products read its Z; per rung, α = the
median over the small sizes (:data:`ALPHA_WORDS`) of t(w) − β·w, β the pattern's line. The cost model reads α at a step's working set (:func:`.model.cost_model.alpha_cost`).

Rank 0 writes OUT.json: ``{"ranks", "cores", "oversubscribed", "patterns": {name: {"words": [...],
"seconds": [...], "alpha": s, "beta": s/word, "alpha_bytes": [...], "alpha_ladder": [...]}}}``
(the ladder for the patterns the model charges: Allreduce, Alltoallv, Allgatherv).

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


#: rounds: every (pattern, size) call is timed once per round, in turn, and its median kept
ROUNDS, QUICK_ROUNDS = 100, 20
#: working sets (bytes read before each call) at which α is measured again: from nothing (warm)
#: through the per-core L2 (2 MiB here) to far beyond the last-level cache; quick: three rungs
ALPHA_LADDER = {False: (2 ** 12, 2 ** 19, 2 ** 20, 2 ** 21, 2 ** 22, 2 ** 23, 2 ** 25, 2 ** 28),
                True: (2 ** 12, 2 ** 21, 2 ** 23)}
#: the message sizes (words) α is read at on the ladder, and its rounds (each call reads a buffer)
ALPHA_WORDS = (1, 16)
ALPHA_ROUNDS, QUICK_ALPHA_ROUNDS = 40, 10
#: the patterns whose α the model charges (ping-pong is not a HOOI call)
LADDER_PATTERNS = ("allreduce", "alltoallv", "allgatherv")


def _timed_round_robin(comm, calls: list, rounds: int, before) -> np.ndarray:
    """Per call of ``calls``, the median over ``rounds`` rounds (each visiting every call in turn,
    after 2 untimed visits) of the max over ranks of its transfer seconds: from the LAST rank's
    entry to the rank's exit, the part of a call that is no rank's waiting for another (the
    barrier's uneven exit included), as the validation tells a HOOI call's transfer from its wait
    (:func:`spbench.tucker.hooi.loop.split_waits`; one machine's monotonic clock, shared by its
    processes); ``before()`` run (untimed) before each. In turn, not call after call: on a virtual
    machine the latency of one call drifts over
    seconds, and every size must see the same mix of moments or the line fitted through them
    reads the drift as α or β."""
    from mpi4py import MPI

    for _ in range(2):
        for fn in calls:
            fn()
    enter, leave = np.empty((rounds, len(calls))), np.empty((rounds, len(calls)))
    for r in range(rounds):
        for i, fn in enumerate(calls):
            before()
            comm.Barrier()
            enter[r, i] = time.perf_counter()
            fn()
            leave[r, i] = time.perf_counter()
    last = np.empty_like(enter)
    comm.Allreduce(enter, last, op=MPI.MAX)
    out = np.empty_like(leave)
    comm.Allreduce(leave - last, out, op=MPI.MAX)
    return np.median(out, axis=0)


def _calls(comm, w: int) -> dict:
    """The four patterns' calls at ``w`` words (ping-pong only with two ranks or more)."""
    from mpi4py import MPI

    from spbench.tucker.mpi.collectives import Exchange

    P, p = comm.size, comm.rank
    buf, rbuf = np.ones(w), np.empty(w)

    def pingpong():
        if p == 0:
            comm.Send([buf, MPI.DOUBLE], dest=1, tag=7)
            comm.Recv([rbuf, MPI.DOUBLE], source=1, tag=7)
        elif p == 1:
            comm.Recv([rbuf, MPI.DOUBLE], source=0, tag=7)
            comm.Send([buf, MPI.DOUBLE], dest=0, tag=7)

    def allreduce():
        comm.Allreduce(buf, rbuf, op=MPI.SUM)

    counts = np.full(P, w, dtype=np.int64)
    counts[p] = 0                                 # nothing to self, as in the oracle plans
    exchange = Exchange(counts, counts)
    sbuf = np.ones(int(counts.sum()))

    def alltoallv():
        exchange(comm, sbuf)

    gcounts = np.full(P, w, dtype=np.int32)
    gdispl = np.arange(P, dtype=np.int32) * w
    gout = np.empty(P * w)

    def allgatherv():
        comm.Allgatherv([buf, MPI.DOUBLE], [gout, (gcounts, gdispl), MPI.DOUBLE])

    calls = {"allreduce": allreduce, "alltoallv": alltoallv, "allgatherv": allgatherv}
    return {"pingpong": pingpong, **calls} if P >= 2 else calls


def _alpha_ladder(comm, res: dict, quick: bool) -> None:
    """α of each pattern of :data:`LADDER_PATTERNS` at each working set of :data:`ALPHA_LADDER` (module
    docstring), added to ``res`` as ``alpha_bytes`` and ``alpha_ladder``."""
    ladder = ALPHA_LADDER[quick]
    buf = np.ones(max(ladder) // 8)
    sink = [0.0]
    keys, per_rung = [], []
    for w in ALPHA_WORDS:
        for name, fn in _calls(comm, w).items():
            if name in LADDER_PATTERNS:
                keys.append((name, w))
                per_rung.append(fn)
    for nbytes in ladder:
        view = buf[: nbytes // 8]

        def read(view=view):           # a step streaming its working set, as the products read Z
            sink[0] += float(view.sum())
        medians = _timed_round_robin(comm, per_rung, QUICK_ALPHA_ROUNDS if quick else ALPHA_ROUNDS, read)
        for name in LADDER_PATTERNS:
            d = res[name]
            scale = comm.size - 1 if name == "allgatherv" else 1       # words as run() counts them
            alpha = [t - d["beta"] * w * scale for (n, w), t in zip(keys, medians) if n == name]
            d.setdefault("alpha_bytes", []).append(float(nbytes))
            d.setdefault("alpha_ladder", []).append(max(float(np.median(alpha)), 0.0))


def run(comm, sizes, quick: bool = False) -> dict:
    from spbench.tucker.calibration.calibrate_ttm import l2_cache_bytes

    P = comm.size
    evict = np.ones(int(2 * l2_cache_bytes()) // 8)

    def write():                       # the fitted line: every call after twice the L2 written
        evict[:] += 1.0
    keys, calls = [], []
    for w in sizes:
        for name, fn in _calls(comm, w).items():
            keys.append((name, w))
            calls.append(fn)
    medians = _timed_round_robin(comm, calls, QUICK_ROUNDS if quick else ROUNDS, write)
    res: dict = {}
    for (name, w), t in zip(keys, medians):
        d = res.setdefault(name, {"words": [], "seconds": []})
        # ping-pong: one way is half the round trip; Allgatherv: the words a rank RECEIVES (the model's unit)
        d["words"].append(w * (P - 1) if name == "allgatherv" else w)
        d["seconds"].append(float(t) / 2 if name == "pingpong" else float(t))
    for d in res.values():
        d["alpha"], d["beta"] = fit_line(d["words"], d["seconds"])
    _alpha_ladder(comm, res, quick)
    return res


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
        from spbench.machine.facts import usable_cores
        cores = usable_cores()
        out = {"ranks": comm.size, "cores": cores, "oversubscribed": comm.size > cores,
               "library": MPI.Get_library_version().rstrip("\x00").strip().splitlines()[0],
               "quick": quick, "patterns": patterns}
        Path(args[0]).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
