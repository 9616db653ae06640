"""Rows carry schema_version; loading a row of another version is one line, not a KeyError."""
import json

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.results import ResultStore, load_rows
from spbench.row_schema import SCHEMA_VERSION, RowSchemaError


def _folder(tmp_path, **row):
    store = ResultStore(tmp_path / "sweep")
    store.write_row({"run_id": "a1", "experiment": "sptrsv", "dataset": "d", "status": "ok", **row})
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
