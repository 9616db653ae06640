"""Measured Tucker sweeps: the MPI job launch, its failure modes and the rows they leave."""
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.mpi
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


@pytest.mark.mpi
def test_measured_hosvd_init_matches_serial(write_config, tmp_path, data_dir):
    """init: hosvd under MPI (2 ranks) gives the single-process HOOI's fit from the same HOSVD start."""
    from spbench.datasets.tensor_registry import standin
    from spbench.tucker.hooi.loop import hooi

    cfg = write_config(CFG.replace("[coarse, lite]", "[lite]").replace("ranks: [1, 2]", "ranks: [2]")
                       + "init: hosvd\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    (row,) = _rows(out)
    assert row["status"] == "ok" and row["init"] == "hosvd", row.get("error")
    serial = hooi(standin("nell2", nnz=2000), [3, 3, 3], init="hosvd", seed=0)
    assert row["fit"] == pytest.approx(serial.fits[-1], rel=1e-6)


# ---- jobs that fail or are killed ----------------------------------------------------------------
HERE = Path(__file__).parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"
THREE_SCHEMES = CFG.replace("[coarse, lite]", "[coarse, medium, lite]").replace("ranks: [1, 2]", "ranks: [1]")


def _by_scheme(out):
    return {r["algorithm"]: r for r in _rows(out)}


@pytest.mark.mpi
def test_task_loop_records_each_failure_and_aborts_a_lone_one(tmp_path):
    runs, progress = tmp_path / "runs", tmp_path / "progress.jsonl"
    proc = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "mpi4py",
                           str(HERE / "mpi_scripts" / "check_task_loop.py"), str(runs), str(progress)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode != 0, "the lone failure should abort the job"
    rows = {p.stem: json.loads(p.read_text()) for p in runs.glob("*.json")}
    assert {"t0-ok", "t1-every", "t2-ok"} <= set(rows) and "t4-never" not in rows
    assert rows["t1-every"]["status"] == "error"
    assert rows["t1-every"]["error"].startswith("ValueError: bad on every rank (at check_task_loop.py:")
    events = [json.loads(line) for line in progress.read_text().splitlines()]
    lone = next(e for e in events if e["event"] == "finish" and e["task"] == 3)
    assert lone["status"] == "error" and lone["error"].startswith("rank 1: RuntimeError: rank 1 only")
    assert "job aborted" in lone["error"]
    events = [(e["event"], e["task"], e.get("status")) for e in events[:events.index(lone) + 1]]
    assert events == [("start", 0, None), ("invocation", 0, None), ("finish", 0, "ok"),
                      ("start", 1, None), ("finish", 1, "error"),
                      ("start", 2, None), ("invocation", 2, None), ("finish", 2, "ok"),
                      ("start", 3, None), ("finish", 3, "error")]


@pytest.mark.mpi
def test_a_scheme_failure_is_its_own_row_and_progress_shows(write_config, tmp_path):
    cfg = write_config(THREE_SCHEMES + "invocations: 2\nparams: {medium: {grid: [7, 1, 1]}}\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out)])
    assert res.exit_code == 1, res.output
    rows = _by_scheme(out)
    assert rows["coarse"]["status"] == rows["lite"]["status"] == "ok"
    assert rows["medium"]["status"] == "error" and "grid (7, 1, 1) does not match" in rows["medium"]["error"]
    lines = res.output.splitlines()
    starts = [line for line in lines if line.startswith("[") and "algorithm=" in line]
    assert [s.split()[0] for s in starts] == ["[1/3]", "[2/3]", "[3/3]"] and all("ETA" in s for s in starts)
    assert sum("HOOI invocation 2/2, fit" in line for line in lines) == 2
    assert any(line.startswith("    error: ValueError: grid (7, 1, 1)") for line in lines)
    assert "[1x] ValueError: grid (7, 1, 1)" in res.output
    assert not (out / ".jobs").exists() and not (out / ".lock").exists()


FAKE_LAUNCHER = """
import json, sys, pathlib
spec = json.loads(pathlib.Path(sys.argv[-1]).read_text())
state = pathlib.Path(sys.argv[1])
first = not state.exists()
state.write_text("launched")
def report(event, **fields):
    with open(spec["progress"], "a") as fh:
        fh.write(json.dumps({"event": event, **fields}) + "\\n")
for i, task in enumerate(spec["tasks"]):
    report("start", task=i)
    if first and i == 1:
        print("RuntimeError: node lost", file=sys.stderr)
        sys.exit(3)
    row = dict(task["row"], status="ok", algorithm=task["scheme"], lite_bound_slack={"e_max": 0})
    (pathlib.Path(spec["results"]) / "runs" / (row["run_id"] + ".json")).write_text(json.dumps(row))
    report("finish", task=i, status="ok")
"""


def test_a_job_that_dies_runs_its_unstarted_tasks_in_a_new_one(write_config, tmp_path):
    fake = tmp_path / "fake_launcher.py"
    fake.write_text(FAKE_LAUNCHER)
    cfg = write_config(THREE_SCHEMES.replace("[coarse, medium, lite]", "[coarse, medium, lite, hyper]")
                       + f"launcher: '{sys.executable} {fake} {tmp_path / 'state'} {{ranks}}'\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out)])
    assert res.exit_code == 1, res.output
    rows = _by_scheme(out)
    assert {a: r["status"] for a, r in rows.items()} == {"coarse": "ok", "medium": "error", "lite": "ok",
                                                         "hyper": "ok"}
    assert "exited 3" in rows["medium"]["error"] and "node lost" in rows["medium"]["error"]
    assert "2 runs not started by the failed job run in a new one" in res.output


def _descendants(pid: int) -> set:
    """Every process below ``pid`` (from /proc), zombies left out."""
    children: dict = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.mpi
def test_sigkill_of_the_sweep_takes_its_mpi_job_down(write_config, tmp_path, spbench_cmd):
    cfg = write_config(THREE_SCHEMES.replace("ranks: [1]", "ranks: [2]") + "invocations: 100000\n")
    out = tmp_path / "res"
    sweep = subprocess.Popen([*spbench_cmd, "run", str(cfg), "--out", str(out), "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    job = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until mpiexec, its proxy and both ranks run
            job = _descendants(sweep.pid)
            ranks_up = sum(b"spbench.tucker.mpi.worker" in _cmdline(p) for p in job) >= 3  # mpiexec and 2 ranks
            if ranks_up and not list((out / ".jobs").glob("*.json")):  # the ranks have read their spec
                break
            time.sleep(0.2)
        assert len(job) >= 4, "the MPI job did not start"
        os.kill(sweep.pid, signal.SIGKILL)
        sweep.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in job) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in job if _alive(p)], "MPI processes outlived the sweep"
        assert not list((out / ".jobs").glob("*.json")), "a job spec was left behind"
    finally:
        for p in job:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
