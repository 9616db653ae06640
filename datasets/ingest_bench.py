"""Ingestion speed: ``.tns`` text into a tensor store against pandas' reader and the I/O limit.

``python -m spbench.datasets.ingest_bench [--nnz 50000000] [--file F.tns] [--memory 1GB]`` (``make
bench-ingest``) generates (or reuses) a nell2-shaped ``.tns`` stand-in, then, one after the other
in one invocation and each in a fresh process: reads the file's bytes alone (``cat FILE >
/dev/null``, the I/O limit), converts it (``convert_tns``, bounded memory) and parses it with
today's in-memory reader (``read_tns``: pandas' C parser, duplicates summed). It prints wall
time, lines/s, MB/s of text and peak memory (VmHWM) of each, and the speed-up over ``read_tns``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spbench.cache_root import data_dir

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


def _source_file(args) -> Path:
    """The given file, or a nell2-shaped stand-in of ``--nnz`` nonzeros (generated once, reused)."""
    if args.file:
        return Path(args.file)
    from .tensor_registry import write_standin
    path = data_dir() / "bench" / f"nell2-ingest-{args.nnz}.tns"
    if not path.is_file():
        start = time.perf_counter()
        print(f"generating {path} ({args.nnz:,} nonzeros) ...", file=sys.stderr, flush=True)
        write_standin("nell2", path, nnz=args.nnz, dim_scale=1, seed=0)
        print(f"  {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def _lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def main(argv=None) -> int:
    from spbench.dataset_commands import parse_memory
    ap = argparse.ArgumentParser(prog="python -m spbench.datasets.ingest_bench", description=__doc__.split("\n")[0])
    ap.add_argument("--nnz", type=int, default=50_000_000, help="nonzeros of the generated file (default 5e7)")
    ap.add_argument("--file", help="an existing .tns file instead of the generated one")
    ap.add_argument("--memory", default="1GB", help="the conversion's memory setting (default 1GB)")
    args = ap.parse_args(argv)
    memory_mb = parse_memory(args.memory)
    path = _source_file(args)
    size_mb, lines = path.stat().st_size / 2**20, _lines(path)
    rows = {"cat (bytes only)": _cat(path)}
    with tempfile.TemporaryDirectory(prefix="ingest-bench-", dir=path.parent) as tmp:
        rows[f"convert_tns (memory {args.memory})"] = _measure("convert", path, Path(tmp) / "store", memory_mb)
    rows["read_tns (pandas)"] = _measure("read_tns", path, Path("-"), memory_mb)
    base = rows["read_tns (pandas)"]["seconds"]
    print(f"{path}: {lines:,} lines, {size_mb:,.0f} MB")
    print(f"{'reader':<28} {'seconds':>8} {'Mlines/s':>9} {'MB/s':>7} {'peak MB':>8} {'vs read_tns':>11}")
    for name, r in rows.items():
        peak = f"{r['peak_mb']:,.0f}" if r["peak_mb"] is not None else "-"
        print(f"{name:<28} {r['seconds']:8.1f} {lines / r['seconds'] / 1e6:9.2f} {size_mb / r['seconds']:7.0f} "
              f"{peak:>8} {base / r['seconds']:10.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
