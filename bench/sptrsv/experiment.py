"""The SpTrSV experiment (:class:`spbench.experiment.Experiment`): its declaration (axes, keys,
schedulers, rows, calibration, profile) and how the sweep runner runs it: prepare a matrix once,
run one point.

The input of every solve is the lower triangle (with diagonal) of the data set's SPD matrix,
CSR with int32 indices and sorted columns (sptrsv-elasticity §5.2).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spbench.experiment import Algorithm, ConfigKey, Experiment, RunError, RunFlag, choice, positive_int
from spbench.store.row_builder import failure
from spbench.store.row_schema import NUMBER, optional, required

#: the fields SpTrSV rows add to the common ones (docs/design.md, "Results"): measured and simulated rows carry
#: the solve, `execution: schedule` rows the schedule's work statistics and no solve time
ROW_FIELDS = {
    "cores": required(int), "input_symmetric": required(bool, None), "kernel": optional(str),
    "barrier": optional(str, None), "n": optional(int), "nnz": optional(int), "wavefronts": optional(int),
    "supersteps": optional(int), "staleness": optional(int, None), "schedule_time": optional(NUMBER),
    "solve_time": optional(NUMBER, None), "solve_times": optional(list), "residual": optional(NUMBER, None),
    "model": optional(dict), "barrier_sweep": optional(list),
    # simulated: costs of a core count the calibration did not measure, and the law that supplied them
    "model_extrapolated": optional(bool), "model_law": optional(str, None),
    # measured: more threads than this machine's usable cores (time slices, not costs), and the
    # machine's load over the point (spbench.machine.load)
    "oversubscribed": optional(bool), "load": optional(dict),
    # a scheduler's calls behind `schedule_time` (their median; key `schedule_repeats`), the slowest
    # over the median and whether it passed execute.NOISY_SPREAD (None with too few calls to tell)
    "schedule_times": optional(list), "schedule_calls": optional(int), "schedule_spread": optional(NUMBER),
    "schedule_noisy": optional(bool, None),
    # what idle OpenMP threads did while the point was timed (OMP_WAIT_POLICY, GOMP_SPINCOUNT; unset: None)
    "omp_wait_policy": optional(str, None), "gomp_spincount": optional(str, None),
    **dict.fromkeys(("work_total", "work_critical", "work_balance", "work_speedup_bound"), optional(NUMBER)),
}


@dataclass(frozen=True)
class PreparedMatrix:
    """One data set ready to solve: its lower triangle and where it came from."""

    lower: object  # scipy.sparse.csr_matrix
    dag: object  # spbench.sptrsv.dag.DAG of `lower`, built once for every point of the data set
    checksum: str
    source: str  # real | synthetic
    symmetric: bool | None = None  # the matrix (before its transform, if any) equals its transpose
    warnings: tuple = ()  # one-line notes the runner prints before the sweep
    failure: str | None = None  # why the data set has no lower triangle (an iChol breakdown): each point's error


class SptrsvExperiment(Experiment):
    """Runs serial / scheduled SpTrSV points in-process with OpenMP threads."""

    name, title = "sptrsv", "SpTrSV"
    axes = ("algorithm", "cores")
    #: `kernel`: auto = the schedule's own kernel; `bsp` runs a staleness-2 schedule on the BSP
    #: kernel, valid by sptrsv-elasticity Remark 2.3
    optional_axes = {"kernel": ("auto", "bsp", "ssp", "p2p")}
    options = {"barrier": choice(("auto", "spin", "omp"), "auto", identity=True,  # the BSP barrier
                                 flag=RunFlag("BSP barrier for SpTrSV", "choice")),
               # `execution: schedule`: seconds a superlinear scheduler (HDagg) may take per point; past
               # them the row is a `timeout` (sptrsv-elasticity Fig. 6.2; matters at `--scale paper`)
               "timeout": ConfigKey(600.0, "a number of seconds > 0",
                                    lambda v: not isinstance(v, bool) and isinstance(v, (int, float)) and v > 0,
                                    convert=float,
                                    flag=RunFlag("SpTrSV `--execution schedule`: seconds an HDagg schedule may take, "
                                                 "past them a timeout row", "float")),
               # calls of the scheduler whose median is a point's `schedule_time` (fewer past
               # execute.SCHEDULE_BUDGET seconds): one call on a shared machine may take 100x its
               # kernel, and Fig. 6.2's slope and Table 6.3's amortisation are built from these times.
               # Part of a run's identity: simulated rows' scheduling times are measured too
               "schedule_repeats": positive_int(5, identity=True)}
    executions = ("measured", "simulate", "schedule")  # schedule: schedules only, no solve
    small_factor = 1 / 8
    paper_scale = True  # `--scale paper`: every paper matrix's stand-in at the matrix's own rows
    compare_metrics = ("solve_time",)
    row_fields = ROW_FIELDS

    def algorithms(self) -> dict[str, Algorithm]:
        from spbench.sptrsv.schedulers import REGISTRY, SERIAL
        return {SERIAL.name: SERIAL, **REGISTRY}

    def algorithm_label(self, row) -> str:
        """The paper's label of a row's scheduler and the kernel it ran on, "GrowLocal (BSP)",
        "SpMP (P2P)", "Wavefront" (sptrsv-elasticity Figs. 5.1, 6.1, Table 6.2)."""
        from spbench.sptrsv.report.labels import algorithm_label

        kernel = row.get("kernel")  # None or NaN where a row records none
        return algorithm_label(row.get("algorithm"), kernel if isinstance(kernel, str) else None)

    def normalize(self, axes: dict) -> dict:
        """Serial SpTrSV depends on neither cores nor kernel: it is one point at cores = 1, kernel
        auto. A scheduler's `kernel: auto` is its declared kernel, so `[auto, bsp]` on a BSP
        scheduler is one point."""
        if axes.get("algorithm") == "serial":
            axes = dict(axes, cores=1)
            if "kernel" in axes:
                axes["kernel"] = "auto"
        elif axes.get("kernel") == "auto":
            axes = dict(axes, kernel=self.algorithms()[axes["algorithm"]].kernel)
        return axes

    def paper_size_dataset(self, dataset):
        """A paper matrix's stand-in at its real rows (``--scale paper``, ``MatrixDataset.at_paper_size``)."""
        return dataset.at_paper_size()

    def resolve_dataset(self, entry):
        from spbench.datasets.registry import resolve
        return resolve(entry)

    def dataset_fields(self, prepared) -> dict:
        return {**super().dataset_fields(prepared), "input_symmetric": prepared.symmetric}

    calibration_module = "spbench.sptrsv.calibration.calibrate"

    def measure_calibration(self, quick: bool, cores: tuple, force: bool = False) -> dict:
        from spbench.sptrsv.calibration.calibrate import calibrate
        return calibrate(cores, quick=quick, keep_implausible=force)

    validation = ("sptrsv-model", "grid")  # measured vs predicted solves on a lap2d-5pt grid

    def calibration_summary(self, measured: dict) -> list[tuple[str, str]]:
        from spbench.sptrsv.calibration.calibrate import summary
        return summary(measured)

    def write_profile(self, df, out_dir) -> list[Path]:
        from spbench.sptrsv.report.report import write_sptrsv_profile
        return write_sptrsv_profile(df, out_dir)

    def slurm_resources(self, points) -> list[str]:
        """One task with as many CPUs as the largest `cores`."""
        cores = max((int(p.axes.get("cores", 1)) for p in points), default=1)
        return ["--ntasks=1", f"--cpus-per-task={cores}"]

    def batch_job(self, environ) -> tuple[list[str], dict]:
        """In-process on the job's CPUs: as many OpenMP threads as the task has CPUs."""
        return [], {"OMP_NUM_THREADS": environ.get("SLURM_CPUS_PER_TASK") or "1"}

    @staticmethod
    def _plan(prepared, axes: dict, params: dict, config):
        """A scheduler's point planned with its calls repeated (key ``schedule_repeats``); None for
        serial, which has no schedule."""
        if axes["algorithm"] == "serial":
            return None
        from spbench.sptrsv.execute import plan_schedule
        return plan_schedule(prepared.dag, axes["algorithm"], axes["cores"], axes.get("kernel", "auto"),
                             config.barrier, params, repeats=config.schedule_repeats)

    def _barrier_sweep(self, prepared, cores: int, params: dict) -> list:
        """ElasticDivide's schedule under the BSP and SSP models with the barrier latency varied
        (sptrsv-elasticity §6.4): where SSP starts to beat BSP."""
        from spbench.sptrsv.model import barrier_sweep
        from spbench.sptrsv.schedulers import SCHEDULERS

        schedule = SCHEDULERS["elastic_divide"](prepared.dag, cores, **params)
        return barrier_sweep(schedule, prepared.dag, self.costs, BARRIER_SWEEP_LATENCIES).to_dict("records")

    def check_points(self, config, points) -> None:
        """Refuse, before anything runs, core counts this machine cannot execute (measured) or a
        missing calibration (simulated)."""
        from spbench.machine.facts import usable_cores

        if config.execution == "schedule":  # schedules only: any core count, nothing runs on the cores
            return
        if config.execution == "simulate":
            self.load_costs(config)
            return
        limit = usable_cores()
        too_many = sorted({p.axes["cores"] for p in points if p.axes["cores"] > limit})
        if too_many:
            raise RunError(f"{config.source}: key 'sweep.cores': {too_many[0]} cores requested but this "
                           f"machine runs at most {limit} threads; measured SpTrSV is limited to the "
                           f"hardware threads (`--execution simulate` models more)")

    def estimate_points(self, config, points) -> list:
        """Peak memory per point from each matrix's size, before anything loads (memory_estimate)."""
        from spbench.sptrsv.memory_estimate import estimate_points
        return estimate_points(config, points)

    def prepare(self, dataset, config) -> PreparedMatrix:
        """The data set's lower triangle and its DAG, with a warning for a matrix that is not
        symmetric; an iChol breakdown gives a data set without one, each of its points an error row."""
        from spbench.datasets.transforms import NON_SYMMETRIC_INPUT, IcholBreakdown, is_symmetric, lower_triangle

        try:
            loaded = dataset.load(fetch=True, standin=config.fallback == "standin")
        except IcholBreakdown as exc:
            if exc.checksum is None:
                raise
            return PreparedMatrix(lower=None, dag=None, checksum=exc.checksum, source=exc.source,
                                  symmetric=exc.symmetric, failure=str(exc),
                                  warnings=(f"{exc}; each of its points is stored as an error row",))
        from spbench.sptrsv.dag import DAG
        from spbench.sptrsv.execute import prepare_lower

        symmetric = loaded.symmetric if loaded.symmetric is not None else is_symmetric(loaded.matrix)
        done = NON_SYMMETRIC_INPUT[dataset.transform] if dataset.transform else "its lower triangle is solved"
        warnings = () if symmetric is not False else (
            f"{dataset.params.get('path', dataset.name)}: the matrix is not symmetric; {done} "
            f"(rows record input_symmetric: false)",)
        lower = prepare_lower(lower_triangle(loaded.matrix))
        return PreparedMatrix(lower=lower, dag=DAG(lower), checksum=loaded.checksum, source=loaded.source,
                              symmetric=symmetric, warnings=(*loaded.warnings, *warnings))

    def run(self, point, prepared: PreparedMatrix, config) -> dict:
        from spbench.sptrsv.execute import solve_point, wait_policy

        if prepared.failure is not None:
            return failure(prepared.failure)
        axes = point.axes
        extra = {"kernel": axes["kernel"]} if "kernel" in axes else {}
        params = config.params.get(axes["algorithm"], {})
        if config.execution == "schedule":
            from spbench.sptrsv.schedule_only import schedule_point
            result = schedule_point(prepared.dag, axes["algorithm"], axes["cores"], params=params,
                                    budget=config.timeout, repeats=config.schedule_repeats, **extra)
        elif config.execution == "simulate":
            from spbench.sptrsv.model import predict_point
            plan = self._plan(prepared, axes, params, config)
            result = predict_point(prepared.lower, axes["algorithm"], axes["cores"], self.costs, params=params,
                                   barrier=config.barrier, dag=prepared.dag, plan=plan, **extra)
            result.update(plan.timing() if plan else {})
            if axes["algorithm"] == "elastic_divide" and axes["cores"] > 1 and result["kernel"] == "ssp":
                result["barrier_sweep"] = self._barrier_sweep(prepared, axes["cores"], params)
            result["model_extrapolated"] = bool(result["model"]["extrapolated"])
            result["model_law"] = result["model"].get("law")
        else:
            from spbench.machine.facts import usable_cores
            from spbench.machine.load import LoadWatch, timing_spread
            watch = LoadWatch()
            plan = self._plan(prepared, axes, params, config)
            result = solve_point(prepared.lower, axes["algorithm"], axes["cores"], repeats=config.repeats,
                                 barrier=config.barrier, params=params, dag=prepared.dag, plan=plan, **extra)
            result.update(plan.timing() if plan else {})
            result["oversubscribed"] = axes["cores"] > usable_cores()
            result["load"] = watch.figures(timing_spread([result.get("solve_times") or []]))
        result["omp_threads"] = None if config.execution == "schedule" else result.get("cores", axes["cores"])
        result.update(wait_policy())
        if axes["algorithm"] != "serial":  # every row records the scheduler's parameters, e.g. its L
            from spbench.sptrsv.schedulers import effective_parameters
            params = effective_parameters(axes["algorithm"], params)
        result["params"] = params
        return result



#: barrier latencies (s) of the §6.4 sweep stored with every simulated multi-core ElasticDivide row
BARRIER_SWEEP_LATENCIES = (0.0, 3e-8, 1e-7, 3e-7, 1e-6, 3e-6, 1e-5)
