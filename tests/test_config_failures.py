"""Config and flag input refused or warned up front: one line naming the file, key or flag and what
was expected, exit code 2, nothing written (no results folder, no calibration measured)."""
import errno
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.pipeline.config import ConfigError, load_config
from spbench.pipeline.parameters import Parameter
from .test_failures import CFG, TUCKER_CFG  # small sweeps: SpTrSV serial/growlocal, simulated Tucker

INT64_MAX = 2**63 - 1


def _run(cfg, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), *extra])


def _refusal(res, *words):
    """Exit 2 and a single 'Error:' line holding ``words``; returns that line."""
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# --- integers the kernels cannot take ------------------------------------------------------------

@pytest.mark.parametrize("cfg, params, words", [
    (CFG, "{growlocal: {sync_cost: 100000000000000000000}}",
     ["key 'params.growlocal.sync_cost'", "= 100000000000000000000", "expected an integer in [0, "]),
    (CFG, "{growlocal: {min_superstep_size: 100000000000000000000}}",
     ["key 'params.growlocal.min_superstep_size'", "expected an integer in [1, "]),
    (CFG.replace("growlocal]", "elastic_divide]"), "{elastic_divide: {sync_cost: 9223372036854775808}}",
     ["key 'params.elastic_divide.sync_cost'", "expected an integer in [0, "]),
    (CFG, f"{{growlocal: {{sync_cost: {-2**70}}}}}", ["key 'params.growlocal.sync_cost'", "an integer in [0, 2305843009213693951]"]),
    (TUCKER_CFG, "{hyper: {threads: 100000000000000000000}}",
     ["key 'params.hyper.threads'", "expected an integer in [1, "]),
])
def test_out_of_range_integer_parameters_are_refused(write_config, tmp_path, cfg, params, words):
    """Beyond the C type a kernel takes them as they were error rows (an OverflowError per point)."""
    path = write_config(cfg + f"params: {params}\n", name="c.yaml")
    _refusal(_run(path, "--out", str(tmp_path / "out")), "c.yaml", *words)
    assert not (tmp_path / "out").exists()


def test_an_int_parameter_fits_its_c_type():
    """int64 unless declared int32; the message gives the whole range only when the C type refuses."""
    wide = Parameter("int", 500, "L", low=0, nullable=False)
    assert wide.accepts(INT64_MAX) and not wide.accepts(INT64_MAX + 1)
    assert wide.expected(10**20) == f"an integer in [0, {INT64_MAX}]: it feeds an int64"
    assert wide.expected(-1) == "an integer >= 0"
    narrow = Parameter("int", 1, "threads", low=1, ctype="int32")
    assert narrow.accepts(2**31 - 1) and not narrow.accepts(2**31)
    assert narrow.expected() == "an integer >= 1 (or null)"
    assert narrow.expected(2**31) == f"an integer in [1, {2**31 - 1}] (or null): it feeds an int32"
    grid = Parameter("ints", None, "grid")
    assert not grid.accepts([1, 2**63]) and grid.expected([1, 2**63]).endswith("each feeds an int64")
    with pytest.raises(ValueError, match="ctype"):
        Parameter("int", 1, "x", ctype="int128")


@pytest.mark.parametrize("cfg, old, new, key, low", [
    (CFG, "cores: [1]", "cores: [1, 2147483648]", "sweep.cores[1]", 1),
    (TUCKER_CFG, "K: [2]", "K: [100000000000000000000]", "sweep.K[0]", 1),
    (CFG, "repeats: 2", "seed: 2147483648", "seed", 0),
])
def test_out_of_range_axis_values_and_seeds_are_refused(write_config, cfg, old, new, key, low):
    """They feed C ints: the kernels' core counts, MPI's ranks, Mt-KaHyPar's seed."""
    with pytest.raises(ConfigError, match=rf"key '{re.escape(key)}': expected an integer in \[{low}, 2147483647\]"):
        load_config(write_config(cfg.replace(old, new)))


# --- duplicate YAML keys ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, key", [
    (CFG + "repeats: 3\n", 10, "repeats"),
    (CFG + "params:\n  growlocal:\n    sync_cost: 1\n    sync_cost: 2\n", 13, "sync_cost"),
    (CFG.replace("cores: [1]", "cores: [1]\n  cores: [2]"), 9, "cores"),
    (CFG + "params:\n  growlocal: {}\n  growlocal: {sync_cost: 1}\n", 12, "growlocal"),
])
def test_duplicate_keys_are_refused(write_config, tmp_path, text, line, key):
    path = write_config(text, name="c.yaml")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: line {line}: key '{key}' given twice"
    _refusal(_run(path, "--out", str(tmp_path / "out")), f"c.yaml: line {line}: key '{key}' given twice")


def test_merge_keys_may_override_what_they_bring(write_config):
    """A YAML merge (``<<: *anchor``) followed by one of its keys is an override, not a duplicate."""
    config = load_config(write_config(CFG.replace("growlocal]", "growlocal, elastic_divide]") +
                                      "params:\n  growlocal: &g {sync_cost: 1, min_superstep_size: 3}\n"
                                      "  elastic_divide: {<<: *g, sync_cost: 2}\n"))
    assert config.params["elastic_divide"] == {"sync_cost": 2, "min_superstep_size": 3}


# --- an exclude that removes every point ----------------------------------------------------------

def test_exclude_removing_every_point_is_refused(write_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_config(CFG + "exclude: [{cores: 1}]\n", name="c.yaml")
    _refusal(_run(path), "c.yaml: key 'exclude': it removes every point of the sweep")
    _refusal(_run(path, "--dry-run"), "key 'exclude': it removes every point")
    assert not (tmp_path / "results").exists()


def test_exclude_of_another_execution_counts_for_that_execution_only(write_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_config(CFG + "exclude: [{execution: schedule, cores: 1}]\n", name="c.yaml")
    assert _run(path, "--dry-run").exit_code == 0
    _refusal(_run(path, "--dry-run", "--execution", "schedule"),
             "c.yaml: key 'exclude': it removes every point of the sweep", "schedule")


# --- parameters of an algorithm the sweep does not run --------------------------------------------

def test_parameters_of_an_algorithm_not_in_the_sweep_warn(write_config):
    path = write_config(CFG + "params: {hdagg: {threshold: 0.1}, growlocal: {sync_cost: 5}}\n", name="c.yaml")
    config = load_config(path)
    assert config.warnings == (f"{path}: params.hdagg: hdagg is not in the sweep; its parameters are unused",)
    assert config.with_overrides(repeats=3).warnings == config.warnings


def test_parameters_of_an_included_algorithm_do_not_warn(write_config):
    path = write_config(CFG + "include: [{algorithm: hdagg, cores: 1}]\nparams: {hdagg: {threshold: 0.1}}\n")
    assert load_config(path).warnings == ()


# --- a flag's error names the flag ---------------------------------------------------------------

@pytest.mark.parametrize("cfg, flags, expected", [
    (CFG, ["--repeats", "0"], "--repeats: expected an integer >= 1, got 0"),
    (CFG, ["--runs", "-2"], "--runs: expected an integer >= 1, got -2"),
    (CFG, ["--timeout", "0"], "--timeout: expected a number of seconds > 0, got 0.0"),
    (TUCKER_CFG, ["--timeout", "-1"], "--timeout: expected a number of seconds > 0, got -1.0"),
    (TUCKER_CFG, ["--launcher", "srun"], "--launcher: expected a command template containing {ranks}"),
    (TUCKER_CFG, ["--barrier", "spin"], "--barrier: an option of sptrsv sweeps, not of a tucker sweep"),
    (CFG, ["--duplicates", "error"], "--duplicates: an option of tucker sweeps, not of a sptrsv sweep"),
    (TUCKER_CFG, ["--execution", "schedule"], "--execution: expected one of measured, simulate for a tucker sweep"),
    (TUCKER_CFG, ["--scale", "paper"], "--scale: paper is for experiments with stand-ins at the paper's sizes"),
    (CFG, ["--machine", "nowhere/m.json"], "--machine: nowhere/m.json: no such file"),
])
def test_flag_errors_name_the_flag(write_config, tmp_path, monkeypatch, cfg, flags, expected):
    monkeypatch.chdir(tmp_path)
    path = write_config(cfg, name="c.yaml")
    line = _refusal(_run(path, *flags), expected)
    assert line.startswith(f"Error: {flags[0]}: ") and "key '" not in line
    assert not (tmp_path / "results").exists()


def test_config_key_errors_still_name_the_key(write_config):
    with pytest.raises(ConfigError, match=r"c\.yaml: key 'repeats': expected an integer >= 1, got int 0"):
        load_config(write_config(CFG.replace("repeats: 2", "repeats: 0"), name="c.yaml"))


# --- `spbench calibrate` refuses an --out / --results it cannot write before measuring -------------

@pytest.fixture
def no_measuring(monkeypatch):
    """measure_calibration fails the test when called; the machine counts as quiet."""
    from spbench.experiment_registry import EXPERIMENTS, get_experiment

    def measure(self, quick, cores, force=False):
        pytest.fail("measured before refusing the output")
    for name in EXPERIMENTS:
        monkeypatch.setattr(type(get_experiment(name)), "measure_calibration", measure)
    monkeypatch.setattr("spbench.machine.load.check_now", lambda seconds=1.0: {"busy": False})


def _read_only(monkeypatch, where: Path):
    """tempfile.mkstemp failing with EROFS in ``where`` (tests may run as root, where chmod does not bite)."""
    import spbench.store.atomic_files as atomic

    real = atomic.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if str(where) in str(dir):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)
    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)


@pytest.mark.parametrize("experiment", ["sptrsv", "tucker"])
def test_calibrate_refuses_a_read_only_out_before_measuring(experiment, tmp_path, monkeypatch, no_measuring):
    _read_only(monkeypatch, tmp_path / "ro")
    res = CliRunner().invoke(main, ["calibrate", "--experiment", experiment, "--quick", "--out",
                                    str(tmp_path / "ro" / "x.json")])
    _refusal(res, "--out", str(tmp_path / "ro"), "Read-only file system")
    assert not (tmp_path / "ro").exists()


def test_calibrate_refuses_an_out_under_a_file_before_measuring(tmp_path, no_measuring):
    (tmp_path / "file").write_text("x")
    res = CliRunner().invoke(main, ["calibrate", "--quick", "--out", str(tmp_path / "file" / "x.json")])
    _refusal(res, "--out", "a file, not a folder")


def test_calibrate_refuses_a_read_only_results_before_measuring(tmp_path, monkeypatch, no_measuring):
    _read_only(monkeypatch, tmp_path / "ro")
    res = CliRunner().invoke(main, ["calibrate", "--quick", "--out", str(tmp_path / "c.json"), "--validate", "6",
                                    "--results", str(tmp_path / "ro" / "res")])
    _refusal(res, "--results", "Read-only file system")
    assert not (tmp_path / "c.json").exists()


def test_calibrate_refuses_a_missing_agree_file_before_measuring(tmp_path, no_measuring):
    res = CliRunner().invoke(main, ["calibrate", "--quick", "--out", str(tmp_path / "c.json"),
                                    "--agree", str(tmp_path / "none.json")])
    _refusal(res, "--agree", "none.json")
    assert not (tmp_path / "c.json").exists()


# --- no refusal of `spbench run` leaves a results folder ---------------------------------------

BAD_RUNS = [
    pytest.param("name: [\n", [], id="yaml"),
    pytest.param(CFG + "repeats: 3\n", [], id="duplicate-key"),
    pytest.param(CFG + "exclude: [{algorithm: serial}, {algorithm: growlocal}]\n", [], id="exclude-all"),
    pytest.param(CFG + "params: {growlocal: {sync_cost: 100000000000000000000}}\n", [], id="int-range"),
    pytest.param(CFG + "bogus: 1\n", [], id="unknown-key"),
    pytest.param(CFG.replace("- lap2d-5pt: {grid: 10}", "- path: bad.mtx"), [], id="bad-file"),
    pytest.param(CFG.replace("cores: [1]", "cores: [100000]"), [], id="too-many-cores"),
    pytest.param(CFG.replace("repeats: 2", "execution: simulate\ncosts: none.json"), [], id="no-calibration"),
    pytest.param(CFG, ["--repeats", "0"], id="flag"),
    pytest.param(CFG, ["--machine", "none.json"], id="machine"),
    pytest.param(CFG, ["--shard", "3/2"], id="shard"),
]


@pytest.mark.parametrize("text, flags", BAD_RUNS)
def test_refused_runs_leave_no_results_folder(write_config, tmp_path, monkeypatch, text, flags):
    """A refusal at any stage (YAML, keys, parameters, data files, resources, flags) makes no folder:
    neither results/ nor results/<name>/ when results/ is there, nor an --out or its parents."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.mtx").write_text("garbage\n")
    path = write_config(text, name="c.yaml")
    for extra in ([], ["--out", str(tmp_path / "deep" / "er" / "out")]):
        res = _run(path, *flags, *extra)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == [], res.output
    (tmp_path / "results").mkdir()
    assert _run(path, *flags).exit_code == 2
    assert list((tmp_path / "results").iterdir()) == []
