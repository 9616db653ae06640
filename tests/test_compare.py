"""`spbench compare` on constructed results folders, and its statistics on simulated sweeps."""
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.comparison.compare import compare
from spbench.comparison.statistics import (FDR, MIN_RUNS, adjusted_p_values, compare_point, geomean_interval,
                                        verdict)

POINTS = [(d, a, c) for d in ("lap2d-5pt", "Flan_1565") for a, c in
          (("serial", 1), ("wavefront", 2), ("growlocal", 2))]
#: spread of a point's run medians between runs (log scale) and of repetitions inside a run
RUN_SPREAD, REPEAT_SPREAD, REPEATS = 0.05, 0.1, 40


def _meta(host="vm", sweep=("algorithm", "cores"), name="t", load=None):
    meta = {"machine": {"host": host, "cpu": "Test CPU", "arch": "x86_64", "cores": 2},
            "config": {"name": name, "sweep": {a: [] for a in sweep}}}
    if load is not None:
        meta["load"] = load
    return meta


def write_folder(path, points=POINTS, scale=None, host="vm", runs=5, experiment="sptrsv", seed=0,
                 name="t", load=None):
    """A results folder: meta.json and one fragment per (point, run) with 40 lognormal repetitions
    around a run effect; ``scale`` maps an algorithm to the factor its repetitions are multiplied by."""
    rng = np.random.default_rng(seed)
    (path / "runs").mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps(_meta(host, name=name, load=load)))
    for i, (dataset, algorithm, cores) in enumerate(points):
        for run in range(runs):
            reps = (1e-3 * (1 + i) * rng.lognormal(0.0, RUN_SPREAD) * rng.lognormal(0.0, REPEAT_SPREAD, REPEATS)
                    * (scale or {}).get(algorithm, 1.0))
            row = {"experiment": experiment, "config": name, "dataset": dataset, "algorithm": algorithm,
                   "cores": cores, "kernel": "bsp", "execution": "measured", "status": "ok",
                   "repeat": run, "host": host, "git_sha": "abc", "solve_time": float(np.median(reps)),
                   "solve_times": reps.tolist(), "dataset_source": "synthetic"}
            (path / "runs" / f"{i}_{run}.json").write_text(json.dumps(row))
    return path


def invoke(*args):
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def test_one_run_a_side_is_inconclusive_and_nothing_is_written_without_out(tmp_path, monkeypatch):
    write_folder(tmp_path / "a", runs=1)
    write_folder(tmp_path / "b", runs=1, scale={"wavefront": 1.5}, seed=1)
    monkeypatch.chdir(tmp_path)
    res = invoke(tmp_path / "a", tmp_path / "b", "--fail")
    assert res.exit_code == 0, res.output
    assert "0 flagged (0 regression(s), 0 improvement(s)), 6 inconclusive, 0 unchanged" in res.output
    assert f"inconclusive: needs ≥ {MIN_RUNS} runs per side" in res.output
    assert "no interval" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no ./plots in the cwd
    c = compare(tmp_path / "a", tmp_path / "b")
    assert c.table["ci_low"].isna().all() and c.table["p_value"].isna().all()


def test_identical_sweeps_flag_nothing_and_out_gets_the_files(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b")
    res = invoke(tmp_path / "a", tmp_path / "b", "--fail", "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "0 flagged (0 regression(s), 0 improvement(s)), 0 inconclusive, 6 unchanged" in res.output
    assert "Benjamini–Hochberg over the 6 tested points at a false discovery rate of 5%" in res.output
    c = compare(tmp_path / "a", tmp_path / "b")
    assert np.allclose(c.table["ratio"], 1.0) and c.geomean[0] == pytest.approx(1.0)
    assert c.geomean[1] < 1 < c.geomean[2]
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"compare.md", "compare.csv", "compare.png",
                                                               "compare.pdf"}


@pytest.mark.parametrize("factor,expected", [(1.3, "regression"), (1 / 1.3, "improvement")])
def test_scaled_algorithm_is_flagged_with_its_sign(tmp_path, factor, expected):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", scale={"wavefront": factor}, seed=1)
    c = compare(tmp_path / "a", tmp_path / "b")
    flagged = c.table[c.table["flag"].isin(["regression", "improvement"])]
    assert set(flagged["algorithm"]) == {"wavefront"} and set(flagged["flag"]) == {expected}
    assert len(flagged) == 2 and (c.table["runs_new"] == 5).all()
    assert all(lo < factor < hi for lo, hi in zip(flagged["ci_low"], flagged["ci_high"]))
    assert (flagged["p_adjusted"] <= FDR).all() and (flagged["p_adjusted"] >= flagged["p_value"]).all()
    res = invoke(tmp_path / "a", tmp_path / "b", "--fail")
    assert res.exit_code == (1 if expected == "regression" else 0), res.output
    assert f"2 flagged ({2 * (expected == 'regression')} regression(s)" in res.output


def test_threshold_holds_back_a_change_not_shown_beyond_it(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", scale={"wavefront": 1.3}, seed=1)
    assert compare(tmp_path / "a", tmp_path / "b", threshold=0.35).regressions == 0
    assert compare(tmp_path / "a", tmp_path / "b", threshold=0.1).regressions == 2


def _simulated_runs(rng, points: int, runs: int, factors=None) -> np.ndarray:
    """points × runs medians of one simulated sweep, as compare summarises each stored run."""
    level = 1e-3 * np.arange(1, points + 1)[:, None] * (1 if factors is None else factors[:, None])
    reps = rng.lognormal(0.0, REPEAT_SPREAD, (points, runs, REPEATS))
    return level * rng.lognormal(0.0, RUN_SPREAD, (points, runs)) * np.median(reps, axis=-1)


def _flags(base: np.ndarray, new: np.ndarray, threshold=0.05) -> list[str]:
    tests = [compare_point(b, n, threshold) for b, n in zip(base, new)]
    return [verdict(t, p, FDR) for t, p in zip(tests, adjusted_p_values(tests))]


@pytest.mark.slow
@pytest.mark.parametrize("runs", [3, 5])
def test_a_a_sweeps_flag_nothing_in_95_percent_of_trials(runs):
    """Two independent sweeps of the same 24 points from the same distribution, at the defaults."""
    rng = np.random.default_rng(2024)
    trials = 250
    clean = sum(not {"regression", "improvement"} & set(_flags(_simulated_runs(rng, 24, runs),
                                                              _simulated_runs(rng, 24, runs)))
                for _ in range(trials))
    assert clean >= 0.95 * trials


@pytest.mark.slow
def test_a_1_3x_slow_down_of_one_algorithm_is_flagged():
    """Four of 24 points (one algorithm) 1.3x slower in NEW, runs: 5: the algorithm flagged in every
    trial, each of its points in >= 90% of them, and no other point flagged in >= 95% of trials."""
    rng = np.random.default_rng(7)
    factors = np.ones(24)
    factors[::6] = 1.3
    trials, slowed, found, clean = 200, [], 0, 0
    for _ in range(trials):
        flags = np.array(_flags(_simulated_runs(rng, 24, 5), _simulated_runs(rng, 24, 5, factors)))
        slowed.append((flags[factors > 1] == "regression").mean())
        found += bool((flags[factors > 1] == "regression").any())
        clean += bool((flags[factors == 1] == "unchanged").all())
    assert found == trials and np.mean(slowed) >= 0.9 and clean >= 0.95 * trials


def test_benjamini_hochberg_over_all_points():
    tests = [compare_point([1.0, 1.02], [1.2, 1.21], 0.0)] + \
        [compare_point([1.0, 1.02], [1.0, 1.02 + 0.01 * k], 0.0) for k in range(9)]
    p = np.array([t.p_value for t in tests])
    adjusted = adjusted_p_values(tests)
    order = np.argsort(p)
    expected = np.minimum.accumulate((p[order] * len(p) / np.arange(1, len(p) + 1))[::-1])[::-1]
    assert np.allclose(adjusted[order], np.minimum(expected, 1))
    assert np.isnan(adjusted_p_values([compare_point([1.0], [2.0, 2.1], 0.0)])).all()


def test_point_statistics_edges():
    one = compare_point([1.0], [2.0, 2.1], 0.05)
    assert not one.tested and one.ratio == pytest.approx(math.sqrt(4.2)) and math.isnan(one.low)
    assert verdict(one, float("nan"), FDR) == "inconclusive"
    same = compare_point([3.0, 3.0, 3.0], [3.0, 3.0], 0.05)  # a count: no spread at all
    assert (same.ratio, same.low, same.high, same.p_value) == (1.0, 1.0, 1.0, 1.0)
    moved = compare_point([3.0, 3.0], [4.0, 4.0], 0.05)
    assert moved.p_value == 0.0 and verdict(moved, 0.0, FDR) == "regression"
    assert verdict(moved, 0.0, FDR, higher_is_better=True) == "improvement"
    within = compare_point([3.0, 3.0], [3.1, 3.1], 0.05)  # exact, but inside the threshold band
    assert within.p_value == 1.0 and verdict(within, 1.0, FDR) == "unchanged"


def test_t_interval_covers_the_true_ratio():
    rng = np.random.default_rng(3)
    cover = 0
    for _ in range(400):
        t = compare_point(rng.lognormal(0, 0.1, 3), 1.2 * rng.lognormal(0, 0.1, 3), 0.05)
        cover += t.low < 1.2 < t.high
    assert 0.92 * 400 <= cover <= 0.98 * 400


def test_geomean_interval_covers_the_true_geomean():
    rng = np.random.default_rng(4)
    truth = np.array([0.8, 1.0, 1.3, 1.1])
    cover = 0
    for _ in range(300):
        tests = [compare_point(rng.lognormal(0, 0.1, 4), f * rng.lognormal(0, 0.1, 4), 0.05) for f in truth]
        _, low, high = geomean_interval(tests)
        cover += low < math.exp(np.log(truth).mean()) < high
    assert 0.92 * 300 <= cover <= 0.99 * 300
    assert math.isnan(geomean_interval([compare_point([1.0], [1.0, 1.1], 0.05)])[1])


def test_points_on_one_side_only_are_listed(tmp_path):
    write_folder(tmp_path / "a", points=POINTS[:4])
    write_folder(tmp_path / "b", points=POINTS[2:])
    c = compare(tmp_path / "a", tmp_path / "b")
    assert len(c.table) == 2
    assert [(k[1], k[3]) for k in c.only_base] == [("lap2d-5pt", "serial"), ("lap2d-5pt", "wavefront")]
    assert [(k[1], k[3]) for k in c.only_new] == [("Flan_1565", "growlocal"), ("Flan_1565", "wavefront")]
    res = invoke(tmp_path / "a", tmp_path / "b")
    assert "Points only in BASE (2" in res.output and "Points only in NEW (2" in res.output
    assert "- Flan_1565 (stand-in) execution=measured algorithm=wavefront cores=2" in res.output


def test_no_matched_point_is_one_line_exit_2(tmp_path):
    write_folder(tmp_path / "a", points=POINTS[:2], name="first")
    write_folder(tmp_path / "b", points=POINTS[3:], name="second")
    out = tmp_path / "out"
    res = invoke(tmp_path / "a", tmp_path / "b", "--out", out)
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "none of its 3 points (config second) matches one of the 2 of" in res.output
    assert not out.exists()


def test_machine_load_of_both_sides_and_a_busy_warning(tmp_path):
    quiet = {"loadavg_start": [0.31, 0.4, 0.5], "other_cpu_cores": 0.02, "steal_fraction": 0.0, "busy": False}
    busy = {"loadavg_start": [1.22, 1.32, 1.44], "other_cpu_cores": 1.15, "steal_fraction": 0.0167,
            "busy": True, "reason": "other processes used 1.15 cores"}
    write_folder(tmp_path / "a", load=quiet)
    write_folder(tmp_path / "b", load=busy)
    res = invoke(tmp_path / "a", tmp_path / "b")
    assert res.exit_code == 0, res.output
    assert "load average 0.31, other processes 0.02 cores, steal 0.0%, timing spread n/a: quiet" in res.output
    assert "load average 1.22, other processes 1.15 cores, steal 1.7%, timing spread n/a: BUSY (other " \
           "processes used 1.15 cores)" in res.output
    assert "Warning: NEW ran on a busy machine" in res.output
    write_folder(tmp_path / "c")
    res = invoke(tmp_path / "a", tmp_path / "c")
    assert "load not recorded" in res.output and "Warning" not in res.output


def test_different_hosts_are_refused_unless_asked(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", host="other")
    out = tmp_path / "out"
    res = invoke(tmp_path / "a", tmp_path / "b", "--out", out)
    assert res.exit_code == 2 and "--cross-machine" in res.output and not out.exists()
    assert len(res.output.strip().splitlines()) == 1
    res = invoke(tmp_path / "a", tmp_path / "b", "--cross-machine", "--out", out)
    assert res.exit_code == 0 and "Cross-machine comparison" in res.output


def test_stand_in_marked_in_the_table(tmp_path):
    write_folder(tmp_path / "a", runs=2)
    write_folder(tmp_path / "b", runs=2)
    datasets = set(compare(tmp_path / "a", tmp_path / "b").table["dataset"])
    assert datasets == {"Flan_1565 (stand-in)", "lap2d-5pt"}


@pytest.mark.parametrize("make_bad,expected", [
    (lambda p: p.mkdir(), "no runs/ folder"),
    (lambda p: (p / "runs").mkdir(parents=True), "no meta.json"),
    (lambda p: write_folder(p, experiment="tucker"), "experiment tucker; expected sptrsv"),
])
def test_bad_input_exits_2_naming_the_folder(tmp_path, make_bad, expected):
    write_folder(tmp_path / "a")
    make_bad(tmp_path / "bad")
    out = tmp_path / "out"
    res = invoke(tmp_path / "a", tmp_path / "bad", "--out", out)
    assert res.exit_code == 2 and expected in res.output and str(tmp_path / "bad") in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()


def test_unknown_metric_bad_fractions_and_an_unwritable_out(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b")
    res = invoke(tmp_path / "a", tmp_path / "b", "--metric", "hooi_time")
    assert res.exit_code == 2 and "hooi_time" in res.output and "solve_time" in res.output
    for option, value in (("--threshold", "x%"), ("--fdr", "0"), ("--fdr", "1.5")):
        res = invoke(tmp_path / "a", tmp_path / "b", option, value)
        assert res.exit_code == 2 and option in res.output and len(res.output.strip().splitlines()) == 1
    (tmp_path / "file").write_text("")
    res = invoke(tmp_path / "a", tmp_path / "b", "--out", tmp_path / "file" / "out")
    assert res.exit_code == 2 and "--out: " in res.output and "a file, not a folder" in res.output


def _tucker_folder(path, factor=1.0, host="vm"):
    (path / "runs").mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps(_meta(host, sweep=("algorithm", "ranks", "K"))))
    rng = np.random.default_rng(int(factor * 10))
    for alg in ("coarse", "lite"):
        for run in range(5):
            t = (2.0 if alg == "coarse" else 1.0) * rng.lognormal(0, 0.02) * (factor if alg == "lite" else 1.0)
            row = {"experiment": "tucker", "dataset": "enron", "dataset_source": "synthetic", "algorithm": alg,
                   "ranks": 4, "K": 10, "execution": "measured", "status": "ok", "repeat": run, "host": host,
                   "hooi_time": t, "dist_time": 0.01}
            (path / "runs" / f"{alg}{run}.json").write_text(json.dumps(row))


def test_tucker_hooi_time_over_runs(tmp_path):
    _tucker_folder(tmp_path / "a")
    _tucker_folder(tmp_path / "b", factor=1.5)
    c = compare(tmp_path / "a", tmp_path / "b")
    assert c.metric == "hooi_time" and list(c.table["algorithm"]) == ["coarse", "lite"]
    assert list(c.table["flag"]) == ["unchanged", "regression"] and (c.table["runs_new"] == 5).all()
    assert set(c.table["dataset"]) == {"enron (stand-in)"}
    same = compare(tmp_path / "a", tmp_path / "b", metric="dist_time").table
    assert same["ratio"].tolist() == [1.0, 1.0] and same["flag"].tolist() == ["unchanged", "unchanged"]


def test_figure_axis_spans_the_ratios_and_clipped_intervals_are_arrows(tmp_path, monkeypatch):
    """At 2 runs a side a t-interval can span 0.001-400: the figure's axis stays within a margin
    of the ratios and the threshold band, the interval ends beyond it are arrows at the edge, and
    the CSV keeps the whole intervals."""
    import pandas as pd

    from spbench.report import compare_figure

    table = pd.DataFrame({"dataset": ["a", "b", "c"], "algorithm": ["serial", "growlocal", "wavefront"],
                          "ratio": [0.9, 1.1, 1.02], "ci_low": [0.001, 0.95, math.nan],
                          "ci_high": [400.0, 1.2, math.nan], "flag": ["unchanged", "unchanged", "inconclusive"]})
    drawn = {}

    def keep(fig, out_dir, stem, points):
        ax = fig.axes[0]
        drawn["xlim"] = ax.get_xlim()
        drawn["arrows"] = sorted(line.get_marker() for line in ax.lines if line.get_marker() in ("<", ">")
                                 and len(line.get_xdata()))
        drawn["legend"] = [t.get_text() for t in fig.legends[0].get_texts()]
        points.to_csv(out_dir / f"{stem}.csv", index=False)
        return [out_dir / f"{stem}.csv"]

    monkeypatch.setattr(compare_figure, "save_figure", keep)
    compare_figure.ratio_figure(table, ["dataset", "algorithm"], 0.05, "t", tmp_path / "compare")
    lo, hi = drawn["xlim"]
    margin = compare_figure.AXIS_MARGIN * 1.05
    assert lo == pytest.approx(0.9 / margin) and hi == pytest.approx(1.1 * margin)
    assert drawn["arrows"] == ["<", ">"]
    assert any("beyond the axis (1;" in text for text in drawn["legend"])
    csv = pd.read_csv(tmp_path / "compare.csv")
    assert csv["ci_low"].iloc[0] == 0.001 and csv["ci_high"].iloc[0] == 400.0
    narrow = table.iloc[1:]
    assert compare_figure.axis_limits(narrow["ratio"].to_numpy(), narrow["ci_low"].to_numpy(),
                                      narrow["ci_high"].to_numpy(), 0.05) == pytest.approx((0.95 / 1.05, 1.2 * 1.05))


def test_figure_rows_use_the_papers_labels():
    import pandas as pd

    from spbench.report.compare_figure import point_label

    row = pd.Series({"experiment": "sptrsv", "dataset": "lap2d-5pt", "algorithm": "elastic_divide", "cores": 2})
    assert point_label(row, ["dataset", "algorithm", "cores"]) == "lap2d-5pt ElasticDivide (SSP) 2 cores"
    on_bsp = pd.Series({**row, "kernel": "bsp"})
    assert point_label(on_bsp, ["algorithm", "kernel", "cores"]) == "ElasticDivide (BSP) 2 cores"
    tucker = pd.Series({"experiment": "tucker", "dataset": "nell2", "algorithm": "lite", "ranks": 1, "K": 10})
    assert point_label(tucker, ["algorithm", "ranks", "K"]) == "Lite 1 rank K=10"
