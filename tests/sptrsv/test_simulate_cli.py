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


def _hand_calibration(path, edit=None, envelope=None):
    """A calibration file written without measuring (1e-9 s per term at 1 core), its terms changed by
    ``edit(terms)`` and its envelope's keys by ``envelope``, as a hand-edited file would be."""
    from spbench.sptrsv.calibration import calibrate as cal
    from spbench.sptrsv.model_costs import RATE_KEYS, SYNC_KEYS

    terms = {"cores": {"1": {k: 1e-9 for k in (*RATE_KEYS, *SYNC_KEYS)}}, "serial": {k: 1e-9 for k in RATE_KEYS}}
    cal.save({"date": "2026-01-01T00:00:00+00:00", "quick": True, "machine": {}, **terms}, path)
    data = json.loads(path.read_text())
    if edit is not None:
        edit(data["terms"])
    path.write_text(json.dumps({**data, **(envelope or {})}))   # NaN as JSON's NaN, as an editor leaves it
    return path


HAND_CFG = CFG.replace("{costs}", "{costs}").replace("cores: [1, 2, 64]", "cores: [1, 2]")


@pytest.mark.parametrize("edit, envelope, words", [
    (lambda t: t["cores"]["1"].update(t_row="abc"), None, ["terms.cores.1.t_row = 'abc'", "finite number"]),
    (lambda t: t["cores"]["1"].update(t_nnz=float("nan")), None, ["terms.cores.1.t_nnz = nan"]),
    (lambda t: t["cores"]["1"].pop("barrier"), None, ["terms.cores.1.barrier = None"]),
    (lambda t: t["serial"].update(t_row=True), None, ["terms.serial.t_row = True"]),
    (lambda t: t["cores"]["1"].update(t_row=-1e-9), None, ["t_row (1 cores) came out -1.000 ns", "--force"]),
    (lambda t: t.update(cores=[]), None, ["terms.cores = []", "core counts"]),
    (lambda t: t["cores"].update(x=t["cores"]["1"]), None, ["terms.cores: key 'x'", "core count >= 1"]),
    (None, {"terms": []}, ["key 'terms' = list []", "JSON object"]),
    (None, {"created": 5}, ["key 'created' = int 5"]),
    (None, {"quick": "no"}, ["key 'quick' = str \"no\"", "true or false"]),
])
def test_a_calibration_the_model_cannot_read_is_refused_in_one_line(write_config, tmp_path, edit, envelope, words):
    """A hand-edited calibration: one line naming the file and the term, exit 2, nothing written
    (before: error rows for some points and `ok` rows with negative or null solve times for others)."""
    costs = _hand_calibration(tmp_path / "c.json", edit, envelope)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(HAND_CFG.format(costs=costs))), "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and str(costs) in lines[0], res.output
    assert all(w in lines[0] for w in words), lines[0]
    assert not out.exists()


def test_a_modelled_solve_time_beyond_double_precision_is_an_invalid_row(write_config, tmp_path):
    costs = _hand_calibration(tmp_path / "c.json", lambda t: t["cores"]["1"].update(t_row=1e308))
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(HAND_CFG.format(costs=costs))), "--out", str(out), "-q"])
    assert res.exit_code == 1, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    bad = [r for r in rows if r["algorithm"] != "serial"]   # 2 cores extrapolate from 1 core's rates
    assert bad and all(r["status"] == "invalid" and "non-finite modelled solve time" in r["error"] for r in bad)
    assert all(r["status"] == "ok" for r in rows if r not in bad)
