"""`spbench profile results/` redoes only the folders whose rows, meta.json or code changed since their report."""
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.report import report, report_stamp
from spbench.store.row_schema import SCHEMA_VERSION

FOLDERS = ("sweep_a", "sweep_b", "sweep_c")


@pytest.fixture
def results(tmp_path, make_rows):
    """Three sweep folders of the toy rows, each row a fragment with a run_id."""
    root = tmp_path / "results"
    for name in FOLDERS:
        (root / name / "runs").mkdir(parents=True)
        (root / name / "meta.json").write_text(json.dumps({"config": {"name": name}}))
        for i, row in enumerate(make_rows()):
            row = {**row, "run_id": f"{name}{i}", "schema_version": SCHEMA_VERSION}
            (root / name / "runs" / f"{i}.json").write_text(json.dumps(row))
    return root


@pytest.fixture
def profiled(monkeypatch):
    """write_profile replaced by one that writes REPORT.md and records which folders it made."""
    made = []

    def write_profile(df, out_dir):
        made.append(os.path.basename(out_dir))
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "REPORT.md")
        with open(path, "w") as fh:
            fh.write(f"{len(df)} rows\n")
        return [Path(path)]

    monkeypatch.setattr(report, "write_profile", write_profile)
    return made


def profile(results, out, *extra):
    return CliRunner().invoke(main, ["profile", str(results), "--out", str(out), *extra])


def test_unchanged_folders_are_skipped_and_changes_redo_only_their_folder(results, tmp_path, profiled):
    out = tmp_path / "plots"
    assert profile(results, out).exit_code == 0 and profiled == list(FOLDERS)
    assert all((out / name / report_stamp.STAMP_NAME).is_file() for name in FOLDERS)
    profiled.clear()
    res = profile(results, out)
    assert res.exit_code == 0 and profiled == []
    assert res.output.count("unchanged since its report") == 3 and "--force redoes it" in res.output
    frag = results / "sweep_a" / "runs" / "0.json"  # a rerun rewrites a fragment
    os.utime(frag, ns=(frag.stat().st_atime_ns, frag.stat().st_mtime_ns + 10**9))
    (results / "sweep_b" / "runs" / "new.json").write_text((results / "sweep_b" / "runs" / "1.json").read_text()
                                                           .replace('"run_id": "sweep_b1"', '"run_id": "x"'))
    (out / "sweep_c" / "REPORT.md").unlink()  # a report file removed
    assert profile(results, out).exit_code == 0 and profiled == list(FOLDERS)
    profiled.clear()
    assert profile(results, out).exit_code == 0 and profiled == []
    assert profile(results, out, "--force").exit_code == 0 and profiled == list(FOLDERS)


def test_a_code_change_redoes_every_folder(results, tmp_path, profiled, monkeypatch):
    out = tmp_path / "plots"
    profile(results, out)
    profiled.clear()
    monkeypatch.setattr(report_stamp, "profile_code_version", lambda: "another")
    assert profile(results, out).exit_code == 0 and profiled == list(FOLDERS)


def test_a_folder_with_a_corrupt_fragment_warns_every_time(results, tmp_path, profiled):
    out = tmp_path / "plots"
    (results / "sweep_b" / "runs" / "cut.json").write_text('{"run_id": "cut", "stat')
    res = profile(results, out)
    assert res.exit_code == 1 and profiled == list(FOLDERS) and "cut.json" in res.output
    profiled.clear()
    res = profile(results, out)
    assert res.exit_code == 1 and profiled == ["sweep_b"] and "cut.json" in res.output
    assert not (out / "sweep_b" / report_stamp.STAMP_NAME).exists()


def test_the_stamp_names_the_rows_and_the_code(results):
    stamp = report_stamp.Stamp.of(results / "sweep_a")
    assert stamp == report_stamp.Stamp.of(results / "sweep_a")
    assert stamp.rows != report_stamp.Stamp.of(results / "sweep_b").rows  # other file names
    assert len(stamp.code) == 16
