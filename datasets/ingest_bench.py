"""Ingestion speed: ``.tns`` text into a tensor store against pandas' reader and the I/O limit.

``spbench bench ingest [--nnz 50000000] [--file F.tns] [--memory 1GB]`` (``make
bench-ingest``) generates (or reuses) a nell2-shaped ``.tns`` stand-in, then, one after the other
in one invocation and each in a fresh process: reads the file's bytes alone (``cat FILE >
/dev/null``, the I/O limit), converts it (``convert_tns``, bounded memory) and parses it with
today's in-memory reader (``read_tns``: pandas' C parser, duplicates summed). It prints wall
time, lines/s, MB/s of text and peak memory (VmHWM) of each, and the speed-up over ``read_tns``.
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spbench.store.cache_root import data_dir

_CHILD = {
    "convert": ("from spbench.datasets.tns_ingest import convert_tns\n"
                "convert_tns(FILE, OUT, memory_mb=MEMORY)\n"),
    "read_tns": ("from spbench.datasets.frostt import read_tns\n"
                 "read_tns(FILE, cache=False)\n"),
}


def _measure(kind: str, path: Path, out: Path, memory_mb: float) -> dict:
    """Run one reader in a fresh process; its wall time and VmHWM."""
    body = _CHILD[kind].replace("FILE", repr(str(path))).replace("OUT", repr(str(out))).replace("MEMORY", repr(memory_mb))
    script = ("import json, time\nstart = time.perf_counter()\n" + body +
              "hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
              "print(json.dumps({'seconds': time.perf_counter() - start, 'peak_mb': hwm / 1024}))\n")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"ingest_bench: {kind} failed: {res.stderr.strip().splitlines()[-1]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _cat(path: Path) -> dict:
    start = time.perf_counter()
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
    return {"seconds": time.perf_counter() - start, "peak_mb": None}


def _source_file(file: str | None, nnz: int) -> Path:
    """The given file, or a nell2-shaped stand-in of ``nnz`` nonzeros (generated once, reused)."""
    if file:
        return Path(file)
    from .tensor_registry import write_standin
    path = data_dir() / "bench" / f"nell2-ingest-{nnz}.tns"
    if not path.is_file():
        start = time.perf_counter()
        print(f"generating {path} ({nnz:,} nonzeros) ...", file=sys.stderr, flush=True)
        write_standin("nell2", path, nnz=nnz, dim_scale=1, seed=0)
        print(f"  {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def _lines(path: Path) -> int:
    """Lines of the text (a .gz file's lines once inflated, not the newlines of its compressed bytes)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def bench_ingest(file: str | None, nnz: int, memory: str, memory_mb: float, say=lambda text: None) -> list[dict]:
    """Items: reading the file's bytes (``cat``), converting it (``convert_tns`` at ``memory``) and
    parsing it (``read_tns``), each timed in its own process with its peak memory."""
    path = _source_file(file, nnz)
    facts = {"dataset": path.name, "file": str(path), "size_mb": path.stat().st_size / 2**20, "lines": _lines(path)}
    say("cat")
    rows = {"cat": _cat(path)}
    say("convert_tns")
    with tempfile.TemporaryDirectory(prefix="ingest-bench-", dir=path.parent) as tmp:
        rows["convert_tns"] = _measure("convert", path, Path(tmp) / "store", memory_mb)
    say("read_tns")
    rows["read_tns"] = _measure("read_tns", path, Path("-"), memory_mb)
    return [{**facts, "item": name, "time": r["seconds"], "peak_mb": r["peak_mb"],
             **({"memory": memory} if name == "convert_tns" else {})} for name, r in rows.items()]
