"""Per-rank memory, words and queries of the measured HOOI as P grows (tucker-lite-distribution
§7.3 memory, §4.2 volumes, §7.1 Lanczos).

    spbench bench tucker-scale [--ranks 1,2,4,8] [--schemes lite,medium,coarse]
        [--dims 3000,4000,2000000] [--nnz 4000000] [--K 10] [--out DIR]

Generates a uniform random tensor with one long mode (default 3000 × 4000 × 2,000,000, 4M
nonzeros: L_3/P stays large, the case where a replicated Lanczos basis or factor would dominate),
runs the MPI worker once per rank count (every scheme in one job, oversubscribed when P exceeds
the cores: memory and words are counts, not timings) and prints, per scheme and P: the largest
per-rank peak RSS of that scheme, the budget of 1.25 × the paper's §7.3 formula + 250 MB, words sent
plus received by the busiest rank, queries per mode and the fit. One bench row per (scheme, P)
lands in DIR/runs/ (default results/bench-tucker-scale/).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["bench_scale", "long_mode_tensor"]

FORMULA_FACTOR = 1.25     # budget per rank: FORMULA_FACTOR × §7.3 formula + BASE_MB
BASE_MB = 250


def long_mode_tensor(dims, nnz: int, seed: int = 0):
    """Uniform coordinates (duplicates summed away), values in [0.5, 1.5)."""
    from spbench.datasets.sparse_tensor import SparseTensor

    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, d, size=nnz, dtype=np.int64) for d in dims], axis=1)
    return SparseTensor(coords, rng.random(nnz) + 0.5, tuple(dims))


def _launch(ranks: int, tensor_dir: Path, runs: Path, schemes, K: int, lanczos: str, timeout: float):
    from spbench.tucker.mpi.launch import mpi_module_command

    tasks = [{"row": {"run_id": f"{s}-P{ranks}", "dataset": "long-mode", "algorithm": s},
              "scheme": s, "K": K, "seed": 0, "invocations": 1, "lanczos": lanczos} for s in schemes]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"tensor_dir": str(tensor_dir), "results": str(runs.parent), "scratch": True, "threads": 1,
                   "tasks": tasks}, fh)
        spec = fh.name
    cmd = mpi_module_command("spbench.tucker.mpi.worker", [spec], ranks)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    try:
        subprocess.run(cmd, check=True, timeout=timeout, env=env)
    finally:
        Path(spec).unlink(missing_ok=True)   # the ranks remove it once read


#: the worker row's figures a scale item keeps
FIGURES = ("held_nonzeros_max", "peak_rss_mb_max", "peak_rss_mb_phases", "mem_total_mb_max", "mem_tensor_mb_max",
           "mem_penultimate_mb_max", "mem_factor_mb_max", "words_per_rank_max", "svd_gather_words", "queries",
           "lanczos_residual_max", "fit", "fits", "plan_time", "status", "error")


def bench_scale(ranks: list[int], schemes: list[str], dims: tuple, nnz: int, K: int, lanczos: str,
                timeout: float, work_dir: Path, say=lambda text: None) -> list[dict]:
    """Items: every scheme at every rank count, from the worker's rows; the tensor store and the
    worker's rows live under ``work_dir`` (the caller removes it)."""
    from spbench.datasets.tensor_store import write_store

    say(f"generating the tensor ({nnz:,} nonzeros)")
    tensor = long_mode_tensor(dims, nnz)
    tdir, runs = Path(work_dir) / "tensor", Path(work_dir) / "runs"
    label = ",".join(map(str, dims))
    write_store(tdir, tensor.coords, tensor.values, dims, checksum=f"long-mode-{nnz}-{label}",
                source={"kind": "generated", "generator": "uniform", "dims": list(dims), "nnz": nnz, "seed": 0})
    del tensor
    for P in ranks:
        say(f"{P} ranks")
        _launch(P, tdir, runs, schemes, K, lanczos, timeout)
    items = []
    for s in schemes:
        for P in ranks:
            row = json.loads((runs / f"{s}-P{P}.json").read_text())
            items.append({"dataset": f"long-mode[dims={label},nnz={nnz}]", "item": f"{s} P={P}", "scheme": s,
                          "ranks": P, "K": K, **{k: row[k] for k in FIGURES if k in row}})
    return items
