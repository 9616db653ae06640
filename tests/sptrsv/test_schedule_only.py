"""`execution: schedule`: schedules computed and validated at any core count, no solve timed."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.datasets import synthetic
from spbench.datasets.transforms import lower_triangle
from spbench.sptrsv import schedule_only
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.schedule import Schedule, ScheduleError

CFG = """
name: schedtest
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 30}
  - fem-mesh: {element: tet4, cells_x: 6, cells_y: 5, cells_z: 4, tile_x: 2, tile_y: 2, tile_z: 2}
sweep:
  algorithm: [serial, wavefront, hdagg, growlocal, elastic_divide, spmp]
  cores: [1, 2]
exclude:
  - {execution: schedule, algorithm: serial}
include:
  - {execution: schedule, algorithm: growlocal, cores: 128}
  - {execution: schedule, algorithm: elastic_divide, cores: 64}
"""


@pytest.fixture(scope="module")
def mesh_dag():
    A = synthetic.generate("fem-mesh", {"element": "hex8", "dof": 3, "cells_x": 5, "cells_y": 4, "cells_z": 3,
                                        "tile_x": 2, "tile_y": 2, "tile_z": 2})
    return DAG(prepare_lower(lower_triangle(A)))


@pytest.mark.parametrize("algorithm", ["wavefront", "hdagg", "spmp", "growlocal", "elastic_divide"])
@pytest.mark.parametrize("cores", [16, 128])
def test_schedule_rows_validated_without_solve(mesh_dag, monkeypatch, algorithm, cores):
    checked = []
    real = schedule_only.plan_schedule.__globals__["validate"]
    monkeypatch.setitem(schedule_only.plan_schedule.__globals__, "validate",
                        lambda s, d: checked.append(s) or real(s, d))
    row = schedule_only.schedule_point(mesh_dag, algorithm, cores)
    assert checked or algorithm == "spmp"  # SpMP's task graph is checked by validate_tasks
    assert row["status"] == "ok" and row["cores"] == cores
    assert not {"solve_time", "solve_times", "residual"} & set(row)
    assert row["wavefronts"] == mesh_dag.wavefronts and row["n"] == mesh_dag.n
    assert 1 <= row["supersteps"] and row["schedule_time"] > 0
    assert 0 < row["work_balance"] <= 1 + 1e-12
    assert row["work_total"] == mesh_dag.nnz
    assert 1 <= row["work_speedup_bound"] <= cores + 1e-9


def test_work_balance_of_a_known_schedule():
    A = synthetic.generate("lap2d-5pt", {"grid": 4})
    dag = DAG(prepare_lower(lower_triangle(A)))
    core = np.arange(dag.n) % 2
    s = Schedule(core=core, superstep=dag.levels(), n_cores=2)
    per_cell = {}
    for v in range(dag.n):
        key = (int(dag.levels()[v]), int(core[v]))
        per_cell[key] = per_cell.get(key, 0) + int(dag.weights[v])
    critical = sum(max(per_cell.get((lev, p), 0) for p in (0, 1)) for lev in range(dag.wavefronts))
    got = schedule_only.work_balance(s, dag)
    assert got["work_critical"] == critical
    assert got["work_balance"] == pytest.approx(dag.nnz / (2 * critical))


def test_invalid_schedule_is_refused(mesh_dag, monkeypatch):
    from spbench.sptrsv import execute
    bad = Schedule(core=np.zeros(mesh_dag.n), superstep=np.zeros(mesh_dag.n), n_cores=16)
    bad.superstep[0] = 1  # a parent after its children on the same core
    monkeypatch.setitem(execute.SCHEDULERS, "wavefront", lambda dag, cores: bad)
    with pytest.raises(ScheduleError):
        schedule_only.schedule_point(mesh_dag, "wavefront", 16)


@pytest.mark.slow
def test_schedule_sweep_beyond_this_machine(write_config, tmp_path):
    out = tmp_path / "res"
    cfg = write_config(CFG)
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--execution", "schedule", "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert len(rows) == 2 * (5 * 2 + 2)
    assert all(r["status"] == "ok" and r["execution"] == "schedule" for r in rows)
    assert not any({"solve_time", "solve_times", "residual"} & set(r) for r in rows)
    assert {r["cores"] for r in rows} == {1, 2, 64, 128}
    assert all(r["omp_threads"] is None for r in rows)
    # the measured run of the same config leaves the schedule-only items out and keeps both sets of rows
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--repeats", "2", "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert sorted({r["execution"] for r in rows}) == ["measured", "schedule"]
    measured = [r for r in rows if r["execution"] == "measured"]
    assert len(measured) == 2 * (1 + 5 * 2) and max(r["cores"] for r in measured) == 2
    # one profile: Table 6.1 at the measured and the schedule-only core counts, Table 6.3 from the measured
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output
    plots = tmp_path / "plots" / "res"
    table = (plots / "table_6_1.csv").read_text().splitlines()
    assert {line.split(",")[1] for line in table[1:]} == {"1", "2", "64", "128"}
    assert (plots / "table_6_3.csv").exists() and "128" not in (plots / "table_6_3.csv").read_text()


def test_schedule_execution_is_sptrsv_only(write_config, tmp_path):
    cfg = write_config("""
        name: t
        experiment: tucker
        execution: schedule
        datasets: [nell2]
        sweep: {algorithm: [lite], ranks: [1], K: [2]}
    """)
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and "'schedule'" in res.output
    assert not (tmp_path / "res").exists()


def test_hdagg_past_its_budget_is_a_timeout_row(mesh_dag):
    row = schedule_only.schedule_point(mesh_dag, "hdagg", 16, budget=1e-9)
    assert row["status"] == "timeout" and "budget" in row["error"] and "supersteps" not in row
    ok = schedule_only.schedule_point(mesh_dag, "hdagg", 16, budget=600.0)
    assert ok["status"] == "ok" and ok["supersteps"] >= 1
    # the budget binds the superlinear schedulers only
    assert schedule_only.schedule_point(mesh_dag, "growlocal", 16, budget=1e-9)["status"] == "ok"


def test_timeout_key_is_checked(write_config, tmp_path):
    path = write_config(CFG + "timeout: -3\n")
    result = CliRunner().invoke(main, ["run", str(path), "--execution", "schedule", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "timeout" in result.output and "Traceback" not in result.output
