"""The SpTrSV cost model's costs for one core count (:mod:`spbench.sptrsv.model` replays a schedule
with them), from a calibration or a flat dict; core counts the calibration did not measure follow
one stated law.

``costs`` is either a calibration (``calibrate.calibrate()``: ``{"serial": {...}, "cores":
{"1": {...}, "2": {...}}, ...}``) or one flat dict ``{"t_row", "t_nnz", "t_chain", "t_far",
"barrier", "weak_barrier", "p2p_dep"}`` (all but t_row and t_nnz default to 0).

A core count the calibration (a machine profile) did not measure is extrapolated by one stated law,
:data:`EXTRAPOLATION_LAW` (``costs_for`` says ``extrapolated: True`` and names it; rows carry
``model_extrapolated`` and ``model_law``):

- compute rates: those of the nearest calibrated count below (above, if none is below), held;
- ``barrier``, ``barrier_omp``, ``weak_barrier``: ``a + b·(P − 1) + c·(D(P) − 1)``.  The kernels'
  barriers poll one counter per other core (``kernels/sptrsv/sync.h``), so within a NUMA domain the cost
  grows by one cache-line read per peer: a and b are the least-squares line through the
  calibrated counts within one domain (b ≥ 0; b = 0 when only one such count exists);
- ``p2p_dep`` (one flag read per dependency, whatever P): ``a + c·(D(P) − 1)``, a its value at
  the largest calibrated count within one domain;
- D(P) = ⌈P / cores per NUMA domain⌉, threads filling domain after domain (``OMP_PROC_BIND=close``);
  c, the step per domain crossed, is the mean excess over the within-domain line of the calibrated
  counts beyond one domain; a profile that measured none has no step (c = 0, ``numa_step``
  None: the rows say so).  Without a profile (flat costs, older calibrations) D = 1.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

RATE_KEYS = ("t_row", "t_nnz", "t_chain", "t_far")
SYNC_KEYS = ("barrier", "barrier_omp", "weak_barrier", "p2p_dep")
#: the synchronisation costs that grow with the peers a barrier polls (the rest are per dependency)
PEER_KEYS = ("barrier", "barrier_omp", "weak_barrier")
#: name of the law for core counts a calibration did not measure (module docstring)
EXTRAPOLATION_LAW = "peers-linear + NUMA step"


def _domains(cores: int, per_domain: int | None) -> int:
    return 1 if not per_domain else -(-int(cores) // int(per_domain))


def sync_law(table: Mapping, key: str, per_domain: int | None) -> tuple[float, float, float | None]:
    """(a, b, c) of the extrapolation law for sync cost ``key`` (module docstring) from a
    calibration's ``cores`` table ({P: entry}); c is None when no calibrated count crossed a domain."""
    inside = sorted(P for P in table if _domains(P, per_domain) == 1)
    beyond = sorted(P for P in table if _domains(P, per_domain) > 1)
    if not inside:  # every calibrated count spans domains: the smallest one anchors the line
        inside, beyond = beyond[:1], beyond[1:]
    values = np.array([float(table[P].get(key, 0.0) or 0.0) for P in inside])
    if key in PEER_KEYS and len(inside) > 1:
        x = np.array(inside, dtype=float) - 1.0
        b, a = np.polyfit(x, values, 1)
        if b < 0:
            a, b = float(values.mean()), 0.0
    else:
        a, b = float(values[-1]), 0.0
    slope = b if key in PEER_KEYS else 0.0
    if not beyond:
        return float(a), float(slope), None
    excess = [(float(table[P].get(key, 0.0) or 0.0) - a - slope * (P - 1)) / (_domains(P, per_domain) - 1)
              for P in beyond]
    return float(a), float(slope), float(max(0.0, np.mean(excess)))


def costs_for(costs: Mapping, cores: int) -> dict:
    """Flat costs for ``cores`` from a calibration (or a flat dict, returned as floats).

    The result has ``t_row``, ``t_nnz``, ``t_chain``, ``t_far``, ``barrier``, ``barrier_omp``,
    ``weak_barrier``, ``p2p_dep`` (seconds), ``serial_t_*`` (the serial kernel's rates),
    ``calibrated_cores`` and ``extrapolated``.
    """
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    if "cores" in costs and isinstance(costs["cores"], Mapping):
        table = {int(k): v for k, v in costs["cores"].items()}
        if not table:
            raise ValueError("calibration has no core counts under 'cores'")
        below = [c for c in table if c <= cores]
        used = max(below) if below else min(table)
        entry = table[used]
        serial = costs.get("serial", entry)
        flat = {k: float(entry.get(k, 0.0) or 0.0) for k in RATE_KEYS}
        for k in RATE_KEYS:
            flat[f"serial_{k}"] = float(serial.get(k, 0.0) or 0.0)
        flat["calibrated_cores"] = used
        flat["extrapolated"] = used != cores
        if cores in table:
            for k in SYNC_KEYS:
                flat[k] = float(entry.get(k, 0.0) or 0.0)
            return flat
        profile = costs.get("profile") if isinstance(costs.get("profile"), Mapping) else {}
        per_domain = profile.get("cores_per_domain")
        steps = {}
        for k in SYNC_KEYS:
            a, b, c = sync_law(table, k, per_domain)
            flat[k] = a + b * (cores - 1) + (c or 0.0) * (_domains(cores, per_domain) - 1)
            steps[k] = c
        flat["law"] = EXTRAPOLATION_LAW
        flat["numa_step"] = steps if any(v is not None for v in steps.values()) else None
        return flat
    missing = [k for k in ("t_row", "t_nnz") if k not in costs]
    if missing:
        raise ValueError(f"costs need t_row and t_nnz (or a calibration with 'cores'); "
                         f"missing {', '.join(missing)}")
    flat = {k: float(costs.get(k, 0.0) or 0.0) for k in RATE_KEYS}
    for k in SYNC_KEYS:
        flat[k] = float(costs.get(k, 0.0) or 0.0)
    flat["barrier_omp"] = float(costs.get("barrier_omp", flat["barrier"]) or 0.0)
    for k in RATE_KEYS:
        flat[f"serial_{k}"] = float(costs.get(f"serial_{k}", flat[k]))
    flat["calibrated_cores"] = costs.get("calibrated_cores")
    flat["extrapolated"] = bool(costs.get("extrapolated", False))
    return flat
