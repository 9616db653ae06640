"""What a message and a Lanczos query cost inside the distributed HOOI beyond what the micro-benchmarks
see: measured on the real worker at two ranks, on a tensor of the calibration's own (tucker-lite
§4.2's oracle and Lanczos, §7.2's breakup).

The micro-benchmarks time each piece alone: MPI calls after a buffer read of the step's working set
(:mod:`.mpi_microbench`), the oracle's and the Lanczos run's work in one process
(:mod:`.calibrate`). Between two messages of HOOI a rank runs a Lanczos step in the interpreter and
NumPy, which leaves more in the caches than a buffer read, and two ranks run their steps at once
on one machine. What that adds is measured here, not guessed: the MPI worker runs HOOI (``lanczos:
paper``, K = 10, the message trace on) at 2 ranks on a uniform random tensor (:data:`TENSOR`) with
each scheme of :data:`SCHEMES`, and the cost model built from every other calibrated cost, these
three at 0, predicts the same runs (:func:`.model_validation.validate`). Per run:

* ``alpha_allreduce_context``, ``alpha_alltoallv_context``: the measured transfer per call of the
  Lanczos Allreduces and of the oracle's Alltoallvs (the two terms with a hundred calls and more)
  less the model's α(working set) + β·words per call: seconds the cost model adds to every α of
  that pattern (:func:`.model.cost_model.alpha_cost`);
* ``dist_query_context``: the measured SVD work (the slowest rank's, per mode) less the modelled,
  per Lanczos query: seconds the model adds to every query at P > 1.

Each is the median over the runs (schemes × repeats). The tensor is the calibration's, never a
validation stand-in's (`spbench bench tucker-model` runs nell2 and flickr stand-ins against it).
"""
from __future__ import annotations

import numpy as np

__all__ = ["calibrate_in_context", "context_costs", "CONTEXT_KEYS", "TENSOR", "SCHEMES"]

#: the costs this step measures (:data:`.model.cost_model.CONTEXT_COSTS`)
CONTEXT_KEYS = ("alpha_allreduce_context", "alpha_alltoallv_context", "dist_query_context")
#: the calibration tensor: uniform random coordinates and values (seeded), dims and nonzeros, full
#: and quick (each rank's Z about 1 MB at K = 10: 1,500 rows × 100 columns)
TENSOR = {False: ((1500, 1500, 1500), 150_000), True: ((1500, 1500, 1500), 60_000)}
#: the schemes run (distributions that share rows differently: whole slices, a grid, Lite's)
SCHEMES = ("coarse", "medium", "lite")
#: runs per scheme (one MPI job), full and quick
REPEATS = {False: 3, True: 1}
#: each pattern and the message term whose calls measure it
PATTERN_TERMS = {"alpha_allreduce_context": "svd_allreduce", "alpha_alltoallv_context": "oracle_alltoallv"}


def context_tensor(quick: bool = False, seed: int = 0):
    """The calibration's uniform random tensor (:data:`TENSOR`)."""
    from spbench.datasets.sparse_tensor import SparseTensor

    dims, nnz = TENSOR[bool(quick)]
    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, d, size=nnz) for d in dims], axis=1)
    return SparseTensor(coords, rng.standard_normal(nnz), dims)


def context_costs(rows: list) -> dict:
    """The three costs of :data:`CONTEXT_KEYS` from validation rows (:func:`.model_validation.validate`'s
    records, predicted with these costs at 0), each the median over the rows, and ``_fit``: the
    per-row figures. A row whose term made no call gives nothing to that pattern."""
    per = {k: [] for k in CONTEXT_KEYS}
    for r in rows:
        queries = int(np.sum(r["queries"]))
        if queries > 0:
            per["dist_query_context"].append((float(r["measured_svd_time"]) - float(r["predicted_svd_time"]))
                                             / queries)
        for key, term in PATTERN_TERMS.items():
            m = r["comm_terms"].get(term)
            if m and m.get("calls"):
                per[key].append((float(m["transfer"]) - float(m.get("model_alpha", 0.0))
                                 - float(m.get("model_beta", 0.0))) / float(m["calls"]))
    missing = [k for k, v in per.items() if not v]
    if missing:
        raise RuntimeError(f"in-context calibration: no calls to measure {', '.join(missing)}")
    out = {k: float(np.median(v)) for k, v in per.items()}
    out["_fit"] = {k: [float(x) for x in v] for k, v in per.items()}
    return out


def calibrate_in_context(costs: dict, quick: bool = False, seed: int = 0, timeout: float = 300) -> dict:
    """The three in-context costs (module docstring) given every other calibrated cost (``costs``,
    MPI included); ``_fit`` adds the tensor, the schemes and the per-run figures."""
    from spbench.tucker.calibration.model_validation import validate

    base = {**costs, **dict.fromkeys(CONTEXT_KEYS, 0.0)}
    rows = validate({"context": context_tensor(quick, seed)}, SCHEMES, [2], base, K=10, seed=seed,
                    repeats=REPEATS[bool(quick)], timeout=timeout).to_dict("records")
    out = context_costs(rows)
    dims, nnz = TENSOR[bool(quick)]
    out["_fit"] = {"tensor": {"dims": list(dims), "nnz": nnz, "seed": seed}, "schemes": list(SCHEMES), "ranks": 2,
                   **out["_fit"]}
    return out
