"""`--scale small`: the same points on shrunk stand-ins, fewer repeats, its own folder and run_ids."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.pipeline.config import ConfigError, load_config
from spbench.datasets import synthetic
from spbench.datasets.registry import MatrixDataset
from spbench.pipeline.sweep import expand, run_id, run_parameters

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

SPTRSV = """
name: s
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 80}
  - lap3d-7pt: {grid: 20}
  - {rgg-spd: {n: 8000, transform: metis}}
  - Flan_1565
sweep:
  algorithm: [serial, wavefront, elastic_divide]
  cores: [1, 2]
  kernel: [auto, bsp]
repeats: 100
runs: 3
fallback: standin
"""

TUCKER = """
name: t
experiment: tucker
execution: simulate
fallback: standin
datasets:
  - enron: {nnz: 50000}
  - nell2
sweep:
  algorithm: [coarse, lite]
  ranks: [8, 64]
  K: [10]
"""


def _rows(ds):
    gen = ds.params["generator"]
    return synthetic.GENERATORS[gen].rows(synthetic.check_params(gen, {k: v for k, v in ds.params.items()
                                                                       if k != "generator"}))


def _axes(points):
    return [(p.values, p.repeat) for p in points]


def test_small_sptrsv_same_points_on_scaled_datasets(write_config):
    full = load_config(write_config(SPTRSV))
    small = full.with_overrides(scale="small")
    assert (small.scale, small.name, small.repeats, small.runs) == ("small", "s_small", 10, 1)
    full_pts, small_pts = expand(full.with_overrides(runs=1)), expand(small)
    assert _axes(full_pts) == _axes(small_pts)
    for f, s in zip(full.datasets, small.datasets):
        assert f.kind == s.kind and f.transform == s.transform
        if f.kind == "synthetic":
            assert f.name != s.name
            assert 6 <= _rows(f) / _rows(s) <= 10  # about 1/8 of the rows
        else:  # a SuiteSparse matrix keeps its name; its stand-in shrinks
            assert s.name == f.name == "Flan_1565" and s.params["standin_scale"] == pytest.approx(1 / 8)
    assert small.datasets[2].name.endswith("+metis")
    # explicit flags still win over the scale
    assert full.with_overrides(scale="small", repeats=30).repeats == 30


@pytest.mark.slow
def test_small_standin_of_a_real_matrix_is_smaller():
    full = MatrixDataset("Flan_1565", "suitesparse", {})
    small = MatrixDataset("Flan_1565", "suitesparse", {"standin_scale": 1 / 8})
    a = full.load(fetch=False, standin=True)
    b = small.load(fetch=False, standin=True)
    assert a.source == b.source == "synthetic" and a.checksum != b.checksum
    assert 6 <= a.matrix.shape[0] / b.matrix.shape[0] <= 10


def test_small_tucker_divides_nnz(write_config):
    full = load_config(write_config(TUCKER))
    small = full.with_overrides(scale="small")
    # 1/100 of the nonzeros (at least 1000): nell2's default stand-in holds 500k
    assert [d.params["nnz"] for d in small.datasets] == [1000, 5000]
    assert _axes(expand(full)) == _axes(expand(small))
    loaded = small.datasets[0].load(fetch=False, standin=True)
    assert loaded.tensor.nnz == 1000 and "nnz=1000" in loaded.label


def test_run_ids_differ_and_full_ids_are_unchanged(write_config):
    full = load_config(write_config(SPTRSV)).with_overrides(runs=1)
    small = full.with_overrides(scale="small", repeats=full.repeats)
    assert "scale" not in run_parameters(full, expand(full)[0])  # full runs keep their run_ids
    for pf, ps in zip(expand(full), expand(small)):
        a, b = run_parameters(full, pf), run_parameters(small, ps)
        assert b["scale"] == "small"
        assert run_id(a, "same-checksum", "v") != run_id(b, "same-checksum", "v")


def test_bad_scale_is_a_config_error(write_config):
    config = load_config(write_config(SPTRSV))
    with pytest.raises(ConfigError, match="scale"):
        config.with_overrides(scale="huge")
    with pytest.raises(ConfigError, match="scale"):
        config.with_overrides(scale="small").with_overrides(scale="full")


@pytest.mark.parametrize("name", ["tucker_scaling", "sptrsv_metis"])
def test_shipped_config_small_dry_run(name):
    result = CliRunner().invoke(main, ["run", str(CONFIGS / f"{name}.yaml"), "--scale", "small", "--dry-run"])
    assert result.exit_code == 0, result.output
    full = CliRunner().invoke(main, ["run", str(CONFIGS / f"{name}.yaml"), "--dry-run"])
    assert result.output.splitlines()[-1].endswith("scale small")
    assert len(result.output.splitlines()) == len(full.output.splitlines())


def test_paper_scale_keeps_points_and_puts_standins_at_the_paper_size(write_config):
    full = load_config(write_config(SPTRSV))
    paper = full.with_overrides(scale="paper")
    assert paper.name == "s_paper" and paper.repeats == full.repeats and paper.runs == full.runs
    assert _axes(expand(full)) == _axes(expand(paper))
    flan = [d for d in paper.datasets if d.name == "Flan_1565"][0]
    assert flan.params == {"standin_size": "paper"}
    assert [d for d in paper.datasets if d.kind == "synthetic"] == [d for d in full.datasets if d.kind == "synthetic"]
    for pf, pp in zip(expand(full), expand(paper)):
        assert run_parameters(paper, pp)["scale"] == "paper"


def test_paper_scale_is_refused_for_tucker(write_config):
    with pytest.raises(ConfigError, match="scale: paper"):
        load_config(write_config(TUCKER)).with_overrides(scale="paper")


@pytest.mark.slow
def test_paper_scale_dry_run_estimates_every_point():
    result = CliRunner().invoke(main, ["run", str(CONFIGS / "sptrsv_suitesparse.yaml"), "--scale", "paper",
                                       "--execution", "schedule", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "OVER" not in result.output
    assert result.output.splitlines()[-1].endswith("scale paper")
