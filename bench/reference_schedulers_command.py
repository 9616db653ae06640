"""``spbench bench sptrsv-refs``: the original HDagg and SpMP (built apart, ``make hdagg-ref``)
beside ours, schedule by schedule (sptrsv-elasticity §5.1, Table 6.1):

    spbench bench sptrsv-refs --hdagg BIN [--sets generators,suitesparse,ichol,metis] [--cores 2,4,...,128]

One row per matrix and core count (:mod:`spbench.sptrsv.benchmarks.reference_schedules`); a missing or
non-executable binary is one line, exit code 2. Schedules need no cores: any core count runs here.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from spbench.bench_commands import BenchCommand, common_options, measure_and_store, parse_ints, parse_names
from spbench.cli_errors import UsageFailure

#: spbench.sptrsv.benchmarks.reference_schedules' set names, spelled here so that building the command imports no experiment
SETS = ("generators", "suitesparse", "ichol", "metis")
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@click.command("sptrsv-refs", cls=BenchCommand)
@click.option("--hdagg", "binary", required=True,
              help="The driver built by `make hdagg-ref HDAGG_SRC=... [SPMP_SRC=...]` (build/hdagg-ref/hdagg_ref).")
@click.option("--sets", default="generators,suitesparse,ichol,metis", show_default=True,
              help="Matrix sets: the generator families at their defaults and the paper's three data sets "
                   "(stand-ins where a matrix is not cached).")
@click.option("--cores", default="2,4,8,16,32,64,128", show_default=True, help="Comma-separated core counts.")
@click.option("--scale", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Synthetic matrices and stand-ins at about this times their rows.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="Seconds the original code may take per matrix and core count (past it: a timeout row).")
@common_options
def sptrsv_refs(binary, sets, cores, scale, timeout, out_dir, fresh, quiet):
    """The original HDagg's supersteps and SpMP's task graph beside ours, per matrix and core count."""
    found = shutil.which(binary) if os.sep not in binary else binary
    if not found or not Path(found).is_file() or not os.access(found, os.X_OK):
        raise UsageFailure(f"spbench bench sptrsv-refs: --hdagg: {binary}: no such executable file "
                           "(build it with make hdagg-ref HDAGG_SRC=path/to/HDagg-benchmark)")
    counts = parse_ints("sptrsv-refs", "--cores", cores)
    chosen = parse_names("sptrsv-refs", "--sets", sets, SETS)
    options = {"binary": str(Path(found).resolve()), "sets": chosen, "cores": counts, "scale": scale,
               "timeout": timeout}

    def measure(say):
        from spbench.sptrsv.benchmarks.reference_schedules import side_by_side

        with tempfile.TemporaryDirectory(prefix="spbench-sptrsv-refs-") as work:
            return side_by_side(options["binary"], chosen, counts, scale, timeout, CONFIGS, Path(work), say)

    measure_and_store("sptrsv-refs", options, "sptrsv", measure, out_dir, fresh, quiet)
