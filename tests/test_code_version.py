"""code_version hashes what a run executes (kernels, algorithms, runtime path), nothing else."""
import subprocess
import sys
import textwrap

import pytest

from spbench.runner import code_version, run_sources

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
#: meta.json (its numbers, not its code, decide a simulated row); cost_fit is its fitting helpers;
#: memory_estimate decides whether a sweep starts (the pre-flight check), not what a row holds
NOT_RUN_CODE = {"calibration", "calibration.calibrate", "calibration.cost_fit", "memory_estimate"}


def _names(experiment):
    return {f"{p.parent.name}/{p.name}" for p in run_sources(experiment)}


def test_benchmarks_calibrations_and_profiles_are_not_hashed():
    sptrsv, tucker = _names("sptrsv"), _names("tucker")
    assert {"sptrsv/execute.py", "sptrsv/experiment.py", "schedulers/growlocal.py", "sptrsv/_sptrsv.pyx",
            "sptrsv/sync.h"} <= sptrsv
    assert not {"benchmarks/kernel_bench.py", "benchmarks/order_bench.py", "calibration/calibrate.py"} & sptrsv
    assert {"mpi/worker.py", "hooi/loop.py", "mpi/launch.py", "schemes/lite.py", "schemes/hyper.py",
            "tucker/_ttm.pyx"} <= tucker
    assert not {"benchmarks/hooi_bench.py", "benchmarks/scheme_bench.py", "calibration/calibrate.py", "benchmarks/ttm_bench.py",
                "calibration/model_validation.py", "calibration/mpi_microbench.py"} & tucker
    assert not any(name.startswith("profile/") for name in sptrsv | tucker)
    assert code_version("sptrsv") != code_version("tucker")


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
    hashed = {p.relative_to(p.parents[1] if p.parent.name != experiment else p.parent).with_suffix("").as_posix()
              for p in run_sources(experiment) if p.suffix == ".py"}
    hashed = {h.replace("/", ".").removesuffix(".__init__") for h in hashed}
    missing = {m for m in modules if m not in hashed and m not in NOT_RUN_CODE}
    assert not missing, f"a {experiment} run imports {sorted(missing)}, which code_version does not hash"
