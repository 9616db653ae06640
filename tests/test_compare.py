"""`spbench compare` on constructed results folders."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.compare import compare, flag

POINTS = [(d, a, c) for d in ("lap2d-5pt", "Flan_1565") for a, c in
          (("serial", 1), ("wavefront", 2), ("growlocal", 2))]


def _meta(host="vm", sweep=("algorithm", "cores")):
    return {"machine": {"host": host, "cpu": "Test CPU", "arch": "x86_64", "cores": 2},
            "config": {"sweep": {a: [] for a in sweep}}}


def write_folder(path, points=POINTS, scale=None, host="vm", runs=1, experiment="sptrsv", seed=0):
    """A results folder: meta.json and one fragment per (point, run) with 40 lognormal repetitions;
    ``scale`` maps an algorithm to the factor its repetitions are multiplied by."""
    rng = np.random.default_rng(seed)
    (path / "runs").mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps(_meta(host)))
    for i, (dataset, algorithm, cores) in enumerate(points):
        for run in range(runs):
            base = 1e-3 * (1 + i) * rng.lognormal(0.0, 0.1, 40) * (scale or {}).get(algorithm, 1.0)
            row = {"experiment": experiment, "config": "t", "dataset": dataset, "algorithm": algorithm,
                   "cores": cores, "kernel": "bsp", "execution": "measured", "status": "ok",
                   "repeat": run, "host": host, "git_sha": "abc", "solve_time": float(np.median(base)),
                   "solve_times": base.tolist(),
                   "dataset_source": "synthetic"}
            (path / "runs" / f"{i}_{run}.json").write_text(json.dumps(row))
    return path


def test_identical_folders_flag_nothing(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b")
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail",
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "one run on a side" in res.output  # repetitions of one run do not cover sweep-to-sweep drift
    c = compare(tmp_path / "a", tmp_path / "b")
    assert len(c.table) == len(POINTS) and not c.table["flag"].any()
    assert np.allclose(c.table["ratio"], 1.0) and c.geomean[0] == pytest.approx(1.0)
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"compare.md", "compare.csv", "compare.png",
                                                               "compare.pdf"}


@pytest.mark.parametrize("factor,expected", [(1.5, "regression"), (1 / 1.5, "improvement")])
def test_scaled_algorithm_is_flagged_with_its_sign(tmp_path, factor, expected):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", scale={"wavefront": factor}, seed=1)
    c = compare(tmp_path / "a", tmp_path / "b")
    flagged = c.table[c.table["flag"] != ""]
    assert set(flagged["algorithm"]) == {"wavefront"} and set(flagged["flag"]) == {expected}
    assert len(flagged) == 2
    assert all(lo < factor < hi for lo, hi in zip(flagged["ci_low"], flagged["ci_high"]))
    assert (flagged["p_value"] < 1e-6).all()
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail",
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == (1 if expected == "regression" else 0), res.output
    assert expected in res.output


def test_threshold_holds_back_a_small_real_change(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", scale={"wavefront": 1.5})
    assert compare(tmp_path / "a", tmp_path / "b", threshold=0.6).regressions == 0
    assert compare(tmp_path / "a", tmp_path / "b", threshold=0.4).regressions == 2


def test_points_on_one_side_only_are_listed(tmp_path):
    write_folder(tmp_path / "a", points=POINTS[:4])
    write_folder(tmp_path / "b", points=POINTS[2:])
    c = compare(tmp_path / "a", tmp_path / "b")
    assert len(c.table) == 2
    assert [(k[1], k[3]) for k in c.only_base] == [("lap2d-5pt", "serial"), ("lap2d-5pt", "wavefront")]
    assert [(k[1], k[3]) for k in c.only_new] == [("Flan_1565", "growlocal"), ("Flan_1565", "wavefront")]
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                    "--out", str(tmp_path / "out")])
    assert "Points only in BASE (2" in res.output and "Points only in NEW (2" in res.output
    assert "- Flan_1565 (stand-in) execution=measured algorithm=wavefront cores=2" in res.output


def test_different_hosts_are_refused_unless_asked(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b", host="other")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)])
    assert res.exit_code == 2 and "--cross-machine" in res.output and not out.exists()
    assert len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--cross-machine",
                                    "--out", str(out)])
    assert res.exit_code == 0 and "Cross-machine comparison" in res.output


def test_stand_in_marked_in_the_table(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b")
    datasets = set(compare(tmp_path / "a", tmp_path / "b").table["dataset"])
    assert datasets == {"Flan_1565 (stand-in)", "lap2d-5pt"}


def test_several_runs_are_the_samples(tmp_path):
    write_folder(tmp_path / "a", runs=4)
    write_folder(tmp_path / "b", runs=4, scale={"growlocal": 2.0}, seed=3)
    c = compare(tmp_path / "a", tmp_path / "b")
    assert (c.table["n_base"] == 4).all() and (c.table["n_new"] == 4).all() and c.fewest_runs == 4
    grow = c.table[c.table["algorithm"] == "growlocal"]
    assert (grow["ratio"] > 1.6).all() and (grow["ci_low"] > 1.0).all()


@pytest.mark.parametrize("make_bad,expected", [
    (lambda p: p.mkdir(), "no runs/ folder"),
    (lambda p: (p / "runs").mkdir(parents=True), "no meta.json"),
    (lambda p: write_folder(p, experiment="tucker"), "experiment tucker; expected sptrsv"),
])
def test_bad_input_exits_2_naming_the_folder(tmp_path, make_bad, expected):
    write_folder(tmp_path / "a")
    make_bad(tmp_path / "bad")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "bad"), "--out", str(out)])
    assert res.exit_code == 2 and expected in res.output and str(tmp_path / "bad") in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()


def test_unknown_metric_and_bad_threshold(tmp_path):
    write_folder(tmp_path / "a")
    write_folder(tmp_path / "b")
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--metric", "hooi_time"])
    assert res.exit_code == 2 and "hooi_time" in res.output and "solve_time" in res.output
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--threshold", "x%"])
    assert res.exit_code == 2 and "--threshold" in res.output


def test_flag_rule():
    assert flag(1.2, 1.1, 1.3, 0.05) == "regression"
    assert flag(1.2, 0.9, 1.3, 0.05) == ""           # interval holds 1
    assert flag(1.03, 1.01, 1.05, 0.05) == ""        # below the threshold
    assert flag(0.8, 0.7, 0.9, 0.05) == "improvement"
    assert flag(0.8, 0.7, 0.9, 0.05, higher_is_better=True) == "regression"
    assert flag(1.5, float("nan"), float("nan"), 0.05) == ""


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
    assert list(c.table["flag"]) == ["", "regression"] and (c.table["n_new"] == 5).all()
    assert set(c.table["dataset"]) == {"enron (stand-in)"}
    assert compare(tmp_path / "a", tmp_path / "b", metric="dist_time").table["ratio"].tolist() == [1.0, 1.0]
