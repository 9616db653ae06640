"""The rows of `spbench bench …` as a kind of stored rows (:class:`spbench.experiment.RowKind`):
what `spbench profile` writes of them, what `spbench compare` compares and matches them by, the
fields they add. No `spbench run` sweep makes them (they declare no execution), so a config naming
``experiment: bench`` is refused in one line.
"""
from __future__ import annotations

from pathlib import Path

from .experiment import RowKind
from .row_schema import optional, required


class BenchRows(RowKind):
    """One row per measured item of a benchmark invocation (:mod:`spbench.bench_rows`)."""

    name, title = "bench", "Benchmarks"
    written_by = "`spbench bench NAME`"
    compare_metrics = ("time",)
    #: the fields every bench row has besides the item's own figures (their units under ``units``)
    row_fields = {"benchmark": required(str), "item": required(str), "invocation": required(str),
                  "item_index": required(int), "units": required(dict), "params": required(dict),
                  "error": optional(str, None), "omp_threads": optional(int, None)}

    def identity_axes(self) -> tuple:
        """A point is one item of one benchmark."""
        return ("benchmark", "item")

    def write_profile(self, df, out_dir) -> list[Path]:
        from spbench.bench_report import write_bench_profile
        return write_bench_profile(df, out_dir)
