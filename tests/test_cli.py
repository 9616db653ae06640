"""The CLI end to end: version, info, dry-run, run + profile on a tiny sweep."""
import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from spbench import __version__
from spbench.cli import main

CFG = """
name: tiny
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 20}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
repeats: 5
"""


def test_version():
    res = CliRunner().invoke(main, ["--version"])
    assert res.exit_code == 0 and __version__ in res.output


def test_a_warning_while_a_command_runs_is_one_line():
    """A report skipping a figure warns; the user sees one line, not Python's file:line form."""
    import warnings

    import click

    @click.command("warns")
    def warns():
        warnings.warn("no serial baseline, speed-up figure skipped", UserWarning)

    main.add_command(warns)
    try:
        res = CliRunner().invoke(main, ["warns"])
    finally:
        main.commands.pop("warns")
    assert res.exit_code == 0
    assert res.output.strip().splitlines() == ["spbench: warning: no serial baseline, speed-up figure skipped"]


def test_info_reports_machine_and_mpi_without_initializing_it(spbench_cmd):
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    env.pop("GOMP_SPINCOUNT", None)
    res = subprocess.run([*spbench_cmd, "info", "--json"], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    facts = json.loads(res.stdout)
    assert facts["cores"] >= 1 and facts["cpu"]
    assert facts["openmp"]["threads"] >= 1
    # the wait policy decides whether idle threads spin, so a result records it
    assert facts["openmp"]["OMP_WAIT_POLICY"] == "passive" and facts["openmp"]["GOMP_SPINCOUNT"] is None
    assert "MPICH" in (facts["mpi"]["library"] or "") or facts["mpi"].get("error")
    assert set(facts["versions"]) >= {"python", "numpy", "scipy", "cython", "mpi4py"}
    assert "sha" in facts["git"]
    import sys
    assert "mpi4py.MPI" not in sys.modules


def test_dry_run_prints_points_and_writes_nothing(write_config, tmp_path):
    cfg = write_config(CFG)
    res = CliRunner().invoke(main, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert "3 points" in res.output and "wavefront cores=2" in res.output
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_run_then_profile(write_config, tmp_path):
    cfg = write_config(CFG)
    out, plots = tmp_path / "r", tmp_path / "p"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["config"]["name"] == "tiny" and meta["machine"]["cores"] >= 1
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert len(rows) == 3
    for r in rows:
        assert r["status"] == "ok" and r["residual"] < 1e-12 and len(r["solve_times"]) == 5
        assert r["run_id"] and r["schema_version"] == 1 and r["execution"] == "measured"
        assert r["dataset_source"] == "synthetic"
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)])
    assert res.exit_code == 0, res.output
    folder = plots / "r"
    for name in ("REPORT.md", "speedup.png", "speedup.pdf", "speedup.csv", "perfprofile.png", "summary.md"):
        assert (folder / name).exists(), name


def test_too_many_cores_refused(write_config, tmp_path):
    cfg = write_config(CFG.replace("cores: [1, 2]", "cores: [1, 4096]"))
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "4096 cores" in res.output


@pytest.mark.parametrize("args, words", [
    (["run", "--repeats", "x", "c.yaml"], ["spbench run:", "'--repeats'", "'x'"]),
    (["run", "."], ["spbench run:", "CONFIG_FILE", "is a directory"]),
    (["run"], ["spbench run:", "Missing argument 'CONFIG_FILE'"]),
    (["profile", "--bogus", "."], ["spbench profile:", "No such option '--bogus'"]),
    (["compare", "."], ["spbench compare:", "Missing argument 'NEW'"]),
    (["info", "--bogus"], ["spbench info:", "No such option"]),
    (["nosuch"], ["spbench:", "No such command 'nosuch'"]),
    (["bench", "--bogus"], ["spbench bench:", "No such option"]),
    (["datasets", "--bogus"], ["spbench datasets:", "No such option"]),
])
def test_usage_errors_are_one_line(args, words, tmp_path, monkeypatch):
    """A bad flag value, a missing argument or an unknown command or option: one line naming the
    command, exit 2, no usage block."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("group", [[], ["datasets"], ["bench"]])
def test_a_bare_group_shows_its_help(group):
    res = CliRunner().invoke(main, group)
    assert res.output.startswith("Usage: "), res.output
    assert "Error" not in res.output
