"""The cost models' checks as `spbench bench sptrsv-model|tucker-model` and `spbench
calibrate --validate SIZE`: rows in a results folder that `spbench profile` reads, the validation
table on stdout, bad options one line with exit 2 and nothing written."""
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import load_rows

SPTRSV_RATES = {"t_row": 2e-9, "t_nnz": 1e-9, "t_chain": 0.0, "t_far": 0.0,
                "barrier": 1e-7, "barrier_omp": 2e-7, "weak_barrier": 5e-8, "p2p_dep": 2e-8}
MACHINE = {"host": "h", "cpu": "c", "cores": 2}
MPIEXEC = Path(sys.executable).parent / "mpiexec"


@pytest.fixture
def sptrsv_cal(tmp_path):
    from spbench.sptrsv.calibration.calibrate import KIND, SCHEMA_VERSION, save

    return save({"schema_version": SCHEMA_VERSION, "kind": KIND, "date": "2026-01-01T00:00:00+00:00",
                       "quick": True, "machine": MACHINE, "serial": SPTRSV_RATES,
                       "cores": {"1": SPTRSV_RATES}}, tmp_path / "sptrsv.json")


@pytest.fixture
def tucker_cal(tmp_path):
    from spbench.tucker.calibration.calibrate import SCHEMA_VERSION, save
    from spbench.tucker.model.cost_model import COMPUTE_COSTS, CONTEXT_COSTS, MPI_COSTS

    return save({"schema_version": SCHEMA_VERSION, "timestamp": "2026-01-01T00:00:00+00:00", "quick": True,
                 "threads": 1, "machine": MACHINE,
                 "costs": {k: 1e-8 for k in (*COMPUTE_COSTS, *MPI_COSTS, *CONTEXT_COSTS)},
                 "fits": {}, "mpi": {"skipped": "mpi=False"}, "calibration_seconds": 1.5}, tmp_path / "tucker.json")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def profiled(out, tmp_path) -> str:
    res = invoke("profile", out, "--out", tmp_path / "plots")
    assert res.exit_code == 0, res.output
    return (tmp_path / "plots" / out.name / "REPORT.md").read_text()


def test_calibrate_validate_stores_the_validation_rows(sptrsv_cal, tmp_path):
    """--costs reads a calibration (nothing measured or written), --validate SIZE runs its experiment's
    validation benchmark on a grid of that side at the calibrated core counts."""
    out = tmp_path / "val"
    before = sptrsv_cal.read_bytes()
    res = invoke("calibrate", "--experiment", "sptrsv", "--costs", sptrsv_cal, "--validate", 8, "--results", out, "-q")
    assert res.exit_code == 0, res.output
    assert f"calibration read from {sptrsv_cal}" in res.output and "t_row 2.00 ns" in res.output
    assert "| algorithm | cores | kernel | supersteps | measured (ms) | predicted (ms) | rel. error |" in res.output
    assert sptrsv_cal.read_bytes() == before
    df = load_rows(out)
    assert set(df["benchmark"]) == {"sptrsv-model"} and set(df["dataset"]) == {"lap2d-5pt[grid=8]"}
    assert set(df["cores"]) == {1} and set(df["algorithm"]) == {"serial", "wavefront", "growlocal",
                                                                  "elastic_divide", "spmp"}
    assert (df["time"] > 0).all() and (df["predicted_time"] > 0).all()
    assert df["params"].map(lambda p: p["calibration"] == str(sptrsv_cal)).all()
    assert "sptrsv-model" in profiled(out, tmp_path)


def test_calibrate_validate_after_measuring(sptrsv_cal, tmp_path, monkeypatch):
    """Without --costs the calibration is measured, written, then validated."""
    from spbench.sptrsv.calibration.calibrate import load
    from spbench.sptrsv.experiment import SptrsvExperiment

    monkeypatch.setattr(SptrsvExperiment, "measure_calibration", lambda self, quick, cores, force=False: load(sptrsv_cal))
    monkeypatch.setattr("spbench.machine.load.check_now", lambda seconds=1.0: {"busy": False})
    cal, out = tmp_path / "new.json", tmp_path / "val"
    res = invoke("calibrate", "--cores", "1", "--out", cal, "--validate", 6, "--results", out, "-q")
    assert res.exit_code == 0, res.output
    assert load(cal)["cores"] == {"1": SPTRSV_RATES} and len(load_rows(out)) == 5


def test_sptrsv_model_options(sptrsv_cal, tmp_path):
    out = tmp_path / "m"
    res = invoke("bench", "sptrsv-model", "--calibration", sptrsv_cal, "--grid", 6, "--cores", 1,
                 "--algorithms", "serial,wavefront", "--repeats", 2, "--rounds", 1, "--out", out, "-q")
    assert res.exit_code == 0, res.output
    df = load_rows(out)
    assert sorted(df["item"]) == ["serial 1 cores", "wavefront 1 cores"]
    assert df["units"].map(lambda u: u["time"] == "s" and u["rel_error"] == "1").all()


TINY_SPTRSV_CONFIG = """name: tiny
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 7}
  - lap3d-7pt: {grid: 4}
  - lap2d-5pt: {grid: 40}
sweep:
  algorithm: [serial, wavefront, growlocal]
  cores: [1]
exclude:
  - {dataset: 'lap2d-5pt[grid=40]', execution: measured}
"""


def test_sptrsv_model_on_a_config(sptrsv_cal, tmp_path):
    """--config validates on the config's measured data sets (not its schedule-only ones) with its
    schedulers, and the table gives the median error per scheduler over the matrices."""
    config, out = tmp_path / "tiny.yaml", tmp_path / "m"
    config.write_text(TINY_SPTRSV_CONFIG)
    res = invoke("bench", "sptrsv-model", "--calibration", sptrsv_cal, "--config", config, "--scale", "small",
                 "--repeats", 2, "--rounds", 1, "--out", out)
    assert res.exit_code == 0, res.output
    from spbench.pipeline.config import load_config

    df = load_rows(out)
    small = [d.name for d in load_config(config).scaled("small").datasets]
    assert set(df["dataset"]) == set(small[:2])  # the third, at its small size, is schedule-only
    assert set(df["algorithm"]) == {"serial", "wavefront", "growlocal"}
    assert "| algorithm | cores | kernel | matrices | median error |" in res.output
    assert "| wavefront | 1 | bsp | 2 |" in res.output and "at --scale small" in res.output


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_tucker_model_runs_the_worker(tucker_cal, tmp_path):
    out, csv = tmp_path / "t", tmp_path / "v.csv"
    res = invoke("bench", "tucker-model", "--calibration", tucker_cal, "--nnz", 1500, "--ranks", 1,
                 "--schemes", "lite", "-K", 3, "--repeats", 1, "--csv", csv, "--out", out, "-q")
    assert res.exit_code == 0, res.output
    row = load_rows(out).iloc[0]
    assert row["item"] == "lite P=1" and row["queries"] == [12, 12, 12] and row["dataset"].startswith("nell2~standin")
    assert row["time"] == row["measured_hooi_time"] > 0 and row["predicted_hooi_time"] > 0
    assert csv.read_text().startswith("tensor,scheme,ranks")
    assert "| lite | 1 |" in res.output


def test_tucker_calibration_summary(tucker_cal):
    res = invoke("calibrate", "--experiment", "tucker", "--costs", tucker_cal)
    assert res.exit_code == 0, res.output
    assert "ttm_elem   1e-08" in res.output and '"skipped": "mpi=False"' in res.output


@pytest.mark.parametrize("args, said", [
    (["calibrate", "--costs", "{cal}", "--out", "x.json"], "--costs reads a calibration and --out writes one"),
    (["calibrate", "--results", "r"], "--results: only with --validate"),
    (["calibrate", "--validate", "0"], "--validate"),
    (["calibrate", "--costs", "missing.json"], "--costs: "),
    (["bench", "sptrsv-model", "--calibration", "{cal}", "--cores", "2"], "calibrates 1 cores, not 2"),
    (["bench", "sptrsv-model", "--calibration", "{cal}", "--algorithms", "serial,nope"], "--algorithms: expected"),
    (["bench", "sptrsv-model", "--calibration", "missing.json"], "--calibration: "),
    (["bench", "sptrsv-model"], "--calibration: "),  # no calibration of this machine yet
    (["bench", "sptrsv-model", "--calibration", "{cal}", "--config", "missing.yaml"], "--config: "),
    (["bench", "sptrsv-model", "--calibration", "{cal}", "--config", "{tucker}"], "a tucker config"),
    (["bench", "tucker-model", "--calibration", "{cal}", "--tensor", "nope"], "--tensor: expected one of"),
    (["bench", "tucker-model", "--calibration", "{cal}", "--ttm", "nope"], "--ttm"),
    (["bench", "tucker-model", "--calibration", "{cal}"], "a calibration of 'sptrsv'"),
])
def test_bad_options_are_one_line_and_write_nothing(args, said, sptrsv_cal, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    tucker = Path(__file__).resolve().parents[1] / "configs" / "smoke_tucker.yaml"
    res = invoke(*[a.format(cal=sptrsv_cal, tucker=tucker) for a in args])
    assert res.exit_code == 2, res.output
    assert said in res.output and len(res.output.strip().splitlines()) == 1, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_tucker_choices_are_the_model_s():
    """--lanczos and --ttm offer what the model knows, read from it (not spelled in the declaration)."""
    from click import Context

    from spbench.cli.bench import bench
    from spbench.tucker.hooi.lanczos import LANCZOS_MODES
    from spbench.tucker.model.cost_model import TTM_COSTS

    def choices(name):
        return {p.name: p.type.choices for p in bench.get_command(Context(bench), name).params
                if hasattr(p.type, "choices")}

    assert choices("tucker-model") == {"lanczos": LANCZOS_MODES, "ttm": tuple(TTM_COSTS)}
    assert choices("tucker-scale") == {"lanczos": LANCZOS_MODES}


def test_profile_of_a_stored_validation_shows_its_table(sptrsv_cal, tmp_path):
    out = tmp_path / "m"
    res = invoke("bench", "sptrsv-model", "--calibration", sptrsv_cal, "--grid", 5, "--algorithms", "serial",
                 "--repeats", 1, "--rounds", 1, "--out", out, "-q")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() in profiled(out, tmp_path)
    assert json.loads((out / "meta.json").read_text())["config"]["benchmark"] == "sptrsv-model"
