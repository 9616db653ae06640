"""REPORT.md names rows taken on a busy machine, oversubscribed or with extrapolated model costs, and
figures shade the extrapolated core counts."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.measurement_conditions import conditions_section, extrapolated_from, shade_extrapolated  # noqa: E402

BUSY = {"busy": True, "reason": "other processes used 1.90 cores on average while we measured (more than 0.25)"}


def test_clean_rows_give_no_section():
    df = pd.DataFrame([{"dataset": "a", "algorithm": "wavefront", "cores": 2, "load": {"busy": False},
                        "oversubscribed": False}])
    assert conditions_section(df) == []


def test_busy_oversubscribed_and_extrapolated_rows_are_named():
    df = pd.DataFrame([
        {"dataset": "a", "algorithm": "lite", "ranks": 8, "load": BUSY, "oversubscribed": True},
        {"dataset": "a", "algorithm": "lite", "ranks": 2, "load": {"busy": False}, "oversubscribed": False},
        {"dataset": "b", "algorithm": "coarse", "ranks": 64, "model_extrapolated": True, "model_law": "law X"},
    ])
    text = "\n".join(conditions_section(df, "ranks"))
    assert "## Measurement conditions" in text
    assert "Taken on a busy machine** (1 measured rows" in text and "a lite 8" in text and "1.90 cores" in text
    assert "Oversubscribed** (1 measured rows with more ranks" in text
    assert "Extrapolated model costs** (1 simulated rows at ranks 64" in text and "law X" in text


def test_figure_shades_from_the_first_extrapolated_count():
    rows = pd.DataFrame({"cores": [1, 2, 8, 64], "model_extrapolated": [False, False, True, True],
                         "model_law": [None, None, "law X", "law X"]})
    assert extrapolated_from(rows) == (8.0, "law X")
    fig, ax = plt.subplots()
    ax.plot([1, 64], [1, 2])
    shade_extrapolated(ax, rows)
    assert len(ax.patches) == 1 and "law X" in ax.patches[0].get_label() and not ax.texts
    plt.close(fig)
    assert extrapolated_from(rows.assign(model_extrapolated=False)) is None
