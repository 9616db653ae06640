"""A row's identity covers what changed its number: a rerun with other settings (calibration,
barrier, repeats, thread binding) is refused in one line or, with --fresh, replaces the old rows as
a whole; a folder holds one sweep; --fresh interrupted at any point loses no complete row;
meta.json describes exactly the rows in runs/."""
import dataclasses
import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import load_rows
from spbench.sptrsv.calibration import calibrate as sptrsv_calibration

CFG = """
name: ident
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 12}
sweep:
  algorithm: [serial, growlocal]
  cores: [1]
repeats: 2
"""
TUCKER = """
name: tflags
experiment: tucker
execution: simulate
datasets:
  - nell2: {nnz: 500, standin: true}
sweep: {algorithm: [lite], ranks: [2], K: [2]}
"""
MACHINE = {"host": "h", "cpu": "c", "cores": 2}
SYNC = {"barrier": 1e-7, "barrier_omp": 2e-7, "weak_barrier": 5e-8, "p2p_dep": 2e-8}


def _calibration(path, t_nnz):
    """An SpTrSV calibration whose per-nonzero cost is ``t_nnz`` (the modelled times scale with it)."""
    rates = {"t_row": 2e-9, "t_nnz": t_nnz, "t_chain": 0.0, "t_far": 0.0}
    measured = {"schema_version": sptrsv_calibration.SCHEMA_VERSION, "kind": sptrsv_calibration.KIND,
                "date": f"2026-01-0{1 + int(t_nnz * 1e9)}T00:00:00+00:00", "quick": True, "machine": MACHINE,
                "serial": rates, "cores": {"1": {**rates, **SYNC}, "2": {**rates, **SYNC}}}
    return sptrsv_calibration.save(measured, path)


def _run(cfg, out, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "-q", *extra])


def _rows(folder):
    """The rows in ``folder`` now (a fragment a running sweep moves meanwhile is passed over)."""
    rows = []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rows.append(json.loads(p.read_text()))
        except FileNotFoundError:
            continue
    return rows


def _snapshot(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _one_line(res, *words):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]


def test_a_simulated_rerun_with_another_calibration_is_refused_and_fresh_replaces_it(write_config, tmp_path):
    a, b = _calibration(tmp_path / "a.json", 1e-9), _calibration(tmp_path / "b.json", 3e-9)
    cfg, out = write_config(CFG.replace("repeats: 2", "execution: simulate")), tmp_path / "out"
    assert _run(cfg, out, "--machine", str(a)).exit_code == 0
    before, old = _snapshot(out), _rows(out / "runs")
    _one_line(_run(cfg, out, "--machine", str(b)), str(out), "calibration", "--fresh", "another --out")
    assert _snapshot(out) == before  # refused: the folder as it was
    res = _run(cfg, out, "--machine", str(b), "--fresh")
    assert res.exit_code == 0, res.output
    assert f"moved 2 rows made with other settings to {out / 'runs' / 'superseded'}" in res.output
    new, meta = _rows(out / "runs"), json.loads((out / "meta.json").read_text())
    assert len(new) == 2 and {r["run_id"] for r in _rows(out / "runs" / "superseded")} == {r["run_id"] for r in old}
    assert {json.dumps(r["settings"], sort_keys=True) for r in new} == {json.dumps(meta["settings"]["simulated"],
                                                                                   sort_keys=True)}
    assert meta["calibration"]["created"].startswith("2026-01-04") and "2026-01-04" in new[0]["settings"]["calibration"]
    slower = {r["algorithm"]: r["solve_time"] for r in new}
    assert all(slower[r["algorithm"]] > r["solve_time"] for r in old)  # the new calibration's numbers, not the old
    again = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--machine", str(b)])
    assert again.exit_code == 0 and "2 already stored, 0 run" in again.output


def test_a_measured_rerun_with_other_barrier_runs_and_repeats_never_pools(write_config, tmp_path):
    cfg, out = write_config(CFG), tmp_path / "out"
    assert _run(cfg, out, "--runs", "3").exit_code == 0 and len(_rows(out / "runs")) == 6
    before = _snapshot(out)
    _one_line(_run(cfg, out, "--barrier", "omp", "--runs", "1", "--repeats", "10"), "barrier = 'auto'",
              "barrier = 'omp'", "repeats", "--fresh")
    assert _snapshot(out) == before
    assert _run(cfg, out, "--barrier", "omp", "--runs", "1", "--repeats", "10", "--fresh").exit_code == 0
    rows = load_rows(out)
    assert len(rows) == 2 and set(rows["repeat"]) == {0}
    assert all(s["barrier"] == "omp" and s["repeats"] == 10 for s in rows["settings"])
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["measured"] == rows["settings"][0]
    assert len(_rows(out / "runs" / "superseded")) == 6


def test_fewer_runs_move_the_extra_repeats_aside(write_config, tmp_path):
    cfg, out = write_config(CFG), tmp_path / "out"
    assert _run(cfg, out, "--runs", "3").exit_code == 0
    res = _run(cfg, out, "--runs", "1")
    assert res.exit_code == 0 and "moved 4 rows" in res.output
    assert sorted(r["repeat"] for r in _rows(out / "runs")) == [0, 0]


@pytest.mark.parametrize("version", [0, 2, None, "1"])
def test_a_row_of_another_schema_under_its_run_id_runs_again_and_is_kept_aside(write_config, tmp_path, version):
    cfg, out = write_config(CFG), tmp_path / "out"
    assert _run(cfg, out).exit_code == 0
    edited = sorted((out / "runs").glob("*.json"))[0]
    row = json.loads(edited.read_text())
    edited.write_text(json.dumps({**row, "schema_version": version} if version is not None
                                 else {k: v for k, v in row.items() if k != "schema_version"}))
    res = _run(cfg, out)
    assert res.exit_code == 0, res.output
    assert "moved 1 rows of another row schema" in res.output and "1 already stored, 1 run" in res.output
    kept = out / "runs" / "superseded" / edited.name
    assert json.loads(kept.read_text()).get("schema_version") == version
    assert json.loads(edited.read_text())["schema_version"] == 1   # the point's new row
    assert len(load_rows(out)) == 2   # the report reads the folder


def test_thread_binding_and_wait_policy_are_settings_of_measured_rows(write_config, tmp_path, monkeypatch):
    cfg, out = write_config(CFG), tmp_path / "out"
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert _run(cfg, out).exit_code == 0
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    _one_line(_run(cfg, out), "OMP_WAIT_POLICY = unset", "OMP_WAIT_POLICY = 'passive'")
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("OMP_PROC_BIND", "close")
    _one_line(_run(cfg, out), "OMP_PROC_BIND")


@pytest.mark.parametrize("other", [
    CFG.replace("name: ident", "name: another"),
    TUCKER.replace("name: tflags", "name: ident"),  # the same name, another experiment
])
def test_a_folder_holds_one_sweep(write_config, tmp_path, other):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out).exit_code == 0
    before = _snapshot(out)
    for extra in ((), ("--fresh",)):
        _one_line(_run(write_config(other, "other.yaml"), out, *extra), str(out), "holds the rows of sweep 'ident'",
                  "another --out")
        assert _snapshot(out) == before


def test_a_folder_without_meta_json_is_known_by_its_rows(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out).exit_code == 0
    (out / "meta.json").unlink()
    _one_line(_run(write_config(CFG.replace("name: ident", "name: b"), "b.yaml"), out), "sweep 'ident'")


SLOW = """
name: slowfresh
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 150}
  - lap2d-9pt: {grid: 120}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
repeats: 2000
"""
N_SLOW = 2 * 3


def _complete(out):
    return {(r["dataset"], r["algorithm"], r["cores"], r["repeat"]) for r in _rows(out / "runs")
            if r["status"] == "ok"}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_fresh_interrupted_at_a_random_point_loses_no_complete_row(write_config, tmp_path, spbench_cmd, sig):
    cfg, out = write_config(SLOW), tmp_path / "out"
    cmd = [*spbench_cmd, "run", str(cfg), "--out", str(out), "-q"]
    assert subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    complete = _complete(out)
    assert len(complete) == N_SLOW
    stamp = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    replaced_before_kill = random.Random(int(sig)).randint(1, N_SLOW - 2)
    proc = subprocess.Popen([*cmd, "--fresh"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if sum(p.stat().st_mtime_ns != stamp.get(p.name) for p in (out / "runs").glob("*.json")) >= replaced_before_kill:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert _complete(out) == complete  # each point: its new row, or the old one it has not replaced yet
    if sig == signal.SIGINT and proc.returncode == 130:  # else the last point ended as the signal came
        assert "rerun without --fresh to resume" in err
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and f"{N_SLOW} already stored, 0 run" in res.stderr


@pytest.mark.slow
def test_fresh_with_other_settings_interrupted_keeps_the_old_rows_findable(write_config, tmp_path, spbench_cmd):
    cfg, out = write_config(SLOW), tmp_path / "out"
    cmd = [*spbench_cmd, "run", str(cfg), "--out", str(out)]
    assert subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    old = {r["run_id"] for r in _rows(out / "runs")}
    proc = subprocess.Popen([*cmd, "--fresh", "--barrier", "omp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not any(
            r["settings"]["barrier"] == "omp" for r in _rows(out / "runs")):
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    superseded = out / "runs" / "superseded"
    assert {r["run_id"] for r in _rows(superseded)} == old and f"to {superseded}" in err
    assert all(r["settings"]["barrier"] == "omp" for r in _rows(out / "runs"))


def test_a_forced_calibration_is_said_in_every_report_it_feeds(write_config, tmp_path):
    path = _calibration(tmp_path / "busy.json", 1e-9)
    envelope = json.loads(path.read_text())
    envelope["terms"]["load"] = {"busy": True, "reason": "other processes used 1.3 cores"}
    path.write_text(json.dumps(envelope))
    cfg, out = write_config(CFG.replace("repeats: 2", "execution: simulate")), tmp_path / "out"
    assert _run(cfg, out, "--machine", str(path)).exit_code == 0
    assert all("busy machine" in r["settings"]["calibration_forced"] for r in _rows(out / "runs"))
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output
    report = (tmp_path / "plots" / "out" / "REPORT.md").read_text()
    assert "calibration kept with `spbench calibrate --force`" in report and "other processes used 1.3 cores" in report


def test_params_of_an_algorithm_not_in_the_sweep_are_a_warning(write_config, tmp_path):
    res = _run(write_config(CFG + "params: {hdagg: {}}\n"), tmp_path / "out")
    assert res.exit_code == 0 and "spbench: warning:" in res.output and "params.hdagg" in res.output



def test_a_flag_s_value_refused_when_the_sweep_starts_names_the_flag(write_config, tmp_path):
    cfg, out = write_config(TUCKER), tmp_path / "out"
    _one_line(_run(cfg, out, "--execution", "measured", "--launcher", "no-such-mpirun -n {ranks}"),
              "--launcher: 'no-such-mpirun' not found")
    (tmp_path / "junk.json").write_text("{}")
    _one_line(_run(cfg, out, "--machine", str(tmp_path / "junk.json")), "--machine: ")
    assert not out.exists()


SHIPPED = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))
#: one changed setting per flag a user reruns a shipped config with (the calibration: its content)
CHANGES = {"repeats": 7, "seed": 3, "barrier": "omp", "launcher": "srun -n {ranks}", "oversubscribe": True}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_config_rerun_with_one_setting_changed_has_other_settings(path):
    """Each setting a flag or the environment changes gives the sweep other settings than its stored
    rows', so the rerun is refused (or, with --fresh, replaces them): a profile never mixes them."""
    from spbench.pipeline.config import load_config
    from spbench.pipeline.sweep import sweep_settings

    config = load_config(path)
    for execution in sorted({config.execution, "simulate", "measured"} & set(_executions(config))):
        base = config.with_overrides(execution=execution)
        before = sweep_settings(base, {"created": "a", "terms": {}}, environ={})
        changed = [k for k in CHANGES if k in ("repeats", "seed") or k in base.options]
        for key in changed:
            if key == "seed":
                other = dataclasses.replace(base, seed=CHANGES[key])
            else:
                other = base.with_overrides(**{key: CHANGES[key]})
            if key in ("launcher", "oversubscribe") and execution != "measured":
                continue
            assert sweep_settings(other, {"created": "a", "terms": {}}, environ={}) != before, (key, execution)
        if execution == "simulate":
            assert sweep_settings(base, {"created": "b", "terms": {}}, environ={}) != before
        else:
            assert sweep_settings(base, None, environ={"OMP_WAIT_POLICY": "passive"}) != before


def _executions(config):
    from spbench.experiment_registry import get_experiment
    return get_experiment(config.experiment).executions
