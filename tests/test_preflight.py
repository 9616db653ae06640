"""The pre-flight check of `spbench run`: a point whose estimated peak memory exceeds the free
memory, or stores that do not fit on the disk, are refused in one line (exit 2) before anything is
written or generated; --dry-run shows the estimates; --no-preflight runs anyway."""
import os

import pytest
from click.testing import CliRunner

from spbench.pipeline import preflight
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
    monkeypatch.setattr(preflight, "available_memory", lambda: (30_000_000, "MemAvailable"))
    cfg, out = write_config(SMALL), tmp_path / "out"
    _refused(_run(cfg, out), out, data, "point 'nell2 algorithm=lite ranks=512 K=10'", "30 MB is available")
    assert _run(cfg, out, "-q", "--no-preflight").exit_code == 0
    monkeypatch.setenv(preflight.SKIP_ENV, "1")
    assert _run(cfg, tmp_path / "again", "-q").exit_code == 0


def test_stores_over_the_free_disk_are_refused(write_config, tmp_path, data, monkeypatch):
    monkeypatch.setattr(preflight, "free_disk", lambda path: (tmp_path, 1000))
    out = tmp_path / "out"
    _refused(_run(write_config(SMALL), out), out, data, "the data to write (tensor stores, the model's spill) need about", "nell2",
             "1 kB free", "$SPBENCH_DATA")


def test_a_data_folder_that_is_a_file_is_refused_before_the_sweep(write_config, tmp_path, monkeypatch):
    """$SPBENCH_DATA a file, and stores to generate: one line, exit 2 (before: exit 1 once the sweep
    had started, saying `rerun the same command to resume`)."""
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path / "afile"))
    out = tmp_path / "out"
    res = _run(write_config(SMALL), out)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"Error: $SPBENCH_DATA: {tmp_path / 'afile'}: cannot write "
                                                   f"(a file, not a folder)"), res.output
    assert "nell2" in lines[0] and not out.exists() and (tmp_path / "afile").read_text() == "x"


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


def test_a_sptrsv_point_over_the_free_memory_is_refused(write_config, tmp_path, data, monkeypatch):
    monkeypatch.setattr(preflight, "available_memory", lambda: (50_000_000, "MemAvailable"))
    cfg, out = write_config("""
        name: s
        experiment: sptrsv
        datasets: [{lap2d-5pt: {grid: 8}}]
        sweep: {algorithm: [serial], cores: [1]}
        repeats: 2
        """), tmp_path / "out"
    _refused(_run(cfg, out), out, data, "point 'lap2d-5pt[grid=8] algorithm=serial cores=1'", "lower nonzeros",
             "50 MB is available")
    assert _run(cfg, out, "-q", "--no-preflight").exit_code == 0


def test_sptrsv_sizes_come_from_the_recipe_the_table_and_the_file(tmp_path):
    import scipy.io
    import scipy.sparse as sp

    from spbench.pipeline.config import parse_config
    from spbench.datasets import synthetic
    from spbench.sptrsv.memory_estimate import matrix_size

    A = synthetic.generate("lap3d-7pt", {"grid": 6})
    scipy.io.mmwrite(tmp_path / "m.mtx", sp.coo_matrix(A), symmetry="symmetric")
    config = parse_config({"name": "s", "experiment": "sptrsv", "fallback": "standin",
                           "sweep": {"algorithm": ["serial"], "cores": [1]},
                           "datasets": ["lap3d-7pt[grid=6]", "apache2", {"path": str(tmp_path / "m.mtx")}]}, "s.yaml")
    generated, standin, file = (matrix_size(d, config) for d in config.datasets)
    assert (generated.n, generated.nnz) == (216, sp.tril(A).nnz) == (file.n, file.nnz)
    assert standin.basis.startswith("apache2's stand-in fem-mesh[") and 30_000 < standin.n < 60_000
    assert standin.nnz == pytest.approx(4 * standin.n, rel=0.1)  # a 7-point stencil: 4 lower nonzeros per row
    real = parse_config({**config.raw, "fallback": "error"}, "s.yaml")
    assert (matrix_size(real.datasets[1], real).n, matrix_size(real.datasets[1], real).nnz) == (715176, 2766523)


def test_available_memory_reads_meminfo_and_the_cgroup(tmp_path, monkeypatch):
    (tmp_path / "meminfo").write_text("MemTotal: 100 kB\nMemAvailable: 2000 kB\n")
    cgroup = tmp_path / "cg"
    cgroup.mkdir()
    monkeypatch.setattr("spbench.datasets.resources._MEMINFO", tmp_path / "meminfo")
    monkeypatch.setattr("spbench.datasets.resources._CGROUP", cgroup)
    assert preflight.available_memory() == (2000 * 1024, "MemAvailable")
    (cgroup / "memory.max").write_text("1500000\n")
    (cgroup / "memory.current").write_text("500000\n")
    assert preflight.available_memory() == (1_000_000, "under the cgroup's memory.max")
    (cgroup / "memory.max").write_text("max\n")
    assert preflight.available_memory()[1] == "MemAvailable"


def test_free_disk_looks_above_a_missing_folder(tmp_path):
    folder, free = preflight.free_disk(tmp_path / "not" / "yet")
    assert folder == tmp_path and free == os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize


TINY_TUCKER = """
{name: tt, experiment: tucker, execution: simulate, fallback: standin,
 datasets: [{nell2: {nnz: 500, standin: true}}, {enron: {nnz: 900, standin: true}}],
 sweep: {algorithm: [lite, coarse], ranks: [4, 16], K: [10]}, runs: 2}
"""
TINY_SPTRSV = """
{name: ts, experiment: sptrsv, datasets: [{lap2d-5pt: {grid: 10}}], sweep: {algorithm: [serial], cores: [1]},
 repeats: 2}
"""


def test_spread_keeps_the_largest_and_spaces_the_rest():
    from spbench.harness.preflight_bench import spread

    assert spread(1, 5) == [4] and spread(2, 5) == [0, 4] and spread(3, 5) == [0, 2, 4]
    assert spread(4, 2) == [0, 1] and spread(2, 0) == []


def test_within_a_quarter_of_the_measured_peak():
    from spbench.harness.preflight_bench import within

    assert within(125, 100) and within(75, 100) and not within(126, 100) and not within(74, 100)
    assert within(None, 100) is None and within(100, 0) is None


def test_one_point_config_holds_the_point_alone(write_config):
    from spbench.pipeline.config import parse_config, load_config
    from spbench.harness.preflight_bench import one_point_raw
    from spbench.pipeline.sweep import expand

    config = load_config(write_config(TINY_TUCKER))
    point = [p for p in expand(config) if p.dataset.name == "enron" and p.axes["ranks"] == 16][0]
    again = parse_config(one_point_raw(config, point), "one.yaml")
    points = expand(again)
    assert len(points) == 1 and points[0].label == point.label and again.runs == 1


def test_bench_preflight_measures_estimated_points(write_config, tmp_path):
    from spbench.store.results import load_rows

    tucker, sptrsv = write_config(TINY_TUCKER, "t.yaml"), write_config(TINY_SPTRSV, "s.yaml")
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "preflight", "--configs", f"{tucker},{sptrsv}", "--points", "1",
                                    "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    rows = sorted(load_rows(out).to_dict("records"), key=lambda r: r["item_index"])
    assert [r["point"] for r in rows] == ["enron algorithm=coarse ranks=16 K=10",
                                          "lap2d-5pt[grid=10] algorithm=serial cores=1"]
    for r in rows:
        assert r["status"] == "ok" and r["estimate_bytes"] > 0 and 20e6 < r["peak_bytes"] < 2e9, r
        assert r["ratio"] == pytest.approx(r["estimate_bytes"] / r["peak_bytes"])
        assert r["peak_kind"] == "largest process (ru_maxrss)"
    assert "| t.yaml | full | simulate | enron algorithm=coarse ranks=16 K=10 |" in res.stdout
    assert "estimates within 25% of the measured peak" in res.stdout
    assert not (out / ".jobs" / "preflight").exists()


def test_bench_preflight_refuses_a_bad_config_in_one_line(tmp_path):
    res = CliRunner().invoke(main, ["bench", "preflight", "--configs", str(tmp_path / "none.yaml"),
                                    "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("Error: spbench bench preflight: --configs: ") and not (tmp_path / "r").exists()


def test_a_calibration_adds_the_csf_spill_to_memory_and_disk(write_config, tmp_path, data):
    """With a Tucker calibration a simulated point also counts its CSF tree shapes through a spill:
    its estimate grows by the chunk's keys and the largest spill is disk the sweep needs."""
    from spbench.tucker.calibration.calibrate import default_calibration_path

    cfg = write_config(SMALL.replace("nnz: 600", "nnz: 60000000"))
    plain = _run(cfg, tmp_path / "out", "--dry-run")
    default_calibration_path().parent.mkdir(parents=True, exist_ok=True)
    default_calibration_path().write_text("{}")          # its presence decides; its contents are read at run
    modelled = _run(cfg, tmp_path / "out", "--dry-run")
    assert plain.exit_code == 0 and modelled.exit_code == 0, (plain.output, modelled.output)
    assert "CSF spill" not in plain.output and "nell2's CSF spill" in modelled.output, modelled.output
    assert "CSF tree shapes" in modelled.output
