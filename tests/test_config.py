"""Config validation: every bad input is one line naming the file and the key, exit code 2."""
import subprocess

import pytest

from spbench.pipeline.config import ConfigError, load_config

GOOD = """
name: t
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 10}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
repeats: 3
"""


def test_good_config_loads(write_config):
    cfg = load_config(write_config(GOOD))
    assert cfg.name == "t" and cfg.repeats == 3 and cfg.runs == 1
    assert dict(cfg.sweep) == {"algorithm": ("serial", "wavefront"), "cores": (1, 2)}
    assert cfg.datasets[0].name.startswith("lap2d-5pt")


@pytest.mark.parametrize("text, needle", [
    (GOOD + "bogus: 1\n", "unknown key 'bogus'"),
    (GOOD.replace("repeats: 3", "repeats: many"), "key 'repeats': expected an integer >= 1"),
    (GOOD.replace("cores: [1, 2]", "cores: [1, 0]"), "key 'sweep.cores[1]': expected an integer >= 1"),
    (GOOD.replace("cores: [1, 2]", "cores: []"), "key 'sweep.cores': expected a non-empty list"),
    (GOOD.replace("cores: [1, 2]", "cores: [1, two]"), "key 'sweep.cores[1]'"),
    (GOOD.replace("[serial, wavefront]", "[serial, magic]"), "key 'sweep.algorithm[1]'"),
    (GOOD.replace("- lap2d-5pt: {grid: 10}", "- no_such_matrix"), "key 'datasets[0]'"),
    (GOOD.replace("- lap2d-5pt: {grid: 10}", "- path: /nonexistent/m.mtx"), "key 'datasets[0]'"),
    (GOOD.replace("experiment: sptrsv", "experiment: fft"), "key 'experiment'"),
    (GOOD.replace("cores: [1, 2]", "cores: [1, 2]\n  kernel: [fast]"), "key 'sweep.kernel[0]'"),
    (GOOD.replace("name: t", "name: a/b"), "key 'name'"),
    (GOOD + "exclude: [{dataset: nope}]\n", "key 'exclude[0].dataset'"),
    ("- a\n- b\n", "expected a mapping"),
    ("name: [\n", "cfg.yaml"),
])
def test_bad_configs_name_file_and_key(write_config, text, needle):
    path = write_config(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    msg = str(err.value)
    assert needle in msg and str(path) in msg and "\n" not in msg


def test_cli_config_error_exit_2_writes_nothing(write_config, tmp_path, spbench_cmd):
    path = write_config(GOOD.replace("cores: [1, 2]", "cores: [0]"))
    out = tmp_path / "res"
    res = subprocess.run([*spbench_cmd, "run", str(path), "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 2
    assert "sweep.cores[0]" in res.stderr and str(path) in res.stderr
    assert len([l for l in res.stderr.splitlines() if l.strip()]) == 1
    assert not out.exists()


def test_explicit_flags_win(write_config):
    cfg = load_config(write_config(GOOD)).with_overrides(repeats=7, barrier=None)
    assert cfg.repeats == 7 and cfg.barrier == "auto"
    with pytest.raises(ConfigError, match="repeats"):
        cfg.with_overrides(repeats=0)
