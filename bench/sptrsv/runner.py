"""The SpTrSV experiment as the sweep runner sees it: prepare a matrix once, run one point.

The input of every solve is the lower triangle (with diagonal) of the data set's SPD matrix,
CSR with int32 indices and sorted columns (sptrsv-elasticity §5.2).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass



@dataclass(frozen=True)
class PreparedMatrix:
    """One data set ready to solve: its lower triangle and where it came from."""

    lower: object  # scipy.sparse.csr_matrix
    checksum: str
    source: str  # real | synthetic


class SptrsvExperiment:
    """Runs serial / scheduled SpTrSV points in-process with OpenMP threads (DESIGN.md §4)."""

    def check_points(self, config, points) -> None:
        """Refuse, before anything runs, core counts this machine cannot execute."""
        from ..runner import RunError
        from .execute import available_cores

        limit = available_cores()
        too_many = sorted({p.axes["cores"] for p in points if p.axes["cores"] > limit})
        if too_many:
            raise RunError(f"{config.source}: key 'sweep.cores': {too_many[0]} cores requested but this "
                           f"machine runs at most {limit} threads; measured SpTrSV is limited to the "
                           f"hardware threads")

    def prepare(self, dataset, config) -> PreparedMatrix:
        from spbench.datasets.transforms import lower_triangle

        loaded = dataset.load(fetch=True, standin=config.fallback == "standin")
        return PreparedMatrix(lower=lower_triangle(loaded.matrix), checksum=loaded.checksum, source=loaded.source)

    def run(self, point, prepared: PreparedMatrix, config) -> dict:
        from .execute import solve_point

        axes = point.axes
        extra = {"kernel": axes["kernel"]} if "kernel" in axes else {}
        result = solve_point(prepared.lower, axes["algorithm"], axes["cores"], repeats=config.repeats,
                             barrier=config.barrier, params=config.params.get(axes["algorithm"], {}), **extra)
        result["omp_threads"] = result.get("cores", axes["cores"])
        result["params"] = effective_parameters(axes["algorithm"], config.params.get(axes["algorithm"], {}))
        return result


def effective_parameters(algorithm: str, given: dict) -> dict:
    """The scheduler's defaults overridden by the config's values: every row records e.g. its L."""
    if algorithm == "serial":
        return dict(given)
    module = importlib.import_module(f"spbench.sptrsv.schedulers.{algorithm}")
    return {**getattr(module, "parameters", {}), **given}
