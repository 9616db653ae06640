"""Every kind of stored rows plugs in through the registry: the rows of `spbench bench` declare their
profile, compared metric, identity axes and fields (no executions, so a config naming them is one
line); `spbench compare` takes a folder's point axes from its kind when meta.json names none."""
import json

import pytest
from click.testing import CliRunner

from spbench.comparison import compare as compare_module
from spbench.cli import main
from spbench.comparison.compare import compare
from spbench.experiment_registry import EXPERIMENTS, ROW_KINDS, get_experiment, get_row_kind
from spbench.store.results import load_rows
from spbench.store.row_schema import row_problems


def test_every_experiment_is_a_row_kind_and_bench_runs_nothing():
    assert set(EXPERIMENTS) < set(ROW_KINDS)
    bench = get_row_kind("bench")
    assert bench.executions == () and bench.compare_metrics == ("time",)
    assert bench.identity_axes() == ("benchmark", "item")
    assert get_row_kind("sptrsv").identity_axes() == ("algorithm", "cores", "kernel")
    assert get_row_kind("tucker").identity_axes() == ("algorithm", "ranks", "K", "ttm")
    with pytest.raises(KeyError, match="names the rows `spbench bench NAME` writes, which no sweep runs"):
        get_experiment("bench")
    with pytest.raises(KeyError, match="rows of experiment 'nope'; expected one of sptrsv, tucker, bench"):
        get_row_kind("nope")


def test_compare_holds_no_axes_or_metrics_of_its_own():
    assert not hasattr(compare_module, "FALLBACK_AXES") and not hasattr(compare_module, "DEFAULT_METRICS")


def test_a_config_naming_bench_rows_is_one_line(write_config, tmp_path):
    config = write_config("""
        name: b
        experiment: bench
        datasets: [lap2d-5pt]
        sweep: {algorithm: [serial]}
        """)
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "key 'experiment': expected one of sptrsv, tucker, got 'bench' (the rows `spbench bench NAME` " \
           "writes: no sweep runs them)" in res.output
    assert not (tmp_path / "res").exists()


@pytest.fixture(scope="module")
def bench_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "serial"
    res = CliRunner().invoke(main, ["bench", "serial", "--grid", "10", "--repeats", "2", "--dram-mib", "1",
                                    "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


def test_bench_rows_have_their_declared_fields(bench_folder):
    fields = get_row_kind("bench").row_fields
    for row in load_rows(bench_folder).to_dict("records"):
        row = {k: v for k, v in row.items() if k in fields}
        assert row_problems(row, fields) == [] and row["item"] and row["benchmark"] == "serial"


def test_compare_matches_bench_rows_by_their_identity_axes(bench_folder, tmp_path):
    """meta.json without a config: the points are named by the kind's identity axes (benchmark, item)."""
    copies = []
    for name in ("a", "b"):
        folder = tmp_path / name
        (folder / "runs").mkdir(parents=True)
        for frag in (bench_folder / "runs").glob("*.json"):
            (folder / "runs" / frag.name).write_text(frag.read_text())
        meta = json.loads((bench_folder / "meta.json").read_text())
        meta.pop("config")
        (folder / "meta.json").write_text(json.dumps(meta))
        copies.append(folder)
    result = compare(*copies)
    assert result.metric == "time" and {"benchmark", "item"} <= set(result.table.columns)
    assert result.table["item"].is_unique and len(result.table) >= 2


def test_profile_of_rows_of_no_known_kind_is_refused(tmp_path):
    import pandas as pd

    from spbench.report.report import write_profile

    with pytest.raises(ValueError, match=r"rows of experiment\(s\) \['nope'\]; expected .* sptrsv, tucker, bench"):
        write_profile(pd.DataFrame([{"experiment": "nope"}]), tmp_path)
