"""Stand-in generation speed: a FROSTT stand-in drawn straight into a tensor store.

``spbench bench standin [--tensors nell2,enron] [--nnz N] [--dim-scale S] [--seed S]`` generates
each stand-in (default: the paper's full size, exact dims and nnz) with ``standin_store`` into a
temporary folder, each in a fresh process, one after the other, and reports wall time, nonzeros
per second and peak memory (VmHWM) of each, the load average before it started (other work on
the machine slows it down) and a sha256 of the store's columns (the same stand-in must give the
same digest on any version of the generator).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from spbench.store.cache_root import data_dir

_CHILD = """import hashlib, json, time
from pathlib import Path
from spbench.datasets.tensor_registry import standin_store
from spbench.datasets.tensor_store import read_header
start = time.perf_counter()
store = standin_store(NAME, OUT, progress=lambda *a: None, **KW)
seconds = time.perf_counter() - start
hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
header = read_header(store)
digest = hashlib.sha256()
for name in [f'coord{n}.npy' for n in range(header.nmodes)] + ['values.npy']:
    with open(Path(store) / name, 'rb') as fh:
        while block := fh.read(1 << 24):
            digest.update(block)
print(json.dumps({'seconds': seconds, 'peak_mb': hwm / 1024, 'nnz': header.nnz, 'dims': list(header.dims),
                  'columns_sha256': digest.hexdigest()}))
"""


def _generate(name: str, params: dict, out: Path) -> dict:
    """One stand-in into the store ``out`` in a fresh process: its wall time, VmHWM and digest."""
    script = _CHILD.replace("NAME", repr(name)).replace("OUT", repr(str(out))).replace("KW", repr(params))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"standin_bench: {name} failed: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_standin(tensors: list[str], nnz: int | None, dim_scale: float, seed: int,
                  say=lambda text: None) -> list[dict]:
    """Items: one per tensor, its stand-in generated into a store (``standin_store``)."""
    from .paper_tensors import tensor_entry
    from .tensor_registry import standin_label

    folder = data_dir() / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for i, name in enumerate(tensors, 1):
        params = {"nnz": int(nnz if nnz is not None else tensor_entry(name).nnz), "dim_scale": dim_scale,
                  "seed": seed}
        load = os.getloadavg()[0]
        say(f"[{i}/{len(tensors)}] {name} {params} (load average {load:.2f})")
        with tempfile.TemporaryDirectory(prefix="standin-bench-", dir=folder) as tmp:
            r = _generate(name, params, Path(tmp) / "store")
        items.append({"item": name, "dataset": standin_label(name, nnz=params["nnz"], dim_scale=dim_scale, seed=seed),
                      "time": r["seconds"], "nnz": r["nnz"], "elements_per_s": r["nnz"] / r["seconds"],
                      "peak_mb": r["peak_mb"], "dims": r["dims"], "load_before": load,
                      "columns_sha256": r["columns_sha256"]})
    return items
