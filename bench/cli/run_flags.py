"""The `spbench run` flags the experiments declare (docs/design.md, "The Experiment interface"): each
config key with a :class:`spbench.experiment.RunFlag` is a click option ``--KEY`` of `spbench run`.

:class:`RunCommand` adds them the first time its parameters are asked for (when it parses its
arguments or shows its help), so `spbench --help` imports no experiment and `spbench run` names
none. A key several experiments declare (``timeout``) is one flag whose help joins theirs.
"""
from __future__ import annotations

import click

from spbench.cli.errors import OneLineCommand

__all__ = ["ExperimentFlag", "RunCommand", "experiment_flags"]


class ExperimentFlag(click.Option):
    """A `spbench run` option some experiment declares (a Slurm array's tasks repeat those taking a value)."""


def experiment_flags() -> list[ExperimentFlag]:
    """One option per config key some experiment gives a flag, in the registry's order; ValueError
    when two experiments give one key's flag different kinds of value."""
    from spbench.experiment_registry import declared_options

    declared: dict[str, list] = {}
    for experiment, options in declared_options().items():
        for key, decl in options.items():
            if decl.flag is not None:
                declared.setdefault(key, []).append((experiment, decl))
    return [_option(key, owners) for key, owners in declared.items()]


def _option(key: str, owners: list) -> ExperimentFlag:
    """The click option of config key ``key`` as its ``owners`` ((experiment, ConfigKey) pairs)
    declare it: a flag taking a value says it overrides the file's, a switch is on when given."""
    from spbench.pipeline.config import flag

    takes = {(decl.flag.kind, decl.choices if decl.flag.kind == "choice" else ()) for _, decl in owners}
    if len(takes) > 1:
        raise ValueError(f"{flag(key)}: {' and '.join(name for name, _ in owners)} declare it with different "
                         f"values ({', '.join(sorted(kind for kind, _ in takes))})")
    (kind, choices), = takes
    text = "; ".join(decl.flag.help for _, decl in owners)
    if kind == "switch":
        return ExperimentFlag([flag(key), key], is_flag=True, default=None, help=f"{text}.")
    value = {"text": None, "float": float, "choice": click.Choice(choices)}[kind]
    return ExperimentFlag([flag(key), key], type=value, default=None, help=f"{text} (override).")


class RunCommand(OneLineCommand):
    """`spbench run`: the experiments' flags join its own after the option ``flags_after`` names,
    read from the registry once, when the command first needs its parameters."""

    def __init__(self, *args, flags_after: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.flags_after = flags_after
        self._declared = False

    def get_params(self, ctx) -> list:
        if not self._declared:
            at = [p.name for p in self.params].index(self.flags_after) + 1
            self.params[at:at] = experiment_flags()
            self._declared = True
        return super().get_params(ctx)
