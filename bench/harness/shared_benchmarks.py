"""The benchmarks of `spbench bench` that belong to neither experiment, declared: the data layer's
ingestion (ingest) and stand-in generation (standin), and the pre-flight's memory estimates beside
measured peaks (preflight). Listing them imports only this file.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from spbench.harness.declaration import Benchmark
from spbench.harness.options import BadOption, Option

TABLES = "spbench.harness.tables"
#: the modules each benchmark's numbers depend on (its rows' code version hashes their files)
INGEST_SOURCES = ("spbench.datasets.tns_ingest", "spbench.datasets.tensor_store", "spbench.datasets.store_duplicates",
                  "spbench.datasets.frostt")
STANDIN_SOURCES = ("spbench.datasets.tensor_standins", "spbench.datasets.tensor_registry",
                   "spbench.datasets.tensor_store", "spbench.datasets.store_duplicates",
                   "spbench.kernels.tucker._standin_draw")
PREFLIGHT_SOURCES = ("spbench.pipeline.preflight", "spbench.harness.preflight_bench", "spbench.tucker.memory_estimate",
                     "spbench.tucker.stream_metrics", "spbench.sptrsv.memory_estimate")


def _memory_mb(text: str) -> float:
    """--memory in megabytes; BadOption when it is not a size."""
    import click

    from spbench.cli.datasets import parse_memory

    try:
        return parse_memory(text)
    except click.ClickException as exc:
        raise BadOption(exc.format_message()) from None


def _ingest_file(options: dict) -> dict:
    _memory_mb(options["memory"])
    if options["file"] is not None and not Path(options["file"]).is_file():
        raise BadOption(f"--file: {options['file']}: no such file")
    return options


def _ingest(o: dict, run) -> list[dict]:
    from spbench.datasets.ingest_bench import bench_ingest

    return bench_ingest(o["file"], o["nnz"], o["memory"], _memory_mb(o["memory"]), run.say)


def _standin(o: dict, run) -> list[dict]:
    from spbench.datasets.standin_bench import bench_standin

    return bench_standin(o["tensors"], o["nnz"], o["dim_scale"], o["seed"], run.say)


def _plan(options: dict) -> dict:
    """The points to measure: --points of each of --configs at --scale, or the default plan."""
    from spbench.pipeline.config import ConfigError, load_config
    from spbench.harness.preflight_bench import DEFAULT_PLAN, Selection

    paths = [p for p in options["configs"].split(",") if p]
    for path in paths:
        try:
            load_config(path).with_overrides(scale=options["scale"])
        except ConfigError as exc:
            raise BadOption(f"--configs: {exc}") from None
    plan = tuple(Selection(p, options["scale"], points=options["points"]) for p in paths) or DEFAULT_PLAN
    return {"plan": [vars(s) for s in plan], "timeout": options["timeout"]}


def _preflight(o: dict, run) -> list[dict]:
    from spbench.harness.preflight_bench import Selection, bench_preflight

    work = run.out / ".jobs" / "preflight"
    try:
        return bench_preflight(tuple(Selection(**s) for s in o["plan"]), work, o["timeout"], run.say)
    finally:
        shutil.rmtree(work, ignore_errors=True)


BENCHMARKS = (
    Benchmark("ingest", ".tns text into a tensor store (convert_tns) against pandas' reader (read_tns) and cat.",
              (Option("--nnz", "int", 50_000_000, "Nonzeros of the generated nell2-shaped file.", minimum=1),
               Option("--file", "file", None, "An existing .tns file instead of the generated one.",
                      show_default=False),
               Option("--memory", "text", "1GB", "The conversion's memory setting.")),
              _ingest, f"{TABLES}:ingest_table", INGEST_SOURCES, check=_ingest_file),
    Benchmark("standin", "Stand-ins drawn straight into tensor stores: seconds, nonzeros/s, peak memory, column "
                         "digest.",
              (Option("--tensors", "names", "nell2", "Comma-separated FROSTT tensors whose stand-ins are generated.",
                      choices="spbench.datasets.paper_tensors:TENSORS"),
               Option("--nnz", "int", None, "Nonzeros of each stand-in (default: the tensor's own, the paper's full "
                      "size).", minimum=1, show_default=False),
               Option("--dim-scale", "float", 1.0, "Mode lengths as a share of the tensor's (1: its exact dims).",
                      minimum=0, open_minimum=True),
               Option("--seed", "int", 0)),
              _standin, f"{TABLES}:standin_table", STANDIN_SOURCES),
    Benchmark("preflight", "The pre-flight's memory estimate of each point beside its peak measured alone (within "
                           "25%?).",
              (Option("--configs", "text", "", "Comma-separated configs to take points from (default: one of every "
                      "kind shipped, small where --scale small is quick, one full-size nell1 point, the measured MPI "
                      "config).", show_default=False),
               Option("--scale", "choice", "full", "With --configs: the scale their points run at.",
                      choices="spbench.pipeline.scales:SCALES"),
               Option("--points", "int", 2, "With --configs: points per config, spread from the smallest estimate "
                      "to the largest.", minimum=1),
               Option("--timeout", "float", 900.0, "Seconds per point.", minimum=0, open_minimum=True)),
              _preflight, "spbench.harness.preflight_table:preflight_table", PREFLIGHT_SOURCES, check=_plan),
)
