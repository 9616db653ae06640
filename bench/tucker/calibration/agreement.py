"""Do two Tucker calibrations predict the same times? The model evaluated with each on the
validation points (tucker-lite §7's schemes on the nell2 and flickr stand-ins that
`spbench bench tucker-model` measures), side by side.

A calibration is only useful if measuring it again on the same quiet machine gives the same
predictions; the terms themselves may trade against each other (a fit can move time between two
terms), so agreement is judged where it matters: the modelled HOOI time and its components at each
point. `spbench calibrate --experiment tucker --costs A.json --agree B.json` prints this table.
"""
from __future__ import annotations

from functools import lru_cache

__all__ = ["POINTS", "QUERIES", "agreement_rows"]

#: (tensor, nonzeros, ranks): the validation stand-ins of docs/performance.md at 1 and 2 ranks,
#: and the sweep's 32 and 512 ranks on the smaller ones
POINTS = tuple((t, nnz, P) for t in ("nell2", "flickr") for nnz in (200_000, 2_000_000) for P in (1, 2)) + \
    tuple((t, 200_000, P) for t in ("nell2", "flickr") for P in (32, 512))
#: Lanczos queries per mode charged at every point (what the validation runs measure at K = 10)
QUERIES = 40
SCHEMES = ("coarse", "medium", "lite")
QUANTITIES = ("hooi_time", "ttm_time", "svd_time", "comm_time")


@lru_cache(maxsize=None)
def _tensor(name: str, nnz: int):
    from spbench.datasets.tensor_registry import standin
    return standin(name, nnz=nnz)


def _loads(tensor_name: str, nnz: int, P: int, scheme: str, K: int):
    from spbench.tucker.model.cost_model import rank_loads
    from spbench.tucker.schemes import get_scheme

    tensor = _tensor(tensor_name, nnz)
    return rank_loads(tensor, get_scheme(scheme)(tensor, P, seed=0), K, Q=QUERIES, ttm="csf")


def agreement_rows(costs_a: dict, costs_b: dict, *, points=None, schemes=SCHEMES, K: int = 10,
                   on_point=None) -> list[dict]:
    """One row per (point, scheme, quantity): the modelled seconds with each calibration and
    ``rel_diff`` = (b − a) / a. ``costs_*``: calibrations as :func:`.calibrate.load` returns them
    ``points`` (default :data:`POINTS`) with more than one rank are skipped when a calibration has
    no MPI part."""
    from spbench.store.calibration_file import relative_difference
    from spbench.tucker.model.cost_model import predict_from_loads

    rows = []
    for tensor, nnz, P in POINTS if points is None else points:
        if P > 1 and not all("alpha_alltoallv" in c.get("costs", c) for c in (costs_a, costs_b)):
            continue
        for scheme in schemes:
            if on_point is not None:
                on_point(f"{tensor} {nnz:,} nonzeros, {scheme}, {P} ranks")
            loads = _loads(tensor, nnz, P, scheme, K)
            a = predict_from_loads(loads, costs_a, ttm="csf")
            b = predict_from_loads(loads, costs_b, ttm="csf")
            for q in QUANTITIES:
                rows.append({"tensor": tensor, "nnz": nnz, "ranks": P, "scheme": scheme, "quantity": q,
                             "a": a[q], "b": b[q], "rel_diff": relative_difference(a[q], b[q])})
    return rows
