"""The MPI helpers of spbench.tucker.mpi.collectives against results computed from every rank's input.

    mpiexec -n R python -m mpi4py tests/tucker/mpi_scripts/check_mpi_helpers.py OUT.json

``run_checks(comm)`` is also called in-process with a LocalComm (no mpi4py). Every rank can
rebuild every rank's input, so each rank checks its own result; rank 0 writes the list of
{"check", "ok", "detail"} (ok = on every rank).
"""
import json
import sys

import numpy as np

from spbench.tucker.mpi.collectives import (Exchange, allgatherv, allreduce, alltoallv, exscan, gatherv, sample_sort,
    scatterv)


def _counts(P):
    """items rank r sends to rank q."""
    return np.array([[(r + 2 * q) % 3 + (r == q) for q in range(P)] for r in range(P)], dtype=np.int64)


def _items(r, q, c, width):
    return (1000 * r + 10 * q + np.arange(c * width)).reshape(c, width)


def run_checks(comm) -> list:
    P, r = comm.size, comm.rank
    out = []

    def check(name, ok, detail=""):
        out.append((name, bool(ok), str(detail)))

    C = _counts(P)
    send = np.concatenate([_items(r, q, C[r, q], 2) for q in range(P)]).astype(np.int64)
    want = np.concatenate([_items(q, r, C[q, r], 2) for q in range(P)]).astype(np.int64)
    got, rc = alltoallv(comm, send, C[r], width=2)
    check("alltoallv", np.array_equal(got, want) and rc.tolist() == C[:, r].tolist())
    ex = Exchange(C[r], C[:, r])
    buf = np.full((int(C[:, r].sum()), 2), np.nan)
    res = ex(comm, send.astype(np.float64), width=2, out=buf)
    check("exchange", res is buf and np.array_equal(buf, want.astype(np.float64)))
    back = Exchange(C[:, r], C[r])(comm, want, width=2)
    check("exchange_back", np.array_equal(back, send))

    arr = r * 100 + np.arange(r + 1, dtype=np.int32)
    g, counts = allgatherv(comm, arr)
    check("allgatherv", np.array_equal(g, np.concatenate([q * 100 + np.arange(q + 1) for q in range(P)]))
          and g.dtype == np.int32 and counts.tolist() == list(range(1, P + 1)))
    g, counts = allgatherv(comm, np.zeros(0, dtype=np.float64))
    check("allgatherv_empty", g.size == 0 and counts.tolist() == [0] * P)

    x = np.array([r, -r, r * r], dtype=np.int64)
    rs = np.arange(P)
    check("allreduce_sum", allreduce(comm, x).tolist() == [rs.sum(), -rs.sum(), (rs * rs).sum()])
    check("allreduce_max", allreduce(comm, x, op="max").tolist() == [P - 1, 0, (P - 1) ** 2])
    check("allreduce_min", allreduce(comm, x.astype(np.float64), op="min").tolist() == [0.0, -(P - 1), 0.0])
    try:
        allreduce(comm, x, op="prod")
        check("allreduce_bad_op", False)
    except ValueError:
        check("allreduce_bad_op", True)
    check("exscan", exscan(comm, np.array([r + 1, 2])).tolist() == [sum(range(1, r + 1)), 2 * r])

    rows = np.stack([np.arange(r + 1) + 10 * r, -np.arange(r + 1)], axis=1).astype(np.int64)
    full, counts = gatherv(comm, rows)
    if r == 0:
        ref = np.concatenate([np.stack([np.arange(q + 1) + 10 * q, -np.arange(q + 1)], axis=1) for q in range(P)])
        check("gatherv", np.array_equal(full, ref) and counts.tolist() == list(range(1, P + 1)))
    else:
        check("gatherv", full is None)
    part = scatterv(comm, np.arange(int(counts.sum())) if r == 0 else None, counts, np.int32)
    lo = int(counts[:r].sum())
    check("scatterv", part.dtype == np.int32 and part.tolist() == list(range(lo, lo + r + 1)))

    keys = np.unique(np.random.default_rng([11, r]).integers(0, 10**9, 300 + 37 * r))
    allkeys = np.sort(np.concatenate([np.unique(np.random.default_rng([11, q]).integers(0, 10**9, 300 + 37 * q))
                                      for q in range(P)]))
    bucket = sample_sort(comm, keys, np.random.default_rng([5, r]))
    start = int(exscan(comm, np.array([bucket.size]))[0])
    check("sample_sort", np.array_equal(bucket, allkeys[start:start + bucket.size])
          and int(allreduce(comm, np.array([bucket.size]))[0]) == allkeys.size)
    return out


def main():
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    checks = run_checks(comm)
    everywhere = comm.gather(checks, root=0)
    if comm.rank == 0:
        report = [{"check": name, "ok": all(c[i][1] for c in everywhere), "detail": detail}
                  for i, (name, _, detail) in enumerate(checks)]
        with open(sys.argv[1], "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
