"""The pre-flight check of `spbench run`: a point whose estimated peak memory exceeds the free
memory, or stores that do not fit on the disk, are refused in one line (exit 2) before anything is
written or generated; --dry-run shows the estimates; --no-preflight runs anyway."""
import os

import pytest
from click.testing import CliRunner

from spbench import preflight
from spbench.cli import main

TUCKER = """
{name: pre, experiment: tucker, execution: simulate, fallback: standin,
 datasets: [{nell2: {nnz: 600, standin: true}}, {amazon: {nnz: 2000000000, standin: true}}],
 sweep: {algorithm: [lite, hyper], ranks: [512], K: [10]}}
"""
SMALL = TUCKER.replace(", {amazon: {nnz: 2000000000, standin: true}}", "").replace("lite, hyper", "lite")


def _run(cfg, out, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), *extra])


def _stores(data):
    folder = data / "stores"
    return sorted(folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


def _refused(res, out, data, *words):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]
    assert not out.exists() and _stores(data) == []


def test_a_point_over_the_free_memory_is_refused_in_one_line(write_config, tmp_path, data):
    out = tmp_path / "out"
    res = _run(write_config(TUCKER), out)  # HyperG holds 2e9 nonzeros in memory: ~1.4 TB
    _refused(res, out, data, "cfg.yaml", "point 'amazon algorithm=hyper ranks=512 K=10'", "needs about",
             "available (", "--scale small", "execution: measured", "--no-preflight")


def test_a_small_free_memory_refuses_and_no_preflight_runs(write_config, tmp_path, data, monkeypatch):
    monkeypatch.setattr(preflight, "available_memory", lambda: (50_000_000, "MemAvailable"))
    cfg, out = write_config(SMALL), tmp_path / "out"
    _refused(_run(cfg, out), out, data, "point 'nell2 algorithm=lite ranks=512 K=10'", "50 MB is available")
    assert _run(cfg, out, "-q", "--no-preflight").exit_code == 0
    monkeypatch.setenv(preflight.SKIP_ENV, "1")
    assert _run(cfg, tmp_path / "again", "-q").exit_code == 0


def test_stores_over_the_free_disk_are_refused(write_config, tmp_path, data, monkeypatch):
    monkeypatch.setattr(preflight, "free_disk", lambda path: (tmp_path, 1000))
    out = tmp_path / "out"
    _refused(_run(write_config(SMALL), out), out, data, "tensor stores to generate need about", "nell2",
             "1 kB free", "$SPBENCH_DATA")


def test_dry_run_shows_each_estimate_and_the_disk(write_config, tmp_path, data):
    res = _run(write_config(TUCKER), tmp_path / "out", "--dry-run")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "nell2 algorithm=lite ranks=512 K=10  peak ~" in lines[0]
    assert "amazon algorithm=hyper ranks=512 K=10  peak ~" in lines[3] and "OVER the free memory" in lines[3]
    assert any(line.strip().startswith("disk: amazon: 40.0 GB (stand-in") for line in lines)
    assert lines[-2].strip().startswith("memory available ") and "disk free" in lines[-2]
    assert lines[-1].startswith("4 points (0 already stored")
    assert _stores(data) == [] and not (tmp_path / "out").exists()


def test_an_experiment_without_estimates_refuses_nothing(write_config, tmp_path, monkeypatch):
    monkeypatch.setattr(preflight, "available_memory", lambda: (1, "MemAvailable"))
    cfg = write_config("""
        name: s
        experiment: sptrsv
        datasets: [{lap2d-5pt: {grid: 8}}]
        sweep: {algorithm: [serial], cores: [1]}
        repeats: 2
        """)
    assert _run(cfg, tmp_path / "out", "-q").exit_code == 0


def test_available_memory_reads_meminfo_and_the_cgroup(tmp_path, monkeypatch):
    (tmp_path / "meminfo").write_text("MemTotal: 100 kB\nMemAvailable: 2000 kB\n")
    cgroup = tmp_path / "cg"
    cgroup.mkdir()
    monkeypatch.setattr(preflight, "_MEMINFO", tmp_path / "meminfo")
    monkeypatch.setattr(preflight, "_CGROUP", cgroup)
    assert preflight.available_memory() == (2000 * 1024, "MemAvailable")
    (cgroup / "memory.max").write_text("1500000\n")
    (cgroup / "memory.current").write_text("500000\n")
    assert preflight.available_memory() == (1_000_000, "under the cgroup's memory.max")
    (cgroup / "memory.max").write_text("max\n")
    assert preflight.available_memory()[1] == "MemAvailable"


def test_free_disk_looks_above_a_missing_folder(tmp_path):
    folder, free = preflight.free_disk(tmp_path / "not" / "yet")
    assert folder == tmp_path and free == os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
