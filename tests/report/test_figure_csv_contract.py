"""Contract over every figure the reports draw: the CSV written beside it (``save_figure``) holds
every value the figure plots, and the core size K and rank count P its name or title gives.

Every module of the shared report and of each experiment's ``report/`` that calls ``save_figure``
is found from the source; its ``save_figure`` is wrapped for the test, the reports are written
from small generated rows, and each figure is checked against the CSV read back: every finite x and
y of a data line or scatter point and every bar's height (width for a horizontal bar) is a value of
some column (on an axis labelled tick by tick, the numbers its labels show instead of the
positions; a marker pinned at the axis' edge, saying a value runs beyond it, excepted); a name with
``_K10`` or a title with ``K = 10`` needs a ``K`` column holding 10, ``_P4`` a ``ranks`` column
holding 4. Reference lines drawn across the axes (``axhline``) are no data.
"""
from __future__ import annotations

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.ticker import FixedFormatter

from spbench.report import figures

ROOT = Path(__file__).resolve().parents[2] / "bench"


def figure_modules() -> list[str]:
    """The report modules that call save_figure, by import name."""
    found = []
    for folder in (ROOT / "report", *sorted(ROOT.glob("*/report"))):
        for path in sorted(folder.glob("*.py")):
            if "save_figure(" in path.read_text() and path != ROOT / "report" / "figures.py":
                found.append("spbench." + ".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def _number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-"))
        return True
    except ValueError:
        return False


def _labelled(axis) -> bool:
    """An axis whose ticks are labelled one by one (data sets, schemes, or the core counts curves
    are drawn side by side around): its tick labels, not the positions, are what it shows."""
    formatter = axis.get_major_formatter()
    given = getattr(getattr(formatter, "func", None), "func", None)  # set_ticks(positions, labels)
    return isinstance(formatter, FixedFormatter) or getattr(given, "__name__", "") == "_format_with_dict"


def _tick_values(axis) -> list[float]:
    return [float(t.get_text().replace("\u2212", "-")) for t in axis.get_ticklabels() if _number(t.get_text())]


def plotted(fig) -> list[tuple[str, float, tuple]]:
    """(what, value, the axis' limits) of every value the figure's axes plot as data."""
    found = []
    for ax in fig.axes:
        xcat, ycat = _labelled(ax.xaxis), _labelled(ax.yaxis)
        found += [("x tick", v, ()) for v in (_tick_values(ax.xaxis) if xcat else [])]
        found += [("y tick", v, ()) for v in (_tick_values(ax.yaxis) if ycat else [])]
        for line in ax.get_lines():
            if line.get_transform() != ax.transData:
                continue  # a reference line across the axes
            name = f"line {line.get_label()!r}"
            if not xcat:
                found += [(f"{name} x", float(v), ax.get_xlim()) for v in np.asarray(line.get_xdata(), float)]
            if not ycat:
                found += [(f"{name} y", float(v), ax.get_ylim()) for v in np.asarray(line.get_ydata(), float)]
        for points in (c for c in ax.collections if isinstance(c, PathCollection)):
            offsets = np.asarray(points.get_offsets(), float).reshape(-1, 2)
            if not xcat:
                found += [("scatter x", float(v), ax.get_xlim()) for v in offsets[:, 0]]
            if not ycat:
                found += [("scatter y", float(v), ax.get_ylim()) for v in offsets[:, 1]]
        for bars in (c for c in ax.containers if isinstance(c, BarContainer)):
            vertical = bars.orientation == "vertical"
            found += [(f"bar {bars.get_label()!r}", float(r.get_height() if vertical else r.get_width()), ())
                      for r in bars.patches]
    return [(what, v, limits) for what, v, limits in found if math.isfinite(v)]


def _texts(fig) -> str:
    titles = [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""]
    return "\n".join(titles)


def contract_breaches(fig, stem: str, csv: Path) -> list[str]:
    """What the figure plots that its CSV does not hold."""
    table = pd.read_csv(csv)
    cells = np.unique(np.concatenate([pd.to_numeric(table[c], errors="coerce").to_numpy(float)
                                      for c in table.columns] + [np.array([np.nan])]))
    cells = cells[np.isfinite(cells)]
    missing = []
    for what, value, limits in plotted(fig):
        if np.isclose(value, cells, rtol=1e-9, atol=1e-12).any() or any(np.isclose(value, limits, rtol=1e-9)):
            continue
        missing.append(f"{stem}: {what} = {value:g} is in no column of {csv.name}")
    for column, pattern in (("K", r"_K(\d+)|\bK = (\d+)"), ("ranks", r"_P(\d+)(?:_|$)")):
        for match in re.finditer(pattern, stem + "\n" + _texts(fig)):
            value = int(next(g for g in match.groups() if g))
            if column not in table.columns or value not in set(pd.to_numeric(table[column], errors="coerce")):
                missing.append(f"{stem}: {column} = {value} (its name or title) is not a {column} column of "
                               f"{csv.name}")
    return sorted(set(missing))


@pytest.fixture
def checked_figures(monkeypatch):
    """Wrap save_figure in every figure module; yields the list of (module, stem, breaches) drawn."""
    original = figures.save_figure
    drawn = []
    for name in figure_modules():
        module = importlib.import_module(name)
        assert getattr(module, "save_figure", None) is original, name

        def checking(fig, out_dir, stem, points, _module=name):
            written = original(fig, out_dir, stem, points)
            csv = next(p for p in written if p.suffix == ".csv")
            drawn.append((_module, stem, contract_breaches(fig, stem, csv)))
            return written

        monkeypatch.setattr(module, "save_figure", checking)
    return drawn


def test_the_figure_modules_are_found():
    """Every experiment's figures and the shared ones are seen (an empty list would pass the contract)."""
    assert {"spbench.report.compare_figure", "spbench.sptrsv.report.model_sections", "spbench.sptrsv.report.figures",
            "spbench.sptrsv.report.fig6_2_scheduling_time", "spbench.tucker.report.figures",
            "spbench.tucker.report.paper"} <= set(figure_modules())


def sptrsv_rows(make_rows) -> pd.DataFrame:
    """The toy sweep measured and simulated (with the barrier-latency sweep), and scheduling times
    over three decades of nnz."""
    rows = make_rows("measured") + make_rows("simulated")
    sweep = [{"latency": 0.0, "ratio": 1.0}, {"latency": 1e-7, "ratio": 1.5}]
    for r in rows:
        if r["execution"] == "simulated":
            r["barrier_sweep"] = sweep
    for i, nnz in enumerate((1e3, 1e4, 1e5, 1e6)):
        for algorithm, cores, seconds in (("growlocal", 4, 3e-7 * nnz), ("wavefront", 4, 1e-8 * nnz ** 1.2)):
            rows.append({**rows[0], "dataset": f"M{i}", "algorithm": algorithm, "kernel": "bsp", "cores": cores,
                         "nnz": nnz, "schedule_time": seconds, "solve_time": 1.0, "solve_times": [1.0] * 3})
    return pd.DataFrame(rows)


def model_rows() -> pd.DataFrame:
    """Measured and simulated solves of two matrices, the simulated ones with the barrier-latency sweep."""
    sweep = [{"latency": 0.0, "ratio": 1.0}, {"latency": 1e-7, "ratio": 1.5}]
    return pd.DataFrame([{"dataset": ds, "algorithm": "elastic_divide", "kernel": "ssp", "cores": 2, "status": "ok",
                          "execution": execution, "solve_time": t,
                          **({"barrier_sweep": sweep} if execution == "simulated" else {})}
                         for ds, execution, t in (("a", "measured", 2.0), ("a", "simulated", 1.0),
                                                  ("b", "measured", 1.0), ("b", "simulated", 1.1))])


def tucker_rows() -> pd.DataFrame:
    """Measured HOOI rows of two tensors, three schemes, 1, 2 and 4 ranks, K = 10, two runs each."""
    rows = []
    for ds in ("enron", "amazon"):
        for alg, base in (("coarse", 8.0), ("medium", 4.0), ("lite", 2.0)):
            for ranks in (1, 2, 4):
                for repeat in (0, 1):
                    t = base / ranks ** (0.5 if alg == "coarse" else 1.0) * (1 + 0.1 * repeat)
                    rows.append({"experiment": "tucker", "config": "m", "dataset": ds, "dataset_source": "synthetic",
                                 "algorithm": alg, "ranks": ranks, "K": 10, "status": "ok", "execution": "measured",
                                 "repeat": repeat, "hooi_time": t, "ttm_time": 0.6 * t, "svd_time": 0.3 * t,
                                 "comm_time": 0.1 * t, "other_time": 0.0, "dist_time": 0.01, "nnz": 1000,
                                 "ttm_imbalance": 1.0 + ranks / 10, "svd_redundancy": 1.1, "svd_imbalance": 1.2,
                                 "svd_volume": 10 * ranks, "fm_volume": 20 * ranks, "mem_total_mb": 1.5,
                                 "mem_total_mb_max": 2.0, "mem_tensor_mb": 0.5, "mem_penultimate_mb": 0.5,
                                 "mem_factor_mb": 0.5})
    return pd.DataFrame(rows)


def compare_table() -> pd.DataFrame:
    return pd.DataFrame({"dataset": ["a", "b", "c"], "algorithm": ["serial", "growlocal", "wavefront"],
                         "ratio": [0.9, 1.1, 1.02], "ci_low": [0.001, 0.95, math.nan],
                         "ci_high": [400.0, 1.2, math.nan], "flag": ["unchanged", "regression", "inconclusive"]})


@pytest.mark.slow
def test_every_figure_csv_holds_what_the_figure_plots(checked_figures, make_rows, tmp_path):
    from spbench.report.compare_figure import ratio_figure
    from spbench.report.report import write_profile

    from spbench.sptrsv.report.model_sections import write_model_sections

    write_profile(sptrsv_rows(make_rows), tmp_path / "sptrsv")
    write_model_sections(model_rows(), tmp_path / "model")
    write_profile(tucker_rows(), tmp_path / "tucker")
    ratio_figure(compare_table(), ["dataset", "algorithm"], 0.05, "t", tmp_path / "compare" / "compare")
    undrawn = set(figure_modules()) - {module for module, _, _ in checked_figures}
    breaches = [line for _, _, found in checked_figures for line in found]
    assert not undrawn and not breaches, "\n".join([f"no figure drawn by {m}" for m in sorted(undrawn)] + breaches)
