"""``spbench bench splatt``: SPLATT's Tucker (its public source, built apart) beside ours on the
issue-16 tensors, interleaved in one run (tucker-lite-distribution §8: the CSF TTM of its [26]):

    spbench bench splatt --binary PATH [--threads 1,2] [--iterations N] [--cases 3way,4way,nell2]

Per case, K and thread count one row: SPLATT's TTM and SVD seconds per iteration (its timer
lines), our csf TTM and, at one thread, our HOOI's SVD per iteration, medians of ``--reps``
rounds (:mod:`spbench.tucker.benchmarks.splatt_side`). A missing binary is one line, exit code 2.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from spbench.bench_commands import BenchCommand, common_options, measure_and_store, parse_ints, parse_names
from spbench.cli_errors import UsageFailure

#: spbench.tucker.benchmarks.ttm_bench.CASES' names, spelled here so that building the command imports no experiment
CASES = ("3way", "4way", "nell2")


@click.command("splatt", cls=BenchCommand)
@click.option("--binary", required=True, help="The splatt executable (built from its branch tucker).")
@click.option("--threads", default="1,2", show_default=True, help="Comma-separated thread counts.")
@click.option("--iterations", type=click.IntRange(min=1), default=10, show_default=True,
              help="HOOI iterations per round on both sides (SPLATT's timers print milliseconds).")
@click.option("--cases", default=",".join(CASES), show_default=True)
@click.option("--nell2-nnz", type=click.IntRange(min=1), default=5_000_000, show_default=True)
@click.option("--reps", type=click.IntRange(min=1), default=5, show_default=True, help="Interleaved rounds.")
@click.option("--seed", type=int, default=0, show_default=True)
@common_options
def splatt(binary, threads, iterations, cases, nell2_nnz, reps, seed, out_dir, fresh, quiet):
    """SPLATT's TTM and SVD against our csf TTM and Lanczos, interleaved rounds."""
    found = shutil.which(binary) if os.sep not in binary else binary
    if not found or not Path(found).is_file() or not os.access(found, os.X_OK):
        raise UsageFailure(f"spbench bench splatt: --binary: {binary}: no such executable file")
    counts = parse_ints("splatt", "--threads", threads)
    chosen = parse_names("splatt", "--cases", cases, CASES)
    options = {"binary": str(Path(found).resolve()), "threads": counts, "iterations": iterations, "cases": chosen,
               "nell2_nnz": nell2_nnz, "reps": reps, "seed": seed}

    def measure(say):
        from spbench.tucker.benchmarks.splatt_side import splatt_rounds

        with tempfile.TemporaryDirectory(prefix="spbench-splatt-") as work:
            return splatt_rounds(options["binary"], chosen, counts, reps, nell2_nnz, seed, work, say, iterations)

    measure_and_store("splatt", options, "tucker", measure, out_dir, fresh, quiet)
