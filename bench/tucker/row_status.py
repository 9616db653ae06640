"""Whether a Tucker row's numbers can be trusted, and whether a tensor's values let HOOI fit it.

A fit, time or Lanczos residual that is not a finite number makes a row ``invalid`` with the
reason (a row stored ``ok`` would drop the nan to null and look measured). Two kinds of tensor
give such numbers whatever the scheme: one whose values' squares add up beyond double precision
(‖T‖² = inf: HOOI's norms overflow, its fit is nan or its SVD fails) and one whose values are all
zero (‖T‖ = 0: the fit 1 − ‖T − X‖/‖T‖ is 0/0). :func:`value_summary` finds both from the store
before any point runs (one pass over the values, cached beside the store), so the sweep warns
about them and their rows say why they are invalid.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["nonfinite_reason", "norm_cause", "value_summary", "unfit_reason", "unfit_warning", "OVERFLOW", "ZERO"]

#: why HOOI's numbers are not finite, by the tensor's norm
OVERFLOW = "the tensor's values overflow double precision in HOOI"
ZERO = "the tensor's values are all 0, so its fit 1 − ‖T − X‖/‖T‖ is 0/0"
#: the fields checked, in this order, before every other ``*_time``: a nan among the metrics of the
#: distribution (an imbalance of empty ranks) is no failed run
FIRST = ("fit", "fits", "hooi_time", "dist_time", "lanczos_residual_max")
_CACHE = "value_summary.json"
_CHUNK = 4_000_000


def norm_cause(norm) -> str | None:
    """What a tensor norm ‖T‖ says about non-finite HOOI numbers: overflow, all zeros, or nothing."""
    if norm is None:
        return None
    if not math.isfinite(norm):
        return OVERFLOW
    return ZERO if norm == 0 else None


def _nonfinite(value):
    """The first non-finite float in ``value`` (a number or a list of them), else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else value
    for item in value if isinstance(value, (list, tuple)) else ():
        bad = _nonfinite(item)
        if bad is not None:
            return bad
    return None


def nonfinite_reason(row: dict, norm=None) -> str | None:
    """``non-finite FIELD (nan): WHY`` for the first fit, time or Lanczos residual of ``row`` that
    is nan or inf, WHY from the tensor's ``norm`` (:func:`norm_cause`); None when all are finite."""
    for key in (*FIRST, *sorted(k for k in row if k.endswith("_time") and k not in FIRST)):
        bad = _nonfinite(row.get(key))
        if bad is not None:
            cause = norm_cause(norm)
            return f"non-finite {key} ({bad})" + (f": {cause}" if cause else "")
    return None


def value_summary(store) -> dict:
    """``{"nnz", "max_abs", "sum_sq_finite"}`` of a tensor store's values: the largest magnitude
    and whether their squares add up to a finite double (as HOOI adds them for ‖T‖²); one pass
    over the values column, cached beside the store (a store is never rewritten)."""
    import numpy as np

    from spbench.store.atomic_files import write_json
    from spbench.datasets.tensor_store import iter_columns, read_header

    store = Path(store)
    header = read_header(store)
    cached = store / _CACHE
    try:
        found = json.loads(cached.read_text())
        if found.get("nnz") == header.nnz:
            return found
    except (OSError, ValueError, AttributeError):
        pass
    max_abs, sum_sq = 0.0, 0.0
    with np.errstate(over="ignore"):         # an overflowing sum is the finding, not a warning
        for _, _, values in iter_columns(store, [], header.nnz, _CHUNK):
            if values.size:
                max_abs = max(max_abs, float(np.abs(values).max()))
                sum_sq += float(values @ values)
    found = {"nnz": int(header.nnz), "max_abs": max_abs, "sum_sq_finite": math.isfinite(sum_sq)}
    try:
        write_json(cached, found)
    except OSError:          # a read-only store: the summary is still returned
        pass
    return found


def unfit_reason(summary: dict) -> str | None:
    """Why HOOI cannot fit a tensor of these values (its rows' error), None when it can."""
    if not summary["sum_sq_finite"]:
        return f"{OVERFLOW} (largest |value| {summary['max_abs']:.3g}, ‖T‖² = inf)"
    if summary["max_abs"] == 0:
        return ZERO
    return None


def unfit_warning(name: str, summary: dict) -> str | None:
    """The sweep's one-line warning for a tensor HOOI cannot fit, None when it can."""
    if not summary["sum_sq_finite"]:
        return (f"{name}: its values overflow double precision in HOOI (largest |value| "
                f"{summary['max_abs']:.3g}: their squares add up to ‖T‖² = inf, so HOOI's norms and fit are nan); "
                f"its rows are stored invalid")
    if summary["max_abs"] == 0:
        return (f"{name}: every value is 0 (‖T‖ = 0): HOOI has no fit (1 − ‖T − X‖/‖T‖ is 0/0); "
                f"its rows are stored invalid")
    return None
