"""Plugins named in $SPBENCH_PLUGINS register their algorithms wherever an experiment is looked up (the CLI,
the MPI worker); a plugin that cannot be loaded is one line naming it, exit 2, nothing written."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.experiment_registry import get_experiment
from spbench.plugins import PluginError, load_plugins
from spbench.tucker.schemes import SCHEMES

TOY = Path(__file__).parent / "tucker" / "plugins" / "round_robin.py"


def test_a_plugin_file_registers_its_scheme(monkeypatch):
    monkeypatch.setitem(SCHEMES, "round_robin", None)  # taken back after the test
    del SCHEMES["round_robin"]
    monkeypatch.setenv("SPBENCH_PLUGINS", str(TOY))
    algorithms = get_experiment("tucker").algorithms()
    assert algorithms["round_robin"].label == "RoundRobin"
    del SCHEMES["round_robin"]  # register() runs again on the next look-up
    assert load_plugins() == [str(TOY)] and "round_robin" in SCHEMES


@pytest.mark.parametrize("name, said", [
    ("no_such_plugin.py", "no_such_plugin.py: no such file"),
    ("no_such_module_for_spbench", "cannot load it (ModuleNotFoundError"),
    ("json", "json: expected a module with a register() function"),
])
def test_a_plugin_that_cannot_load_is_one_line(name, said, monkeypatch):
    monkeypatch.setenv("SPBENCH_PLUGINS", name)
    with pytest.raises(PluginError) as err:
        load_plugins()
    assert said in str(err.value) and "$SPBENCH_PLUGINS" in str(err.value) and "\n" not in str(err.value)


def test_the_cli_names_a_broken_plugin(write_config, tmp_path, monkeypatch):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('half written')\n")
    monkeypatch.setenv("SPBENCH_PLUGINS", str(broken))
    config = write_config("""
        name: p
        experiment: tucker
        execution: simulate
        fallback: standin
        datasets:
          - enron: {nnz: 300, seed: 5}
        sweep: {algorithm: [coarse], ranks: [2], K: [2]}
        """)
    res = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "res")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "broken.py: cannot load it (RuntimeError: half written)" in res.output
    assert not (tmp_path / "res").exists()
