"""Rows carry schema_version; loading a row of another version is one line, not a KeyError; every row a
sweep writes has exactly the fields its experiment declares (common + its own), of the declared types."""
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import ResultStore, load_rows
from spbench.store.row_schema import SCHEMA_VERSION, RowSchemaError


def _folder(tmp_path, **row):
    """A folder holding one fragment as another spbench (or a hand) left it: written around the store,
    which writes only rows as this spbench declares them."""
    from spbench.store.atomic_files import write_json

    store = ResultStore(tmp_path / "sweep")
    write_json(store.fragment("a1"), {"run_id": "a1", "experiment": "sptrsv", "dataset": "d", "status": "ok", **row})
    return store


def test_current_rows_load(tmp_path):
    store = _folder(tmp_path, schema_version=SCHEMA_VERSION)
    df = load_rows(store.root)
    assert list(df["run_id"]) == ["a1"] and int(df["schema_version"][0]) == SCHEMA_VERSION


@pytest.mark.parametrize("extra, said", [({}, "no schema_version"), ({"schema_version": 0}, "schema_version 0")])
def test_old_row_is_explained_in_one_line(tmp_path, extra, said):
    store = _folder(tmp_path, **extra)
    with pytest.raises(RowSchemaError) as err:
        load_rows(store.root)
    message = str(err.value)
    assert "\n" not in message and said in message and "a1.json" in message and "rerun" in message


def test_profile_of_an_old_folder_says_why(tmp_path):
    store = _folder(tmp_path, schema_version=SCHEMA_VERSION + 1)
    res = CliRunner().invoke(main, ["profile", str(store.root), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 2 and f"schema_version {SCHEMA_VERSION + 1}" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "plots").exists()


def test_broken_fragment_is_one_line(tmp_path):
    store = _folder(tmp_path, schema_version=SCHEMA_VERSION)
    (store.runs / "b2.json").write_text("{half")
    with pytest.raises(RowSchemaError, match="b2.json: not a valid result fragment"):
        load_rows(store.root)
    assert json.loads((store.runs / "a1.json").read_text())["run_id"] == "a1"


SPTRSV = """
name: rows
experiment: sptrsv
execution: {execution}
costs: {costs}
datasets:
  - lap2d-5pt: {{grid: 12}}
sweep:
  algorithm: [serial, wavefront, hdagg, spmp, growlocal, elastic_divide]
  cores: [1, 2]
exclude:
  - {{algorithm: serial, execution: schedule}}
repeats: 2
"""

TUCKER = """
name: rows
experiment: tucker
execution: {execution}
fallback: standin
datasets:
  - nell2: {{nnz: 1500, standin: true}}
sweep:
  algorithm: [lite, medium]
  ranks: [1]
  K: [3]
repeats: 1
"""


def _stored_rows(out):
    return [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]


def _check_declared(rows):
    from spbench.experiment_registry import get_experiment
    from spbench.store.row_schema import declared_fields, row_problems

    assert rows
    for row in rows:
        problems = row_problems(row, declared_fields(get_experiment(row["experiment"])))
        assert not problems, f"{row['experiment']} {row['execution']} {row['algorithm']}: {problems}"


def _costs_file(tmp_path):
    from spbench.sptrsv.calibration.calibrate import KIND, SCHEMA_VERSION as COSTS_VERSION, save

    rates = {"t_row": 2e-9, "t_nnz": 1e-9, "t_chain": 0.0, "t_far": 0.0}
    sync = {"barrier": 1e-7, "barrier_omp": 2e-7, "weak_barrier": 5e-8, "p2p_dep": 2e-8}
    return save({"schema_version": COSTS_VERSION, "kind": KIND, "date": "2026-01-01T00:00:00+00:00",
                       "quick": True, "machine": {"host": "h", "cpu": "c", "cores": 2},
                       "serial": rates, "cores": {"1": {**rates, **sync}, "2": {**rates, **sync}}},
                      tmp_path / "costs.json")


@pytest.mark.parametrize("execution", ["measured", "schedule", "simulate"])
def test_sptrsv_rows_are_as_declared(write_config, tmp_path, execution):
    """Every field of every row a SpTrSV sweep writes is declared, with its type; none required is missing."""
    config = write_config(SPTRSV.format(execution=execution, costs=_costs_file(tmp_path)))
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = _stored_rows(tmp_path / "out")
    assert len(rows) == (10 if execution == "schedule" else 11)
    _check_declared(rows)


@pytest.mark.parametrize("execution", ["simulate", pytest.param("measured", marks=pytest.mark.mpi)])
def test_tucker_rows_are_as_declared(write_config, tmp_path, execution):
    if execution == "measured" and not (Path(sys.executable).parent / "mpiexec").exists():
        pytest.skip(f"no mpiexec beside {sys.executable}")
    config = write_config(TUCKER.format(execution=execution))
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = _stored_rows(tmp_path / "out")
    assert len(rows) == 2 and {r["status"] for r in rows} == {"ok"}
    assert all(("words_per_rank_max" in r) == (execution == "measured") for r in rows)  # the MPI job's figures
    _check_declared(rows)


def test_failed_rows_are_as_declared(write_config, tmp_path, monkeypatch):
    from spbench.sptrsv.experiment import SptrsvExperiment

    def broken(self, point, prepared, config):
        raise RuntimeError("kernel lost")

    monkeypatch.setattr(SptrsvExperiment, "run", broken)
    config = write_config(SPTRSV.format(execution="measured", costs=_costs_file(tmp_path)))
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 1
    rows = _stored_rows(tmp_path / "out")
    assert {r["status"] for r in rows} == {"error"}
    _check_declared(rows)


def test_a_row_off_its_declaration_is_caught():
    from spbench.experiment_registry import get_experiment
    from spbench.store.row_schema import declared_fields, row_problems

    fields = declared_fields(get_experiment("sptrsv"))
    assert "solve_time" in fields and "hooi_time" not in fields
    row = {name: None for name in fields}
    problems = row_problems({**row, "hooi_time": 1.0}, fields)
    assert "undeclared field 'hooi_time'" in problems
    assert "missing field 'run_id'" in row_problems({k: v for k, v in row.items() if k != "run_id"}, fields)
    assert any("'cores' = None" in p for p in problems) and not any("'error'" in p for p in problems)
    assert any("'repeat' = True" in p for p in row_problems({**row, "repeat": True}, fields))
