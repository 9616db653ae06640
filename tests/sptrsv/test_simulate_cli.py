"""`spbench calibrate` and `execution: simulate` for SpTrSV: modelled rows at any core count."""
import json

import pytest
from click.testing import CliRunner

from spbench.cli import main

CFG = """
name: simtest
experiment: sptrsv
execution: simulate
costs: {costs}
datasets:
  - lap2d-5pt: {{grid: 40}}
sweep:
  algorithm: [serial, wavefront, growlocal, elastic_divide, spmp]
  cores: [1, 2, 64]
"""


@pytest.fixture(scope="module")
def costs_file(tmp_path_factory):
    from spbench.sptrsv.calibration import calibrate as cal

    path = tmp_path_factory.mktemp("cal") / "costs.json"
    with pytest.MonkeyPatch.context() as mp:  # a busy machine must not fail this test: keep what it measures
        mp.setattr(cal, "SYNC_FLOOR", 0.0)
        mp.setattr(cal, "COMPUTE_JUMP_MAX", float("inf"))
        res = CliRunner().invoke(main, ["calibrate", "--quick", "--force", "--cores", "1,2", "--out", str(path)])
    assert res.exit_code == 0, res.output
    assert "barrier" in res.output and path.exists()
    return path


def test_simulated_sweep_beyond_this_machine(costs_file, write_config, tmp_path):
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(CFG.format(costs=costs_file))), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert len(rows) == 1 + 4 * 3
    assert all(r["status"] == "ok" and r["execution"] == "simulated" and r["solve_time"] > 0 for r in rows)
    assert {r["cores"] for r in rows} == {1, 2, 64}
    assert {r["kernel"] for r in rows} == {"serial", "bsp", "ssp", "p2p"}
    assert all(r["model_extrapolated"] == (r["cores"] == 64) for r in rows)
    assert {r["model_law"] for r in rows if r["cores"] == 64} == {"peers-linear + NUMA step"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["calibration"]["kind"] == json.loads(costs_file.read_text())["kind"]


def test_simulate_without_calibration_is_refused(write_config, tmp_path):
    cfg = write_config(CFG.format(costs=tmp_path / "missing.json"))
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and "spbench calibrate" in res.output
    assert not (tmp_path / "res").exists()
