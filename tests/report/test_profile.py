"""spbench.report: performance profile (Figure 5.1), speed-up (Figure 6.1), tables, report."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from spbench.sptrsv.report.figures import performance_profile_figure, speedup_vs_cores
from spbench.report.perfprofile import DEFAULT_TAUS, performance_profile
from spbench.report.rows import run_times
from spbench.report.report import write_profile
from spbench.report.tables import format_markdown, write_table
from spbench.sptrsv.report.summary import sptrsv_summary

# Ratios to the best time per (dataset, cores) instance, cores >= 2, from conftest.TIMES:
#   instance   wavefront  growlocal
#   (A, 2)     1          1          (tie)
#   (B, 2)     2          1
#   (C, 2)     4/3        1
#   (A, 4)     1          2
#   (B, 4)     1.25       1
#   (C, 4)     2          1


def at(profile: pd.DataFrame, algorithm: str, tau: float) -> float:
    """Fraction of ``algorithm`` at the grid point nearest ``tau``."""
    curve = profile[profile["algorithm"] == algorithm]
    i = int(np.argmin(np.abs(curve["tau"].to_numpy() - tau)))
    return float(curve["fraction"].iloc[i])


def test_profile_by_hand(rows):
    profile = performance_profile(rows)
    assert list(profile.columns) == ["tau", "algorithm", "fraction"]
    assert set(profile["algorithm"]) == {"wavefront", "growlocal"}
    assert len(profile) == 2 * len(DEFAULT_TAUS)
    assert profile["tau"].min() == 1.0 and profile["tau"].max() == 3.0
    assert at(profile, "wavefront", 1.0) == pytest.approx(2 / 6)
    assert at(profile, "growlocal", 1.0) == pytest.approx(5 / 6)
    assert at(profile, "wavefront", 1.3) == pytest.approx(3 / 6)
    assert at(profile, "wavefront", 1.5) == pytest.approx(4 / 6)
    assert at(profile, "wavefront", 2.0) == pytest.approx(1.0)
    assert at(profile, "growlocal", 2.0) == pytest.approx(1.0)
    for _, curve in profile.groupby("algorithm"):
        assert np.all(np.diff(curve["fraction"].to_numpy()) >= 0)


def test_profile_serial_and_single_core_only_on_request(rows):
    profile = performance_profile(rows, taus=[1.0, 3.0], exclude=(), min_cores=1)
    assert set(profile["algorithm"]) == {"serial", "wavefront", "growlocal"}
    # 9 instances: serial is best on A, B, C at 1 core and nowhere else.
    assert at(profile, "serial", 1.0) == pytest.approx(3 / 9)
    assert at(profile, "serial", 3.0) == pytest.approx(3 / 9)


def test_missing_run_counts_as_failure(rows):
    drop = (rows["algorithm"] == "growlocal") & (rows["dataset"] == "C") & (rows["cores"] == 4)
    profile = performance_profile(rows[~drop])
    assert at(profile, "growlocal", 3.0) == pytest.approx(5 / 6)
    # (C, 4) stays an instance: wavefront is now best there.
    assert at(profile, "wavefront", 1.0) == pytest.approx(3 / 6)


def test_failed_rows_are_left_out(rows, make_row):
    bad = pd.DataFrame([
        make_row("A", "wavefront", 2, 0.001, status="error"),
        make_row("B", "growlocal", 4, float("nan"), status="timeout"),
        make_row("C", "wavefront", 4, 0.001, status="invalid"),
        make_row("A", "spmp", 2, 0.001, status="skipped"),
    ])
    profile = performance_profile(pd.concat([rows, bad], ignore_index=True))
    reference = performance_profile(rows)
    both = profile[profile["algorithm"] != "spmp"].reset_index(drop=True)
    pd.testing.assert_frame_equal(both, reference)
    assert (profile.loc[profile["algorithm"] == "spmp", "fraction"] == 0).all()


def test_repeats_reduced_by_median(rows, make_row):
    extra = pd.DataFrame([make_row("B", "wavefront", 2, 100.0, repeat=1),
                          make_row("B", "wavefront", 2, 0.9, repeat=2)])
    times = run_times(pd.concat([rows, extra], ignore_index=True))
    pick = times.set_index(["dataset", "cores", "algorithm"]).loc[("B", 2, "wavefront")]
    assert pick["solve_time"] == 1.0


def test_kernels_of_one_algorithm_are_separate_curves(rows, make_row):
    ssp = pd.DataFrame([make_row(d, "growlocal", c, 0.1, kernel="ssp")
                        for d in "ABC" for c in (2, 4)])
    profile = performance_profile(pd.concat([rows, ssp], ignore_index=True))
    assert set(profile["algorithm"]) == {"wavefront", "growlocal/bsp", "growlocal/ssp"}
    assert at(profile, "growlocal/ssp", 1.0) == 1.0


@pytest.mark.slow
def test_mixed_executions_are_not_pooled(make_rows, tmp_path):
    mixed = pd.DataFrame(make_rows("measured") + make_rows("simulated"))
    with pytest.raises(ValueError, match="mix executions"):
        performance_profile(mixed)
    paths = speedup_vs_cores(mixed, tmp_path) + performance_profile_figure(mixed, tmp_path)
    names = {p.name for p in paths}
    for stem in ("speedup", "perfprofile"):
        for kind in ("measured", "simulated"):
            assert {f"{stem}_{kind}.{ext}" for ext in ("png", "pdf", "csv")} <= names
    for kind in ("measured", "simulated"):
        assert set(pd.read_csv(tmp_path / f"speedup_{kind}.csv")["execution"]) == {kind}
    assert not (tmp_path / "speedup.png").exists()


def test_speedup_csv_matches_hand_computation(rows, tmp_path):
    paths = speedup_vs_cores(rows, tmp_path)
    assert sorted(p.name for p in paths) == ["speedup.csv", "speedup.pdf", "speedup.png"]
    points = pd.read_csv(tmp_path / "speedup.csv").set_index(["algorithm", "cores"])
    assert list(points.columns) == ["execution", "label", "datasets", "speedup_geomean",
                                    "speedup_p25", "speedup_p75", "speedup_ci_low", "speedup_ci_high"]
    assert (points["speedup_ci_low"] <= points["speedup_geomean"]).all()
    assert (points["speedup_geomean"] <= points["speedup_ci_high"]).all()
    # wavefront: speed-ups at 2 cores A 2, B 2, C 1; at 4 cores A 4, B 2, C 2.
    w2, w4 = points.loc[("wavefront", 2)], points.loc[("wavefront", 4)]
    assert w2["speedup_geomean"] == pytest.approx(4 ** (1 / 3))
    assert (w2["speedup_p25"], w2["speedup_p75"]) == pytest.approx((1.5, 2.0))
    assert w4["speedup_geomean"] == pytest.approx(16 ** (1 / 3))
    assert (w4["speedup_p25"], w4["speedup_p75"]) == pytest.approx((2.0, 3.0))
    # growlocal at 4 cores: A 2, B 2.5, C 4.
    g4 = points.loc[("growlocal", 4)]
    assert g4["speedup_geomean"] == pytest.approx(20 ** (1 / 3))
    assert g4["datasets"] == 3
    # 1-core runs of the parallel algorithms are points too: wavefront A 1/1.2 ...
    assert points.loc[("wavefront", 1), "speedup_geomean"] == pytest.approx(1 / 1.2)
    assert "serial" not in points.index.get_level_values("algorithm")


def test_speedup_band_is_a_parameter(rows, tmp_path):
    speedup_vs_cores(rows, tmp_path, band=(10, 90))
    points = pd.read_csv(tmp_path / "speedup.csv")
    row = points[(points["algorithm"] == "wavefront") & (points["cores"] == 4)].iloc[0]
    assert (row["speedup_p10"], row["speedup_p90"]) == pytest.approx((2.0, 3.6))
    with pytest.raises(ValueError, match="band"):
        speedup_vs_cores(rows, tmp_path, band=(75, 25))


def test_no_serial_baseline_warns_and_skips(rows, tmp_path):
    with pytest.warns(UserWarning, match="no serial baseline"):
        assert speedup_vs_cores(rows[rows["algorithm"] != "serial"], tmp_path) == []
    assert not any(tmp_path.iterdir())


def test_profile_figure_csv_is_the_profile(rows, tmp_path):
    paths = performance_profile_figure(rows, tmp_path)
    assert sorted(p.name for p in paths) == [f"perfprofile.{e}" for e in ("csv", "pdf", "png")]
    plotted = pd.read_csv(tmp_path / "perfprofile.csv")
    expected = performance_profile(rows)
    assert (plotted["execution"] == "measured").all()
    np.testing.assert_allclose(plotted["fraction"], expected["fraction"])
    assert all(p.stat().st_size > 0 for p in paths)


def test_summary_values(rows, make_row):
    extra = pd.DataFrame([make_row("A", "wavefront", 2, 9.0, status="error")])
    summary = sptrsv_summary(pd.concat([rows, extra], ignore_index=True))
    assert list(summary.columns[:5]) == ["dataset", "algorithm", "kernel", "cores", "execution"]
    assert len(summary) == 3 + 3 * 6
    a2 = summary[(summary["dataset"] == "A") & (summary["algorithm"] == "wavefront")
                 & (summary["cores"] == 2)].iloc[0]
    assert a2["solve_ms"] == pytest.approx(500.0)
    assert a2["speedup"] == pytest.approx(2.0)
    assert a2["schedule_ms"] == pytest.approx(2.0)
    assert (a2["ok"], a2["error"], a2["timeout"]) == (1, 1, 0)
    assert (a2["n"], a2["nnz"], a2["wavefronts"], a2["supersteps"]) == (100, 400, 10, 5)
    serial = summary[summary["algorithm"] == "serial"]
    assert serial["speedup"].tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_markdown_table(tmp_path):
    df = pd.DataFrame({"name": ["a|b", "c"], "value": [1.23456, float("nan")], "k": [3, 40000]})
    text = format_markdown(df)
    assert text.splitlines() == ["| name | value | k |", "| :--- | ---: | ---: |",
                                 "| a\\|b | 1.235 | 3 |", "| c |  | 40000 |"]
    paths = write_table(df, tmp_path / "t")
    assert [p.name for p in paths] == ["t.md", "t.csv"]
    assert (tmp_path / "t.md").read_text() == text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_write_profile(rows, make_row, tmp_path):
    failed = pd.DataFrame([make_row("A", "growlocal", 4, float("nan"), status="timeout"),
                           make_row("B", "wavefront", 2, 0.5, status="error")])
    out = tmp_path / "profile"
    paths = write_profile(pd.concat([rows, failed], ignore_index=True), out)
    figures = {f"{s}.{e}" for e in ("png", "pdf", "csv")
               for s in ("speedup", "perfprofile", "speedup_p10_p90", "scheduling_time")}
    tables = {f"{s}.{e}" for s in ("table_6_1", "table_6_3", "scheduling_time_slopes")
              for e in ("md", "csv")}  # no table_6_2 without ssp rows (test_sptrsv_tables.py)
    assert {p.name for p in paths} == {"summary.md", "summary.csv", "REPORT.md", *figures, *tables,
                                       "amortisation_per_matrix.csv"}
    assert all(p.exists() and p.parent == out for p in paths)
    report = (out / "REPORT.md").read_text()
    assert "](speedup.png)" in report and "](perfprofile.png)" in report
    assert "measured: 23 rows, 21 with status ok" in report
    assert "2 rows left out" in report and "error 1, timeout 1" in report
    assert "| dataset |" in report
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_write_profile_serial_only(rows, tmp_path):
    paths = write_profile(rows[rows["algorithm"] == "serial"], tmp_path)
    assert sorted(p.name for p in paths) == ["REPORT.md", "summary.csv", "summary.md"]
    assert "no figures" in (tmp_path / "REPORT.md").read_text()


def test_write_profile_rejects_bad_input(rows, tmp_path):
    with pytest.raises(ValueError, match="empty"):
        write_profile(rows.iloc[0:0], tmp_path)
    two = rows.copy()
    two.loc[0, "config"] = "other"
    with pytest.raises(ValueError, match="several sweeps"):
        write_profile(two, tmp_path)
    with pytest.raises(ValueError, match="solve_time"):
        write_profile(rows.drop(columns=["solve_time"]), tmp_path)


def test_geomean_is_not_arithmetic_mean(rows, tmp_path):
    speedup_vs_cores(rows, tmp_path)
    points = pd.read_csv(tmp_path / "speedup.csv")
    w4 = points[(points["algorithm"] == "wavefront") & (points["cores"] == 4)].iloc[0]
    assert not math.isclose(w4["speedup_geomean"], (4 + 2 + 2) / 3)


@pytest.mark.slow
def test_labels_do_not_depend_on_failures(rows, make_row, tmp_path):
    failed_ssp = pd.DataFrame([make_row("A", "growlocal", 2, float("nan"), status="error",
                                        kernel="ssp")])
    frame = pd.concat([rows, failed_ssp])  # duplicate index labels on purpose
    profile = performance_profile(frame)
    assert set(profile["algorithm"]) == {"wavefront", "growlocal/bsp", "growlocal/ssp"}
    assert at(profile, "growlocal/bsp", 1.0) == pytest.approx(5 / 6)
    assert (profile.loc[profile["algorithm"] == "growlocal/ssp", "fraction"] == 0).all()
    paths = write_profile(frame, tmp_path)
    assert (tmp_path / "perfprofile.png") in paths


@pytest.mark.slow
def test_one_core_speedup_is_explained(rows, make_row, tmp_path):
    fast = [make_row(d, "spmp", 1, t / 1.6) for d, t in (("A", 1.0), ("B", 2.0), ("C", 4.0))]
    write_profile(pd.concat([rows, pd.DataFrame(fast)], ignore_index=True), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    section = report.split("## Why some schedules beat serial at one core", 1)[1].split("\n## ", 1)[0]
    assert "At 1 core, spmp run faster" in section and "make bench-order" in section
    assert "| spmp | 3 | 1.6 |" in section
    write_profile(rows, tmp_path / "slow")  # wavefront and growlocal are slower than serial at 1 core
    assert "beat serial at one core" not in (tmp_path / "slow" / "REPORT.md").read_text()
