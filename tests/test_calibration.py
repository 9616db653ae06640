"""One calibration format for both experiments: `spbench calibrate --experiment NAME` goes through the
experiment, writes the versioned envelope, one function reads it; old or foreign files are one line."""
import json

import pytest
from click.testing import CliRunner

from spbench.store.calibration_file import KIND, VERSION, read_calibration
from spbench.cli import main
from spbench.store.code_version import code_version
from spbench.sptrsv.calibration import calibrate as sptrsv_calibration
from spbench.tucker.calibration import calibrate as tucker_calibration

MACHINE = {"host": "h", "cpu": "c", "cores": 2}
RATES = {"t_row": 2e-9, "t_nnz": 1e-9, "t_chain": 0.0, "t_far": 0.0}
SYNC = {"barrier": 1e-7, "barrier_omp": 2e-7, "weak_barrier": 5e-8, "p2p_dep": 2e-8}
MEASURED = {
    "sptrsv": {"schema_version": sptrsv_calibration.SCHEMA_VERSION, "kind": sptrsv_calibration.KIND,
               "date": "2026-01-01T00:00:00+00:00", "quick": True, "machine": MACHINE,
               "serial": RATES, "cores": {"1": {**RATES, **SYNC}, "2": {**RATES, **SYNC}}},
    "tucker": {"schema_version": tucker_calibration.SCHEMA_VERSION, "timestamp": "2026-01-01T00:00:00+00:00",
               "quick": True, "threads": 1, "machine": MACHINE, "fits": {},
               "costs": {**dict.fromkeys(tucker_calibration.COMPUTE_KEYS, 1e-9), "ttm_cache_bytes": 2e6,
                         "oracle_bytes": 2e6, "lanczos_left_bytes": 2e6},
               "mpi": {"skipped": "mpi=False"}, "calibration_seconds": 1.5},
}
MODULES = {"sptrsv": (sptrsv_calibration.save, sptrsv_calibration.load),
           "tucker": (tucker_calibration.save, tucker_calibration.load)}


@pytest.mark.parametrize("experiment", ["sptrsv", "tucker"])
def test_one_format_round_trips(experiment, tmp_path):
    save, load = MODULES[experiment]
    path = save(MEASURED[experiment], tmp_path / "cal.json")
    stored = json.loads(path.read_text())
    assert {k: stored[k] for k in ("kind", "version", "experiment", "machine", "quick")} == {
        "kind": KIND, "version": VERSION, "experiment": experiment, "machine": MACHINE, "quick": True}
    assert stored["code_version"] == code_version(experiment) and stored["created"] == "2026-01-01T00:00:00+00:00"
    assert "machine" not in stored["terms"] and stored["terms_version"] == MEASURED[experiment]["schema_version"]
    assert load(path) == MEASURED[experiment]


@pytest.mark.parametrize("experiment", ["sptrsv", "tucker"])
def test_calibrate_goes_through_the_experiment(experiment, tmp_path, monkeypatch):
    from spbench.experiment_registry import get_experiment

    kind = type(get_experiment(experiment))
    asked = []
    monkeypatch.setattr("spbench.machine.load.check_now", lambda seconds=1.0: {"busy": False})
    monkeypatch.setattr(kind, "measure_calibration",
                        lambda self, quick, cores, force=False: asked.append((quick, cores)) or MEASURED[experiment])
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["calibrate", "--experiment", experiment, "--quick", "--cores", "1,2",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert asked == [(True, (1, 2))] and f"calibration written to {out}" in res.output
    assert read_calibration(out, experiment, "it", MEASURED[experiment]["schema_version"])["experiment"] == experiment


@pytest.mark.parametrize("cores, words", [("1,1", ["core count 1 given twice", "'1,1'"]),
                                           ("2,1,2", ["core count 2 given twice"]),
                                           ("1,0", ["expected core counts >= 1, got 0"]),
                                           ("1,,2", ["expected core counts separated by commas"])])
def test_bad_core_counts_are_refused_naming_cores_before_measuring(tmp_path, monkeypatch, cores, words):
    from spbench.experiment_registry import get_experiment

    asked = []
    monkeypatch.setattr("spbench.machine.load.check_now", lambda seconds=1.0: {"busy": False})
    monkeypatch.setattr(type(get_experiment("sptrsv")), "measure_calibration",
                        lambda self, quick, cores, force=False: asked.append(cores) or MEASURED["sptrsv"])
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["calibrate", "--quick", "--cores", cores, "--out", str(out)])
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("Error: --cores: "), res.output
    assert all(w in lines[0] for w in words), lines[0]
    assert asked == [] and not out.exists()


def _old_sptrsv(path):
    path.write_text(json.dumps(MEASURED["sptrsv"]))  # the file as spbench wrote it before one format


def _old_tucker(path):
    path.write_text(json.dumps({**MEASURED["tucker"], "schema_version": 2}))


def _foreign(path):
    tucker_calibration.save(MEASURED["tucker"], path)


def _newer(path):
    sptrsv_calibration.save(MEASURED["sptrsv"], path)
    path.write_text(json.dumps({**json.loads(path.read_text()), "version": VERSION + 1}))


@pytest.mark.parametrize("write, said", [
    (lambda p: p.write_text("{}"), "not an SpTrSV calibration"),
    (lambda p: p.write_text("[1, 2"), "not an SpTrSV calibration (not readable JSON"),
    (_old_sptrsv, "an SpTrSV calibration in the format spbench wrote before calibrations of every experiment "
                  "shared one; rerun `spbench calibrate --experiment sptrsv`"),
    (_foreign, "a calibration of 'tucker'; expected an SpTrSV calibration"),
    (_newer, f"calibration format version {VERSION + 1}; this spbench reads version {VERSION}"),
])
def test_other_files_are_one_line(tmp_path, write, said):
    path = tmp_path / "cal.json"
    write(path)
    with pytest.raises(ValueError) as err:
        sptrsv_calibration.load(path)
    assert said in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_old_tucker_calibration_is_explained(tmp_path):
    path = tmp_path / "cal.json"
    _old_tucker(path)
    with pytest.raises(ValueError, match="a Tucker calibration in the format spbench wrote before .* rerun "
                                         "`spbench calibrate --experiment tucker`"):
        tucker_calibration.load(path)


def test_simulated_sweep_with_an_old_calibration_exits_2_writing_nothing(write_config, tmp_path):
    costs = tmp_path / "old.json"
    _old_sptrsv(costs)
    config = write_config(f"""
        name: old
        experiment: sptrsv
        execution: simulate
        costs: {costs}
        datasets:
          - lap2d-5pt: {{grid: 8}}
        sweep:
          algorithm: [wavefront]
          cores: [2]
        """)
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and "key 'costs'" in res.output and "rerun `spbench calibrate" in res.output
    assert not (tmp_path / "res").exists()


TUCKER_MPI = {"alpha_p2p": 4e-6, "beta_p2p": 1e-9, "alpha_bytes": [4096.0, 2.0 ** 21], "alpha_allreduce": [2e-6, 4e-6],
              "beta_allreduce": 2e-9, "alpha_alltoallv": [4e-6, 9e-6], "beta_alltoallv": 1e-9,
              "alpha_allgatherv": [2e-6, 4e-6], "beta_allgatherv": 3e-9, "alpha_allreduce_context": -1e-7,
              "alpha_alltoallv_context": 1e-6, "dist_query_context": 8e-6}


@pytest.mark.parametrize("edit, said", [
    (lambda c: c.update(gemm_madd="fast"), "terms.costs.gemm_madd = fast, expected a finite number"),
    (lambda c: c.update(gemm_madd=float("nan")), "terms.costs.gemm_madd = None, expected a finite number"),
    (lambda c: c.pop("lanczos_query"), "terms.costs has no 'lanczos_query'"),
    (lambda c: c.update(ttm_csf_leaf=-1e-9), "terms.costs.ttm_csf_leaf = -1e-09, expected seconds, not below 0"),
    (lambda c: c.update(oracle_bytes=[2e6, 1e6]), "expected increasing sizes"),
    (lambda c: c.update(oracle_matvec_entry=[1e-10, 2e-10]), "expected one cost per size of oracle_bytes (none)"),
    (lambda c: c.update(ttm_cache_bytes=0), "terms.costs.ttm_cache_bytes = 0, expected bytes above 0"),
    (lambda c: c.update({**TUCKER_MPI, "beta_alltoallv": None}), "terms.costs.beta_alltoallv = None"),
    (lambda c: c.update({k: v for k, v in TUCKER_MPI.items() if k != "dist_query_context"}),
     "terms.costs has no 'dist_query_context'"),
    (lambda c: c.update({**TUCKER_MPI, "alpha_alltoallv": [1e-6]}), "one cost per size of alpha_bytes (2)"),
])
def test_a_tucker_calibration_the_model_cannot_read_is_one_line(tmp_path, edit, said):
    """A hand-edited or damaged Tucker calibration is refused when read, naming the file and the cost,
    instead of every point of a sweep failing on it; a complete one (MPI part and negative in-context
    corrections included) is read as written."""
    costs = dict(MEASURED["tucker"]["costs"])
    edit(costs)
    path = tucker_calibration.save({**MEASURED["tucker"], "costs": costs}, tmp_path / "cal.json")
    with pytest.raises(ValueError) as err:
        tucker_calibration.load(path)
    assert said in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)
    whole = {**MEASURED["tucker"], "costs": {**MEASURED["tucker"]["costs"], **TUCKER_MPI}}
    assert tucker_calibration.load(tucker_calibration.save(whole, tmp_path / "ok.json")) == whole
