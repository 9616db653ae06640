"""Every stored row built one way (docs/design.md, "Results"): a run's point joined with its measurement.

The *point* is what identifies a run before it runs (run id, schema and code version, settings, data
set, axes, where and when it ran); the *measurement* is what the run gave: its figures and status,
or why it gave none (an error or a timeout) or why its figures cannot be trusted (invalid). The
sweep runner, the MPI worker (and the launcher's rows of runs its job left without one) and
`spbench bench` all build their rows with :func:`build_row`, so a row's fields come from these two
parts only and each writer stores the result through :class:`spbench.store.results.ResultStore`.
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["build_row", "failure", "invalid"]


def build_row(point: Mapping, measurement: Mapping) -> dict:
    """The row of one run: ``point``'s fields, then ``measurement``'s (a field both give takes the
    measurement's value in the point's place: the parameters a run actually used, say)."""
    return {**point, **measurement}


def failure(message: str, status: str = "error") -> dict:
    """The measurement of a run that gave no figures: its status (``error``, ``timeout``, or
    ``invalid`` for data the run cannot fit) and one line saying why."""
    return {"status": status, "error": message}


def invalid(measurement: Mapping, reason: str | None) -> dict:
    """``measurement`` as it is when ``reason`` is None, else marked ``invalid`` with the reason:
    figures a run gave that cannot be trusted (not finite, say) are kept beside why."""
    return dict(measurement) if reason is None else {**measurement, "status": "invalid", "error": reason}
