"""The Markdown table of each `spbench bench …` benchmark, drawn from the rows of one invocation: the
helpers every benchmark's table uses, and the tables of the benchmarks no experiment owns (each
experiment's are in its `benchmarks/tables.py`).

`spbench bench NAME` prints it from the rows it has just stored and `spbench profile` writes it
from the stored rows, so both show the same table: the one the benchmark's declaration names
(:mod:`spbench.harness.catalog`). Ratios (speed-ups, bandwidth shares, budgets)
are derived here from the measured figures, never stored.
"""
from __future__ import annotations


__all__ = ["bench_table", "by_item", "num", "quantity_table", "fmt"]


def by_item(rows: list[dict]) -> dict:
    return {r["item"]: r for r in rows}


def num(value) -> float:
    """A stored figure as a float (a missing one, stored as null, is NaN)."""
    return float("nan") if value is None else float(value)


def quantity_table(pairs: list[tuple[str, str]]) -> str:
    lines = ["| quantity | value |", "|---|---|"]
    lines += [f"| {k.replace('|', chr(92) + '|')} | {v} |" for k, v in pairs]
    return "\n".join(lines)


def fmt(value, spec: str) -> str:
    return format(num(value), spec)


def ingest_table(rows: list[dict]) -> str:
    """``cat``, ``convert_tns`` and ``read_tns`` on one ``.tns`` file (ingest_bench)."""
    it = by_item(rows)
    first, base = rows[0], it["read_tns"]["time"]
    names = {"cat": "cat (bytes only)", "convert_tns": f"convert_tns (memory {it['convert_tns'].get('memory')})",
             "read_tns": "read_tns (pandas)"}
    lines = [f"{first['file']}: {first['lines']:,} lines, {first['size_mb']:,.0f} MB", "",
             "| reader | seconds | Mlines/s | MB/s | peak MB | vs read_tns |", "|---|---|---|---|---|---|"]
    for r in rows:
        peak = f"{r['peak_mb']:,.0f}" if r.get("peak_mb") is not None else "-"
        lines.append(f"| {names.get(r['item'], r['item'])} | {r['time']:.1f} | "
                     f"{first['lines'] / r['time'] / 1e6:.2f} | {first['size_mb'] / r['time']:.0f} | {peak} | "
                     f"{base / r['time']:.1f}x |")
    return "\n".join(lines)


def standin_table(rows: list[dict]) -> str:
    """Stand-ins generated into tensor stores, one per tensor (standin_bench)."""
    lines = ["| stand-in | dims | nonzeros | seconds | M nonzeros/s | peak MB | load before | columns sha256 |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['dataset']} | {'×'.join(map(str, r['dims']))} | {r['nnz']:,} | {r['time']:.1f} | "
              f"{r['elements_per_s'] / 1e6:.2f} | {r['peak_mb']:,.0f} | {r['load_before']:.2f} | "
              f"{r['columns_sha256'][:16]} |" for r in rows]
    return "\n".join(lines)


def bench_table(rows: list[dict]) -> str:
    """The table of one invocation's rows (they share a benchmark), as its declaration names it."""
    from spbench.harness.catalog import find

    return find(rows[0]["benchmark"]).tabulating()(rows)
