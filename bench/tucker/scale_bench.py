"""Per-rank memory, words and queries of the measured HOOI as P grows (issue "Tucker at the
paper's scale, part 1"; tucker-lite-distribution §7.3 memory, §4.2 volumes, §7.1 Lanczos).

    python -m spbench.tucker.scale_bench [--ranks 1,2,4,8] [--schemes lite,medium,coarse]
        [--dims 3000,4000,2000000] [--nnz 4000000] [--K 10] [--out DIR]

Generates a uniform random tensor with one long mode (default 3000 × 4000 × 2,000,000, 4M
nonzeros: L_3/P stays large, the case where a replicated Lanczos basis or factor would dominate),
runs the MPI worker once per rank count (every scheme in one job, oversubscribed when P exceeds
the cores: memory and words are counts, not timings) and prints, per scheme and P: the largest
per-rank peak RSS of that scheme, the budget of 200 bytes per nonzero held + 300 MB, words sent
plus received by the busiest rank, queries per mode and the fit. Rows land in DIR/runs/ like any
measured run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["main", "long_mode_tensor"]

BYTES_PER_HELD = 200
BASE_MB = 300


def long_mode_tensor(dims, nnz: int, seed: int = 0):
    """Uniform coordinates (duplicates summed away), values in [0.5, 1.5)."""
    from .tensor import SparseTensor

    rng = np.random.default_rng(seed)
    coords = np.stack([rng.integers(0, d, size=nnz, dtype=np.int64) for d in dims], axis=1)
    return SparseTensor(coords, rng.random(nnz) + 0.5, tuple(dims))


def _launch(ranks: int, tensor_dir: Path, runs: Path, schemes, K: int, lanczos: str, timeout: float):
    from .launch import mpi_module_command

    tasks = [{"row": {"run_id": f"{s}-P{ranks}", "dataset": "long-mode", "algorithm": s},
              "scheme": s, "K": K, "seed": 0, "invocations": 1, "lanczos": lanczos} for s in schemes]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"tensor_dir": str(tensor_dir), "results_dir": str(runs), "threads": 1, "tasks": tasks}, fh)
        spec = fh.name
    cmd = mpi_module_command("spbench.tucker.worker", [spec], ranks)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    try:
        subprocess.run(cmd, check=True, timeout=timeout, env=env)
    finally:
        Path(spec).unlink(missing_ok=True)   # the ranks remove it once read


def main(argv=None) -> int:
    from spbench.datasets.tensor_store import write_store

    ap = argparse.ArgumentParser(prog="python -m spbench.tucker.scale_bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--schemes", default="lite,medium,coarse")
    ap.add_argument("--dims", default="3000,4000,2000000")
    ap.add_argument("--nnz", type=int, default=4_000_000)
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--lanczos", default="paper", choices=["paper", "converged"])
    ap.add_argument("--out", default="results/tucker_scale")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args(argv)
    dims = tuple(int(x) for x in a.dims.split(","))
    ranks = [int(x) for x in a.ranks.split(",")]
    schemes = a.schemes.split(",")
    out = Path(a.out)
    runs = out / "runs"
    tensor = long_mode_tensor(dims, a.nnz)
    tdir = out / "tensor"
    if tdir.exists():
        shutil.rmtree(tdir)
    write_store(tdir, tensor.coords, tensor.values, dims, checksum=f"long-mode-{a.nnz}-{a.dims}",
                source={"kind": "generated", "generator": "uniform", "dims": list(dims), "nnz": a.nnz, "seed": 0})
    del tensor
    for P in ranks:
        print(f"# {P} ranks", file=sys.stderr, flush=True)
        _launch(P, tdir, runs, schemes, a.K, a.lanczos, a.timeout)
    print("| scheme | P | held nonzeros/rank | peak MB/rank | budget MB (200 B/held + 300) | paper's formula MB "
          "(tensor + penultimate + factors) | peak / peak at P=1 | words/rank (max) | queries per mode | "
          "largest Lanczos residual | fit |")
    print("|---" * 11 + "|")
    for s in schemes:
        base = None
        for P in ranks:
            row = json.loads((runs / f"{s}-P{P}.json").read_text())
            held = row["held_nonzeros_max"]
            base = base or row["peak_rss_mb_max"]
            print(f"| {s} | {P} | {held:,} | {row['peak_rss_mb_max']:.0f} | {held * BYTES_PER_HELD / 1e6 + BASE_MB:.0f} | "
                  f"{row['mem_total_mb_max']:.0f} | {row['peak_rss_mb_max'] / base:.2f} | {row['words_per_rank_max']:,} | "
                  f"{row['queries']} | {max(row['lanczos_residual_max']):.1e} | {row['fit']:.3e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
