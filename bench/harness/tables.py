"""The Markdown table of each `spbench bench …` benchmark, drawn from the rows of one invocation.

`spbench bench NAME` prints it from the rows it has just stored and `spbench profile` writes it
from the stored rows, so both show the same table: the one the benchmark's declaration names
(:mod:`spbench.harness.catalog`). Ratios (speed-ups, bandwidth shares, budgets)
are derived here from the measured figures, never stored.
"""
from __future__ import annotations

import math

__all__ = ["bench_table"]


def _by_item(rows: list[dict]) -> dict:
    return {r["item"]: r for r in rows}


def _num(value) -> float:
    """A stored figure as a float (a missing one, stored as null, is NaN)."""
    return float("nan") if value is None else float(value)


def _quantity_table(pairs: list[tuple[str, str]]) -> str:
    lines = ["| quantity | value |", "|---|---|"]
    lines += [f"| {k.replace('|', chr(92) + '|')} | {v} |" for k, v in pairs]
    return "\n".join(lines)


def _grid_matrix(row: dict) -> str:
    grid = row["params"]["grid"]
    return f"lower triangle of lap2d-5pt, grid {grid}: n = {row['n']:,}, nnz = {row['nnz']:,}"


def serial_table(rows: list[dict]) -> str:
    """Our serial kernel against scipy, its traffic and the copy bandwidths (kernel_bench serial)."""
    it = _by_item(rows)
    scipy, ours = it["scipy spsolve_triangular"], it["spbench serial"]
    cache, dram = it["copy cache-sized"], it["copy DRAM"]
    return _quantity_table([
        ("matrix", _grid_matrix(ours)),
        ("scipy spsolve_triangular (median)", f"{scipy['time'] * 1e3:.3f} ms"),
        ("spbench serial kernel (median)", f"{ours['time'] * 1e3:.3f} ms"),
        ("speed-up over scipy", f"{scipy['time'] / ours['time']:.1f}x"),
        ("kernel backward error", f"{ours['residual']:.1e}"),
        ("max |x_ours - x_scipy| / max |x_scipy|", f"{ours['max_rel_diff']:.1e}"),
        ("kernel compulsory traffic", f"{ours['traffic_bytes'] / 2**20:.2f} MiB per solve"),
        ("kernel achieved bandwidth", f"{ours['bandwidth'] / 1e9:.2f} GB/s"),
        (f"copy bandwidth, {cache['bytes'] / 2**20:.1f} MiB (cache-sized)", f"{cache['bandwidth'] / 1e9:.2f} GB/s"),
        (f"copy bandwidth, {dram['bytes'] / 2**20:.0f} MiB (DRAM)", f"{dram['bandwidth'] / 1e9:.2f} GB/s"),
        ("kernel / DRAM copy bandwidth", f"{ours['bandwidth'] / dram['bandwidth']:.2f}"),
    ])


def _per_superstep(seconds: float, steps: int) -> str:
    return f"{seconds * 1e3:.3f} ms ({seconds / steps * 1e9:.0f} ns per superstep)"


def barrier_table(rows: list[dict]) -> str:
    """The spin barrier against OpenMP's on the wavefront schedule (kernel_bench barrier)."""
    it = _by_item(rows)
    spin, omp = it["spin"], it["omp"]
    steps = spin["supersteps"]
    return _quantity_table([
        ("matrix", _grid_matrix(spin)),
        ("schedule", f"wavefront, {spin['cores']} cores, {steps} supersteps"),
        ("spin barrier (median of rounds)", _per_superstep(spin["time"], steps)),
        ("OpenMP barrier (median of rounds)", _per_superstep(omp["time"], steps)),
        ("OpenMP / spin", f"{omp['time'] / spin['time']:.2f}"),
    ])


def schedulers_table(rows: list[dict]) -> str:
    """Every scheduler on its own kernel (kernel_bench schedulers)."""
    p = rows[0]["params"]
    pairs = [("matrix", f"{_grid_matrix(rows[0])}; {p['cores']} cores, {p['rounds']} rounds of "
                        f"{p['repeats']} timed solves")]
    pairs += [(r["item"], f"kernel {r['kernel']}, {r['supersteps']} supersteps, schedule "
                          f"{r['schedule_time'] * 1e3:.2f} ms, solve {r['time'] * 1e3:.3f} ms, backward error "
                          f"<= {r['residual']:.1e}") for r in rows]
    return _quantity_table(pairs)


def slope_table(rows: list[dict]) -> str:
    """Scheduling time against nnz and its log-log slope (kernel_bench slope)."""
    nnz, trials = rows[0]["nnz"], rows[0]["params"]["trials"]
    pairs = [("grids", f"{rows[0]['grids']} (nnz {nnz[0]:,} to {nnz[-1]:,}, {nnz[-1] / nnz[0]:.1f}x)")]
    pairs += [(r["item"], f"slope {r['slope']:.2f}; times (ms, min of {trials}) "
                          + " / ".join(f"{t * 1e3:.2f}" for t in r["schedule_times"])) for r in rows]
    return _quantity_table(pairs)


def order_table(rows: list[dict]) -> str:
    """Natural against level order on the serial kernel, per matrix (order_bench)."""
    from spbench.sptrsv.benchmarks.order_bench import BSP_ITEM

    matrices: dict = {}
    for r in rows:
        matrices.setdefault(r["dataset"], {})[r["item"]] = r
    keys = ["matrix", "n", "nnz", "chained natural", "chained wavefront", "natural (µs)", "wavefront (µs)",
            "spmp (µs)", f"{BSP_ITEM} (µs)", "natural / wavefront order", "natural / spmp order"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for name, it in matrices.items():
        nat, wf, spmp, bsp = it["natural"], it["wavefront"], it["spmp"], it[BSP_ITEM]
        values = [name, nat["n"], nat["nnz"], nat["chained"], wf["chained"], nat["time"] * 1e6, wf["time"] * 1e6,
                  spmp["time"] * 1e6, bsp["time"] * 1e6, nat["time"] / wf["time"], nat["time"] / spmp["time"]]
        lines.append("| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in values) + " |")
    return "\n".join(lines)


def lite_table(rows: list[dict]) -> str:
    """Lite, CoarseG and MediumG distribution times and Lite's Theorem 6.1 slack (scheme_bench)."""
    first = rows[0]
    lines = [f"tensor: {len(first['dims'])} modes, dims {tuple(first['dims'])}, nnz {first['nnz']:,}, "
             f"largest-slice shares {first['largest_shares']} (generated in {first['generate_time']:.1f} s)", "",
             "| scheme | P | median time (s) | all times (s) |", "|---|---|---|---|"]
    lines += [f"| {r['item']} | {r['ranks']} | {r['time']:.3f} | {', '.join(f'{t:.3f}' for t in r['times'])} |"
              for r in rows]
    slack = _by_item(rows)["lite"]["theorem_slack"]
    slack = {k: slack[k] for k in ("e_max", "r_sum", "r_max")}
    lines += ["", f"Lite Theorem 6.1 slack (min over modes; >= 0 holds): {slack}"]
    return "\n".join(lines)


def _fmt(value, spec: str) -> str:
    return format(_num(value), spec)


def hooi_table(rows: list[dict]) -> str:
    """spbench against pyttb per case, then the TTM kernel's throughput (hooi_bench)."""
    threads = rows[0]["params"]["threads"]
    peak = next(r for r in rows if r["item"].startswith("matmul"))["gflops"]
    lines = [f"threads={threads}  numpy matmul peak {peak:.1f} GFLOP/s", "",
             "| case | nnz | core | spbench s | pyttb s | speed-up | spbench fit | pyttb fit | "
             "spbench MB | pyttb MB | base MB | memory ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cases: dict = {}
    for r in rows:
        if r.get("solver"):
            cases.setdefault(r["case"], {})[r["solver"]] = r
    for solvers in cases.values():
        s, p, b = solvers["spbench"], solvers["pyttb"], solvers["base"]
        ok = p["status"] == "ok" and s["status"] == "ok"
        lines.append(f"| {s['case']} {'×'.join(map(str, s['dims']))} | {s['nnz']} | {s['K']}^{len(s['dims'])} | "
                     f"{_fmt(s.get('time'), '.3f')} | {_fmt(p.get('time'), '.2f')} | "
                     f"{(p['time'] / s['time']) if ok else math.nan:.0f}× | {_fmt(s.get('fit'), '.10g')} | "
                     f"{_fmt(p.get('fit'), '.10g')} | {_fmt(s.get('maxrss_mb'), '.0f')} | "
                     f"{_fmt(p.get('maxrss_mb'), '.0f')} | {_fmt(b.get('maxrss_mb'), '.0f')} | "
                     f"{(p['maxrss_mb'] / s['maxrss_mb']) if ok else math.nan:.1f}× |")
    lines += ["", "| TTM N | K | csf s (all modes) | Melements/s | csf GFLOP/s | % of matmul peak | paper s | "
              "paper GFLOP/s | csf speed-up | flop reduction |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {t['N']} | {t['K']} | {t['time']:.3f} | {t['elements_per_s'] / 1e6:.2f} | {t['gflops']:.2f} | "
              f"{100 * t['gflops'] / peak:.1f} | {_fmt(t.get('paper_time'), '.3f')} | "
              f"{_fmt(t.get('paper_gflops'), '.2f')} | {_fmt(t.get('speedup'), '.2f')}× | "
              f"{_fmt(t.get('flop_reduction'), '.2f')}× |" for t in rows if t["item"].startswith("ttm ")]
    return "\n".join(lines)


def splatt_table(rows: list[dict]) -> str:
    """SPLATT's Tucker beside ours per iteration, interleaved rounds (splatt_side)."""
    first = rows[0]
    p = first["params"]
    lines = [f"SPLATT {p['binary']} (BLAS {first.get('splatt_blas') or '?'}); spbench BLAS "
             f"{first.get('spbench_blas') or '?'}; {p['iterations']} iterations per round, median of {p['reps']} "
             "rounds, seconds per iteration", "",
             "| tensor | K | threads | SPLATT TTM s | csf TTM s | csf / SPLATT | SPLATT SVD s | spbench SVD s | "
             "spbench / SPLATT | SPLATT CSF build s | csf plans build s | ours / SPLATT |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        svd, built, theirs = r.get("spbench_svd"), r.get("csf_build"), r.get("splatt_csf")
        lines.append(f"| {r['case']} {'×'.join(map(str, r['dims']))}, {r['nnz']:,} nnz | {r['K']} | {r['threads']} | "
                     f"{r['splatt_ttm']:.4f} | {r['csf_ttm']:.4f} | {r['csf_ttm'] / r['splatt_ttm']:.2f} | "
                     f"{r['splatt_svd']:.5f} | " + (f"{svd:.5f} | {svd / r['splatt_svd']:.2f} |" if svd else "- | - |")
                     + (f" {theirs:.3f} | {built:.3f} | {built / theirs:.2f} |" if built and theirs else " - | - | - |"))
    return "\n".join(lines)


def ttm_table(rows: list[dict]) -> str:
    """The paper and the csf TTM kernel side by side (ttm_bench)."""
    peaks = {r["threads"]: r["gflops"] for r in rows if r["item"].startswith("matmul")}
    pairs: dict = {}
    for r in rows:
        if r.get("kind"):
            pairs.setdefault((r["dataset"], r["K"], r["threads"]), {})[r["kind"]] = r
    lines = ["| tensor | nnz | K | threads | paper s | csf s | speed-up | flop reduction | paper GFLOP/s "
             "| csf GFLOP/s | csf % of matmul peak | csf B/nnz | paper B/nnz | csf plan s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kinds in pairs.values():
        p, c = kinds["paper"], kinds["csf"]
        lines.append(f"| {c['case']} {'×'.join(map(str, c['dims']))} | {c['nnz']} | {c['K']} | {c['threads']} | "
                     f"{p['time']:.4f} | {c['time']:.4f} | {p['time'] / c['time']:.2f}× | "
                     f"{p['flops'] / c['flops']:.2f}× | {p['gflops']:.2f} | {c['gflops']:.2f} | "
                     f"{100 * c['gflops'] / peaks[c['threads']]:.1f} | {c['bytes_per_nnz']:.0f} | "
                     f"{p['bytes_per_nnz']:.0f} | {c['plan_time']:.2f} |")
    lines.append(f"\nmatmul peak GFLOP/s: {', '.join(f'{t} thread(s) {g:.1f}' for t, g in peaks.items())}")
    return "\n".join(lines)


def scale_table(rows: list[dict]) -> str:
    """Per-rank memory, words and queries as P grows (scale_bench)."""
    from spbench.tucker.benchmarks.scale_bench import BASE_MB, FORMULA_FACTOR

    lines = [f"| scheme | P | held nonzeros/rank | peak MB/rank | budget MB ({FORMULA_FACTOR} × formula + {BASE_MB}) | "
             "paper's formula MB (tensor + penultimate + factors) | peak / peak at P=1 | words/rank (max) | "
             "queries per mode | largest Lanczos residual | fit |", "|---" * 11 + "|"]
    base: dict = {}
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['scheme']} | {r['ranks']} | {r['status']}: {r.get('error') or ''} |" + " |" * 8)
            continue
        held, peak = r["held_nonzeros_max"], r["peak_rss_mb_max"]
        first = base.setdefault(r["scheme"], peak)
        budget = FORMULA_FACTOR * r["mem_total_mb_max"] + BASE_MB
        lines.append(f"| {r['scheme']} | {r['ranks']} | {held:,} | {peak:.0f} | {budget:.0f} | "
                     f"{r['mem_total_mb_max']:.0f} | {peak / first:.2f} | {r['words_per_rank_max']:,} | "
                     f"{r['queries']} | {max(r['lanczos_residual_max']):.1e} | {r['fit']:.3e} |")
    return "\n".join(lines)


def ingest_table(rows: list[dict]) -> str:
    """``cat``, ``convert_tns`` and ``read_tns`` on one ``.tns`` file (ingest_bench)."""
    it = _by_item(rows)
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
