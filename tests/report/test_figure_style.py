"""What the SpTrSV figures draw (paper 2, Figs. 5.1, 6.1, 6.2): the paper's labels, markers with
interval bars at the core counts, curves visible on the frame and apart from each other, titles that
say what was counted."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from spbench.sptrsv.report import fig6_2_scheduling_time as fig62_scheduling_time
from spbench.report.rows import series_labels
from spbench.sptrsv.report import figures
from spbench.sptrsv.report.labels import algorithm_label, curve_labels


@pytest.fixture
def drawn(monkeypatch):
    """The figures passed to ``save_figure`` (kept open), in call order."""
    kept = []

    def keep(fig, out_dir, stem, points):
        kept.append(fig)
        return []

    monkeypatch.setattr(figures, "save_figure", keep)
    monkeypatch.setattr(fig62_scheduling_time, "save_figure", keep)
    monkeypatch.setattr(fig62_scheduling_time, "write_table", lambda *a, **k: [])
    yield kept
    for fig in kept:
        plt.close(fig)


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


@pytest.mark.parametrize("algorithm,kernel,label", [
    ("elastic_divide", "ssp", "ElasticDivide (SSP)"), ("elastic_divide", "bsp", "ElasticDivide (BSP)"),
    ("growlocal", "bsp", "GrowLocal (BSP)"), ("growlocal", None, "GrowLocal (BSP)"),
    ("wavefront", "bsp", "Wavefront"), ("hdagg", "bsp", "HDagg"), ("spmp", "p2p", "SpMP (P2P)"),
    ("wavefront", "ssp", "Wavefront (SSP)"), ("serial", "serial", "Serial"), ("mine", None, "mine")])
def test_paper_labels(algorithm, kernel, label):
    assert algorithm_label(algorithm, kernel) == label


def test_curve_labels_keep_kernels_apart(make_row):
    rows = pd.DataFrame([make_row("A", "growlocal", 2, 1.0, kernel="bsp"),
                         make_row("A", "growlocal", 2, 1.0, kernel="ssp"),
                         make_row("A", "hdagg", 2, 1.0)])
    keys = series_labels(rows)
    assert curve_labels(rows, keys) == {"growlocal/bsp": "GrowLocal (BSP)",
                                        "growlocal/ssp": "GrowLocal (SSP)", "hdagg": "HDagg"}


def test_speedup_is_markers_with_bars_not_lines(rows, drawn, tmp_path):
    figures.speedup_vs_cores(rows, tmp_path)
    (fig,) = drawn
    ax = fig.axes[0]
    assert {"Wavefront", "GrowLocal (BSP)"} <= set(_legend(fig))
    for line in ax.lines:  # only the reference line at 1 joins points; data are bare markers
        y = np.asarray(line.get_ydata(), dtype=float)
        if line.get_linestyle() not in ("None", "none", " ", ""):
            assert len(y) == 0 or np.allclose(y, y[0]), line.get_label()
    markers = {line.get_marker() for line in ax.lines if line.get_marker() not in (None, "None", "")}
    assert len(markers) >= 2  # one marker shape per algorithm
    assert "cores 1, 2, 4" in ax.get_title().replace("\n", " ")


def test_perfprofile_curves_visible_and_apart(rows, drawn, tmp_path):
    figures.performance_profile_figure(rows, tmp_path)
    (fig,) = drawn
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert low < 0 and high > 1  # a curve on 0 or 1 is not hidden under the frame
    curves = [line for line in ax.lines if not line.get_label().startswith("_")]
    assert len({(str(c.get_linestyle()), c.get_marker()) for c in curves}) == len(curves)
    assert all(not c.get_clip_on() for c in curves)
    title = ax.get_title().replace("\n", " ")
    assert "cores ≥ 2" in title and "6 matrix × core-count instances" in title
    assert _legend(fig) == ["GrowLocal (BSP)", "Wavefront"]


def test_scheduling_time_title_counts_distinct_sizes(make_row, drawn, tmp_path):
    rows = [dict(make_row(f"M{i}", "hdagg", 4, 1.0), nnz=n, schedule_time=1e-9 * n ** 1.5,
                 config="toy_small")
            for i, n in enumerate([1e3, 1e3, 1e4, 1e5])]
    fig62_scheduling_time.scheduling_time_figure(pd.DataFrame(rows), tmp_path)
    (fig,) = drawn
    ax = fig.axes[0]
    title = ax.get_title().replace("\n", " ")
    assert "over 3 distinct sizes" in title and "--scale small" in title
    assert ax.get_xlabel() == "number of nonzeros"
    assert _legend(fig)[0].startswith("HDagg (m = ")


def test_speedup_geomean_outside_its_percentile_band_is_drawn(make_row, drawn, tmp_path):
    """Speed-ups 100, 1, 1, 1: the geometric mean 0.32 lies below the 25th percentile 0.75."""
    rows = [make_row(d, "serial", 1, 1.0) for d in "ABCD"]
    rows += [make_row(d, "wavefront", 2, t) for d, t in zip("ABCD", (100.0, 1.0, 1.0, 1.0))]
    figures.speedup_vs_cores(pd.DataFrame(rows), tmp_path)
    assert len(drawn) == 1


def test_lite_scaling_ticks_reach_a_point_below_one(monkeypatch, tmp_path):
    """Fig. 15(b): a tensor slowing down to 0.64x at 64 ranks has a labelled tick below it."""
    from spbench.tucker.report import paper as tucker_paper

    kept = []
    monkeypatch.setattr(tucker_paper, "save_figure", lambda fig, *a: kept.append(fig) or [])
    lite = pd.DataFrame({"dataset": ["A", "A", "B", "B"], "ranks": [8, 64, 8, 64],
                         "hooi_time": [1.0, 0.8, 1.0, 1 / 0.64]})
    tucker_paper._lite_scaling(lite, [8, 64], tmp_path, 10, "simulated", {})
    ax = kept[0].axes[0]
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low <= t <= high]
    assert 0.5 in ticks and 1.0 in ticks and 8.0 in ticks and low <= 0.5
    plt.close(kept[0])


def test_scheduling_time_legend_clear_of_title_and_axes(make_row, drawn, tmp_path):
    """Five schedulers' slope labels and a three-line title: the legend overlaps neither."""
    rows = [dict(make_row(f"M{i}", algorithm, 2, 1.0), nnz=n, schedule_time=1e-9 * n ** 1.2,
                 config="sptrsv_ichol_small")
            for algorithm in ("elastic_divide", "growlocal", "hdagg", "spmp", "wavefront")
            for i, n in enumerate([1e3, 3e3, 1e4, 3e4, 1e5])]
    fig62_scheduling_time.scheduling_time_figure(pd.DataFrame(rows), tmp_path)
    (fig,) = drawn
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    ax = fig.axes[0]
    assert len(_legend(fig)) == 5
    assert not legend.overlaps(ax.title.get_window_extent(renderer))
    assert not legend.overlaps(ax.get_window_extent(renderer))
