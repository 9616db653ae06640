"""`spbench profile` on rows a user can break: a row not as its kind declares is left out with a warning
naming its file (exit 1), the other rows and folders still profiled; a write failing part way keeps
the old report whole; a killed profile's temporary folder goes at the next start; a rejected input
makes no folder; the same rows make the same files. `spbench compare` leaves the same rows out, and
a fragment that holds no row, listing each with its file."""
import errno
import json
import shutil
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.row_schema import SCHEMA_VERSION

#: a sweep of two points that runs in a second (a JSON config is YAML too)
CFG = {"name": "tiny", "experiment": "sptrsv", "datasets": [{"lap2d-5pt": {"grid": 10}}],
       "sweep": {"algorithm": ["serial", "growlocal"], "cores": [1]}, "repeats": 2}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A real two-row SpTrSV sweep folder, made once; tests copy it."""
    root = tmp_path_factory.mktemp("sweep")
    (root / "cfg.yaml").write_text(json.dumps(CFG))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPBENCH_DATA", str(root / "data"))
        res = CliRunner().invoke(main, ["run", str(root / "cfg.yaml"), "--out", str(root / "tiny"), "-q"])
    assert res.exit_code == 0, res.output
    return root / "tiny"


def copy_sweep(sweep, dest):
    shutil.copytree(sweep, dest)
    return dest


def first_row(folder) -> dict:
    return json.loads(sorted((folder / "runs").glob("*.json"))[0].read_text())


def write_bad(folder, row, name="bad.json"):
    (folder / "runs" / name).write_text(json.dumps(row))
    return folder / "runs" / name


def profile(results, plots, *extra):
    return CliRunner().invoke(main, ["profile", str(results), "--out", str(plots), *extra])


def warnings_of(res):
    """The warnings about rows left out (a report may also warn that it skips a figure)."""
    return [line for line in res.output.splitlines()
            if line.startswith("spbench: warning: ") and line.endswith("left out of the report")]


def files_of(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _tucker_row(row):
    """A row a Tucker sweep could store, among SpTrSV rows."""
    keep = ("schema_version", "config", "dataset", "dataset_source", "dataset_checksum", "repeat", "status",
            "execution", "started_at", "code_version", "git_sha", "git_dirty", "host", "shard", "slurm_job_id",
            "slurm_array_job_id", "slurm_array_task_id")
    return {**{k: row[k] for k in keep}, "run_id": "t1", "experiment": "tucker", "algorithm": "lite",
            "params": {}, "ranks": 2, "K": 3}


def _json(change):
    return lambda row: json.dumps(change(row))


#: case -> (the fragment's text made from a real row, words its left-out line holds)
BROKEN = {
    "cores text": (_json(lambda r: {**r, "cores": "two"}), ["'cores'", "'two'", "expected an integer"]),
    "cores null": (_json(lambda r: {**r, "cores": None}), ["'cores'", "None", "expected an integer"]),
    "no algorithm": (_json(lambda r: {k: v for k, v in r.items() if k != "algorithm"}),
                     ["no field 'algorithm'", "expected text"]),
    "foreign JSON": (_json(lambda r: {"run_id": "x", "schema_version": SCHEMA_VERSION}),
                     ["no field 'experiment'", "expected one of", "sptrsv"]),
    "unknown experiment": (_json(lambda r: {**r, "experiment": "nope"}), ["'nope'", "expected sptrsv"]),
    "status a number": (_json(lambda r: {**r, "status": 5}), ["'status'", "expected text"]),
    "samples not numbers": (_json(lambda r: {**r, "solve_times": ["a", 1.0]}),
                            ["'solve_times'", "a list of numbers"]),
    "another experiment's row": (_json(_tucker_row), ["experiment 'tucker'", "expected sptrsv"]),
    "cut fragment": (lambda r: json.dumps(r)[:40], ["not a valid result fragment"]),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_row_not_as_declared_is_left_out_with_a_warning(sweep, tmp_path, case):
    folder = copy_sweep(sweep, tmp_path / "tiny")
    change, words = BROKEN[case]
    bad = folder / "runs" / "bad.json"
    bad.write_text(change(first_row(folder)))
    res = profile(folder, tmp_path / "plots")
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, (SystemExit, type(None)))
    said = warnings_of(res)
    assert len(said) == 1, res.output
    assert str(bad) in said[0] and said[0].endswith("left out of the report"), said[0]
    assert all(w in said[0] for w in words), said[0]
    assert "tiny: 2 rows" in res.output and (tmp_path / "plots" / "tiny" / "REPORT.md").is_file()


def test_one_bad_folder_does_not_stop_the_others(sweep, tmp_path):
    results = tmp_path / "results"
    for name in ("a", "b", "c"):
        copy_sweep(sweep, results / name)
    write_bad(results / "b", {**first_row(results / "b"), "cores": "two"})
    write_bad(results / "c", {"run_id": "x", "schema_version": SCHEMA_VERSION}, "foreign.json")
    res = profile(results, tmp_path / "plots")
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert [line.split(": ")[2] for line in warnings_of(res)] == [str(results / "b" / "runs" / "bad.json"),
                                                                  str(results / "c" / "runs" / "foreign.json")]
    for name in ("a", "b", "c"):
        assert f"{name}: 2 rows" in res.output and (tmp_path / "plots" / name / "REPORT.md").is_file()


def test_a_folder_whose_every_row_is_left_out_makes_no_folder(sweep, tmp_path):
    results = tmp_path / "results"
    bad = results / "bad"
    (bad / "runs").mkdir(parents=True)
    write_bad(bad, {**first_row(sweep), "cores": "two"})
    res = profile(results, tmp_path / "plots")
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert len(warnings_of(res)) == 1 and not (tmp_path / "plots").exists()
    copy_sweep(sweep, results / "good")
    res = profile(results, tmp_path / "plots")
    assert res.exit_code == 1 and sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["good"]


def test_a_folder_without_rows_makes_no_folder(tmp_path):
    (tmp_path / "empty" / "runs").mkdir(parents=True)
    res = profile(tmp_path / "empty", tmp_path / "plots")
    assert "no rows" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "plots").exists()


def test_rows_of_two_sweeps_in_one_folder_are_one_line_and_the_others_profiled(sweep, tmp_path):
    results = tmp_path / "results"
    copy_sweep(sweep, results / "a")
    mixed = copy_sweep(sweep, results / "mixed")
    write_bad(mixed, {**first_row(mixed), "run_id": "other", "config": "other"}, "other.json")
    res = profile(results, tmp_path / "plots")
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    errors = [line for line in res.output.splitlines() if str(mixed) in line and "several sweeps" in line]
    assert len(errors) == 1, res.output
    assert (tmp_path / "plots" / "a" / "REPORT.md").is_file() and not (tmp_path / "plots" / "mixed").exists()


def _failing_mkstemp(monkeypatch, where: str, after: int):
    """tempfile.mkstemp (every atomic write) failing with a full disk under ``where`` after ``after`` files."""
    import spbench.store.atomic_files as atomic

    real, made = atomic.tempfile.mkstemp, []

    def mkstemp(*args, dir=None, **kwargs):
        if where in str(dir):
            if len(made) >= after:
                raise OSError(errno.ENOSPC, "No space left on device")
            made.append(dir)
        return real(*args, dir=dir, **kwargs)
    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)


def test_a_full_disk_keeps_the_old_report_whole(sweep, tmp_path, monkeypatch):
    folder, plots = copy_sweep(sweep, tmp_path / "tiny"), tmp_path / "plots"
    assert profile(folder, plots).exit_code == 0
    before = files_of(plots / "tiny")
    frag = sorted((folder / "runs").glob("*.json"))[0]
    row = json.loads(frag.read_text())
    frag.write_text(json.dumps({**row, "solve_time": row["solve_time"] * 3,
                                "solve_times": [t * 3 for t in row["solve_times"]]}))
    _failing_mkstemp(monkeypatch, str(plots), after=3)
    res = profile(folder, plots)
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0], res.output
    assert f"{plots / 'tiny'} kept as it was" in errors[0], errors[0]
    assert files_of(plots / "tiny") == before
    assert [p.name for p in plots.iterdir()] == ["tiny"]  # no temporary folder left
    monkeypatch.undo()
    res = profile(folder, plots)
    assert res.exit_code == 0 and "unchanged" not in res.output, res.output
    assert files_of(plots / "tiny") != before


def test_a_full_disk_on_the_first_report_leaves_no_folder(sweep, tmp_path, monkeypatch):
    folder, plots = copy_sweep(sweep, tmp_path / "tiny"), tmp_path / "plots"
    _failing_mkstemp(monkeypatch, str(plots / "tiny"), after=2)
    res = profile(folder, plots)
    assert res.exit_code == 1 and "No space left on device" in res.output, res.output
    assert not plots.exists()


KILLED = """
import os, signal, sys
from spbench.report import report

def write_profile(df, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "REPORT.md"), "w") as fh:
        fh.write("half")
    os.kill(os.getpid(), signal.SIGKILL)

report.write_profile = write_profile
from spbench.cli import main
sys.argv = ["spbench", "profile", sys.argv[1], "--out", sys.argv[2]]
main()
"""


def test_a_killed_profile_leaves_no_half_report_and_its_leftovers_go_next_time(sweep, tmp_path):
    folder, plots = copy_sweep(sweep, tmp_path / "tiny"), tmp_path / "plots"
    done = subprocess.run([sys.executable, "-c", KILLED, str(folder), str(plots)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert not (plots / "tiny").exists()
    res = profile(folder, plots)
    assert res.exit_code == 0, res.output
    assert [p.name for p in plots.iterdir()] == ["tiny"]
    assert (plots / "tiny" / "REPORT.md").read_text() != "half"


def test_a_busy_profiles_temporary_folder_is_left_alone(sweep, tmp_path):
    """Another profile still writing into the same --out keeps its folder (its process lives)."""
    folder, plots = copy_sweep(sweep, tmp_path / "tiny"), tmp_path / "plots"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        from spbench.report.profile_folders import staging_folder

        busy = staging_folder(plots, "other", other.pid)
        busy.mkdir(parents=True)
        res = profile(folder, plots)
        assert res.exit_code == 0, res.output
        assert busy.is_dir()
    finally:
        other.kill()
        other.wait()
    assert profile(folder, plots, "--force").exit_code == 0
    assert sorted(p.name for p in plots.iterdir()) == ["tiny"]


def test_the_same_rows_make_the_same_files(sweep, tmp_path):
    folder = copy_sweep(sweep, tmp_path / "tiny")
    write_bad(folder, {**first_row(folder), "cores": "two"})
    assert profile(folder, tmp_path / "one").exit_code == 1
    assert profile(folder, tmp_path / "two").exit_code == 1
    first = files_of(tmp_path / "one" / "tiny")
    assert first == files_of(tmp_path / "two" / "tiny") and "REPORT.md" in first
    assert profile(folder, tmp_path / "one", "--force").exit_code == 1
    assert files_of(tmp_path / "one" / "tiny") == first


def test_unchanged_folders_are_still_skipped(sweep, tmp_path):
    folder, plots = copy_sweep(sweep, tmp_path / "tiny"), tmp_path / "plots"
    assert profile(folder, plots).exit_code == 0
    res = profile(folder, plots)
    assert res.exit_code == 0 and "unchanged since its report" in res.output, res.output
    assert (plots / "tiny" / ".profile_stamp.json").is_file()


# --- spbench compare ------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["base", "new"])
@pytest.mark.parametrize("case", BROKEN)
def test_compare_lists_a_broken_row_left_out(sweep, tmp_path, case, side):
    base, new = shutil.copytree(sweep, tmp_path / "base"), shutil.copytree(sweep, tmp_path / "new")
    change, words = BROKEN[case]
    bad = (base if side == "base" else new) / "runs" / "bad.json"
    bad.write_text(change(first_row(sweep)))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["compare", str(base), str(new), "--out", str(out)])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    said = [line for line in res.output.splitlines() if str(bad) in line]
    assert len(said) == 1 and all(w in said[0] for w in words), res.output
    assert "left out" in res.output and "of 2 matched points" in res.output, res.output
    assert "Points only in" not in res.output, res.output
    assert said[0] in (out / "compare.md").read_text()


def test_compare_of_a_folder_of_broken_rows_only_is_one_line_exit_2(sweep, tmp_path):
    base, new = shutil.copytree(sweep, tmp_path / "base"), shutil.copytree(sweep, tmp_path / "new")
    for frag in (new / "runs").glob("*.json"):
        frag.write_text(json.dumps({**json.loads(frag.read_text()), "cores": "two"}))
    res = CliRunner().invoke(main, ["compare", str(base), str(new)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and str(new) in lines[0] and "2 left out" in lines[0], res.output
