"""MPI check that a scheme's parallel form equals its serial form, and that distributed HOOI over
it equals the single-process HOOI (tucker-lite §5-§7).

    mpiexec -n R python -m mpi4py tests/tucker/mpi_scripts/check_scheme_forms.py OUT.json SCHEME [PLUGIN.py]

PLUGIN.py, when given, is a module whose ``register()`` adds a scheme defined outside the package
(tests/tucker/plugins/). Every rank builds the same small tensors and distributes its contiguous
block; rank 0 gathers the policies, runs the serial form and ``hooi`` and writes one entry per
tensor to OUT.json (the pytest side asserts on it).
"""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from spbench.tucker.hooi.loop import hooi, hooi_distributed
from spbench.tucker.mpi.distribute import distribute, gather_policies, split_block
from spbench.tucker.schemes import get_scheme

SEED = 3
#: the schemes' parameters for a deterministic run (HyperG: Mt-KaHyPar's deterministic preset, one thread)
PARAMS = {"hyper": {"preset": "deterministic", "threads": 1}}


def load_module(path) -> object:
    """The Python file ``path`` as a module (the tests' conftest, a scheme plugin)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


random_tensor = load_module(Path(__file__).parents[2] / "conftest.py").random_tensor
CASES = [("3mode", random_tensor(1, (30, 25, 20), 800), [3, 3, 2]),
         ("4mode", random_tensor(2, (14, 12, 10, 8), 600), [2, 2, 2, 2])]


def main():
    comm = MPI.COMM_WORLD
    out_path, scheme = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        load_module(sys.argv[3]).register()
    params = PARAMS.get(scheme, {})
    report = []
    for case, tensor, K in CASES:
        dt = distribute(comm, split_block(tensor, comm), scheme, seed=SEED, params=params)
        pols = gather_policies(comm, dt)
        res = hooi_distributed(comm, dt, K, invocations=1, init="random", seed=SEED, tol=1e-12, lanczos="converged")
        if comm.rank != 0:
            continue
        serial = get_scheme(scheme)(tensor, comm.size, seed=SEED, **params)
        ref = hooi(tensor, K, invocations=1, init="random", seed=SEED, tol=1e-12, lanczos="converged")
        report.append({"case": case, "ranks": comm.size, "nnz": tensor.nnz,
                       "policy_equal": all(np.array_equal(a, b) for a, b in zip(pols, serial.policies)),
                       "owners_in_range": all(p.shape == (tensor.nnz,) and 0 <= p.min() and p.max() < comm.size
                                              for p in pols),
                       "fit": float(res.fit), "serial_fit": float(ref.fit)})
    if comm.rank == 0:
        with open(out_path, "w") as f:
            json.dump(report, f)


if __name__ == "__main__":
    main()
