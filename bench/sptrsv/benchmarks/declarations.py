"""The SpTrSV benchmarks of `spbench bench` (sptrsv-elasticity §5–6), declared: the kernels and
barriers alone (serial, barrier, schedulers, slope), the locality reordering (order), the reference
HDagg/SpMP schedules beside ours (sptrsv-refs), the cost model against measurement (sptrsv-model)
and a sweep's scheduling times against the schedulers' standalone ones (schedule-in-sweep).

Each measuring function below imports its module when the benchmark runs; listing the benchmarks
imports only this file.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from spbench.harness.calibration_option import CALIBRATION
from spbench.harness.declaration import Benchmark
from spbench.harness.options import BadOption, Option, executable, within_machine

#: the shipped configs, whose data sets sptrsv-refs' matrix sets name
CONFIGS = Path(__file__).resolve().parents[3] / "configs"
TABLES = "spbench.sptrsv.benchmarks.tables"
#: the units of the figures these benchmarks' rows carry beyond the shared ones (spbench.harness.rows.UNITS)
UNITS = {"chained": "1", "ref_schedule_time": "s", "spmp_schedule_time": "s", "ref_spmp_schedule_time": "s",
         "growlocal_schedule_time": "s", "standalone_time": "s", "standalone_times": "s"}
#: the schedulers sptrsv-model validates when neither --algorithms nor a config names them
MODEL_ALGORITHMS = "serial,wavefront,growlocal,elastic_divide,spmp"


def _grid_options(rounds: int) -> tuple[Option, ...]:
    """--grid, --cores, --repeats, --rounds: a wavefront-family run on one lap2d-5pt grid."""
    return (Option("--grid", "int", 300, minimum=2), Option("--cores", "int", 2, minimum=1),
            Option("--repeats", "int", 100, minimum=1), Option("--rounds", "int", rounds, minimum=1))


def _on_this_machine(options: dict) -> dict:
    within_machine(options["cores"])
    return options


def _serial(o: dict, run) -> list[dict]:
    from .kernel_bench import bench_serial

    return bench_serial(o["grid"], o["repeats"], o["dram_mib"] * 2**20, run.say)


def _barrier(o: dict, run) -> list[dict]:
    from .kernel_bench import bench_barrier

    return bench_barrier(o["grid"], o["cores"], o["repeats"], o["rounds"], run.say)


def _schedulers(o: dict, run) -> list[dict]:
    from .kernel_bench import bench_schedulers

    return bench_schedulers(o["grid"], o["cores"], o["repeats"], o["rounds"], run.say)


def _two_grids(options: dict) -> dict:
    if len(set(options["grids"])) < 2:
        raise BadOption(f"--grids: a slope needs two different grids, got {','.join(map(str, options['grids']))!r}")
    return options


def _slope(o: dict, run) -> list[dict]:
    from .kernel_bench import bench_slope

    return bench_slope(o["grids"], o["trials"], run.say)


def split_datasets(text: str) -> list[str]:
    """Comma-separated names; commas inside ``[...]`` belong to a generator's parameters."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current]


def _known_datasets(options: dict) -> dict:
    """--datasets as a list of names, each one the data set registry resolves."""
    from spbench.datasets.errors import DatasetError
    from spbench.datasets.registry import resolve

    names = [d.strip() for d in split_datasets(options["datasets"]) if d.strip()]
    for d in names:
        try:
            resolve(d)
        except DatasetError as exc:
            raise BadOption(f"--datasets: {exc}") from None
    return {**options, "datasets": names}


def _order(o: dict, run) -> list[dict]:
    from .order_bench import MATRICES, bench_matrix

    matrices = [(d, None) for d in o["datasets"]] or list(MATRICES)
    items = []
    for i, (m, params) in enumerate(matrices, 1):
        run.say(f"[{i}/{len(matrices)}] {m} {params or ''}".rstrip())
        items += bench_matrix(m, params, o["repeats"], o["rounds"])
    return items


def _reference_driver(options: dict) -> dict:
    binary = executable("--hdagg", options["binary"],
                        " (build it with make hdagg-ref HDAGG_SRC=path/to/HDagg-benchmark)")
    return {**options, "binary": binary}


def _matrix_sets() -> tuple[str, ...]:
    from .reference_schedules import CONFIG_SETS

    return ("generators", *CONFIG_SETS)


def _refs(o: dict, run) -> list[dict]:
    from .reference_schedules import side_by_side

    with tempfile.TemporaryDirectory(prefix="spbench-sptrsv-refs-") as work:
        return side_by_side(o["binary"], o["sets"], o["cores"], o["scale"], o["timeout"], CONFIGS, Path(work),
                            run.say, o["solve_repeats"], o["schedule_repeats"])


def _schedule_in_sweep(o: dict, run) -> list[dict]:
    from .schedule_in_sweep import bench_schedule_in_sweep

    with tempfile.TemporaryDirectory(prefix="spbench-schedule-in-sweep-") as work:
        return bench_schedule_in_sweep(o["grid"], o["cores"], o["repeats"], o["rounds"], Path(work), run.say)


BENCHMARKS = (
    Benchmark("serial", "Our serial kernel against scipy's spsolve_triangular, its traffic against copy bandwidth.",
              (Option("--grid", "int", 400, "lap2d-5pt grid side.", minimum=2),
               Option("--repeats", "int", 100, "Timed solves.", minimum=1),
               Option("--dram-mib", "int", 256, "Buffer of the DRAM copy bandwidth.", minimum=1)),
              _serial, f"{TABLES}:serial_table", "sptrsv"),
    Benchmark("barrier", "The spin barrier against OpenMP's on the wavefront schedule (BSP kernel), interleaved "
                         "rounds.", _grid_options(rounds=5), _barrier, f"{TABLES}:barrier_table", "sptrsv",
              check=_on_this_machine),
    Benchmark("schedulers", "Every scheduler on its own kernel: supersteps, scheduling and solve time, backward "
                            "error.", _grid_options(rounds=3), _schedulers, f"{TABLES}:schedulers_table", "sptrsv",
              check=_on_this_machine),
    Benchmark("slope", "Scheduling time of each scheduler against nnz and its log-log slope (sptrsv-elasticity "
                       "Fig. 6.2).",
              (Option("--grids", "ints", "100,200,350,550", "Comma-separated grid sides.", minimum=2),
               Option("--trials", "int", 7, minimum=1)),
              _slope, f"{TABLES}:slope_table", "sptrsv", check=_two_grids),
    Benchmark("order", "The serial kernel in natural, wavefront and SpMP order, and the wavefront schedule, at one "
                       "core.",
              (Option("--repeats", "int", 100, minimum=1), Option("--rounds", "int", 5, minimum=1),
               Option("--datasets", "text", "", "Comma-separated data sets instead of the generated grids, e.g. "
                      "Flan_1565,thermal2+metis (stand-ins when not cached) or 'lap2d-5pt[grid=200]'.",
                      show_default=False)),
              _order, f"{TABLES}:order_table", "sptrsv", check=_known_datasets),
    Benchmark("sptrsv-refs", "The original HDagg's supersteps and SpMP's task graph beside ours, per matrix and core "
                             "count.",
              (Option("--hdagg", "text", key="binary", required=True,
                      help="The driver built by `make hdagg-ref HDAGG_SRC=... [SPMP_SRC=...]` "
                           "(build/hdagg-ref/hdagg_ref)."),
               Option("--sets", "names", "generators,suitesparse,ichol,metis",
                      "Matrix sets: the generator families at their defaults and the paper's three data sets "
                      "(stand-ins where a matrix is not cached).", choices=_matrix_sets),
               Option("--cores", "ints", "2,4,8,16,32,64,128", "Comma-separated core counts."),
               Option("--scale", "float", 1.0, "Synthetic matrices and stand-ins at about this times their rows.",
                      minimum=0, open_minimum=True),
               Option("--timeout", "float", 600.0, "Seconds the original code may take per matrix and core count "
                      "(past it: a timeout row).", minimum=1),
               Option("--solve-repeats", "int", 0, "Also time SpMP's point-to-point solve, the original's (built "
                      "with SPMP_SRC) and ours, this many times in each of 3 interleaved rounds, at each core count "
                      "this machine has (0: schedules only).", minimum=0),
               Option("--schedule-repeats", "int", 1, "Scheduling times are the median of this many calls, the "
                      "original's and ours.", minimum=1)),
              _refs, "spbench.sptrsv.benchmarks.reference_schedules:refs_table", "sptrsv", check=_reference_driver),
    Benchmark("sptrsv-model", "Measured against predicted SpTrSV solves on lap2d-5pt or a config's data sets (the "
                              "calibration's validation).",
              (Option("--grid", "int", 300, "lap2d-5pt grid side.", minimum=2),
               Option("--config", "file", None, "Validate on this SpTrSV config's data sets and schedulers instead "
                      "of the grid.", as_path=True, show_default=False),
               Option("--scale", "choice", "full", "With --config: small = its stand-ins at about 1/8 of the rows.",
                      choices="spbench.pipeline.scales:SCALES"),
               Option("--cores", "text", None, "Comma-separated core counts (default: the calibrated ones).",
                      show_default=False),
               Option("--algorithms", "text", None, f"Comma-separated [default: {MODEL_ALGORITHMS}, or the "
                      "config's].", show_default=False),
               Option("--repeats", "int", 50, "Timed solves per measured point.", minimum=1),
               Option("--rounds", "int", 3, "Interleaved rounds per measured point.", minimum=1),
               CALIBRATION),
              "spbench.sptrsv.benchmarks.model_bench:measure", f"{TABLES}:sptrsv_model_table",
              "sptrsv", check="spbench.sptrsv.benchmarks.model_bench:check"),
    Benchmark("schedule-in-sweep", "SpMP's and GrowLocal's scheduling time in an `execution: schedule` sweep beside "
                                   "the scheduler timed standalone, interleaved rounds (within 1.2x when quiet?).",
              (Option("--grid", "int", 300, "lap2d-5pt grid side.", minimum=2), Option("--cores", "int", 2, minimum=1),
               Option("--repeats", "int", 5, "Calls behind each scheduling time: the sweep's schedule_repeats and "
                      "the standalone median's.", minimum=1),
               Option("--rounds", "int", 5, "Interleaved rounds.", minimum=1)),
              _schedule_in_sweep, "spbench.sptrsv.benchmarks.schedule_in_sweep:schedule_in_sweep_table", "sptrsv"),
)
