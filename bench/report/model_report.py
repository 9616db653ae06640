"""The cost model in a SpTrSV report: predicted against measured wherever a sweep holds both, and
the barrier-latency sweep of simulated ElasticDivide rows (sptrsv-elasticity §6.4)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.figures import cores_phrase, figure_title, plain_log_ticks, save_figure  # noqa: E402
from spbench.report.tables import format_markdown, write_table  # noqa: E402

#: a model whose error exceeds this is called out in the report rather than hidden
ERROR_LIMIT = 0.30
KEYS = ["dataset", "algorithm", "kernel", "cores"]


def model_error(df: pd.DataFrame, keys=KEYS, column: str = "solve_time") -> pd.DataFrame:
    """Per point (`keys`) with both a measured and a simulated ok row: the median measured and
    predicted `column` and the relative error (predicted − measured) / measured."""
    keys = list(keys)
    ok = df[(df["status"] == "ok") & df[column].notna()] if column in df.columns else df.iloc[:0]
    if ok.empty:
        return pd.DataFrame(columns=keys + ["measured_ms", "predicted_ms", "rel_error"])
    med = ok.groupby(keys + ["execution"])[column].median().unstack("execution")
    if not {"measured", "simulated"} <= set(med.columns):
        return pd.DataFrame(columns=keys + ["measured_ms", "predicted_ms", "rel_error"])
    both = med.dropna(subset=["measured", "simulated"])
    out = pd.DataFrame({"measured_ms": both["measured"] * 1e3, "predicted_ms": both["simulated"] * 1e3})
    out["rel_error"] = (out["predicted_ms"] - out["measured_ms"]) / out["measured_ms"]
    return out.reset_index()


def barrier_sweep_table(df: pd.DataFrame) -> pd.DataFrame:
    """Geometric mean over data sets of the modelled BSP/SSP ratio per (cores, latency)."""
    rows = []
    ok = df[(df["status"] == "ok") & (df["algorithm"] == "elastic_divide")]
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


def error_section(err: pd.DataFrame, out_dir: Path, what: str) -> tuple[list[Path], list[str]]:
    """The model-error table and its call-out when an error exceeds ERROR_LIMIT."""
    written = write_table(err, out_dir / "model_error")
    worst = err["rel_error"].abs().max()
    over = int((err["rel_error"].abs() > ERROR_LIMIT).sum())
    lines = ["## Cost model against measurement", "",
             f"Points with both a measured and a simulated {what}: {len(err)}; largest error {worst:.0%}."
             + (f" **The model's error exceeds {ERROR_LIMIT:.0%} on {over} points: treat its predictions as "
                f"indicative there.**" if worst > ERROR_LIMIT else ""), "",
             format_markdown(err), "[CSV](model_error.csv)", ""]
    return written, lines


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
        swept = df[(df["status"] == "ok") & (df["algorithm"] == "elastic_divide") & df["barrier_sweep"].notna()]
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
