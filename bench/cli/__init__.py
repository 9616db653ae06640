"""The `spbench` command: run sweeps, profile results, compare them, calibrate the cost models,
manage data sets, report the machine; one module per command (`run.py`, `profile.py`, `compare.py`,
`calibrate.py`, `info.py`, `datasets.py`, `bench.py`), the shared one-line errors in `errors.py`."""
from __future__ import annotations

import warnings

import click

from spbench import __version__
from .errors import OneLineGroup, UsageFailure


def _datasets_group() -> click.Group:
    from .datasets import datasets
    from .standin import standin_search

    datasets.add_command(standin_search)
    return datasets


def _bench_group() -> click.Group:
    """`spbench bench`: its commands are built from the benchmarks' declarations when asked for."""
    from .bench import bench

    return bench


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning raised while a command runs, as the command's other warnings: one line on stderr."""
    click.echo(f"spbench: warning: {message}", err=True)


class TopGroup(OneLineGroup):
    """The `spbench` group: the command groups kept in their own modules are imported when called
    (``LAZY``: name -> loader and the short help `spbench --help` shows), so `--help` loads neither
    them nor what they import (scipy, pandas, an experiment)."""

    LAZY = {"bench": (_bench_group, "Benchmarks measured side by side; rows land in results/bench-NAME/ "
                                    "(spbench profile/compare read them)."),
            "datasets": (_datasets_group, "The papers' data sets: SuiteSparse matrices, generators, FROSTT "
                                          "tensors and their stand-ins.")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def invoke(self, ctx):
        """A write that fails where a command does not say more (a full disk, a read-only folder)
        is one line naming the path and the cause, exit code 1; a plugin that cannot be loaded
        (``$SPBENCH_PLUGINS``) one line naming it, exit code 2."""
        from spbench.store.atomic_files import WriteFailed
        from spbench.plugins import PluginError

        shown, warnings.showwarning = warnings.showwarning, _warning_line
        try:
            return super().invoke(ctx)
        except WriteFailed as exc:
            raise click.ClickException(str(exc)) from None
        except PluginError as exc:
            raise UsageFailure(str(exc)) from None
        finally:
            warnings.showwarning = shown

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            self.add_command(self.LAZY[name][0](), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        limit = formatter.width - 6 - max(map(len, self.list_commands(ctx)))
        rows = [(name, self.commands[name].get_short_help_str(limit) if name in self.commands
                 else click.Command(name, short_help=self.LAZY[name][1]).get_short_help_str(limit))
                for name in self.list_commands(ctx) if name in self.LAZY or not self.commands[name].hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=TopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="spbench")
def main():
    """Benchmarks for sparse HPC kernels: distributed sparse Tucker and parallel SpTrSV."""


def _add_commands() -> None:
    """The eager commands, one module each (the lazy groups are in ``TopGroup.LAZY``)."""
    from .calibrate import calibrate
    from .compare import compare
    from .info import info
    from .profile import profile
    from .run import run

    for command in (run, profile, compare, info, calibrate):
        main.add_command(command)


_add_commands()
