"""Tucker sweeps end to end with `execution: simulate`: config → rows with exact metrics → figures."""
import json

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.pipeline.config import ConfigError, load_config
from spbench.datasets.errors import DatasetError
from spbench.datasets.tensor_registry import resolve, standin
from spbench.tucker.metrics import compute_metrics
from spbench.tucker.schemes import get_scheme

CFG = """
name: tsim
experiment: tucker
execution: simulate
fallback: standin
datasets:
  - enron: {nnz: 20000, seed: 3}
  - nell2: {nnz: 20000, standin: true}
sweep:
  algorithm: [coarse, medium, lite]
  ranks: [4, 16]
  K: [5, 10]
"""


@pytest.mark.slow
def test_simulated_sweep_rows_equal_direct_metrics(write_config, tmp_path):
    cfg = write_config(CFG)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert len(rows) == 2 * 3 * 2 * 2 and all(r["status"] == "ok" for r in rows)
    assert all(r["execution"] == "simulated" and r["hooi_time"] is None for r in rows)
    row = next(r for r in rows if r["dataset"] == "enron" and r["algorithm"] == "lite"
               and r["ranks"] == 16 and r["K"] == 5)
    tensor = standin("enron", nnz=20000, seed=3)
    direct = compute_metrics(tensor, get_scheme("lite")(tensor, 16, seed=0), K=5).row()
    for key in ("e_max", "r_sum", "r_max", "svd_volume", "fm_volume", "mem_total_mb", "ttm_imbalance"):
        assert row[key] == pytest.approx(direct[key]), key
    assert row["mode_metrics"] == direct["mode_metrics"]
    assert row["dataset_source"] == "synthetic" and row["modes"] == 4 and row["nnz"] == 20000
    assert min(row["lite_bound_slack"].values()) >= 0
    plots = tmp_path / "plots"
    res = CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)])
    assert res.exit_code == 0, res.output
    folder = plots / "res"
    for stem in ("fig12a_ttm_imbalance_P16_K10", "fig12b_svd_redundancy_P4_K5", "fig12c_svd_imbalance_P16_K5",
                 "fig13_volume_P16_K10", "fig17_memory_P4_K10"):
        for ext in (".png", ".pdf", ".csv"):
            assert (folder / f"{stem}{ext}").exists(), stem + ext
    assert (folder / "fig17a_memory_P16_K10.md").exists() and (folder / "REPORT.md").exists()


def test_tucker_config_errors(write_config):
    with pytest.raises(ConfigError, match="key 'launcher': expected a command template containing"):
        load_config(write_config(CFG + "launcher: srun\n"))
    with pytest.raises(ConfigError, match="key 'init'"):
        load_config(write_config(CFG + "init: zeros\n"))
    assert load_config(write_config(CFG.replace("execution: simulate", "execution: mpi"))).execution == "measured"
    with pytest.raises(ConfigError, match=r"key 'sweep.algorithm\[0\]'"):
        load_config(write_config(CFG.replace("[coarse, medium, lite]", "[magic]")))
    with pytest.raises(ConfigError, match=r"key 'datasets\[0\]'.*unknown parameter 'nzz'"):
        load_config(write_config(CFG.replace("{nnz: 20000, seed: 3}", "{nzz: 20000}")))
    with pytest.raises(ConfigError, match=r"key 'datasets\[1\]'.*unknown tensor"):
        load_config(write_config(CFG.replace("nell2:", "nell9:")))


def test_real_tensor_unavailable_without_fallback(tmp_path, monkeypatch):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    monkeypatch.setenv("SPBENCH_FROSTT_URL", "http://127.0.0.1:9")  # closed port: fails at once
    ds = resolve("nell2")
    with pytest.raises(DatasetError, match="fallback: standin"):
        ds.load(fetch=True, standin=False)
    loaded = ds.load(fetch=True, standin=True)
    assert loaded.source == "synthetic" and loaded.label.startswith("nell2~standin")


def test_tensor_file_entry(tmp_path):
    from spbench.datasets.frostt import write_tns
    t = standin("nell2", nnz=500)
    path = write_tns(tmp_path / "mine.tns", t)
    ds = resolve({"path": str(path)})
    assert ds.name == "mine" and ds.kind == "file"
    loaded = ds.load()
    assert loaded.source == "real" and loaded.tensor.nnz == 500
    with pytest.raises(DatasetError, match="no such file"):
        resolve({"path": str(tmp_path / "nope.tns")})


def test_hyper_partition_cache_keeps_partition_time(tmp_path):
    hyper = pytest.importorskip("spbench.tucker.schemes.hyper", reason="HyperG module")
    if not hyper.available():
        pytest.skip("mtkahypar is not installed")
    t = standin("nell2", nnz=300)
    first = get_scheme("hyper")(t, 4, seed=1, cache_dir=tmp_path)
    again = get_scheme("hyper")(t, 4, seed=1, cache_dir=tmp_path)
    assert first.info["cached"] is False and again.info["cached"] is True
    assert again.info["partition_seconds"] == pytest.approx(first.info["partition_seconds"])
    assert (again.policy(0) == first.policy(0)).all()


def test_theorem_6_1_slack_recorded_and_checked():
    from spbench.tucker.schemes.lite_bound import theorem_6_1_slack
    modes = [{"e_max": 25, "slices": 10, "r_sum": 13, "r_max": 3}, {"e_max": 24, "slices": 7, "r_sum": 9, "r_max": 4}]
    slack = theorem_6_1_slack(modes, nnz=100, ranks=4)
    assert slack == {"e_max": 0, "r_sum": 1, "r_max": 0}  # limits: 25; 14 and 11; 5 and 4
    assert theorem_6_1_slack([{"e_max": 26, "slices": 1, "r_sum": 1, "r_max": 1}], 100, 4)["e_max"] == -1


@pytest.mark.slow
def test_datasets_cli_knows_tensors(tmp_path, monkeypatch):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path / "cache"))
    runner = CliRunner()
    res = runner.invoke(main, ["datasets", "list"])
    assert res.exit_code == 0 and "enron" in res.output and "54,202,099" in res.output
    out = tmp_path / "e.tns.gz"
    res = runner.invoke(main, ["datasets", "generate", "enron", "-p", "nnz=300", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert resolve({"path": str(out)}).load().tensor.nnz == 300
    res = runner.invoke(main, ["datasets", "generate", "enron", "-p", "nzz=3", "-o", str(out)])
    assert res.exit_code != 0 and "unknown parameter 'nzz'" in res.output


@pytest.mark.slow
def test_simulated_rows_get_modelled_times_with_a_calibration(write_config, tmp_path):
    cal = tmp_path / "tucker.json"
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "tucker", "--quick", "--force", "--out", str(cal)])
    assert res.exit_code == 0, res.output      # --force: the busy-machine check has tests of its own
    cfg = write_config(CFG.replace("execution: simulate", f"execution: simulate\ncosts: {cal}"))
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert all(r["hooi_time"] > 0 and r["hooi_time_kind"].startswith("modelled") for r in rows)
    assert all(r["comm_time"] > 0 for r in rows)  # every point has more than one rank
