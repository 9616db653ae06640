"""MPI edge cases of the parallel schemes (Lite, CoarseG, MediumG with and without a grid), the
sample sort and tiny distributed HOOI runs.

    mpiexec -n R python -m mpi4py tests/tucker/mpi_scripts/check_lite.py OUT.json

Rank 0 writes a JSON list of {"check": ..., "ok": bool, "detail": ...}.
"""
import json
import sys

import numpy as np
from mpi4py import MPI

from spbench.tucker.mpi.distribute import distribute, gather_policies, split_block
from spbench.tucker.hooi.loop import hooi, hooi_distributed
from spbench.tucker.mpi.collectives import sample_sort
from spbench.tucker.schemes import get_scheme
from spbench.datasets.sparse_tensor import SparseTensor


def tensors():
    rng = np.random.default_rng(7)
    out = {}
    # one giant slice (60 % of the elements) in mode 0: stage 2 spans every rank
    n = 900
    c0 = np.where(rng.random(n) < 0.6, 3, rng.integers(0, 40, n))
    out["giant"] = SparseTensor(np.stack([c0, rng.integers(0, 30, n), rng.integers(0, 20, n)], 1),
                                rng.random(n) + 0.5, (40, 30, 20))
    # equal small slices everywhere (ties in the sort; stage 1 only when P divides evenly)
    g = np.arange(600)
    out["uniform"] = SparseTensor(np.stack([g % 50, (g // 50) % 12, g % 7], 1), rng.random(600) + 0.5, (50, 12, 7))
    # many empty slices
    n = 400
    out["sparse-dims"] = SparseTensor(np.stack([rng.integers(0, 20, n) * 50, rng.integers(0, 300, n),
                                                rng.integers(0, 3, n)], 1), rng.random(n) + 0.5, (1000, 300, 3))
    # fewer elements than ranks can hold evenly
    out["tiny"] = SparseTensor(np.array([[0, 1, 2], [3, 1, 0], [3, 2, 2], [1, 0, 1], [2, 2, 0]]),
                               np.array([1.0, 2.0, -1.0, 0.5, 3.0]), (4, 3, 3))
    return out


def main():
    comm = MPI.COMM_WORLD
    out = []

    def record(check, ok, detail=""):
        if comm.rank == 0:
            out.append({"check": check, "ok": bool(ok), "detail": str(detail)})

    # sample sort: the concatenation of the buckets is the sorted input
    rng = np.random.default_rng([11, comm.rank])
    keys = np.unique(rng.integers(0, 10**9, 500 + 97 * comm.rank))
    allkeys = np.concatenate(comm.allgather(keys))
    bucket = sample_sort(comm, keys, np.random.default_rng([5, comm.rank]))
    got = comm.gather(bucket, root=0)
    if comm.rank == 0:
        record("sample_sort", np.array_equal(np.concatenate(got), np.sort(allkeys)),
               [g.size for g in got])
    empty = sample_sort(comm, np.zeros(0, dtype=np.int64), np.random.default_rng(0))
    record("sample_sort_empty", comm.allreduce(empty.size) == 0)

    for name, t in tensors().items():
        block = split_block(t, comm)
        for scheme in ("lite", "coarse", "medium"):
            dt = distribute(comm, block, scheme, seed=1)
            pols = gather_policies(comm, dt)
            if comm.rank == 0:
                ref = get_scheme(scheme)(t, comm.size, seed=1)
                record(f"{name}/{scheme}/policy", all(np.array_equal(a, b) for a, b in zip(pols, ref.policies)))
            K = [2, 2, 2]
            res = hooi_distributed(comm, dt, K, invocations=1, seed=2, tol=1e-12)
            if comm.rank == 0:
                ser = hooi(t, K, invocations=1, seed=2, tol=1e-12)
                rel = abs(res.fit - ser.fit) / max(abs(ser.fit), 1e-300)
                record(f"{name}/{scheme}/fit", rel < 1e-10, f"{res.fit} vs {ser.fit}")
        # a declared parameter reaches the parallel form as it reaches the serial one
        grid = [1, comm.size, 1]
        pols = gather_policies(comm, distribute(comm, block, "medium", seed=1, params={"grid": grid}))
        if comm.rank == 0:
            ref = get_scheme("medium")(t, comm.size, seed=1, grid=grid)
            record(f"{name}/medium-grid/policy", all(np.array_equal(a, b) for a, b in zip(pols, ref.policies)))
    if comm.rank == 0:
        with open(sys.argv[1], "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
