"""Measured Tucker sweeps: the MPI job launch, its failure modes and the rows they leave."""
import json
import os
import stat

import pytest
from click.testing import CliRunner

from spbench.cli import main

CFG = """
name: tmpi
experiment: tucker
execution: measured
fallback: standin
datasets:
  - nell2: {nnz: 2000, standin: true}
sweep:
  algorithm: [coarse, lite]
  ranks: [1, 2]
  K: [3]
"""


def _rows(out):
    return [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _script(tmp_path, body):
    path = tmp_path / "launcher.sh"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_failed_job_records_error_rows(write_config, tmp_path, data_dir):
    launcher = _script(tmp_path, 'echo "RuntimeError: rank 1 lost" >&2; exit 3')
    cfg = write_config(CFG + f"launcher: '{launcher} {{ranks}}'\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 1, res.output
    assert "4 runs failed" in res.output and "rank 1 lost" in res.output
    rows = _rows(out)
    assert len(rows) == 4 and all(r["status"] == "error" for r in rows)
    assert all("exited 3" in r["error"] and "rank 1 lost" in r["error"] for r in rows)


def test_job_timeout_records_timeout_rows(write_config, tmp_path, data_dir):
    launcher = _script(tmp_path, "sleep 30")
    cfg = write_config(CFG + f"launcher: '{launcher} {{ranks}}'\ntimeout: 1\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 1, res.output
    rows = _rows(out)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"timeout"}


def test_too_many_ranks_fail_fast(write_config, tmp_path, data_dir):
    cfg = write_config(CFG.replace("ranks: [1, 2]", "ranks: [4096]"))
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2
    assert "4096 ranks" in res.output and "--execution simulate" in res.output and "--oversubscribe" in res.output
    assert not (tmp_path / "res" / "runs").exists()


def test_measured_sweep_end_to_end(write_config, tmp_path, data_dir, monkeypatch):
    """Real MPI jobs at 1 and 2 ranks: measured times and fit, and the exact metrics the ranks
    computed themselves; the launching process never loads the tensor (issue: paper-size tensors)."""
    from spbench.datasets.tensor_registry import LoadedTensor

    def refuse(self):
        raise AssertionError("the launching process loaded the whole tensor")
    monkeypatch.setattr(LoadedTensor, "tensor", property(refuse))
    cfg = write_config(CFG)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = _rows(out)
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
    for r in rows:
        assert r["execution"] == "measured" and r["hooi_time"] > 0 and r["dist_time"] >= 0
        assert r["svd_words"] == [m["svd_volume"] for m in r["mode_metrics"]]
        assert r["fm_words"] == [m["fm_volume"] for m in r["mode_metrics"]]
        assert len(r["restarts"]) == len(r["queries"]) == r["modes"] and min(r["queries"]) > 0
        assert r["metrics_source"].startswith("computed by the MPI ranks")
        if r["algorithm"] == "lite":
            assert min(r["lite_bound_slack"].values()) >= 0
    fits = {(r["algorithm"], r["ranks"]): r["fit"] for r in rows}
    assert fits[("lite", 1)] == pytest.approx(fits[("lite", 2)], rel=1e-6)
    assert fits[("coarse", 2)] == pytest.approx(fits[("lite", 2)], rel=1e-6)
    again = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out)])
    assert "4 already stored, 0 run" in again.output


def test_measured_hosvd_init_matches_serial(write_config, tmp_path, data_dir):
    """init: hosvd under MPI (2 ranks) gives the single-process HOOI's fit from the same HOSVD start."""
    from spbench.datasets.tensor_registry import standin
    from spbench.tucker.hooi import hooi

    cfg = write_config(CFG.replace("[coarse, lite]", "[lite]").replace("ranks: [1, 2]", "ranks: [2]")
                       + "init: hosvd\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    (row,) = _rows(out)
    assert row["status"] == "ok" and row["init"] == "hosvd", row.get("error")
    serial = hooi(standin("nell2", nnz=2000), [3, 3, 3], init="hosvd", seed=0)
    assert row["fit"] == pytest.approx(serial.fits[-1], rel=1e-6)
