"""Failures that say so: one-line errors with exit code 2 and nothing written for bad
input, exit code 1 with the first distinct errors when points fail, the results-folder lock,
stale temp files, --dry-run marking stored points, the non-symmetric matrix warning."""
import gzip
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.results import ResultStore

CFG = """
name: fail
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 10}
sweep:
  algorithm: [serial, growlocal]
  cores: [1]
repeats: 2
"""
TUCKER_CFG = """
name: t
experiment: tucker
execution: simulate
datasets:
  - nell2: {nnz: 500, standin: true}
sweep: {algorithm: [lite, medium], ranks: [2], K: [2]}
"""


def _run(cfg, out, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), *extra])


def _one_line_refusal(res, out, *words):
    """Exit 2, a single 'Error:' line holding ``words``, and no results folder."""
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]
    assert not out.exists()


def _rows(out):
    return [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]


@pytest.mark.parametrize("content, words", [
    (b"name: x\nexperiment: sptrsv\n\xff\xfe: 1\n", ["line 3", "expected UTF-8 text", "0xff"]),
    (b"name: x\x00\x01\x02", ["binary data", "NUL byte at offset 7"]),
    (b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", ["nested more than 64 levels"]),
    (b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(
        bytes(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n", "ascii")
        for i in range(8)), ["aliases expand to more than 100000 values"]),
])
def test_unreadable_configs_are_one_line_exit_2(tmp_path, content, words):
    cfg = tmp_path / "bad.yaml"
    cfg.write_bytes(content)
    _one_line_refusal(_run(cfg, tmp_path / "out"), tmp_path / "out", "bad.yaml", *words)


@pytest.mark.parametrize("params, words", [
    ("{growlocal: {sync_cst: 3}}", ["params.growlocal", "scheduler 'growlocal'", "unknown parameter 'sync_cst'",
                                    "known parameters: min_superstep_size, sync_cost"]),
    ("{growlocal: {sync_cost: abc}}", ["parameter 'sync_cost' = 'abc'", "expected an integer >= 0"]),
    ("{growlocal: {min_superstep_size: 0}}", ["'min_superstep_size' = 0", "expected an integer >= 1"]),
    ("{spmp: {reduce: 1}}", ["scheduler 'spmp'", "'reduce' = 1", "expected true or false"]),
    ("{serial: {x: 1}}", ["scheduler 'serial'", "unknown parameter 'x'", "known parameters: none"]),
])
def test_bad_scheduler_parameters_are_config_errors(write_config, tmp_path, params, words):
    cfg = write_config(CFG + f"params: {params}\n")
    _one_line_refusal(_run(cfg, tmp_path / "out"), tmp_path / "out", *words)


@pytest.mark.parametrize("params, words", [
    ('{medium: {grid: "7x1x1"}}', ["scheme 'medium'", "'grid' = '7x1x1'", "a list of positive integers"]),
    ("{lite: {bogus: 3}}", ["scheme 'lite'", "unknown parameter 'bogus'", "known parameters: none"]),
    ("{hyper: {epsilon: 2}}", ["scheme 'hyper'", "'epsilon' = 2", "in [0.0, 1.0]", "cache_dir, epsilon"]),
])
def test_bad_scheme_parameters_are_config_errors(write_config, tmp_path, params, words):
    cfg = write_config(TUCKER_CFG + f"params: {params}\n")
    _one_line_refusal(_run(cfg, tmp_path / "out"), tmp_path / "out", *words)


MTX = "%%MatrixMarket matrix coordinate real {kind}\n{header}\n{entries}"


@pytest.mark.parametrize("name, text, words", [
    ("banner.mtx", "garbage\n", ["Missing banner"]),
    ("range.mtx", MTX.format(kind="general", header="3 3 2", entries="1 1 4\n9 1 1\n"), ["out of bounds"]),
    ("shape.mtx", MTX.format(kind="general", header="3 2 2", entries="1 1 4\n2 2 4\n"), ["square", "3x2"]),
    ("diag.mtx", MTX.format(kind="symmetric", header="3 3 2", entries="1 1 4\n3 3 4\n"), ["diagonal"]),
])
def test_bad_matrix_files_write_nothing(write_config, tmp_path, name, text, words):
    (tmp_path / name).write_text(text)
    cfg = write_config(CFG.replace("- lap2d-5pt: {grid: 10}", f"- path: {name}"))
    _one_line_refusal(_run(cfg, tmp_path / "out"), tmp_path / "out", name, *words)


@pytest.mark.parametrize("name, words", [("bad.tns", ["line 3", "'x' is not an integer"]),
                                         ("cut.tns.gz", ["line", "compressed data ends"])])
def test_bad_tensor_files_write_nothing(write_config, tmp_path, name, words):
    good = b"1 1 1 1.0\n2 2 2 2.0\n3 3 1 1.0\n" * 50
    if name == "bad.tns":
        (tmp_path / name).write_bytes(b"1 1 1 1.0\n2 2 2 2.0\n3 x 1 1.0\n")
    else:
        (tmp_path / name).write_bytes(gzip.compress(good)[:40])
    cfg = write_config(TUCKER_CFG.replace("standin: true}", f"standin: true}}\n  - path: {name}"))
    out = tmp_path / "out"
    _one_line_refusal(_run(cfg, out), out, name, *words)


def test_a_bad_data_set_leaves_an_existing_folder_as_it_was(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    meta = (out / "meta.json").read_text()
    (tmp_path / "banner.mtx").write_text("garbage\n")
    cfg = write_config(CFG.replace("  - lap2d-5pt: {grid: 10}", "  - lap2d-5pt: {grid: 10}\n  - path: banner.mtx"))
    res = _run(cfg, out)
    assert res.exit_code == 2 and "banner.mtx" in res.output
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert (out / "meta.json").read_text() == meta


def test_failed_points_exit_1_with_their_errors_also_quiet(write_config, tmp_path, monkeypatch):
    from spbench.sptrsv.runner import SptrsvExperiment

    real = SptrsvExperiment.run

    def broken(self, point, prepared, config):
        if point.axes["algorithm"] == "growlocal":
            raise RuntimeError("the schedule broke")
        return real(self, point, prepared, config)
    monkeypatch.setattr(SptrsvExperiment, "run", broken)
    out = tmp_path / "out"
    res = _run(write_config(CFG), out, "-q")
    assert res.exit_code == 1, res.output
    assert "(error 1, ok 1)" in res.output and "1 run failed" in res.output
    assert "[1x] RuntimeError: the schedule broke" in res.output
    again = _run(write_config(CFG), out)  # the failed point runs again and is shown as it fails
    assert again.exit_code == 1 and "    error: RuntimeError: the schedule broke" in again.output
    assert "1 already stored, 1 run" in again.output


def test_non_symmetric_matrix_warns_and_rows_say_so(write_config, tmp_path):
    (tmp_path / "ns.mtx").write_text(MTX.format(kind="general", header="3 3 5",
                                                entries="1 1 4\n2 2 4\n3 3 4\n2 1 1\n1 3 2\n"))
    cfg = write_config(CFG.replace("- lap2d-5pt: {grid: 10}", "- path: ns.mtx"))
    res = _run(cfg, tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    warning = [line for line in res.output.splitlines() if "warning" in line]
    assert len(warning) == 1 and "ns.mtx" in warning[0] and "lower triangle is solved" in warning[0]
    assert {r["input_symmetric"] for r in _rows(tmp_path / "out")} == {False}
    sym = _run(write_config(CFG), tmp_path / "sym", "-q")
    assert "warning" not in sym.output and {r["input_symmetric"] for r in _rows(tmp_path / "sym")} == {True}


def test_stale_temp_files_are_removed(write_config, tmp_path):
    runs = tmp_path / "out" / "runs"
    runs.mkdir(parents=True)
    stale = [runs / ".abc.x1.tmp", runs / ".abc.x2.part", runs / ".abc.factors.part.npz",
             tmp_path / "out" / ".jobs" / "job-2r-x.progress"]
    stale[-1].parent.mkdir()
    for p in stale:
        p.write_text("half")
    assert _run(write_config(CFG), tmp_path / "out", "-q").exit_code == 0
    assert not any(p.exists() for p in stale) and len(_rows(tmp_path / "out")) == 2


def test_dry_run_marks_stored_points(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG.replace("[serial, growlocal]", "[serial]")), out, "-q").exit_code == 0
    res = _run(write_config(CFG), out, "--dry-run")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].endswith("algorithm=serial cores=1  (stored)")
    assert lines[1].endswith("algorithm=growlocal cores=1")
    assert "2 points (1 already stored" in lines[2]


def test_busy_results_folder_is_refused_naming_the_pid(write_config, tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from spbench.results import ResultStore\n"
        f"with ResultStore({str(out)!r}).lock():\n"
        "    print('held', flush=True); time.sleep(60)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = _run(write_config(CFG), out)
        assert res.exit_code == 2 and f"pid {holder.pid}" in res.output and "--wait" in res.output
        assert not (out / "runs").exists() and not (out / "meta.json").exists()
    finally:
        holder.kill()
        holder.wait()
    assert _run(write_config(CFG), out, "-q").exit_code == 0  # the kernel released the dead holder's lock


def test_wait_blocks_until_the_folder_is_free(write_config, tmp_path):
    out = tmp_path / "out"
    store = ResultStore(out)
    held = threading.Event()

    def hold():
        with store.lock():
            held.set()
            time.sleep(1.5)
    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    res = _run(write_config(CFG), out, "--wait")
    thread.join()
    assert res.exit_code == 0, res.output
    assert "waiting for it to end" in res.output
    assert len(_rows(out)) == 2 and not (out / ".lock").exists()


def test_profile_report_lists_failed_rows_with_their_errors(write_config, tmp_path, monkeypatch):
    from spbench.sptrsv.runner import SptrsvExperiment

    def broken(self, point, prepared, config):
        raise RuntimeError(f"no schedule | for {point.axes['algorithm']}")
    monkeypatch.setattr(SptrsvExperiment, "run", broken)
    out, plots = tmp_path / "out", tmp_path / "plots"
    assert _run(write_config(CFG), out, "-q").exit_code == 1
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)])
    assert res.exit_code == 0, res.output
    report = (plots / "out" / "REPORT.md").read_text()
    assert "## Rows left out" in report and "| dataset | algorithm | cores | repeat | status | error |" in report
    assert "| error | RuntimeError: no schedule \\| for growlocal |" in report
    assert "| error | RuntimeError: no schedule \\| for serial |" in report


def test_make_says_the_build_takes_a_minute(tmp_path):
    root = Path(__file__).resolve().parents[1]
    res = subprocess.run(["make", "-n", "-C", str(root), f"VENV={tmp_path / 'venv'}", "install"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    said = res.stdout.index("building the kernels (about a minute)")
    assert said < res.stdout.index("pip install --quiet -e")
