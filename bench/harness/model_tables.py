"""The tables of `spbench bench sptrsv-model|tucker-model`: the cost models beside measurement (the
validation tables of docs/performance.md)."""
from __future__ import annotations

__all__ = ["sptrsv_model_table", "tucker_model_table"]

#: the Tucker times the model predicts, as tucker-model rows carry them
TUCKER_TIMES = ("hooi_time", "ttm_time", "svd_time", "comm_time", "other_time")


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


def tucker_model_table(rows: list[dict]) -> str:
    """Measured (the MPI worker: the run of median HOOI time over repeats, whose components add up to it)
    against modelled times, and their relative errors."""
    p = rows[0]["params"]
    head = " | ".join(f"{w} {k}" for k in TUCKER_TIMES for w in ("measured", "predicted"))
    lines = [f"{rows[0]['dataset']}, K = {p['K']}, lanczos {p['lanczos']}, ttm {p['ttm']}, the run of median HOOI "
             f"time of {p['repeats']} runs; calibration {p['calibration']}", "",
             f"| scheme | ranks | {head} | queries | " + " | ".join(f"rel. error {k}" for k in TUCKER_TIMES) + " |",
             "|---" * (3 + 3 * len(TUCKER_TIMES)) + "|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['item']} | {r['status']}: {r.get('error') or ''} |"
                         + " |" * (1 + 3 * len(TUCKER_TIMES)))
            continue
        times = " | ".join(f"{r[f'{w}_{k}']:.4f}" for k in TUCKER_TIMES for w in ("measured", "predicted"))
        errors = " | ".join(f"{r[f'rel_error_{k}']:+.2f}" for k in TUCKER_TIMES)
        lines.append(f"| {r['scheme']} | {r['ranks']} | {times} | {r['queries']} | {errors} |")
    return "\n".join(lines)

