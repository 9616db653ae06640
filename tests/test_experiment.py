"""The Experiment interface and registry: each experiment declares its keys, axes and algorithms;
the generic config, sweep and CLI read those declarations and name no experiment."""
import subprocess

import pytest

from spbench.pipeline.config import ConfigError, load_config, parse_config
from spbench.experiment import Algorithm, Experiment
from spbench.experiment_registry import EXPERIMENTS, ROW_KINDS, get_experiment
from spbench.pipeline.sweep import expand

SPTRSV = """
name: t
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 10}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
"""

TUCKER = """
name: t
experiment: tucker
execution: simulate
datasets:
  - nell2: {nnz: 2000, standin: true}
sweep:
  algorithm: [lite]
  ranks: [2]
  K: [3]
"""


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_experiment_declares_itself(name):
    experiment = get_experiment(name)
    assert isinstance(experiment, Experiment) and experiment.name == name and experiment.title
    assert experiment.axes[0] == "algorithm" and experiment.compare_metrics
    assert set(experiment.executions) >= {"measured", "simulate"}
    algorithms = experiment.algorithms()
    assert algorithms and all(isinstance(a, Algorithm) and a.name == key and a.label for key, a in algorithms.items())
    assert not set(experiment.options) & set(experiment.axes)
    with pytest.raises(KeyError, match="known: sptrsv, tucker"):
        get_experiment("fft")


@pytest.mark.parametrize("text, key, owner", [(TUCKER, "barrier: spin", "sptrsv"),
                                               (SPTRSV, "launcher: 'srun -n {ranks}'", "tucker"),
                                               (SPTRSV, "lanczos: converged", "tucker")])
def test_another_experiments_key_is_a_one_line_error(write_config, text, key, owner):
    path = write_config(text + key + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    msg = str(err.value)
    name = key.split(":")[0]
    assert f"key '{name}': an option of {owner} sweeps" in msg and str(path) in msg and "\n" not in msg


def test_barrier_in_a_tucker_config_exits_2_and_writes_nothing(write_config, tmp_path, spbench_cmd):
    path = write_config(TUCKER + "barrier: spin\n")
    out = tmp_path / "res"
    res = subprocess.run([*spbench_cmd, "run", str(path), "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and not out.exists()
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "key 'barrier'" in lines[0] and str(path) in lines[0]


def test_flags_of_another_experiment_and_its_executions_are_refused(write_config):
    tucker = load_config(write_config(TUCKER))
    with pytest.raises(ConfigError, match="--barrier: an option of sptrsv sweeps, not of a tucker sweep"):
        tucker.with_overrides(barrier="spin")
    with pytest.raises(ConfigError, match="--execution: expected one of measured, simulate for a tucker sweep"):
        tucker.with_overrides(execution="schedule")
    assert tucker.with_overrides(timeout=5, launcher="srun -n {ranks}").timeout == 5.0
    sptrsv = load_config(write_config(SPTRSV))
    assert sptrsv.with_overrides(barrier="omp").barrier == "omp" and tucker.lanczos == "paper"
    with pytest.raises(AttributeError, match="a sptrsv config has no key 'lanczos'"):
        sptrsv.lanczos


def test_kernel_auto_is_the_declared_kernel_not_a_module_name(write_config, monkeypatch):
    """`kernel: auto` resolves through the scheduler registry's declaration, so a scheduler's name
    need not be the name of its file."""
    from spbench.sptrsv import schedulers
    from spbench.sptrsv.schedulers import wavefront

    renamed = Algorithm("levels", "Levels", "scheduler", {}, "ssp")
    monkeypatch.setitem(schedulers.REGISTRY, "levels", renamed)
    monkeypatch.setitem(schedulers.SCHEDULERS, "levels", wavefront.schedule)
    config = parse_config({"name": "k", "experiment": "sptrsv", "datasets": ["lap2d-5pt"],
                           "sweep": {"algorithm": ["serial", "levels"], "cores": [2], "kernel": ["auto"]}})
    assert [(p.axes["algorithm"], p.axes["cores"], p.axes["kernel"]) for p in expand(config)] == [
        ("serial", 1, "auto"), ("levels", 2, "ssp")]


def test_slurm_resources_come_from_the_experiment(write_config):
    from spbench.pipeline.slurm_array import resources

    for text, expected in ((SPTRSV, ["--ntasks=1", "--cpus-per-task=2"]), (TUCKER, ["--ntasks=2"])):
        config = load_config(write_config(text))
        assert resources(config, expand(config)) == expected


GENERIC = ("pipeline/config.py", "cli/__init__.py", "cli/run.py", "cli/run_flags.py", "cli/profile.py",
           "cli/compare.py", "cli/calibrate.py", "pipeline/runner.py", "pipeline/sweep.py", "pipeline/sweep_folder.py",
           "pipeline/slurm_array.py", "comparison/compare.py", "store/results.py", "store/row_schema.py",
           "store/calibration_file.py", "store/code_version.py", "report/report.py")


@pytest.mark.parametrize("module", GENERIC)
def test_generic_modules_name_no_experiment(module):
    """No string constant of a generic module is an experiment's name (no `if experiment == "tucker"`),
    and none imports an experiment package: they reach experiments through the registry."""
    import ast
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / module
    tree = ast.parse(path.read_text())
    kinds = EXPERIMENTS if module.startswith("cli/") else ROW_KINDS  # the command's "bench" is a group's name
    names = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in kinds}
    imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not names and not {m for m in imported if any(e in m.split(".") for e in EXPERIMENTS)}


@pytest.mark.parametrize("name, row, label", [
    ("sptrsv", {"algorithm": "growlocal", "kernel": "bsp"}, "GrowLocal (BSP)"),
    ("sptrsv", {"algorithm": "elastic_divide", "kernel": float("nan")}, "ElasticDivide (SSP)"),
    ("sptrsv", {"algorithm": "wavefront"}, "Wavefront"),
    ("sptrsv", {"algorithm": "serial", "kernel": "serial"}, "Serial"),
    ("tucker", {"algorithm": "lite"}, "Lite"),
    ("tucker", {"algorithm": "coarse", "kernel": None}, "CoarseG"),
    ("tucker", {"algorithm": "toy"}, "toy"),
])
def test_algorithm_label_is_the_papers(name, row, label):
    """Each experiment labels a row's algorithm as its paper's figures do (a figure of either
    experiment asks the experiment, never the algorithm's name)."""
    assert get_experiment(name).algorithm_label(row) == label
