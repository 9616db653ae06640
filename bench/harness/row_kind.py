"""The rows of `spbench bench …` as a kind of stored rows (:class:`spbench.experiment.RowKind`):
what `spbench profile` writes of them, what `spbench compare` compares and matches them by, the
fields they add. No `spbench run` sweep makes them (they declare no execution), so a config naming
``experiment: bench`` is refused in one line.
"""
from __future__ import annotations

from pathlib import Path

from spbench.experiment import RowKind
from spbench.store.row_schema import COMMON_FIELDS, optional, required, row_problems

#: common row fields a bench row does not carry: no data set file is hashed, no sweep is sharded or
#: run as a Slurm job, no algorithm axis (the item names what was measured)
NOT_CARRIED = ("dataset_checksum", "shard", "slurm_job_id", "slurm_array_job_id", "slurm_array_task_id",
               "algorithm")


class BenchRows(RowKind):
    """One row per measured item of a benchmark invocation (:mod:`spbench.harness.rows`)."""

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

    def row_problems(self, row: dict) -> list[str]:
        """The common fields but those no benchmark has (:data:`NOT_CARRIED`) and :attr:`row_fields`
        as declared; any other field is one of the item's own figures (its unit under ``units``)."""
        fields = {**{k: f for k, f in COMMON_FIELDS.items() if k not in NOT_CARRIED}, **self.row_fields}
        return row_problems({k: v for k, v in row.items() if k in fields}, fields)

    def write_profile(self, df, out_dir) -> list[Path]:
        from spbench.harness.report import write_bench_profile
        return write_bench_profile(df, out_dir)
