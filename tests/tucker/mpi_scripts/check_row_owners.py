"""σ_n under MPI (RowOwners at the slices' homes) against the serial row_owners on every rank.

    mpiexec -n R python -m mpi4py tests/tucker/mpi_scripts/check_row_owners.py OUT.json

Every rank builds the same tensors and serial policies for P = R (the light schemes and a random
policy with many shared slices), takes the slices it shares, and checks RowOwners.compute and
RowOwners.lookup against row_owners; rank 0 writes [{"check", "ok"}] (ok on every rank).
"""
import json
import sys

import numpy as np
from mpi4py import MPI

from spbench.tucker.mpi.comm import RowOwners, row_owners
from spbench.tucker.schemes import SCHEMES
from spbench.datasets.sparse_tensor import SparseTensor, unique_sorted


def tensor(seed, dims, nnz):
    rng = np.random.default_rng(seed)
    cols = [rng.permutation(L)[rng.choice(L, size=nnz, p=(w := np.arange(1, L + 1) ** -1.2) / w.sum())]
            for L in dims]
    return SparseTensor(np.stack(cols, axis=1), rng.random(nnz) + 0.5, dims)


def main():
    comm = MPI.COMM_WORLD
    P, p = comm.size, comm.rank
    checks = []
    for tname, t in {"3mode": tensor(1, (60, 45, 35), 2500), "4mode": tensor(2, (24, 18, 15, 12), 2000)}.items():
        policies = {name: SCHEMES[name](t, P, seed=3).policies for name in ("lite", "coarse", "medium")}
        rnd = np.random.default_rng(9).integers(0, P, t.nnz).astype(np.int32)
        policies["random"] = (rnd,) * t.nmodes
        for name, pols in policies.items():
            for n in range(t.nmodes):
                sigma = row_owners(t, pols[n], n, P)
                idx = t.coords[:, n]
                rows = unique_sorted(idx[pols[n] == p])
                ro = RowOwners.compute(comm, rows, t.dims[n])
                ok = np.array_equal(ro.owners, sigma[rows]) and ro.owners.dtype == np.int32
                nonempty = np.flatnonzero(sigma >= 0)
                ask = np.sort(np.random.default_rng([p, n]).choice(nonempty, size=nonempty.size // 2, replace=False))
                got = ro.lookup(comm, ask)
                ok_lookup = np.array_equal(got, sigma[ask]) and got.dtype == np.int32
                checks.append((f"{tname}/{name}/mode{n}/compute", bool(ok)))
                checks.append((f"{tname}/{name}/mode{n}/lookup", bool(ok_lookup)))
    everywhere = comm.gather(checks, root=0)
    if p == 0:
        report = [{"check": c, "ok": all(r[i][1] for r in everywhere)} for i, (c, _) in enumerate(checks)]
        with open(sys.argv[1], "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
