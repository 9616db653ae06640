"""Simulated points run in a child process: one the operating system kills (SIGKILL, as the OOM
killer does) is an error row naming the signal and the peak memory, the sweep goes on and exits 1,
the folder's lock is released and a rerun runs only that point; Ctrl-C or a killed sweep leaves no
child behind."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.pipeline.point_process import run_apart
from spbench.store.results import ResultStore

CFG = """
name: apart
experiment: tucker
execution: simulate
fallback: standin
datasets:
  - nell2: {nnz: 500, standin: true}
  - enron: {nnz: 500, standin: true}
sweep: {algorithm: [coarse, medium, lite], ranks: [2], K: [2]}
"""


def _rows(out):
    runs = out / "runs"
    return [json.loads(p.read_text()) for p in runs.glob("*.json")] if runs.is_dir() else []


def _run(cfg, out, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), *extra])


def _kill_self_at(monkeypatch, algorithm, dataset="nell2", how=lambda: os.kill(os.getpid(), signal.SIGKILL)):
    """The forked child inherits this patch: the point (dataset, algorithm) dies as ``how`` says."""
    from spbench.tucker.experiment import TuckerExperiment

    real = TuckerExperiment.run

    def run(self, point, prepared, config):
        if point.axes["algorithm"] == algorithm and point.dataset.name == dataset:
            how()
        return real(self, point, prepared, config)
    monkeypatch.setattr(TuckerExperiment, "run", run)


def test_events_say_which_point_a_killed_child_had_started():
    def compute(i):
        if i == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return {"status": "ok", "i": i, "pid": os.getpid()}

    events = list(run_apart(3, compute))
    assert [(kind, i) for kind, i, _ in events] == [("start", 0), ("row", 0), ("start", 1), ("row", 1),
                                                     ("start", 2), ("row", 2)]
    rows = [fields for kind, _, fields in events if kind == "row"]
    assert rows[1]["status"] == "error" and rows[1]["error"].startswith("killed by signal 9 (out of memory? peak ")
    assert " available)" in rows[1]["error"]
    assert rows[0]["pid"] != os.getpid() and rows[2]["pid"] not in (os.getpid(), rows[0]["pid"])  # a fresh child


def test_a_child_that_exits_or_breaks_fails_only_its_point():
    def compute(i):
        if i == 0:
            os._exit(3)
        if i == 1:
            return {"status": "ok", "unpicklable": lambda: None}
        return {"status": "ok"}

    rows = [fields for kind, _, fields in run_apart(3, compute) if kind == "row"]
    assert rows[0] == {"status": "error", "error": rows[0]["error"]} and "exited 3 (peak" in rows[0]["error"]
    assert "exited 70" in rows[1]["error"] and rows[2] == {"status": "ok"}


def test_a_killed_simulated_point_is_an_error_row_and_the_sweep_goes_on(write_config, tmp_path, monkeypatch):
    _kill_self_at(monkeypatch, "medium")
    cfg, out = write_config(CFG), tmp_path / "out"
    res = _run(cfg, out)
    assert res.exit_code == 1, res.output
    assert "    error: killed by signal 9 (out of memory? peak " in res.output
    assert "(error 1, ok 5)" in res.output and "[1x] killed by signal 9" in res.output
    rows = {(r["dataset"], r["algorithm"]): r for r in _rows(out)}
    assert len(rows) == 6 and rows[("nell2", "medium")]["status"] == "error"
    assert all(r["status"] == "ok" for key, r in rows.items() if key != ("nell2", "medium"))
    assert not (out / ".lock").exists()
    with ResultStore(out).lock():  # released: a new sweep may take it
        pass
    monkeypatch.undo()
    again = _run(cfg, out)
    assert again.exit_code == 0, again.output
    assert "5 already stored, 1 run (ok 1)" in again.output
    assert {r["status"] for r in _rows(out)} == {"ok"} and len(_rows(out)) == 6


def test_an_exception_in_the_child_is_an_ordinary_error_row(write_config, tmp_path, monkeypatch):
    def fail():
        raise RuntimeError("the scheme broke")
    _kill_self_at(monkeypatch, "lite", dataset="enron", how=fail)
    res = _run(write_config(CFG), tmp_path / "out", "-q")
    assert res.exit_code == 1 and "[1x] RuntimeError: the scheme broke" in res.output
    assert sorted(r["status"] for r in _rows(tmp_path / "out")) == ["error"] + ["ok"] * 5


#: `spbench run` whose simulated points each take SLOW seconds (the patch reaches the forked children)
SLOW_SWEEP = """
import sys, time
from spbench.tucker.experiment import TuckerExperiment
real = TuckerExperiment.run
def slow(self, point, prepared, config):
    time.sleep(0.4)
    return real(self, point, prepared, config)
TuckerExperiment.run = slow
from spbench.cli import main
sys.argv = ["spbench", *sys.argv[1:]]
main()
"""


def _group_gone(pgid, limit=5.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "kill -9"])
def test_interrupted_sweep_leaves_no_child_and_resumes(write_config, tmp_path, how):
    """Ctrl-C reaches the whole foreground group (the sweep and its child); `kill -9` only the
    sweep, whose child then dies with it. The rerun stores every point once."""
    cfg, out = write_config(CFG), tmp_path / "out"
    cmd = [sys.executable, "-c", SLOW_SWEEP, "run", str(cfg), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while len(_rows(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.kill()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _group_gone(proc.pid), "a child of the sweep is still running"
    if how == "ctrl-c":
        assert proc.returncode == 130 and "interrupted" in err, err
        assert not (out / ".lock").exists()
    first = len(_rows(out))
    assert 0 < first < 6
    res = subprocess.run([sys.executable, "-m", "spbench.cli", "run", str(cfg), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"{first} already stored, {6 - first} run" in res.stderr
    rows = _rows(out)
    assert len(rows) == 6 and len({(r["dataset"], r["algorithm"]) for r in rows}) == 6
