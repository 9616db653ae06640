"""The table of `spbench bench preflight` (:mod:`spbench.harness.preflight_bench`): per point the pre-flight's
memory estimate, the peak measured when the point ran alone, their ratio and whether the estimate
is within 25% of the peak."""
from __future__ import annotations

from pathlib import Path

__all__ = ["WITHIN", "preflight_table"]

#: an estimate is good when |estimate - measured| <= WITHIN x measured
WITHIN = 0.25


def preflight_table(rows: list[dict]) -> str:
    """Estimate against measured peak per point, the ratio and whether it is within 25%."""
    from spbench.pipeline.preflight import size_text

    lines = ["| config | scale | execution | point | estimate | measured peak | measured is | estimate / measured | "
             f"within {WITHIN:.0%} | seconds |", "|---" * 10 + "|"]
    for r in rows:
        estimate = size_text(r["estimate_bytes"]) if r.get("estimate_bytes") else "none"
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "-"
        verdict = {True: "yes", False: "**no**", None: "-"}[r.get("within")]
        peak = size_text(r["peak_bytes"]) if r["status"] == "ok" else f"{r['status']}: {r.get('error') or ''}"
        lines.append(f"| {Path(r['config']).name} | {r['scale']} | {r['execution']} | {r['point']} | {estimate} | "
                     f"{peak} | {r['peak_kind']} | {ratio} | {verdict} | {r['time']:.1f} |")
    ok = [r for r in rows if r["status"] == "ok" and r.get("within") is not None]
    lines.append(f"\n{sum(r['within'] for r in ok)} of {len(ok)} estimates within {WITHIN:.0%} of the measured peak"
                 + (f"; {len(rows) - len(ok)} points without an estimate or a peak" if len(ok) < len(rows) else ""))
    return "\n".join(lines)
