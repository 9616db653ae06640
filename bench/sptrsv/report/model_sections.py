"""The cost model in the SpTrSV report: predicted against measured solve times wherever a sweep holds
both (:mod:`spbench.report.model_report`), and the barrier-latency sweep the simulated ElasticDivide
rows carry (``barrier_sweep``; sptrsv-elasticity §6.4)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.figures import cores_phrase, figure_title, plain_log_ticks, save_figure  # noqa: E402
from spbench.report.model_report import error_section, model_error  # noqa: E402


def barrier_sweep_table(df: pd.DataFrame) -> pd.DataFrame:
    """Geometric mean over data sets of the modelled BSP/SSP ratio per (cores, latency)."""
    rows = []
    ok = df[(df["status"] == "ok")]
    if "barrier_sweep" not in ok.columns:
        return pd.DataFrame(columns=["cores", "latency_ns", "ratio_geomean", "datasets"])
    for _, r in ok.dropna(subset=["barrier_sweep"]).iterrows():
        for point in r["barrier_sweep"]:
            rows.append({"dataset": r["dataset"], "cores": int(r["cores"]), "latency_ns": point["latency"] * 1e9,
                         "ratio": point["ratio"]})
    if not rows:
        return pd.DataFrame(columns=["cores", "latency_ns", "ratio_geomean", "datasets"])
    t = pd.DataFrame(rows)
    g = t.groupby(["cores", "latency_ns"])
    return pd.DataFrame({"ratio_geomean": g["ratio"].apply(lambda x: float(np.exp(np.log(x).mean()))),
                         "datasets": g["dataset"].nunique()}).reset_index()


def write_model_sections(df: pd.DataFrame, out_dir: Path) -> tuple[list[Path], list[str], list[str]]:
    """(paths, REPORT.md lines, notes) for the model-error table and the barrier-latency sweep."""
    written, lines, notes = [], [], []
    err = model_error(df)
    if len(err):
        written, lines = error_section(err, out_dir, "solve time")
    elif set(df["execution"]) == {"simulated"}:
        notes.append("Only simulated rows: run the same sweep measured (`--execution measured`) to see the "
                     "cost model's error on this machine.")
    sweep = barrier_sweep_table(df)
    if len(sweep):
        fig, ax = plt.subplots(figsize=(7.5, 4), layout="constrained")
        for cores, part in sweep.groupby("cores"):
            ax.plot(part["latency_ns"].clip(lower=1), part["ratio_geomean"], marker="o", label=f"{cores} cores")
        ax.axhline(1.0, color="0.4", ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("barrier latency (ns; 0 drawn at 1)")
        ax.set_ylabel("modelled BSP time / SSP time")
        swept = df[(df["status"] == "ok") & df["barrier_sweep"].notna()]
        ax.set_title(figure_title(swept, "ElasticDivide's schedule: modelled BSP over SSP time vs barrier latency "
                                  "(§6.4), geometric mean over matrices", "simulated",
                                  cores_phrase(sweep["cores"])), fontsize=9)
        fig.canvas.draw()
        plain_log_ticks(ax.xaxis)
        fig.legend(fontsize=8, loc="outside right upper")
        written += save_figure(fig, out_dir, "barrier_sweep", sweep)
        beats = sweep[sweep["ratio_geomean"] > 1.0]
        first = (f"SSP beats BSP from {beats['latency_ns'].min():g} ns on (geometric mean over data sets)"
                 if len(beats) else "SSP never beats BSP at these latencies")
        lines += ["## Barrier latency sweep (paper §6.4)", "",
                  f"The same ElasticDivide schedule under the BSP and SSP cost models, both barriers "
                  f"costing the latency on the x-axis; {first}.", "",
                  "![barrier sweep](barrier_sweep.png)", "",
                  "[PDF](barrier_sweep.pdf) · [plotted points (CSV)](barrier_sweep.csv)", ""]
    return written, lines, notes
