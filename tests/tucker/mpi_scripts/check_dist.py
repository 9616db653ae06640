"""MPI check of the parallel schemes and the distributed HOOI against the single-process code.

    mpiexec -n R python -m mpi4py tests/tucker/mpi_scripts/check_dist.py OUT.json [schemes...]

Every rank builds the same small tensors, takes its contiguous block, distributes it with each
scheme and runs distributed HOOI; rank 0 gathers the policies and factors, runs the serial
scheme, ``hooi`` and ``compute_metrics``, and writes the comparisons to OUT.json (the pytest
side asserts on them).
"""
import json
import sys

import numpy as np
from mpi4py import MPI
from scipy.linalg import subspace_angles

from spbench.tucker.mpi.distribute import distribute, gather_policies, split_block
from spbench.tucker.hooi.loop import gather_factors, hooi, hooi_distributed
from spbench.tucker.rank_usage import distributed_metrics
from spbench.tucker.metrics import compute_metrics
from spbench.tucker.schemes import Distribution, get_scheme
from check_scheme_forms import random_tensor          # the tests' conftest's (this folder is on sys.path)



TOL = 1e-12   # tight Lanczos tolerance: subspaces then agree far below 1e-8

CASES = [
    ("3mode", random_tensor(1, (60, 45, 35), 2500), [4, 3, 5], 2),
    ("4mode", random_tensor(2, (24, 18, 15, 12), 2000), [3, 2, 3, 2], 1),
]


def _angle(A, B):
    keep = np.linalg.norm(A, axis=0) > 0.5
    keepb = np.linalg.norm(B, axis=0) > 0.5
    if keep.sum() != keepb.sum():
        return float("inf")
    if not keep.any():
        return 0.0
    return float(np.max(subspace_angles(A[:, keep], B[:, keepb])))


def main():
    comm = MPI.COMM_WORLD
    out_path = sys.argv[1]
    schemes = sys.argv[2:] or ["lite", "coarse", "medium", "hyper"]
    seed = 3
    report = []
    for name, tensor, K, inv in CASES:
        serial = {mode: hooi(tensor, K, invocations=inv, init="random", seed=seed, tol=TOL, lanczos=mode)
                  for mode in ("converged", "paper")} if comm.rank == 0 else None
        block = split_block(tensor, comm)
        for scheme in schemes:
            params = {"preset": "deterministic"} if scheme == "hyper" else {}
            dt = distribute(comm, block, scheme, seed=seed, params=params)
            pols = gather_policies(comm, dt)
            # every rank checks its own sets: the elements it received are the ones it owns
            for n in range(tensor.nmodes):
                s = dt.sets[n]
                assert np.all(np.diff(s.gids) > 0)
                assert np.array_equal(s.coords, tensor.coords[s.gids])
            res = hooi_distributed(comm, dt, K, invocations=inv, init="random", seed=seed, tol=TOL,
                                   lanczos="converged")
            paper = hooi_distributed(comm, dt, K, invocations=inv, init="random", seed=seed, lanczos="paper")
            paper_ttm = hooi_distributed(comm, dt, K, invocations=inv, init="random", seed=seed, tol=TOL,
                                         lanczos="converged", ttm="paper")
            F = gather_factors(comm, tensor.dims, res)
            Fp = gather_factors(comm, tensor.dims, paper)
            own_met = distributed_metrics(comm, dt, res.plans, K, [q // inv for q in res.queries])
            if comm.rank != 0:
                continue
            dist = Distribution(scheme, comm.size, tuple(pols), dt.multi_policy)
            entry = {"case": name, "scheme": scheme, "ranks": comm.size}
            if scheme != "hyper":
                ref = get_scheme(scheme)(tensor, comm.size, seed=seed)
                entry["policy_equal"] = all(np.array_equal(a, b) for a, b in zip(pols, ref.policies))
            # the elements each rank holds are exactly its policy's
            met = compute_metrics(tensor, dist, K, Q=res.queries)
            entry["svd_words"] = res.svd_words
            entry["svd_volume"] = [m["svd_volume"] for m in met.modes]
            entry["fm_words"] = res.fm_words
            entry["fm_volume"] = [inv * m["fm_volume"] for m in met.modes]
            entry["per_product"] = [pl.r_sum - pl.m for pl in res.plans]
            entry["r_sum_minus_l"] = [m["r_sum"] - m["slices"] for m in met.modes]
            met1 = compute_metrics(tensor, dist, K, Q=[q // inv for q in res.queries])
            entry["own_metrics_equal"] = (own_met.modes == met1.modes
                                          and all(np.isclose(own_met.aggregate[k], v) for k, v in met1.aggregate.items()))
            entry["svd_gather_words"] = res.svd_gather_words
            entry["fit"] = res.fit
            entry["serial_fit"] = serial["converged"].fit
            entry["ttm_paper_fit_rel"] = abs(paper_ttm.fit - res.fit) / abs(res.fit)
            entry["fit_rel"] = abs(res.fit - entry["serial_fit"]) / abs(entry["serial_fit"])
            entry["max_angle"] = max(_angle(a, b) for a, b in zip(F, serial["converged"].factors))
            entry["core_diff"] = float(np.max(np.abs(np.abs(res.core) - np.abs(serial["converged"].core))))
            sp = serial["paper"]
            entry["paper_queries"] = paper.queries
            entry["paper_fit_rel"] = abs(paper.fit - sp.fit) / abs(sp.fit)
            entry["paper_max_angle"] = max(_angle(a, b) for a, b in zip(Fp, sp.factors))
            report.append(entry)
    if comm.rank == 0:
        with open(out_path, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
