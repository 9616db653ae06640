"""`spbench calibrate --agree`: two Tucker calibrations compared by what they predict."""
import json

import pytest
from click.testing import CliRunner

from spbench.store.calibration_file import relative_difference
from spbench.cli import main
from spbench.tucker.calibration.agreement import agreement_rows
from spbench.tucker.calibration.calibrate import save

from .test_model import ROUND_MPI

POINTS = (("nell2", 3000, 1), ("nell2", 3000, 2), ("flickr", 3000, 32))


def _cal(costs: dict) -> dict:
    return {"schema_version": 3, "timestamp": "2026-12-04T00:00:00+00:00", "quick": True, "machine": {"host": "h"},
            "costs": costs, "fits": {}, "mpi": {}, "calibration_seconds": 1.0}


def test_relative_difference():
    assert relative_difference(2.0, 3.0) == 0.5
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(0.0, 1.0) == float("inf")


def test_same_costs_agree_and_a_scaled_term_shows_where_it_matters():
    same = agreement_rows(_cal(ROUND_MPI), _cal(dict(ROUND_MPI)), points=POINTS)
    assert same and all(r["rel_diff"] == 0.0 for r in same)
    assert {(r["ranks"], r["quantity"]) for r in same} >= {(1, "hooi_time"), (2, "comm_time"), (32, "svd_time")}
    slower_comm = agreement_rows(_cal(ROUND_MPI), _cal({**ROUND_MPI, "alpha_alltoallv": 4e-5}), points=POINTS)
    by = {(r["ranks"], r["scheme"], r["quantity"]): r["rel_diff"] for r in slower_comm}
    assert by[(1, "lite", "comm_time")] == 0.0 and by[(1, "lite", "hooi_time")] == 0.0   # no message at one rank
    assert by[(2, "lite", "comm_time")] > 0.0 and by[(2, "lite", "ttm_time")] == 0.0
    assert 0.0 < by[(2, "lite", "hooi_time")] < by[(2, "lite", "comm_time")]


def test_points_beyond_a_calibration_without_mpi_are_skipped():
    no_mpi = {k: v for k, v in ROUND_MPI.items() if not k.startswith(("alpha", "beta"))}
    rows = agreement_rows(_cal(no_mpi), _cal(ROUND_MPI), points=POINTS)
    assert {r["ranks"] for r in rows} == {1}


def test_cli_agree_prints_the_table_and_the_largest_difference(tmp_path, monkeypatch):
    import spbench.tucker.calibration.agreement as agreement

    monkeypatch.setattr(agreement, "POINTS", POINTS[:2])
    a, b = save(_cal(ROUND_MPI), tmp_path / "a.json"), save(_cal({**ROUND_MPI, "ttm_csf_leaf": 2e-8}), tmp_path / "b.json")
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "tucker", "--costs", str(b), "--agree", str(a), "-q"])
    assert res.exit_code == 0, res.output
    assert "largest difference of a modelled HOOI time +" in res.output
    assert "nell2 | 3000 | 2 | lite | ttm_time" in res.output
    bad = CliRunner().invoke(main, ["calibrate", "--experiment", "tucker", "--costs", str(b),
                                    "--agree", str(tmp_path / "missing.json")])
    assert bad.exit_code == 2 and "--agree" in bad.output and "Traceback" not in bad.output
    assert json.loads(a.read_text())["experiment"] == "tucker"
