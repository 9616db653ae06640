"""code_version hashes what a run executes (kernels, algorithms, runtime path), nothing else."""
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spbench
import spbench.store.code_version as code_version_module
from spbench.store.code_version import NOT_RUN
from spbench.pipeline.runner import code_version, run_sources

SPTRSV = """
name: imports
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 8}
sweep:
  algorithm: [serial, wavefront, growlocal, elastic_divide, hdagg, spmp]
  cores: [1]
repeats: 2
"""

TUCKER = """
name: imports
experiment: tucker
execution: simulate
fallback: standin
datasets:
  - nell2: {nnz: 2000, standin: true}
sweep:
  algorithm: [coarse, medium, lite]
  ranks: [2]
  K: [3]
"""

#: modules a run may import whose edits must not supersede rows: the calibration is recorded in
#: meta.json (its numbers, not its code, decide a simulated row); cost_fit is its fitting helpers
NOT_RUN_CODE = {"calibration", "calibration.calibrate", "calibration.cost_fit"}

ROOT = Path(spbench.__file__).resolve().parents[1]  # the repository: bench/, kernels/, datasets/
OTHER = {"sptrsv": "tucker", "tucker": "sptrsv"}


def _paths(experiment):
    return {p.resolve().relative_to(ROOT).as_posix() for p in run_sources(experiment)}


@pytest.mark.parametrize("experiment, expected", [
    ("sptrsv", {"bench/sptrsv/__init__.py", "bench/sptrsv/experiment.py", "bench/sptrsv/execute.py",
                "bench/sptrsv/schedulers/growlocal.py", "kernels/sptrsv/_sptrsv.pyx", "kernels/sptrsv/sync.h",
                "kernels/sptrsv/_vec_heap.pxd", "kernels/_build_info.pyx", "datasets/transforms.py"}),
    ("tucker", {"bench/tucker/experiment.py", "bench/tucker/mpi/worker.py", "bench/tucker/mpi/launch.py",
                "bench/tucker/hooi/loop.py", "bench/tucker/schemes/lite.py", "bench/tucker/model/cost_model.py",
                "kernels/tucker/_ttm.pyx", "kernels/_build_info.pyx", "datasets/sparse_tensor.py",
                "datasets/tensor_stats.py"})])
def test_a_run_hashes_its_package_its_kernels_and_the_data_it_reads(experiment, expected):
    assert expected <= _paths(experiment)


@pytest.mark.parametrize("experiment", ["sptrsv", "tucker"])
def test_reports_benchmarks_calibrations_and_the_other_kernels_are_not_hashed(experiment):
    paths = _paths(experiment)
    left_out = [f"bench/{experiment}/{folder}/" for folder in NOT_RUN] + ["bench/report/",
                                                                           f"kernels/{OTHER[experiment]}/"]
    for folder in left_out:
        assert any((ROOT / folder).rglob("*.py*")), folder  # the folder exists and holds code
        assert not {p for p in paths if p.startswith(folder)}, folder
    assert not {p for p in paths if p.startswith("datasets/") and p.endswith("registry.py")}
    assert code_version("sptrsv") != code_version("tucker")


def test_the_version_follows_the_folders(tmp_path, monkeypatch):
    """On a copy of the tree: a report or calibration edit and a Tucker kernel edit keep the SpTrSV
    version; a scheduler, an SpTrSV kernel or a new module of the package change it."""
    copies = {"spbench.sptrsv": tmp_path / "bench" / "sptrsv", "spbench.kernels": tmp_path / "kernels"}
    shutil.copytree(ROOT / "bench" / "sptrsv", copies["spbench.sptrsv"], ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "kernels", copies["spbench.kernels"], ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    real = code_version_module._folder
    monkeypatch.setattr(code_version_module, "_folder", lambda name: copies.get(name) or real(name))
    before = code_version("sptrsv")

    def edited(rel: str) -> str:
        path = tmp_path / rel
        path.write_text(path.read_text() + "\n# edited\n")
        return code_version("sptrsv")

    for kept in ("bench/sptrsv/report/summary.py", "bench/sptrsv/benchmarks/order_bench.py",
                 "bench/sptrsv/calibration/calibrate.py", "kernels/tucker/_ttm.pyx"):
        assert edited(kept) == before, kept
    seen = {before}
    for changed in ("bench/sptrsv/schedulers/hdagg.py", "kernels/sptrsv/sync.h", "kernels/_build_info.pyx"):
        version = edited(changed)
        assert version not in seen, changed
        seen.add(version)
    (tmp_path / "bench/sptrsv/schedulers/new_scheduler.py").write_text("NAME = 'new'\n")
    assert code_version("sptrsv") not in seen


@pytest.mark.parametrize("experiment, config", [("sptrsv", SPTRSV), ("tucker", TUCKER)])
def test_every_module_a_run_imports_is_hashed(experiment, config, tmp_path):
    """A sweep in a fresh interpreter: each spbench.<experiment> module it imports is in run_sources."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(textwrap.dedent(config))
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "spbench.cli", "run", str(cfg),
                          "--out", str(tmp_path / "out"), "--quiet"], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    prefix = f"spbench.{experiment}."
    imported = {line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if "|" in line}
    modules = {m[len(prefix):] for m in imported if m.startswith(prefix)}
    assert modules, "the sweep imported nothing of its experiment"
    package = ROOT / "bench" / experiment
    hashed = {p.resolve().relative_to(package).with_suffix("").as_posix()
              for p in run_sources(experiment) if p.suffix == ".py" and p.resolve().is_relative_to(package)}
    hashed = {h.replace("/", ".").removesuffix(".__init__") for h in hashed}
    missing = {m for m in modules if m not in hashed and m not in NOT_RUN_CODE}
    assert not missing, f"a {experiment} run imports {sorted(missing)}, which code_version does not hash"
