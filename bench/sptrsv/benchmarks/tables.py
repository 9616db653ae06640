"""The Markdown tables of the SpTrSV benchmarks (`spbench bench serial|barrier|schedulers|slope|order`),
drawn from one invocation's rows; ratios are derived here, never stored."""
from __future__ import annotations

from spbench.harness.tables import by_item, quantity_table


def _grid_matrix(row: dict) -> str:
    grid = row["params"]["grid"]
    return f"lower triangle of lap2d-5pt, grid {grid}: n = {row['n']:,}, nnz = {row['nnz']:,}"


def serial_table(rows: list[dict]) -> str:
    """Our serial kernel against scipy, its traffic and the copy bandwidths (kernel_bench serial)."""
    it = by_item(rows)
    scipy, ours = it["scipy spsolve_triangular"], it["spbench serial"]
    cache, dram = it["copy cache-sized"], it["copy DRAM"]
    return quantity_table([
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
    it = by_item(rows)
    spin, omp = it["spin"], it["omp"]
    steps = spin["supersteps"]
    return quantity_table([
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
    return quantity_table(pairs)


def slope_table(rows: list[dict]) -> str:
    """Scheduling time against nnz and its log-log slope (kernel_bench slope)."""
    nnz, trials = rows[0]["nnz"], rows[0]["params"]["trials"]
    pairs = [("grids", f"{rows[0]['grids']} (nnz {nnz[0]:,} to {nnz[-1]:,}, {nnz[-1] / nnz[0]:.1f}x)")]
    pairs += [(r["item"], f"slope {r['slope']:.2f}; times (ms, min of {trials}) "
                          + " / ".join(f"{t * 1e3:.2f}" for t in r["schedule_times"])) for r in rows]
    return quantity_table(pairs)


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


#: the validation's target: the median error per scheduler and core count within this
SPTRSV_TARGET = 0.20


def sptrsv_model_table(rows: list[dict]) -> str:
    """Measured (median of interleaved rounds of median solves) against predicted solve times; over
    several matrices first the median error per (algorithm, cores) against SPTRSV_TARGET."""
    p = rows[0]["params"]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    many = len(datasets) > 1
    what = p.get("config") or datasets[0]
    scale = f" at --scale {p['scale']}" if p.get("scale") else ""
    lines = [f"{what}{scale}: measured = median over {p['rounds']} interleaved rounds of the median of "
             f"{p['repeats']} timed solves; calibration {p['calibration']}", ""]
    if many:
        lines += [*_sptrsv_error_summary([r for r in rows if r["status"] == "ok"]), ""]
    lines += ["| " + ("dataset | " if many else "") + "algorithm | cores | kernel | supersteps | measured (ms) | "
              "predicted (ms) | rel. error |", "|---" * (8 if many else 7) + "|"]
    for r in rows:
        first = f"| {r['dataset']} " if many else ""
        if r["status"] != "ok":
            lines.append(f"{first}| {r['item']} | {r['status']}: {r.get('error') or ''} |" + " |" * 5)
            continue
        lines.append(f"{first}| {r['algorithm']} | {r['cores']} | {r['kernel']} | {r['supersteps']} | "
                     f"{r['time'] * 1e3:.3f} | {r['predicted_time'] * 1e3:.3f} | {r['rel_error']:+.1%} |")
    return "\n".join(lines)


def _sptrsv_error_summary(rows: list[dict]) -> list[str]:
    """Per (algorithm, cores): matrices, median error, its quartiles, and whether the median is within
    SPTRSV_TARGET."""
    import numpy as np

    groups: dict[tuple, list[float]] = {}
    for r in rows:
        groups.setdefault((r["algorithm"], r["cores"], r["kernel"]), []).append(r["rel_error"])
    lines = [f"| algorithm | cores | kernel | matrices | median error | 25th / 75th percentile | median within "
             f"±{SPTRSV_TARGET:.0%} |", "|---|---|---|---|---|---|---|"]
    for (alg, cores, kernel), errors in groups.items():
        q1, med, q3 = np.percentile(errors, [25, 50, 75])
        lines.append(f"| {alg} | {cores} | {kernel} | {len(errors)} | {med:+.1%} | {q1:+.1%} / {q3:+.1%} | "
                     f"{'yes' if abs(med) <= SPTRSV_TARGET else '**no**'} |")
    return lines
