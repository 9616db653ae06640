"""Failures that say so: one-line errors with exit code 2 and nothing written for bad input, exit
code 1 with the first distinct errors when points fail, the results-folder lock, stale temp files,
--dry-run marking stored points; I/O failures (read-only, full disk, no permission, a file for a
folder) and corrupt rows as one line each; the warnings a user wants (non-symmetric input, summed
duplicates, K above a mode's length, an iChol breakdown as error rows)."""
import errno
import gzip
import os
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import ResultStore

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
    ("{growlocal: {sync_cost: abc}}", ["parameter 'sync_cost' = 'abc'", "expected an integer in [0, 2305843009213693951]"]),
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
    ("diag.mtx", MTX.format(kind="symmetric", header="3 3 2", entries="1 1 4\n3 3 4\n"),
     ["row 2 has no nonzero diagonal", "rows counted from 1, as in Matrix Market"]),
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
    from spbench.sptrsv.experiment import SptrsvExperiment

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
    assert "algorithm=serial cores=1  (stored)  peak ~" in lines[0]
    assert "algorithm=growlocal cores=1  peak ~" in lines[1] and "(stored)" not in lines[1]
    assert "2 points (1 already stored" in lines[-1]


def test_busy_results_folder_is_refused_naming_the_pid(write_config, tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from spbench.store.results import ResultStore\n"
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


@pytest.mark.slow
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
    from spbench.sptrsv.experiment import SptrsvExperiment

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


# --- I/O failures: one line naming the path and the cause ----------------------------------------

AS_ROOT = os.geteuid() == 0


def _error_line(res, code, *words):
    """Exit ``code`` and an 'Error:' line holding ``words``; no traceback."""
    assert res.exit_code == code, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and all(w in errors[0] for w in words), res.output
    assert "Traceback" not in res.output and not isinstance(res.exception, OSError)
    return errors[0]


def _failing_mkstemp(monkeypatch, where: str, code: int, cause: str, after: int = 0):
    """tempfile.mkstemp (which every atomic write and the write probe use) failing with ``code`` in
    folders whose path holds ``where``, once ``after`` files have been made there."""
    import spbench.store.atomic_files as atomic

    real, made = atomic.tempfile.mkstemp, []

    def mkstemp(*args, dir=None, **kwargs):
        if where in str(dir):
            if len(made) >= after:
                raise OSError(code, cause)
            made.append(dir)
        return real(*args, dir=dir, **kwargs)
    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)


def test_results_folder_that_is_a_file_is_one_line_exit_2(write_config, tmp_path):
    (tmp_path / "taken").write_text("x")
    for out in (tmp_path / "taken", tmp_path / "taken" / "sub"):
        _error_line(_run(write_config(CFG), out), 2, str(tmp_path / "taken"), "a file, not a folder")
    assert (tmp_path / "taken").read_text() == "x"


@pytest.mark.parametrize("code, cause", [(errno.EROFS, "Read-only file system"),
                                         (errno.EACCES, "Permission denied")])
def test_unwritable_results_folder_is_refused_before_anything_runs(write_config, tmp_path, monkeypatch,
                                                                   code, cause):
    out = tmp_path / "out"
    _failing_mkstemp(monkeypatch, str(out), code, cause)
    _error_line(_run(write_config(CFG), out), 2, str(out), cause)
    assert not out.exists()


def test_results_folder_on_a_full_disk_is_refused_before_anything_runs(write_config, tmp_path, monkeypatch):
    import spbench.store.atomic_files as atomic

    from types import SimpleNamespace

    real = atomic.os.statvfs
    monkeypatch.setattr(atomic.os, "statvfs", lambda path: SimpleNamespace(f_bavail=0, f_frsize=4096)
                        if str(tmp_path) in str(path) else real(path))
    out = tmp_path / "out"
    _error_line(_run(write_config(CFG), out), 2, str(out), "no space left on device: 0 bytes free")
    assert not out.exists()


@pytest.mark.skipif(AS_ROOT, reason="root writes into a read-only folder")
def test_read_only_results_folder_by_permissions(write_config, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        _error_line(_run(write_config(CFG), out), 2, str(out), "Permission denied")
        assert list(out.iterdir()) == []
    finally:
        out.chmod(0o755)


def test_full_disk_mid_sweep_exits_1_keeping_the_rows(write_config, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _failing_mkstemp(monkeypatch, str(out / "runs"), errno.ENOSPC, "No space left on device", after=1)
    line = _error_line(_run(write_config(CFG), out, "-q"), 1, "No space left on device", "runs/",
                       "1 of 2 points stay stored", "rerun the same command")
    assert len(_rows(out)) == 1 and not list((out / "runs").glob(".*")), line
    monkeypatch.undo()
    again = _run(write_config(CFG), out, "-q")
    assert again.exit_code == 0 and "1 already stored, 1 run" in again.output


def test_profile_out_that_cannot_be_written_is_one_line_exit_2(write_config, tmp_path, monkeypatch):
    assert _run(write_config(CFG), tmp_path / "res", "-q").exit_code == 0
    (tmp_path / "file").write_text("x")
    res = CliRunner().invoke(main, ["profile", str(tmp_path / "res"), "--out", str(tmp_path / "file" / "plots")])
    _error_line(res, 2, "--out", str(tmp_path / "file"), "a file, not a folder")
    _failing_mkstemp(monkeypatch, str(tmp_path / "plots"), errno.EROFS, "Read-only file system")
    res = CliRunner().invoke(main, ["profile", str(tmp_path / "res"), "--out", str(tmp_path / "plots")])
    _error_line(res, 2, str(tmp_path / "plots"), "Read-only file system")
    assert not (tmp_path / "plots").exists()


@pytest.mark.slow
def test_profile_write_failing_part_way_exits_1_naming_what_is_kept(write_config, tmp_path, monkeypatch):
    for name in ("a", "b"):
        assert _run(write_config(CFG.replace("name: fail", f"name: {name}")), tmp_path / "res" / name,
                    "-q").exit_code == 0
    _failing_mkstemp(monkeypatch, str(tmp_path / "plots" / "b"), errno.ENOSPC, "No space left on device")
    res = CliRunner().invoke(main, ["profile", str(tmp_path / "res"), "--out", str(tmp_path / "plots")])
    _error_line(res, 1, str(tmp_path / "plots" / "b"), "No space left on device", "kept (a)")
    assert (tmp_path / "plots" / "a" / "REPORT.md").is_file()


def test_bench_out_that_is_a_file_is_refused_before_measuring(tmp_path):
    (tmp_path / "file").write_text("x")
    res = CliRunner().invoke(main, ["bench", "serial", "--grid", "2", "--repeats", "1", "--out", str(tmp_path / "file")])
    _error_line(res, 2, str(tmp_path / "file"), "a file, not a folder")


def test_other_write_failures_are_one_line_exit_1(tmp_path, monkeypatch):
    cal = tmp_path / "cal"
    _failing_mkstemp(monkeypatch, str(cal), errno.ENOSPC, "No space left on device", after=1)  # past the probe
    res = CliRunner().invoke(main, ["calibrate", "--quick", "--force", "--cores", "1", "--out", str(cal / "c.json")])
    _error_line(res, 1, str(cal / "c.json"), "No space left on device")


# --- corrupt rows ------------------------------------------------------------------------------

def test_run_sets_corrupt_rows_aside_and_says_so(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    cut = sorted((out / "runs").glob("*.json"))[0]
    text = cut.read_text()
    half = text[:text.index(': "') + 4]  # cut inside the first string
    cut.write_text(half)
    (out / "runs" / "empty.json").write_text("{}")
    res = _run(write_config(CFG), out, "-q")
    assert res.exit_code == 0, res.output
    said = [line for line in res.output.splitlines() if "warning" in line]
    assert len(said) == 2, res.output
    assert str(cut) in said[0] and "not a valid result fragment (Unterminated string starting at: line" in said[0]
    assert f"moved to {out / 'runs' / 'corrupt' / cut.name}" in said[0]
    assert "empty.json: not a result row (a JSON object without run_id, empty)" in said[1]
    assert (out / "runs" / "corrupt" / cut.name).read_text() == half
    assert "1 already stored, 1 run" in res.output and len(_rows(out)) == 2


@pytest.mark.slow
def test_profile_leaves_corrupt_rows_out_with_a_warning_exit_1(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    (out / "runs" / "cut.json").write_text('{"run_id": "ab')
    (out / "runs" / "empty.json").write_text("{}")
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 1, res.output
    said = [line for line in res.output.splitlines() if "warning" in line and ".json" in line]
    assert len(said) == 2 and all("left out of the report" in line for line in said), res.output
    assert "cut.json: not a valid result fragment (Unterminated string starting at: line 1 column 12 (char 11))" \
        in said[0]
    assert "empty.json: not a result row" in said[1] and "schema_version" not in said[1]
    assert "out: 2 rows" in res.output and (tmp_path / "plots" / "out" / "REPORT.md").is_file()


def test_a_folder_named_like_a_row_is_set_aside_not_a_traceback(write_config, tmp_path):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    (out / "runs" / "dir.json").mkdir()
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 1 and not isinstance(res.exception, OSError), res.output
    assert "dir.json: not a valid result fragment (Is a directory); left out of the report" in res.output
    res = _run(write_config(CFG), out, "-q")
    assert res.exit_code == 0, res.output
    assert f"dir.json: not a valid result fragment (Is a directory); moved to {out / 'runs' / 'corrupt' / 'dir.json'}" \
        in res.output
    assert (out / "runs" / "corrupt" / "dir.json").is_dir() and "2 already stored" in res.output


def test_a_file_named_runs_is_refused_before_anything_runs(write_config, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs").write_text("x")
    _error_line(_run(write_config(CFG), out), 2, str(out / "runs"), "a file, not a folder")
    assert sorted(p.name for p in out.iterdir()) == ["runs"] and (out / "runs").read_text() == "x"


@pytest.mark.parametrize("name", ["meta.json", ".meta.lock", ".lock"])
def test_a_folder_named_like_the_store_s_files_is_refused_before_anything_runs(write_config, tmp_path, name):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    (out / name).unlink(missing_ok=True)
    (out / name).mkdir()
    before = sorted((p.relative_to(out), p.is_file() and p.read_bytes()) for p in out.rglob("*"))
    _error_line(_run(write_config(CFG), out, "--fresh"), 2, f"{out / name}: cannot write (a folder, not a file)")
    assert sorted((p.relative_to(out), p.is_file() and p.read_bytes()) for p in out.rglob("*")) == before


@pytest.mark.parametrize("meta", ['[1, 2]', '"text"', '{"sweep": "fail", "machine": "x", "other_machines": 3}'])
def test_a_meta_json_holding_no_object_is_recorded_anew(write_config, tmp_path, meta, monkeypatch):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    (out / "meta.json").write_text(meta)
    monkeypatch.setenv("SLURM_JOB_ID", "7")   # appends to meta.json's slurm_jobs
    res = _run(write_config(CFG), out, "-q")
    assert res.exit_code == 0 and "warning" not in res.output, res.output
    written = json.loads((out / "meta.json").read_text())
    assert isinstance(written["machine"], dict) and written["slurm_jobs"][-1]["slurm_job_id"] == "7"


@pytest.mark.parametrize("damage", [lambda b: b[:len(b) // 2], lambda b: b"\xff" + b])
def test_a_meta_json_that_is_no_json_is_kept_aside_with_a_warning(write_config, tmp_path, damage):
    out = tmp_path / "out"
    assert _run(write_config(CFG), out, "-q").exit_code == 0
    damaged = damage((out / "meta.json").read_bytes())
    (out / "meta.json").write_bytes(damaged)
    res = _run(write_config(CFG), out, "-q")
    assert res.exit_code == 0, res.output
    kept = list((out / "runs" / "corrupt").glob("meta-*.json"))
    assert len(kept) == 1 and kept[0].read_bytes() == damaged
    warning, = [line for line in res.output.splitlines() if line.startswith("spbench: warning: ")]
    assert f"{out / 'meta.json'}: not readable JSON (" in warning and f"moved to {kept[0]}" in warning
    assert json.loads((out / "meta.json").read_text())["sweep"] == "fail"
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output   # the kept file is no row of the report


# --- warnings a user wants ----------------------------------------------------------------------

def _warnings(res):
    return [line for line in res.output.splitlines() if line.startswith("spbench: warning: ")]


def test_summed_duplicates_warn_and_duplicates_error_refuses(write_config, tmp_path):
    (tmp_path / "dup.tns").write_text("1 1 1 1.0\n2 2 2 2.0\n1 1 1 3.0\n3 3 2 1.0\n")
    cfg = write_config(TUCKER_CFG.replace("  - nell2: {nnz: 500, standin: true}", "  - path: dup.tns"))
    res = _run(cfg, tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    said = [w for w in _warnings(res) if "dup.tns" in w]
    assert len(said) == 1 and "1 line repeats the coordinates" in said[0] and "--duplicates error" in said[0]
    for out in (tmp_path / "out", tmp_path / "out2"):  # the store summed before is refused too
        _one_line_refusal(_run(cfg, out, "--duplicates", "error"), tmp_path / "none", "dup.tns",
                          "repeat", "duplicates: error")


def test_duplicates_error_on_a_first_conversion_names_the_lines(write_config, tmp_path):
    (tmp_path / "dup.tns").write_text("1 1 1 1.0\n2 2 2 2.0\n1 1 1 3.0\n3 3 2 1.0\n")
    cfg = write_config(TUCKER_CFG.replace("  - nell2: {nnz: 500, standin: true}", "  - path: dup.tns"))
    _one_line_refusal(_run(cfg, tmp_path / "out", "--duplicates", "error"), tmp_path / "out",
                      "dup.tns", "line 3: repeats the coordinates of line 1")


def test_k_above_a_mode_length_warns_naming_the_padding_rule(write_config, tmp_path):
    (tmp_path / "small.tns").write_text("1 1 1 1.0\n2 2 2 2.0\n3 3 1 1.0\n4 1 2 1.0\n")
    cfg = write_config(TUCKER_CFG.replace("  - nell2: {nnz: 500, standin: true}", "  - path: small.tns")
                       .replace("K: [2]", "K: [2, 3]"))
    res = _run(cfg, tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    said = _warnings(res)
    assert len(said) == 1 and "dims 4x3x2" in said[0] and "K = 3 above the length 2 of mode 3" in said[0]
    assert "mode 1" not in said[0] and "mode 2" not in said[0] and "padding rule" in said[0]
    ok = _run(write_config(TUCKER_CFG), tmp_path / "ok", "-q")
    assert ok.exit_code == 0 and not _warnings(ok)


def test_non_symmetric_input_to_a_transform_warns(write_config, tmp_path):
    (tmp_path / "ns.mtx").write_text(MTX.format(kind="general", header="3 3 5",
                                                entries="1 1 4\n2 2 4\n3 3 4\n2 1 1\n1 3 2\n"))
    for transform, words in (("ichol", "iChol factors the symmetric matrix of its lower triangle"),
                             ("metis", "METIS orders the pattern of A + Aᵀ")):
        cfg = write_config(CFG.replace("- lap2d-5pt: {grid: 10}", f"- {{path: ns.mtx, transform: {transform}}}"))
        res = _run(cfg, tmp_path / transform, "-q")
        assert res.exit_code == 0, res.output
        said = _warnings(res)
        assert len(said) == 1 and "ns.mtx: the matrix is not symmetric" in said[0] and words in said[0]
        assert {r["input_symmetric"] for r in _rows(tmp_path / transform)} == {False}


def test_ichol_breakdown_is_an_error_row_for_that_data_set_only(write_config, tmp_path):
    # scaled, its second pivot is 0.0995 - 0.995**2 / 0.0995 < 0, and still < 0 at the 10th shift
    (tmp_path / "indef.mtx").write_text(MTX.format(kind="symmetric", header="3 3 4",
                                                   entries="1 1 1\n2 1 10\n2 2 1\n3 3 1\n"))
    cfg = write_config(CFG.replace("  - lap2d-5pt: {grid: 10}",
                                   "  - {path: indef.mtx, transform: ichol}\n  - lap2d-5pt: {grid: 10}"))
    res = _run(cfg, tmp_path / "out", "-q")
    assert res.exit_code == 1, res.output
    said = _warnings(res)
    assert len(said) == 1 and "indef+ichol: ichol: breakdown" in said[0] and "error row" in said[0]
    rows = _rows(tmp_path / "out")
    assert sorted((r["dataset"], r["status"]) for r in rows) == [
        ("indef+ichol", "error"), ("indef+ichol", "error"), ("lap2d-5pt[grid=10]", "ok"), ("lap2d-5pt[grid=10]", "ok")]
    assert all("non-positive pivot" in r["error"] for r in rows if r["status"] == "error")


def test_tucker_dry_run_says_what_a_point_runs(write_config, tmp_path):
    res = _run(write_config(TUCKER_CFG), tmp_path / "out", "--dry-run")
    assert res.exit_code == 0 and "timed runs" not in res.output, res.output
    assert "exact distribution metrics each" in res.output.splitlines()[-1]
    measured = _run(write_config(CFG), tmp_path / "m", "--dry-run")
    assert "2 timed runs each, execution measured" in measured.output


def test_progress_shows_a_small_fit_in_scientific_notation():
    import io
    from types import SimpleNamespace

    from spbench.pipeline.runner import Progress
    from spbench.pipeline.sweep import Point
    from spbench.tucker.mpi.launch import JobWatch

    class Events:
        def events(self):
            return [{"task": 0, "event": "start"},
                    {"task": 0, "event": "invocation", "invocation": 1, "invocations": 1, "fit": 4.2e-7}]
    stream = io.StringIO()
    point = Point(SimpleNamespace(name="t"), (("algorithm", "lite"),))
    watch = JobWatch([(point, {})], Progress(total=1, stream=stream))
    watch._reader = Events()
    watch.poll()
    assert "HOOI invocation 1/1, fit 4.200000e-07" in stream.getvalue()


def test_info_reports_the_cython_that_built_the_kernels(monkeypatch):
    import spbench.machine.facts as machine
    from spbench.kernels._build_info import cython_version

    real = machine.version

    def version(name):
        if name == "Cython":
            raise machine.PackageNotFoundError(name)
        return real(name)
    monkeypatch.setattr(machine, "version", version)
    res = CliRunner().invoke(main, ["info"])
    assert res.exit_code == 0
    line = [x for x in res.output.splitlines() if x.startswith("cython")]
    assert line == [f"cython       {cython_version()}"] and cython_version()[0].isdigit()
    try:
        assert cython_version() == real("Cython")  # built by the Cython installed here
    except machine.PackageNotFoundError:
        pass
