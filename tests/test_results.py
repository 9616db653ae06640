"""The one row store every writer uses (sweeps, the MPI worker, `spbench bench`): rows checked against
their kind's declared fields before anything is written, a stored row read back and stored again, the next repeat
of a benchmark, meta.json recorded under its lock by one function, and the one run id."""
import json

import pytest

from spbench.store.results import InvalidRow, ResultStore
from spbench.store.row_builder import build_row
from spbench.store.row_schema import SCHEMA_VERSION
from spbench.pipeline.sweep import run_id


def _tucker_row(**over) -> dict:
    """A row a Tucker sweep could store: the common fields and the experiment's required ones."""
    row = {"run_id": "r1", "schema_version": SCHEMA_VERSION, "experiment": "tucker", "config": "c", "dataset": "d",
           "dataset_source": "synthetic", "dataset_checksum": "abc", "repeat": 0, "status": "ok",
           "execution": "measured", "started_at": "2026-01-01T00:00:00+00:00", "code_version": "v", "git_sha": None,
           "git_dirty": None, "host": "h", "shard": None, "slurm_job_id": None, "slurm_array_job_id": None,
           "slurm_array_task_id": None, "algorithm": "lite", "params": {}, "ranks": 2, "K": 3}
    return {**row, **over}


def test_a_declared_row_is_stored_atomically(tmp_path):
    store = ResultStore(tmp_path / "res")
    path = store.write_row(_tucker_row(fit=0.5))
    assert path == store.fragment("r1") == tmp_path / "res" / "runs" / "r1.json"
    assert json.loads(path.read_text())["fit"] == 0.5
    assert [p.name for p in store.runs.iterdir()] == ["r1.json"]  # no temp file left
    assert [r["run_id"] for r in store.rows()] == ["r1"]


@pytest.mark.parametrize("over, said", [
    ({"hooi_tme": 1.0}, "undeclared field 'hooi_tme'"),
    ({"ranks": "2"}, "field 'ranks' = '2' is not of the declared types"),
    ({"schema_version": SCHEMA_VERSION + 1}, f"schema_version {SCHEMA_VERSION + 1}"),
    ({"experiment": "nope"}, "rows of experiment 'nope'"),
])
def test_a_row_off_its_declaration_is_not_written(tmp_path, over, said):
    store = ResultStore(tmp_path / "res")
    with pytest.raises(InvalidRow) as err:
        store.write_row(_tucker_row(**over))
    message = str(err.value)
    assert said in message and "r1.json" in message and "\n" not in message
    assert not store.fragment("r1").exists()


def test_a_missing_field_is_named(tmp_path):
    row = _tucker_row()
    del row["K"]
    with pytest.raises(InvalidRow, match="missing field 'K'"):
        ResultStore(tmp_path / "res").write_row(row)


def test_a_scratch_store_writes_rows_unchecked(tmp_path):
    """The MPI worker's rows behind a calibration or a benchmark item are no sweep's results."""
    store = ResultStore(tmp_path / "scratch", checked=False)
    store.write_row({"run_id": "t0", "status": "ok"})
    assert json.loads(store.fragment("t0").read_text()) == {"run_id": "t0", "status": "ok"}


def test_a_stored_row_read_back_takes_figures_known_later(tmp_path):
    """An MPI job's row, read back by the sweep and stored again with the job's load (checked)."""
    store = ResultStore(tmp_path / "res")
    store.write_row(_tucker_row(fit=0.5))
    row = build_row(store.stored_row("r1"), {"load": {"load1": 0.1}})
    store.write_row(row)
    stored = json.loads(store.fragment("r1").read_text())
    assert stored == row and stored["load"] == {"load1": 0.1} and stored["fit"] == 0.5
    with pytest.raises(InvalidRow, match="undeclared field 'nope'"):
        store.write_row(build_row(store.stored_row("r1"), {"nope": 1}))
    assert "nope" not in json.loads(store.fragment("r1").read_text())


def _bench_row(repeat: int, rid: str, options: dict) -> dict:
    return {"run_id": rid, "schema_version": SCHEMA_VERSION, "experiment": "bench", "benchmark": "serial",
            "config": "bench-serial", "execution": "measured", "dataset_source": "synthetic", "repeat": repeat,
            "invocation": "i", "item_index": 0, "status": "ok", "error": None, "started_at": "t", "git_sha": None,
            "git_dirty": None, "host": "h", "omp_threads": None, "code_version": "v", "params": options,
            "item": "a", "dataset": "d", "time": 1.0, "units": {"time": "s"}}


def test_next_repeat_counts_the_matching_rows(tmp_path):
    """Options are matched as stored: a tuple given equals the JSON list in the row."""
    store = ResultStore(tmp_path / "res")
    assert store.next_repeat(benchmark="serial", params={"sizes": (1, 2)}, code_version="v") == 0
    store.write_row(_bench_row(0, "b0", {"sizes": [1, 2]}))
    store.write_row(_bench_row(1, "b1", {"sizes": [1, 2]}))
    store.write_row(_bench_row(4, "b4", {"sizes": [3]}))
    assert store.next_repeat(benchmark="serial", params={"sizes": (1, 2)}, code_version="v") == 2
    assert store.next_repeat(benchmark="serial", params={"sizes": [1, 2]}, code_version="w") == 0
    (store.runs / "broken.json").write_text("{half")  # a fragment holding no row is no repeat
    assert store.next_repeat(benchmark="serial", params={"sizes": [3]}, code_version="v") == 5


def test_a_bench_row_is_checked_but_its_figures_are_its_own(tmp_path):
    store = ResultStore(tmp_path / "res")
    store.write_row({**_bench_row(0, "b0", {}), "bandwidth": 3.0, "kernel": "csr"})
    with pytest.raises(InvalidRow, match="missing field 'item'"):
        store.write_row({k: v for k, v in _bench_row(0, "b1", {}).items() if k != "item"})


def test_record_writer_makes_meta_then_keeps_what_was_first(tmp_path, monkeypatch):
    from spbench.machine import facts as machine

    store = ResultStore(tmp_path / "res")
    facts = {"host": "a", "cpu": "c", "cores": 2}
    monkeypatch.setattr(machine, "machine_facts", lambda with_mpi=True: dict(facts))
    assert store.record_writer("s", {"v": 1}, created={"config_file": "one.yaml"}) is None
    meta = store.read_meta()
    assert meta["sweep"] == "s" and meta["machine"] == facts and meta["config"] == {"v": 1}
    assert meta["config_file"] == "one.yaml" and meta["created_at"] <= meta["updated_at"]
    facts["host"] = "b"
    other = store.record_writer("s2", {"v": 2}, created={"config_file": "two.yaml"}, fields={"calibration": {"x": 1}},
                                appended={"slurm_jobs": {"slurm_job_id": "7"}})
    meta = store.read_meta()
    assert other["host"] == "a" and meta["machine"]["host"] == "a"          # the first machine stays
    assert [m["machine"]["host"] for m in meta["other_machines"]] == ["b"]  # the other one is listed
    assert meta["sweep"] == "s" and meta["config_file"] == "one.yaml" and meta["config"] == {"v": 2}
    assert meta["calibration"] == {"x": 1} and meta["slurm_jobs"][0]["slurm_job_id"] == "7"
    assert "at" in meta["slurm_jobs"][0]
    store.update_meta(load={"load1": 0.2})
    assert store.read_meta()["load"] == {"load1": 0.2} and store.read_meta()["config"] == {"v": 2}


def test_bench_run_ids_keep_their_identity():
    """A benchmark item's id hashes no data set checksum: the ids of rows stored before the one run-id
    function still match (resume and compare of older bench folders)."""
    identity = {"benchmark": "serial", "item": "a", "dataset": "d", "options": {"grid": 10}, "repeat": 0}
    assert run_id(identity, None, "v1") == "12c4469de054a4598b2e"
    assert run_id(identity, "checksum", "v1") != run_id(identity, None, "v1")
