"""The tables of `spbench bench sptrsv-model|tucker-model`: the cost models beside measurement (the
validation tables of docs/performance.md)."""
from __future__ import annotations

__all__ = ["sptrsv_model_table", "tucker_model_table"]

#: the Tucker times the model predicts, as tucker-model rows carry them
TUCKER_TIMES = ("hooi_time", "ttm_time", "svd_time", "comm_time", "other_time")


def sptrsv_model_table(rows: list[dict]) -> str:
    """Measured (median of interleaved rounds of median solves) against predicted solve times."""
    p = rows[0]["params"]
    lines = [f"{rows[0]['dataset']}: measured = median over {p['rounds']} interleaved rounds of the median of "
             f"{p['repeats']} timed solves; calibration {p['calibration']}", "",
             "| algorithm | cores | kernel | supersteps | measured (ms) | predicted (ms) | rel. error |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['item']} | {r['status']}: {r.get('error') or ''} |" + " |" * 5)
            continue
        lines.append(f"| {r['algorithm']} | {r['cores']} | {r['kernel']} | {r['supersteps']} | "
                     f"{r['time'] * 1e3:.3f} | {r['predicted_time'] * 1e3:.3f} | {r['rel_error']:+.1%} |")
    return "\n".join(lines)


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

