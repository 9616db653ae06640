"""The error every `spbench` command group raises for bad input: one line, exit code 2.

A leaf, so command groups in their own modules (`spbench datasets`, `spbench bench`) raise it
without importing :mod:`spbench.cli`, which imports them."""
from __future__ import annotations

import click


class UsageFailure(click.ClickException):
    """A one-line error about the user's input; exit code 2 like click's own usage errors."""

    exit_code = 2


class OneLineUsage:
    """Click's usage errors (a bad option value, a missing argument, an unknown command) as one
    line naming the command (``label``), exit code 2, no usage block; a bare group still shows
    its help."""

    label = "spbench"

    def _one_line(self, call, ctx, args):
        try:
            return call(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise UsageFailure(f"{self.label}: {exc.format_message()}") from None

    def parse_args(self, ctx, args):
        return self._one_line(super().parse_args, ctx, args)


class OneLineCommand(OneLineUsage, click.Command):
    """A command whose option errors are one line naming it (``PREFIX NAME: ...``), no usage block."""

    prefix = "spbench"

    @property
    def label(self) -> str:
        return f"{self.prefix} {self.name}"


class OneLineGroup(OneLineUsage, click.Group):
    """A command group whose usage errors, an unknown command among them, are one line naming it."""

    def resolve_command(self, ctx, args):
        return self._one_line(super().resolve_command, ctx, args)
