"""``spbench bench NAME``: the benchmarks as subcommands built from their declarations, storing their
rows like any sweep.

:func:`build_command` makes one click command from a :class:`~spbench.harness.declaration.Benchmark`:
its options, ``--out`` (default ``results/bench-NAME/``), ``--fresh`` and ``--quiet``; the checks
(a bad option is one line and exit code 2 with nothing written); the locked results folder; the
measurement (progress on stderr); one row per item (:mod:`spbench.harness.rows`: a second invocation
appends its rows as the next repeat, ``--fresh`` starts over) and the benchmark's Markdown table on
stdout. Exit 1 when an item ended error, timeout or invalid. The group lists and builds commands
from the declarations (:mod:`spbench.harness.catalog`), so `spbench bench --help` imports no
measuring code.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from spbench.harness.catalog import declared
from spbench.harness.declaration import Benchmark, BenchRun
from spbench.harness.options import BadOption, Option, names_of
from spbench.cli.errors import OneLineCommand, OneLineGroup, UsageFailure

__all__ = ["bench", "build_command", "measure_and_store", "BenchCommand", "BenchGroup", "NamesChoice"]


class BenchCommand(OneLineCommand):
    """A benchmark subcommand whose option errors are one line (no usage block); ``declaration`` is
    the benchmark it was built from."""

    prefix = "spbench bench"
    declaration: Benchmark | None = None


class BenchGroup(OneLineGroup):
    """`spbench bench`: its commands are the declared benchmarks, each built when first asked for
    (again when its declaration changed); an unknown benchmark is one line too."""

    label = "spbench bench"

    def list_commands(self, ctx):
        return sorted(declared())

    def get_command(self, ctx, name):
        declaration = declared().get(name)
        if declaration is None:
            return None
        built = self.commands.get(name)
        if getattr(built, "declaration", None) is not declaration:
            built = self.commands[name] = build_command(declaration)
        return built


@click.group(cls=BenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
def bench():
    """Benchmarks measured side by side; rows land in results/bench-NAME/ (spbench profile/compare read them)."""


class NamesChoice(click.Choice):
    """A choice whose names live elsewhere (a registry): read when a value is checked or the help
    shows them, not when the command is built."""

    def __init__(self, names):
        self._where, self._names = names, None
        super().__init__(())

    @property
    def choices(self) -> tuple:
        if self._names is None:
            self._names = names_of(self._where)
        return self._names

    @choices.setter
    def choices(self, value) -> None:
        """click sets the names at construction; they are read from ``_where`` instead."""


def _click_type(option: Option):
    low = option.minimum
    if option.kind == "int":
        return int if low is None else click.IntRange(min=low)
    if option.kind == "float":
        return float if low is None else click.FloatRange(min=low, min_open=option.open_minimum)
    if option.kind == "file":
        return click.Path(dir_okay=False, path_type=Path if option.as_path else None)
    if option.kind == "choice":
        return NamesChoice(option.choices)
    return None


def _parameter(option: Option) -> click.Option:
    """The click option of an :class:`Option` (a flag is on when given; comma-separated kinds are text)."""
    flags = [*([option.short] if option.short else []), option.flag]
    if option.kind == "flag":
        return click.Option(flags + [option.name], is_flag=True, help=option.help)
    return click.Option(flags + [option.name], type=_click_type(option), default=option.default,
                        required=option.required, show_default=option.show_default and not option.required,
                        help=option.help)


def common_parameters() -> list[click.Option]:
    """The options every benchmark has, after its own: --out, --fresh, --quiet."""
    return [click.Option(["--out", "out_dir"], type=click.Path(path_type=Path), default=None,
                         help="Results folder (default results/bench-NAME/)."),
            click.Option(["--fresh"], is_flag=True, help="Forget the rows stored in the folder first "
                         "(default: add this invocation's rows as the next repeat)."),
            click.Option(["--quiet", "-q"], is_flag=True, help="No progress on stderr.")]


def build_command(declaration: Benchmark) -> BenchCommand:
    """The `spbench bench NAME` command of a declaration."""

    def run(out_dir, fresh, quiet, **given):
        name = declaration.name
        try:
            options = declaration.checked(given)
            unstored = {o.name: o.parse(given[o.name]) for o in declaration.options if not o.stored}
        except BadOption as exc:
            raise UsageFailure(f"spbench bench {name}: {exc}") from None
        measure = declaration.measuring()
        out = out_dir or Path("results") / f"bench-{name}"
        measure_and_store(name, options, declaration.code,
                          lambda say: measure(options, BenchRun(say, Path(out), unstored)), out_dir, fresh, quiet)

    command = BenchCommand(declaration.name, params=[*map(_parameter, declaration.options), *common_parameters()],
                           callback=run, help=declaration.help)
    command.declaration = declaration
    return command


def measure_and_store(name: str, options: dict, code: str, measure, out_dir, fresh: bool, quiet: bool) -> None:
    """Lock the folder, measure (``measure(say)`` → items), store the rows, print the table."""
    from spbench.store.atomic_files import WriteFailed
    from spbench.harness.rows import bench_folder, store_items
    from spbench.harness.tables import bench_table
    from spbench.store.results import ResultsBusy

    out = out_dir or Path("results") / f"bench-{name}"
    options = json.loads(json.dumps(options))

    def say(text: str) -> None:
        if not quiet:
            click.echo(f"spbench bench {name}: {text}", err=True)

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    try:
        with bench_folder(out, fresh=fresh) as store:   # a folder nothing can be written into: exit 2
            items = measure(say)
            try:
                rows = store_items(store, name, options, items, code=code, started_at=started)
            except WriteFailed as exc:
                raise click.ClickException(f"{exc}; the rows written before it are kept in {out}") from None
    except (ResultsBusy, WriteFailed) as exc:
        raise UsageFailure(str(exc)) from None
    click.echo(bench_table(rows))
    failed = [r for r in rows if r["status"] not in ("ok", "skipped")]
    say(f"{len(rows)} rows in {out}" + (f"; {len(failed)} not ok: " + ", ".join(
        f"{r['item']} {r['status']}" for r in failed) if failed else ""))
    if failed:
        sys.exit(1)
