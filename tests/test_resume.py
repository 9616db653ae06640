"""A sweep killed mid-way (SIGINT or SIGKILL) and rerun ends with every point stored exactly once."""
import json
import signal
import subprocess
import time

import pytest

CFG = """
name: resume
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 150}
  - lap2d-9pt: {grid: 120}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
repeats: 1000
runs: 3
"""
N_POINTS = 2 * 3 * 3


def _rows(out):
    runs = out / "runs"
    return [json.loads(p.read_text()) for p in runs.glob("*.json")] if runs.is_dir() else []


def _wait_for_rows(out, n, proc, limit=120):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if len(_rows(out)) >= n or proc.poll() is not None:
            return
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_kill_and_rerun_stores_every_point_once(write_config, tmp_path, spbench_cmd, sig):
    cfg = write_config(CFG)
    out = tmp_path / "res"
    cmd = [*spbench_cmd, "run", str(cfg), "--out", str(out)]
    # as from a terminal: SIGINT at its default (a background `nohup`/`&` parent hands it down
    # ignored, and then Ctrl-C is meant to be ignored)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for_rows(out, 3, proc)
    assert proc.poll() is None, "sweep finished before it could be interrupted; make points slower"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    first = len(_rows(out))
    assert 0 < first < N_POINTS
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "interrupted" in err and "rerun" in err
    if sig == signal.SIGTERM:  # a batch system's time limit: stopped like Ctrl-C
        assert proc.returncode == 143 and "terminated" in err and "rerun" in err
        assert not (out / ".lock").exists()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{first} already stored" in res.stderr
    rows = _rows(out)
    keys = [(r["dataset"], r["algorithm"], r["cores"], r["repeat"]) for r in rows]
    assert len(rows) == N_POINTS and len(set(keys)) == N_POINTS
    assert all(r["status"] == "ok" for r in rows)
    assert not list((out / "runs").glob(".*.tmp"))
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert f"{N_POINTS} already stored, 0 run" in again.stderr
    fresh = subprocess.run(cmd[:-2] + ["--out", str(out), "--fresh", "--runs", "1", "--repeats", "2"],
                           capture_output=True, text=True, timeout=120)
    assert fresh.returncode == 0 and len(_rows(out)) == N_POINTS // 3


@pytest.mark.slow
def test_changed_version_is_superseded_other_execution_kept(write_config, tmp_path, spbench_cmd):
    cfg = write_config(CFG.replace("runs: 3", "runs: 1").replace("repeats: 1000", "repeats: 3"))
    out = tmp_path / "res"
    assert subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(out), "-q"]).returncode == 0
    rows = _rows(out)
    old = dict(rows[0], run_id="0" * 20)                       # same point, an older code version
    other = dict(rows[0], run_id="1" * 20, execution="simulated")  # same point, other execution
    for r in (old, other):
        (out / "runs" / f"{r['run_id']}.json").write_text(json.dumps(r))
    res = subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(out)], capture_output=True, text=True)
    assert "moved 1 rows" in res.stderr
    assert (out / "runs" / "superseded" / f"{'0' * 20}.json").exists()
    assert (out / "runs" / f"{'1' * 20}.json").exists()
