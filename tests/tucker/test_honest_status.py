"""Honest statuses: a row whose fit, time or residual is not a finite number is invalid with the
reason (never ok with the number dropped to null); a measured job whose MPI world is not the
ranks asked for is an error row naming the launcher (never an ok row with other ranks); tensors
HOOI cannot fit are refused up front (one mode) or said so (all zeros, overflowing values)."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main

MPIEXEC = Path(sys.executable).parent / "mpiexec"
needs_mpi = pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")

CFG = """
name: honest
experiment: tucker
execution: {execution}
datasets:
  - path: {name}
sweep: {{algorithm: [coarse, lite], ranks: [1, 2], K: [2]}}
"""
STANDIN = """
name: honest
experiment: tucker
execution: measured
datasets:
  - nell2: {nnz: 2000, standin: true}
sweep: {algorithm: [coarse], ranks: [1, 2], K: [3]}
"""


def _tns(path: Path, value, modes: int = 3) -> Path:
    """A 5x4x3 grid (or its first ``modes`` columns, summed nowhere: one line per coordinate) of
    values ``value * (1 + i/100)``."""
    grid = np.stack(np.meshgrid(*(np.arange(1, d + 1) for d in (5, 4, 3)), indexing="ij"), -1).reshape(-1, 3)
    coords = np.unique(grid[:, :modes], axis=0)
    lines = [" ".join(map(str, c)) + f" {value * (1 + i / 100)!r}" for i, c in enumerate(coords)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(cfg, out, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), *extra])


def _rows(out):
    return [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]


def _warnings(res):
    return [line for line in res.output.splitlines() if line.startswith("spbench: warning: ")]


# --- the rows of tensors HOOI cannot fit ---------------------------------------------------------

@pytest.mark.parametrize("value, said, why", [
    (1e200, "overflow double precision", "overflow double precision in HOOI"),
    (0.0, "every value is 0", "0/0"),
])
def test_simulated_rows_of_a_tensor_hooi_cannot_fit_are_invalid(write_config, tmp_path, value, said, why):
    _tns(tmp_path / "t.tns", value)
    out = tmp_path / "out"
    res = _run(write_config(CFG.format(execution="simulate", name="t.tns")), out)
    assert res.exit_code == 1, res.output
    (warning,) = _warnings(res)
    assert "t.tns" in warning and said in warning, warning
    rows = _rows(out)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"invalid"}, [(r["status"], r["error"]) for r in rows]
    assert all(why in r["error"] and "\n" not in r["error"] for r in rows)
    assert all(r["e_max"] is not None for r in rows)       # the distribution's metrics are still exact
    assert "Traceback" not in res.output


@pytest.mark.mpi
@pytest.mark.slow
@needs_mpi
@pytest.mark.parametrize("value, why", [
    (1e308, "overflow double precision in HOOI"),   # was an SVD that did not converge
    (1e200, "overflow double precision in HOOI"),   # was status ok, fit null ("fit nan")
    (0.0, "0/0"),                                   # was status ok, fit 1
])
def test_measured_rows_of_a_tensor_hooi_cannot_fit_are_invalid(write_config, tmp_path, value, why):
    _tns(tmp_path / "t.tns", value)
    out = tmp_path / "out"
    res = _run(write_config(CFG.format(execution="measured", name="t.tns")), out)
    assert res.exit_code == 1, res.output
    rows = _rows(out)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"invalid"}, [(r["status"], r["error"]) for r in rows]
    assert all(why in r["error"] and "\n" not in r["error"] for r in rows), [r["error"] for r in rows]
    assert {r["ranks"] for r in rows} == {1, 2}
    assert sum(line.startswith("    invalid: ") and why in line for line in res.output.splitlines()) == 4
    assert "Traceback" not in res.output and "LinAlgError" not in res.output


def test_a_zero_tensor_has_no_fit():
    """‖T‖ = 0: the fit 1 − ‖T − X‖/‖T‖ is 0/0, not 1."""
    from spbench.tucker.hooi.loop import tucker_fit

    assert math.isnan(tucker_fit(0.0, 0.0))
    assert tucker_fit(2.0, 2.0) == 1.0


@pytest.mark.parametrize("execution", ["simulate", "measured"])
def test_a_one_mode_tensor_is_refused_up_front(write_config, tmp_path, execution):
    _tns(tmp_path / "one.tns", 1.0, modes=1)
    out = tmp_path / "out"
    res = _run(write_config(CFG.format(execution=execution, name="one.tns")), out,
               *(["--launcher", "env RANKS={ranks}"] if execution == "measured" else []))
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert "one.tns" in lines[0] and "1 mode" in lines[0] and "at least 2 modes" in lines[0], lines[0]
    assert not (out / "runs").exists()


@pytest.mark.parametrize("modes, words", [(1, ["1 mode", "at least 2 modes"]),
                                           (9, ["9 modes", "at most 8"]), (43, ["43 modes", "at most 8"])])
def test_a_tensor_of_too_few_or_too_many_modes_is_refused_before_its_store_is_made(write_config, tmp_path, modes,
                                                                                    words):
    """One line, exit 2, and no store in the cache; 43 modes no longer hangs the pre-flight (its
    CSF prefix sets, N·2^(N−2), were enumerated)."""
    import os

    path = tmp_path / "wide.tns"
    path.write_text("".join(" ".join([str(i)] * modes) + f" {i}.0\n" for i in (1, 2, 3)))
    out = tmp_path / "out"
    res = _run(write_config(CFG.format(execution="simulate", name="wide.tns")), out)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "wide.tns" in lines[0], res.output
    assert all(w in lines[0] for w in words), lines[0]
    assert not out.exists()
    assert not (Path(os.environ["SPBENCH_DATA"]) / "stores").exists()


def test_a_two_mode_tensor_still_runs(write_config, tmp_path):
    _tns(tmp_path / "two.tns", 1.0, modes=2)
    res = _run(write_config(CFG.format(execution="simulate", name="two.tns")), tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    assert {r["status"] for r in _rows(tmp_path / "out")} == {"ok"}


# --- any non-finite number ------------------------------------------------------------------------

@pytest.mark.parametrize("fields, words", [
    ({"fit": float("nan")}, ["non-finite fit (nan)"]),
    ({"fits": [0.5, float("nan")]}, ["non-finite fits (nan)"]),
    ({"hooi_time": float("inf")}, ["non-finite hooi_time (inf)"]),
    ({"dist_time": float("nan")}, ["non-finite dist_time (nan)"]),
    ({"lanczos_residual_max": [0.0, float("nan"), 0.0]}, ["non-finite lanczos_residual_max (nan)"]),
])
def test_a_non_finite_number_names_itself(fields, words):
    from spbench.tucker.row_status import nonfinite_reason

    good = {"fit": 0.5, "fits": [0.5], "hooi_time": 1.0, "dist_time": 0.1, "lanczos_residual_max": [0.0, 0.0, 0.0],
            "mode_metrics": [{"e_max": 3}], "ranks": 2}
    assert nonfinite_reason(good) is None
    reason = nonfinite_reason({**good, **fields})
    assert all(w in reason for w in words), reason
    overflow = nonfinite_reason({**good, **fields}, norm=float("inf"))
    assert "overflow double precision in HOOI" in overflow
    zero = nonfinite_reason({**good, **fields}, norm=0.0)
    assert "0/0" in zero


def test_a_non_finite_sptrsv_residual_or_time_is_invalid_with_the_reason():
    """SpTrSV: a solve whose backward error is nan or inf (values beyond double precision) or
    whose time is not a finite number is invalid and says why; a residual above the tolerance too."""
    import scipy.sparse as sp

    from spbench.sptrsv.execute import RESIDUAL_TOL, solve_point, solve_status

    L = sp.csr_matrix(np.array([[1e-300, 0.0], [1e300, 1e-300]]))
    row = solve_point(L, "serial", 1, repeats=1)
    assert row["status"] == "invalid" and "non-finite backward error" in row["error"], row
    assert solve_status(1e-16, 1e-3) == ("ok", None)
    assert solve_status(1e-16, float("nan")) == ("invalid", "non-finite solve time (nan)")
    status, error = solve_status(1e-3, 1e-3)
    assert status == "invalid" and f"backward error 1.0e-03 > {RESIDUAL_TOL:g}" in error


# --- the MPI world against the ranks asked ----------------------------------------------------------

def test_rows_of_other_ranks_than_asked_are_error_rows(write_config, tmp_path):
    """A launcher whose job writes ok rows of world size 1 for a 2-rank point (another MPI's
    mpirun starting one-rank jobs): each such row is an error naming the launcher and the sizes."""
    fake = tmp_path / "fake.py"
    fake.write_text(
        "import json, sys, pathlib\n"
        "spec = json.loads(pathlib.Path(sys.argv[-1]).read_text())\n"
        "for task in spec['tasks']:\n"
        "    row = dict(task['row'], status='ok', ranks=1, fit=0.5)\n"
        "    (pathlib.Path(spec['results']) / 'runs' / (row['run_id'] + '.json')).write_text(json.dumps(row))\n")
    launcher = f"{sys.executable} {fake} {{ranks}}"
    out = tmp_path / "out"
    res = _run(write_config(STANDIN), out, "--launcher", launcher)
    assert res.exit_code == 1, res.output
    rows = {r["ranks"]: r for r in _rows(out)}
    assert set(rows) == {1, 2} and rows[1]["status"] == "ok", rows
    assert rows[2]["status"] == "error", rows[2]
    assert f"the launcher {launcher!r}" in rows[2]["error"] and "world size 1, expected 2 ranks" in rows[2]["error"]


def _measured(spbench_cmd, cfg, out, launcher):
    """``spbench run CFG --execution measured --launcher LAUNCHER`` in a subprocess."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(out), "--execution", "measured",
                           "--launcher", launcher], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.mpi
@needs_mpi
def test_a_launcher_starting_a_smaller_world_writes_error_rows(write_config, tmp_path, spbench_cmd):
    """`env RANKS={ranks}` starts one 1-rank process for a 2-rank point: its row is an error
    naming the launcher and both sizes, the 1-rank point is ok, and exit code 1."""
    out = tmp_path / "out"
    done = _measured(spbench_cmd, write_config(STANDIN), out, "env RANKS={ranks}")
    assert done.returncode == 1, done.stderr
    rows = {r["ranks"]: r for r in _rows(out)}
    assert set(rows) == {1, 2} and rows[1]["status"] == "ok", rows
    assert rows[2]["status"] == "error"
    assert rows[2]["error"] == ("the launcher 'env RANKS={ranks}' started 1 MPI process(es) of world size 1, "
                                "expected 2 ranks: it is not mpi4py's MPI (see docs/cluster.md)")
    assert "ok 1" in done.stderr and "error 1" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.mpi
@needs_mpi
def test_a_launcher_starting_one_rank_worlds_writes_error_rows(write_config, tmp_path, spbench_cmd):
    """A launcher that starts the command as two 1-rank worlds for a 2-rank point (another MPI's
    mpirun): the rows are errors counting both processes."""
    twice = tmp_path / "twice.sh"
    twice.write_text('#!/bin/sh\nshift\n"$@" & "$@"; wait\n')
    twice.chmod(0o755)
    out = tmp_path / "out"
    done = _measured(spbench_cmd, write_config(STANDIN.replace("ranks: [1, 2]", "ranks: [2]")), out,
                     f"{twice} {{ranks}}")
    assert done.returncode == 1, done.stderr
    (row,) = _rows(out)
    assert row["status"] == "error" and row["ranks"] == 2, row
    assert "started 2 MPI process(es) of world size 1, expected 2 ranks:" in row["error"]


FAKE_WORLDS = """
import json, sys, pathlib
spec = json.loads(pathlib.Path(sys.argv[-1]).read_text())
def report(event, **fields):
    with open(spec["progress"], "a") as fh:
        fh.write(json.dumps({"event": event, **fields}) + "\\n")
for world in range(2):   # two 1-rank worlds, each running every task (as foreign singletons would)
    report("world", size=1)
    for i, task in enumerate(spec["tasks"]):
        report("start", task=i)
        row = dict(task["row"], status="ok", ranks=1, fit=0.5)
        (pathlib.Path(spec["results"]) / "runs" / (row["run_id"] + ".json")).write_text(json.dumps(row))
        report("finish", task=i, status="ok")
"""


def test_two_worlds_for_a_one_rank_point_are_error_rows(write_config, tmp_path):
    """Two worlds of the right size each ran every task: the rows are errors, and a line says
    so after the runs' finish was printed as ok."""
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE_WORLDS)
    out = tmp_path / "out"
    res = _run(write_config(STANDIN.replace("ranks: [1, 2]", "ranks: [1]")), out, "--launcher",
               f"{sys.executable} {fake} {{ranks}}")
    assert res.exit_code == 1, res.output
    (row,) = _rows(out)
    assert row["status"] == "error" and "started 2 MPI process(es) of world size 1, expected 1 rank:" in row["error"]
    assert "the runs it finished are stored as errors" in res.output
