"""Tucker profile with measured HOOI times: Figs. 10, 11, 14, 15, 16, the paper's columns only at
its P and K, titles that say what the rows are."""
import pandas as pd
import pytest

from spbench.report.report import write_profile
from spbench.tucker.report.paper import FIG15A_SPEEDUP, side_by_side
from spbench.tucker.report.provenance import rows_tag, size_phrase


def _rows(ranks_list=(1, 2, 4)):
    rows = []
    for ds in ("enron", "amazon"):
        for alg, base in (("coarse", 8.0), ("medium", 4.0), ("lite", 2.0)):
            for ranks in ranks_list:
                t = base / ranks ** (0.5 if alg == "coarse" else 1.0)
                rows.append({"experiment": "tucker", "config": "m", "dataset": ds, "dataset_source": "synthetic",
                             "algorithm": alg, "ranks": ranks, "K": 10, "status": "ok", "execution": "measured",
                             "repeat": 0, "hooi_time": t, "ttm_time": 0.6 * t, "svd_time": 0.3 * t,
                             "comm_time": 0.1 * t, "dist_time": 0.01, "nnz": 1000, "ttm_imbalance": 1.0,
                             "svd_redundancy": 1.1, "svd_imbalance": 1.2, "svd_volume": 10, "fm_volume": 20,
                             "mem_total_mb": 1.5, "mem_total_mb_max": 2.0, "mem_tensor_mb": 0.5,
                             "mem_penultimate_mb": 0.5, "mem_factor_mb": 0.5})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_measured_tucker_profile_has_paper_figures(tmp_path):
    written = {p.name for p in write_profile(_rows(), tmp_path)}
    for name in ("fig10_hooi_P4_K10.png", "fig11_breakup_P4_K10.csv", "fig14_big_P4_K10.md",
                 "fig16_dist_P4_K10.md", "fig15a_speedup_K10.md", "fig15b_lite_scaling_K10.png",
                 "fig17a_paper_P4_K10.md"):
        assert name in written, name
    speed = pd.read_csv(tmp_path / "fig15a_speedup_K10.csv")
    lite = speed.loc[speed["dataset"] == "enron (stand-in)", "Lite (this run, P=1→4)"].iloc[0]
    assert float(lite) == 4.0  # 2.0 s at 1 rank, 0.5 s at 4 ranks
    scaling = pd.read_csv(tmp_path / "fig15b_lite_scaling_K10.csv")
    assert (scaling["K"] == 10).all() and scaling["speedup"].max() == 4.0
    # the paper's values are at 32 → 512 ranks and 512 ranks, K = 10: not beside P = 1 → 4 or P = 4
    assert "paper" not in (tmp_path / "fig15a_speedup_K10.md").read_text()
    assert "paper" not in (tmp_path / "fig17a_paper_P4_K10.md").read_text()
    assert "paper" not in (tmp_path / "fig16_dist_P4_K10.md").read_text()
    assert "Lite (this run, P=4)" in (tmp_path / "fig17a_paper_P4_K10.md").read_text()
    report = (tmp_path / "REPORT.md").read_text()
    assert "Fig. 15" in report and "fig10_hooi_P4_K10.png" in report
    # Fig. 10 normalised per tensor by Lite (Lite = 1), Lite's seconds kept in the CSV
    fig10 = pd.read_csv(tmp_path / "fig10_hooi_P4_K10.csv").set_index("dataset")
    assert (fig10["Lite / Lite"] == 1.0).all() and fig10.loc["enron (stand-in)", "CoarseG / Lite"] == 8.0
    assert fig10.loc["enron (stand-in)", "Lite seconds"] == 0.5 and "normalised per tensor" in report
    # Fig. 11 stacks the partition: its segments add up to the HOOI time of each bar
    fig11 = pd.read_csv(tmp_path / "fig11_breakup_P4_K10.csv")
    sums = fig11.groupby(["dataset", "scheme"]).agg(seconds=("seconds", "sum"), hooi=("hooi_time", "first"))
    assert (sums["seconds"] - sums["hooi"]).abs().max() < 1e-12
    assert "fig12a_ttm_imbalance_P1_K10.png" not in written and "fig12a_ttm_imbalance_P2_K10.png" in written
    assert "not drawn at P = 1" in report


@pytest.mark.slow
def test_several_runs_give_intervals(tmp_path):
    rows = _rows()
    runs = pd.concat([rows.assign(repeat=r, hooi_time=rows["hooi_time"] * (1 + 0.05 * r)) for r in range(4)],
                     ignore_index=True)
    write_profile(runs, tmp_path)
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert (summary["hooi_time_ci_low"] <= summary["hooi_time"]).all()
    assert (summary["hooi_time"] <= summary["hooi_time_ci_high"]).all()
    assert (summary["hooi_time_ci_high"] > summary["hooi_time_ci_low"]).all()
    assert set(summary["dataset"]) == {"enron (stand-in)", "amazon (stand-in)"}
    points = pd.read_csv(tmp_path / "fig10_hooi_P4_K10.csv")
    assert "Lite ci_low seconds" in points.columns and points["Lite ci_low seconds"].notna().all()


@pytest.mark.slow
def test_paper_values_beside_this_run_at_its_ranks_and_K(tmp_path):
    """At 32 and 512 ranks, K = 10, the paper's Fig. 15(a) speed-ups and 512-rank tables stand beside
    this run's; the 32-rank tables stay without them."""
    write_profile(_rows((32, 512)), tmp_path)
    assert "13.5" in (tmp_path / "fig15a_speedup_K10.md").read_text()  # the paper's amazon Lite speed-up
    assert "Lite (paper, P=512)" in (tmp_path / "fig17a_paper_P512_K10.md").read_text()
    assert "paper" not in (tmp_path / "fig17a_paper_P32_K10.md").read_text()


@pytest.mark.parametrize("nnz, execution, expected", [
    (1_000, "measured", "measured, 2 stand-ins at 1/54000 to 1/1700000 of the paper's nonzeros"),
    ({"enron": 541_000, "amazon": 17_416_000}, "simulated", "simulated (cost model), 2 stand-ins at 1/100 of the "
                                                           "paper's nonzeros"),
    ({"enron": 54_202_099, "amazon": 1_741_809_018}, "simulated", "2 stand-ins at the paper's size"),
])
def test_titles_say_execution_data_and_size(nnz, execution, expected):
    rows = _rows().assign(execution=execution)
    if isinstance(nnz, dict):
        rows["nnz"] = rows["dataset"].map(nnz)
    assert rows_tag(rows).endswith(expected)
    assert rows_tag(rows.assign(dataset_source="real")) == f"{rows_tag(rows).split(',')[0]}, 2 real tensors"
    assert size_phrase([0.0101, 0.0099]) == "1/100 of the paper's nonzeros"
    assert rows_tag(rows.assign(config="m_small")).startswith(f"{EXECUTION_WORDS[execution]}, --scale small, 2 ")


EXECUTION_WORDS = {"measured": "measured", "simulated": "simulated (cost model)"}


def test_side_by_side_marks_missing_paper_values():
    ours = pd.DataFrame({"lite": [2.0], "hyper": [1.0]}, index=["amazon"])
    table = side_by_side(ours, FIG15A_SPEEDUP, "speedup")
    assert table.loc[0, "HyperG (paper)"] == "x" and table.loc[0, "Lite (paper)"] == "13.5"


@pytest.mark.slow
def test_tucker_report_shows_model_error(tmp_path):
    measured = _rows()
    simulated = measured.assign(execution="simulated", hooi_time=measured["hooi_time"] * 1.5)
    write_profile(pd.concat([measured, simulated], ignore_index=True), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert "Cost model against measurement" in report and "exceeds 30%" in report
    err = pd.read_csv(tmp_path / "model_error.csv")
    assert len(err) == 18 and (err["rel_error"].round(12) == 0.5).all()


def test_fig17_names_a_part_too_thin_to_see(tmp_path, monkeypatch):
    """At a small scale the tensor's share of a rank's memory is a sliver: its share is written
    under the bar (as Fig. 11 does for TTM); a visible part is not."""
    from spbench.tucker.report import figures as tucker_figures

    ticks = []

    def keep(fig, out_dir, stem, points):
        ticks.extend(t.get_text() for ax in fig.axes for t in ax.get_xticklabels())
        return []

    monkeypatch.setattr(tucker_figures, "save_figure", keep)
    rows = _rows((2,)).groupby(["dataset", "algorithm"], as_index=False).first()
    rows.loc[rows["dataset"] == "enron", "mem_tensor_mb"] = 0.001
    tucker_figures.fig17(rows, tmp_path, "P2_K10", "tag")
    assert sum("tensor 0.1%" in t for t in ticks) == 3
    assert sum("\ntensor" in t for t in ticks) == 3
