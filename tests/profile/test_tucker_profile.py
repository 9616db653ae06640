"""Tucker profile with measured HOOI times: Figs. 10, 11, 14, 15, 16 and the paper's columns."""
import pandas as pd

from spbench.profile.report import write_profile
from spbench.profile.tucker_paper import FIG15A_SPEEDUP, side_by_side


def _rows():
    rows = []
    for ds in ("enron", "amazon"):
        for alg, base in (("coarse", 8.0), ("medium", 4.0), ("lite", 2.0)):
            for ranks in (1, 2, 4):
                t = base / ranks ** (0.5 if alg == "coarse" else 1.0)
                rows.append({"experiment": "tucker", "config": "m", "dataset": ds, "dataset_source": "synthetic",
                             "algorithm": alg, "ranks": ranks, "K": 10, "status": "ok", "execution": "measured",
                             "repeat": 0, "hooi_time": t, "ttm_time": 0.6 * t, "svd_time": 0.3 * t,
                             "comm_time": 0.1 * t, "dist_time": 0.01, "nnz": 1000, "ttm_imbalance": 1.0,
                             "svd_redundancy": 1.1, "svd_imbalance": 1.2, "svd_volume": 10, "fm_volume": 20,
                             "mem_total_mb": 1.5, "mem_total_mb_max": 2.0, "mem_tensor_mb": 0.5,
                             "mem_penultimate_mb": 0.5, "mem_factor_mb": 0.5})
    return pd.DataFrame(rows)


def test_measured_tucker_profile_has_paper_figures(tmp_path):
    written = {p.name for p in write_profile(_rows(), tmp_path)}
    for name in ("fig10_hooi_P4_K10.png", "fig11_breakup_P4_K10.csv", "fig14_big_P4_K10.md",
                 "fig16_dist_P4_K10.md", "fig15a_speedup.md", "fig15b_lite_scaling.png", "fig17a_paper_P4_K10.md"):
        assert name in written, name
    speed = pd.read_csv(tmp_path / "fig15a_speedup.csv")
    lite = speed.loc[speed["dataset"] == "enron (stand-in)", "Lite (this run, P=1→4)"].iloc[0]
    assert float(lite) == 4.0  # 2.0 s at 1 rank, 0.5 s at 4 ranks
    assert "13.5" in (tmp_path / "fig15a_speedup.md").read_text()  # the paper's amazon Lite speed-up
    report = (tmp_path / "REPORT.md").read_text()
    assert "Fig. 15" in report and "fig10_hooi_P4_K10.png" in report
    assert "Lite (paper, P=512)" in (tmp_path / "fig17a_paper_P4_K10.md").read_text()
    assert "Lite (this run, P=4)" in (tmp_path / "fig17a_paper_P4_K10.md").read_text()
    assert "fig12a_ttm_imbalance_P1_K10.png" not in written and "fig12a_ttm_imbalance_P2_K10.png" in written
    assert "not drawn at P = 1" in report


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
    assert "Lite ci_low" in points.columns and points["Lite ci_low"].notna().all()


def test_side_by_side_marks_missing_paper_values():
    ours = pd.DataFrame({"lite": [2.0], "hyper": [1.0]}, index=["amazon"])
    table = side_by_side(ours, FIG15A_SPEEDUP, "speedup")
    assert table.loc[0, "HyperG (paper)"] == "x" and table.loc[0, "Lite (paper)"] == "13.5"


def test_tucker_report_shows_model_error(tmp_path):
    measured = _rows()
    simulated = measured.assign(execution="simulated", hooi_time=measured["hooi_time"] * 1.5)
    write_profile(pd.concat([measured, simulated], ignore_index=True), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert "Cost model against measurement" in report and "exceeds 30%" in report
    err = pd.read_csv(tmp_path / "model_error.csv")
    assert len(err) == 18 and (err["rel_error"].round(12) == 0.5).all()
