"""Sweep rows of every execution carry their scheduler's calls (key `schedule_repeats`, default
several) and the OpenMP wait policy they were timed under."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main

CFG = """
name: timing
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 10}
sweep:
  algorithm: [serial, growlocal, spmp]
  cores: [1]
repeats: 2
"""


def _rows(out):
    return {r["algorithm"]: r for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))}


@pytest.mark.parametrize("execution", ["measured", "schedule"])
def test_sweep_rows_carry_the_calls_and_the_wait_policy(write_config, tmp_path, monkeypatch, execution):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    cfg = write_config(CFG + "schedule_repeats: 3\nexclude: [{execution: schedule, algorithm: serial}]\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--execution", execution, "-q"])
    assert res.exit_code == 0, res.output
    rows = _rows(out)
    for algorithm in ("growlocal", "spmp"):
        row = rows[algorithm]
        assert row["status"] == "ok" and row["schedule_calls"] == 3 and len(row["schedule_times"]) == 3
        assert row["schedule_time"] == pytest.approx(np.median(row["schedule_times"]))
        assert row["schedule_spread"] >= 1 and row["schedule_noisy"] in (True, False)
        assert row["omp_wait_policy"] == "passive" and row["gomp_spincount"] is None
        assert row["settings"]["schedule_repeats"] == 3
    if execution == "measured":  # serial runs no scheduler but times a solve
        assert rows["serial"]["omp_wait_policy"] == "passive" and "schedule_calls" not in rows["serial"]


def test_schedule_repeats_defaults_to_several_calls(write_config, tmp_path):
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(CFG)), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert _rows(out)["growlocal"]["schedule_calls"] == 5


@pytest.mark.parametrize("value", ["0", "2.5", "true"])
def test_schedule_repeats_is_checked(write_config, tmp_path, value):
    res = CliRunner().invoke(main, ["run", str(write_config(CFG + f"schedule_repeats: {value}\n")),
                                    "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and "schedule_repeats" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "res").exists()


def test_simulated_rows_time_their_schedules_too(tmp_path, monkeypatch):
    """A simulated point runs its scheduler for real: its row carries the calls and the wait policy."""
    from spbench.pipeline.config import parse_config
    from spbench.experiment_registry import get_experiment
    from spbench.pipeline.sweep import expand

    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    config = parse_config({"name": "s", "experiment": "sptrsv", "execution": "simulate",
                           "datasets": [{"lap2d-5pt": {"grid": 10}}], "schedule_repeats": 2,
                           "sweep": {"algorithm": ["spmp"], "cores": [2]}})
    experiment = get_experiment("sptrsv")
    flat = {"t_row": 1e-9, "t_nnz": 1e-9, "barrier": 1e-7, "weak_barrier": 1e-7, "p2p_dep": 1e-8}
    experiment.costs = {"cores": {"1": flat, "2": flat}}
    point = expand(config)[0]
    row = experiment.run(point, experiment.prepare(point.dataset, config), config)
    assert row["status"] == "ok" and row["schedule_calls"] == 2 and row["omp_wait_policy"] == "active"
    assert row["schedule_time"] == pytest.approx(np.median(row["schedule_times"]))
