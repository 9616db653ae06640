"""The SpTrSV experiment as the sweep runner sees it: prepare a matrix once, run one point.

The input of every solve is the lower triangle (with diagonal) of the data set's SPD matrix,
CSR with int32 indices and sorted columns (sptrsv-elasticity §5.2).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path



@dataclass(frozen=True)
class PreparedMatrix:
    """One data set ready to solve: its lower triangle and where it came from."""

    lower: object  # scipy.sparse.csr_matrix
    dag: object  # spbench.sptrsv.dag.DAG of `lower`, built once for every point of the data set
    checksum: str
    source: str  # real | synthetic


class SptrsvExperiment:
    """Runs serial / scheduled SpTrSV points in-process with OpenMP threads (DESIGN.md §4)."""

    def __init__(self):
        self.costs = None  # the calibration simulated points use (loaded in check_points)

    def _barrier_sweep(self, prepared, cores: int, params: dict) -> list:
        """ElasticDivide's schedule under the BSP and SSP models with the barrier latency varied
        (sptrsv-elasticity §6.4): where SSP starts to beat BSP."""
        from .model import barrier_sweep
        from .schedulers import SCHEDULERS

        schedule = SCHEDULERS["elastic_divide"](prepared.dag, cores, **params)
        return barrier_sweep(schedule, prepared.dag, self.costs, BARRIER_SWEEP_LATENCIES).to_dict("records")

    def check_points(self, config, points) -> None:
        """Refuse, before anything runs, core counts this machine cannot execute (measured) or a
        missing calibration (simulated)."""
        from ..runner import RunError
        from .execute import available_cores

        if config.execution == "simulate":
            from .calibrate import default_costs_path, load_costs
            path = Path(config.costs) if config.costs else default_costs_path()
            if not path.exists():
                raise RunError(f"{config.source}: key 'costs': no calibration at {path}; run `spbench calibrate` "
                               f"first (it measures this machine's SpTrSV costs)")
            try:
                self.costs = load_costs(path)
            except ValueError as exc:
                raise RunError(f"{config.source}: key 'costs': {exc}") from None
            return
        limit = available_cores()
        too_many = sorted({p.axes["cores"] for p in points if p.axes["cores"] > limit})
        if too_many:
            raise RunError(f"{config.source}: key 'sweep.cores': {too_many[0]} cores requested but this "
                           f"machine runs at most {limit} threads; measured SpTrSV is limited to the "
                           f"hardware threads (`--execution simulate` models more)")

    def prepare(self, dataset, config) -> PreparedMatrix:
        from spbench.datasets.transforms import lower_triangle

        loaded = dataset.load(fetch=True, standin=config.fallback == "standin")
        from .dag import DAG
        from .execute import prepare_lower

        lower = prepare_lower(lower_triangle(loaded.matrix))
        return PreparedMatrix(lower=lower, dag=DAG(lower), checksum=loaded.checksum, source=loaded.source)

    def run(self, point, prepared: PreparedMatrix, config) -> dict:
        from .execute import solve_point

        axes = point.axes
        extra = {"kernel": axes["kernel"]} if "kernel" in axes else {}
        params = config.params.get(axes["algorithm"], {})
        if config.execution == "simulate":
            from .model import predict_point
            result = predict_point(prepared.lower, axes["algorithm"], axes["cores"], self.costs, params=params,
                                   barrier=config.barrier, dag=prepared.dag, **extra)
            if axes["algorithm"] == "elastic_divide" and axes["cores"] > 1 and result["kernel"] == "ssp":
                result["barrier_sweep"] = self._barrier_sweep(prepared, axes["cores"], params)
        else:
            result = solve_point(prepared.lower, axes["algorithm"], axes["cores"], repeats=config.repeats,
                                 barrier=config.barrier, params=params, dag=prepared.dag, **extra)
        result["omp_threads"] = result.get("cores", axes["cores"])
        result["params"] = effective_parameters(axes["algorithm"], config.params.get(axes["algorithm"], {}))
        return result


#: barrier latencies (s) of the §6.4 sweep stored with every simulated multi-core ElasticDivide row
BARRIER_SWEEP_LATENCIES = (0.0, 3e-8, 1e-7, 3e-7, 1e-6, 3e-6, 1e-5)


def effective_parameters(algorithm: str, given: dict) -> dict:
    """The scheduler's defaults overridden by the config's values: every row records e.g. its L."""
    if algorithm == "serial":
        return dict(given)
    module = importlib.import_module(f"spbench.sptrsv.schedulers.{algorithm}")
    return {**getattr(module, "parameters", {}), **given}
