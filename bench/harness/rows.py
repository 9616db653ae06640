"""Rows of `spbench bench …` (docs/design.md, "Results"): one row per measured item, written like any sweep's.

A benchmark measures its items side by side in one invocation; the rows of that invocation land
in ``<out>/runs/`` through the one results writer, machine facts in ``meta.json``. A second
invocation appends: it measures every item again and stores its rows as the next ``repeat``
(``--fresh`` forgets the stored rows first), so `spbench compare` gets one sample per invocation
and `spbench profile` shows each invocation's table. Point identity (what compare matches):
experiment ``bench``, data set, execution, benchmark and item.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import secrets
import sys
from contextlib import contextmanager
from pathlib import Path

from spbench.machine import facts as machine
from spbench.harness.row_kind import BenchRows
from spbench.store.results import ResultStore
from spbench.store.row_builder import build_row
from spbench.store.row_schema import SCHEMA_VERSION
from spbench.pipeline.sweep import run_id

__all__ = ["UNITS", "bench_folder", "store_items", "bench_code_version"]

#: the unit of the figures any benchmark's rows may carry (rows list theirs under ``units``); each
#: experiment's declarations module adds its own benchmarks' figures (``UNITS`` there) and each
#: declaration its own (``Benchmark.units``), gathered by :func:`spbench.harness.catalog.units`
UNITS = {
    "time": "s", "times": "s", "schedule_time": "s", "schedule_times": "s", "plan_time": "s",
    "generate_time": "s", "bandwidth": "B/s", "bytes": "B", "traffic_bytes": "B", "bytes_per_nnz": "B",
    "gflops": "GFLOP/s", "flops": "flop", "elements_per_s": "1/s", "maxrss_mb": "MiB", "peak_mb": "MiB",
    "peak_rss_mb_max": "MB", "mem_total_mb_max": "MB", "size_mb": "MiB", "residual": "1", "max_rel_diff": "1",
    "slope": "1", "fit": "1", "predicted_time": "s", "rel_error": "1", "speedup": "1", "ratio": "1",
    "estimate_bytes": "B", "peak_bytes": "B", "largest_process_bytes": "B",
}


def bench_code_version(code: str | tuple) -> str:
    """The code version a benchmark's rows carry (its declaration's ``code``): an experiment's name
    (``sptrsv``, ``tucker``: the hash of what its runs execute), or the modules its numbers depend
    on (a tuple of module names: the hash of their files; a plugin's own module counts as loaded)."""
    if isinstance(code, str):
        from spbench.store.code_version import code_version
        return code_version(code)
    digest = hashlib.sha256()
    for name in code:
        module = sys.modules.get(name) or importlib.import_module(name)
        path = Path(module.__file__)
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def bench_folder(out, *, fresh: bool = False):
    """The results folder, locked while the benchmark measures and writes (ResultsBusy when another
    writer holds it); a folder left holding nothing is removed again."""
    store = ResultStore(out)
    with store.lock():
        if fresh:
            store.fresh()
        store.clean_stale()
        yield store


def store_items(store: ResultStore, benchmark: str, options: dict, items: list[dict], *, code: str | tuple,
                started_at: str) -> list[dict]:
    """Write one row per item (its ``item`` and ``dataset`` name it; the rest are its figures, a
    ``status``/``error`` when it did not run ok) and return the rows as stored."""
    from spbench.harness.catalog import units as declared_units

    units = {**UNITS, **declared_units()}
    version = bench_code_version(code)
    repeat = store.next_repeat(benchmark=benchmark, params=options, code_version=version)
    # config.sweep names the axes `spbench compare` matches rows by
    names = [it["item"] for it in items]
    store.record_writer(f"bench-{benchmark}", {"name": f"bench-{benchmark}", "benchmark": benchmark,
                                               "options": options, "sweep": {"benchmark": [benchmark], "item": names}},
                        created={"experiment": BenchRows.name})
    git = machine.git_state()
    facts = machine.machine_facts(with_mpi=False)
    invocation = secrets.token_hex(6)
    rows = []
    for index, item in enumerate(items):
        identity = {"benchmark": benchmark, "item": item["item"], "dataset": item["dataset"],
                    "options": options, "repeat": repeat}
        # the item's point; an item is ok unless its measurement says otherwise
        point = {"run_id": run_id(identity, None, version), "schema_version": SCHEMA_VERSION,
                 "experiment": BenchRows.name, "benchmark": benchmark, "config": f"bench-{benchmark}",
                 "execution": "measured", "dataset_source": "synthetic", "repeat": repeat,
                 "invocation": invocation, "item_index": index, "status": "ok", "error": None,
                 "started_at": started_at, "git_sha": git.get("sha"), "git_dirty": git.get("dirty"),
                 "host": facts["host"], "omp_threads": facts["openmp"].get("threads"), "code_version": version,
                 "params": options}
        row = build_row(point, {**item, "units": {k: units[k] for k in item if k in units}})
        rows.append(json.loads(store.write_row(row).read_text()))
    return rows
