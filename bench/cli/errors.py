"""The error every `spbench` command group raises for bad input: one line, exit code 2.

A leaf, so command groups in their own modules (`spbench datasets`, `spbench bench`) raise it
without importing :mod:`spbench.cli`, which imports them."""
from __future__ import annotations

import click


class UsageFailure(click.ClickException):
    """A one-line error about the user's input; exit code 2 like click's own usage errors."""

    exit_code = 2


class OneLineCommand(click.Command):
    """A command whose option errors are one line naming it (``PREFIX NAME: ...``), no usage block."""

    prefix = "spbench"

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise UsageFailure(f"{self.prefix} {self.name}: {exc.format_message()}") from None
