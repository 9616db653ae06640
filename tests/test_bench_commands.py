"""`spbench bench …` at tiny sizes: rows through the results writer, append on rerun, --fresh, one-line
bad options with nothing written, and `spbench profile`/`spbench compare` of a bench folder."""
import json

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import load_rows

TINY = {
    "serial": ["--grid", "12", "--repeats", "2", "--dram-mib", "1"],
    "barrier": ["--grid", "12", "--cores", "1", "--repeats", "2", "--rounds", "2"],
    "schedulers": ["--grid", "12", "--cores", "1", "--repeats", "2", "--rounds", "1"],
    "slope": ["--grids", "8,12", "--trials", "1"],
    "order": ["--repeats", "2", "--rounds", "1", "--datasets", "lap2d-5pt[grid=8],lap3d-7pt[grid=4]"],
    "lite": ["--nnz", "2000", "--dims", "30,20,200", "--ranks", "3", "--repeats", "1"],
    "ttm": ["--cases", "3way", "--threads", "1", "--reps", "1"],
    "hooi": ["--cases", "3way", "--skip-pyttb", "--reps", "1"],
    "tucker-scale": ["--ranks", "1,2", "--schemes", "lite", "--dims", "20,24,60", "--nnz", "600"],
}
#: items each tiny run stores
ITEMS = {"serial": 4, "barrier": 2, "schedulers": 6, "slope": 5, "order": 8, "lite": 3, "ttm": 3, "hooi": 8,
         "tucker-scale": 2, "ingest": 3}


def bench(*args):
    return CliRunner().invoke(main, ["bench", *map(str, args)])


def tiny_tns(tmp_path):
    path = tmp_path / "t.tns"
    path.write_text("1 1 1 1.0\n2 1 3 2.0\n1 2 2 0.5\n3 3 1 1.5\n")
    return path


def args_of(name, tmp_path):
    return ["--file", tiny_tns(tmp_path), "--memory", "128MB"] if name == "ingest" else TINY[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", [*TINY, "ingest"])
def test_bench_writes_rows_prints_table_and_profiles(name, tmp_path):
    out = tmp_path / "r"
    res = bench(name, *args_of(name, tmp_path), "--out", out, "--quiet")
    assert res.exit_code == 0, res.output
    assert "|---" in res.stdout
    df = load_rows(out)
    assert len(df) == ITEMS[name]
    assert set(df["experiment"]) == {"bench"} and set(df["benchmark"]) == {name}
    assert set(df["schema_version"]) == {1} and set(df["repeat"]) == {0} and df["run_id"].is_unique
    assert set(df["status"]) <= {"ok", "skipped"}
    assert df["code_version"].notna().all() and df["dataset"].notna().all()
    assert not df.duplicated(["dataset", "item"]).any()
    for row in df.to_dict("records"):
        assert set(row["units"]) <= set(row), row["item"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["machine"]["cores"] >= 1 and meta["config"]["benchmark"] == name
    plots = tmp_path / "p"
    prof = CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)])
    assert prof.exit_code == 0, prof.output
    report = (plots / "r" / "REPORT.md").read_text()
    assert res.stdout.strip() in report and res.stdout.strip() in (plots / "r" / f"{name}.md").read_text()


def test_correctness_figures_are_stored(tmp_path):
    res = bench("schedulers", *TINY["schedulers"], "--out", tmp_path / "s", "-q")
    assert res.exit_code == 0, res.output
    df = load_rows(tmp_path / "s")
    assert (df["residual"] < 1e-12).all() and (df["units"].map(lambda u: u["time"]) == "s").all()
    res = bench("lite", *TINY["lite"], "--out", tmp_path / "l", "-q")
    lite = load_rows(tmp_path / "l").set_index("item").loc["lite"]
    assert min(lite["theorem_slack"].values()) >= 0 and lite["status"] == "ok"


def test_rerun_appends_a_repeat_and_fresh_starts_over(tmp_path):
    out = tmp_path / "r"
    for _ in range(2):
        assert bench("barrier", *TINY["barrier"], "--out", out, "-q").exit_code == 0
    df = load_rows(out)
    assert sorted(df["repeat"]) == [0, 0, 1, 1] and df["invocation"].nunique() == 2
    plots = tmp_path / "p"
    assert CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)]).exit_code == 0
    assert (plots / "r" / "barrier.md").read_text().count("| OpenMP / spin |") == 2
    assert bench("barrier", *TINY["barrier"], "--out", out, "-q", "--fresh").exit_code == 0
    assert sorted(load_rows(out)["repeat"]) == [0, 0]
    other = bench("barrier", "--grid", "10", "--cores", "1", "--repeats", "2", "--rounds", "1", "--out", out, "-q")
    assert other.exit_code == 0
    assert sorted(load_rows(out)["repeat"]) == [0, 0, 0, 0]  # other options: their own repeat count


def test_compare_matches_bench_rows_by_item(tmp_path):
    for side in ("a", "b"):
        assert bench("barrier", *TINY["barrier"], "--out", tmp_path / side, "-q").exit_code == 0
    res = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                    "--out", str(tmp_path / "cmp")])
    assert res.exit_code == 0, res.output
    table = (tmp_path / "cmp" / "compare.csv").read_text()
    assert "spin" in table and "omp" in table


BAD = [
    ("serial", ["--grid", "x"], "--grid"),
    ("serial", ["--grid", "1"], "--grid"),
    ("barrier", ["--cores", "4096"], "--cores"),
    ("slope", ["--grids", "5"], "--grids"),
    ("order", ["--datasets", "no_such_matrix"], "no_such_matrix"),
    ("lite", ["--dims", "a,b"], "--dims"),
    ("hooi", ["--cases", "5way"], "--cases"),
    ("ttm", ["--threads", "0"], "--threads"),
    ("tucker-scale", ["--schemes", "nope"], "--schemes"),
    ("ingest", ["--memory", "lots"], "--memory"),
    ("ingest", ["--file", "missing.tns"], "missing.tns"),
    ("schedulers", ["--nope"], "--nope"),
]


@pytest.mark.parametrize("name, args, named", BAD)
def test_bad_option_is_one_line_exit_2_nothing_written(name, args, named, tmp_path):
    out = tmp_path / "r"
    res = bench(name, *args, "--out", out)
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and named in res.output
    assert not out.exists()


def test_unknown_benchmark_is_one_line_exit_2():
    res = bench("no-such-bench")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "no-such-bench" in res.output
