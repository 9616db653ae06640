"""`spbench run`'s flags of one experiment's keys come from the experiments' declarations
(:class:`spbench.experiment.RunFlag`), never from the shared command (docs/design.md, "The Experiment
interface")."""
import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

import spbench
from spbench import experiment_registry
from spbench.cli import main
from spbench.cli.run_flags import ExperimentFlag, experiment_flags
from spbench.experiment import ConfigKey, RunFlag, choice
from spbench.experiment_registry import declared_options

from .test_failures import CFG

BENCH = Path(spbench.__file__).resolve().parent


def _flagged() -> dict:
    """config key -> [(experiment, ConfigKey)] of every key some experiment gives a flag."""
    found: dict = {}
    for name, options in declared_options().items():
        for key, decl in options.items():
            if decl.flag is not None:
                found.setdefault(key, []).append((name, decl))
    return found


def test_the_shared_command_names_no_experiments_option():
    """No string in cli/run.py or cli/run_flags.py is a key of an experiment's options."""
    keys = {key for options in declared_options().values() for key in options}
    for module in ("cli/run.py", "cli/run_flags.py"):
        tree = ast.parse((BENCH / module).read_text())
        named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in keys}
        named |= {node.value.lstrip("-") for node in ast.walk(tree) if isinstance(node, ast.Constant)
                  and isinstance(node.value, str) and node.value.startswith("--") and node.value.lstrip("-") in keys}
        assert not named, module


def test_every_declared_flag_is_in_the_help_with_its_help():
    assert {"barrier", "timeout", "launcher", "oversubscribe", "duplicates"} <= set(_flagged())
    options = {o.name: o for o in experiment_flags()}
    assert set(options) == set(_flagged())
    for key, owners in _flagged().items():
        option = options[key]
        assert option.opts == [f"--{key}"] and all(decl.flag.help in option.help for _, decl in owners)
    assert options["timeout"].help.count(";") == 1 and options["timeout"].help.endswith(" (override).")
    assert options["oversubscribe"].is_flag and options["oversubscribe"].help == \
        "Tucker MPI: allow more ranks than cores."
    assert options["barrier"].type.choices == ("auto", "spin", "omp")
    text = CliRunner().invoke(main, ["run", "--help"], terminal_width=200).output
    for key in _flagged():
        assert f"--{key}" in text
    assert text.index("--fallback") < text.index("--barrier") < text.index("--scale")


def _toy_options(monkeypatch, options: dict):
    monkeypatch.setattr(experiment_registry, "declared_options", lambda: {**declared_options(), "toy": options})


def test_a_new_experiments_flag_joins_without_touching_the_command(monkeypatch):
    _toy_options(monkeypatch, {"knob": choice(("low", "high"), "low", flag=RunFlag("Toy: how far to turn", "choice")),
                               "timeout": ConfigKey(1.0, "seconds", lambda v: True, flag=RunFlag("Toy: per run",
                                                                                                 "float"))})
    options = {o.name: o for o in experiment_flags()}
    assert isinstance(options["knob"], ExperimentFlag) and options["knob"].type.choices == ("low", "high")
    assert options["knob"].help == "Toy: how far to turn (override)."
    assert options["timeout"].help.endswith("; Toy: per run (override).")


def test_one_key_declared_with_two_kinds_of_value_is_refused(monkeypatch):
    _toy_options(monkeypatch, {"timeout": ConfigKey("x", "text", lambda v: True, flag=RunFlag("Toy: text"))})
    with pytest.raises(ValueError, match="--timeout: sptrsv and tucker and toy declare it with different values"):
        experiment_flags()


def test_a_choice_flag_needs_its_keys_choices():
    with pytest.raises(ValueError, match="choices"):
        ConfigKey("a", "a", lambda v: True, flag=RunFlag("x", "choice"))
    with pytest.raises(ValueError, match="kind"):
        RunFlag("x", "number")


def test_a_bad_choice_is_clicks_usage_error(write_config):
    res = CliRunner().invoke(main, ["run", str(write_config(CFG)), "--barrier", "fast"])
    assert res.exit_code == 2 and "Invalid value for '--barrier'" in res.output


def test_a_slurm_array_repeats_the_experiments_flags_given(write_config):
    cfg = write_config(CFG)
    res = CliRunner().invoke(main, ["run", str(cfg), "--slurm-array", "2", "--barrier", "omp", "--repeats", "5"])
    assert res.exit_code == 0, res.output
    words = res.output.split()
    assert words[-4:] == ["--repeats", "5", "--barrier", "omp"]
