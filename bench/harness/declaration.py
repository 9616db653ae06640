"""A benchmark of `spbench bench` as a declaration: its name, help, options, what measures it, its
table and the code version its rows carry (docs/design.md, "How to add … a benchmark").

The command line, the option checks, the results folder, its lock, the rows and the table printed
are made from the declaration once (:func:`spbench.cli.bench.build_command`). The measuring
code and the table are named where they live (``"module:function"``) and imported only when the
benchmark runs or its rows are profiled, so listing the benchmarks imports none of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from spbench.harness.options import Option, Ref, resolve

__all__ = ["Benchmark", "BenchRun"]


@dataclass(frozen=True)
class BenchRun:
    """What a measurement gets beside its options: ``say`` (a progress line on stderr unless
    --quiet), ``out`` (the results folder; a work folder may go under it) and ``given`` (the values
    of options the rows do not store)."""

    say: Callable[[str], None]
    out: Path
    given: dict


@dataclass(frozen=True)
class Benchmark:
    """``spbench bench NAME``.

    - ``options``: its :class:`~spbench.harness.options.Option` s, in the order `--help` lists them
      (``--out``, ``--fresh`` and ``--quiet`` come with every benchmark);
    - ``measure(options, run)`` → one dict per item (``item``, ``dataset``, its figures, and
      ``status``/``error`` when it did not run ok); ``options`` are the checked values, ``run`` a
      :class:`BenchRun`;
    - ``table(rows)`` → the Markdown table of one invocation's rows (printed, and written by
      `spbench profile`);
    - ``code``: what the rows' code version hashes: an experiment's name (what its runs execute),
      or the modules the numbers depend on, a tuple of module names (the benchmark's own included);
    - ``check(options)`` → the options the rows store, when they are more than the checked values
      (a path resolved, a file read, a value that depends on another); raises BadOption;
    - ``units``: the unit of each of its own figures the shared ones
      (``spbench.harness.rows.UNITS``) do not name, figure → unit (rows list theirs under ``units``).
    """

    name: str
    help: str
    options: tuple[Option, ...]
    measure: Ref
    table: Ref
    code: str | tuple[str, ...]
    check: Ref | None = None
    units: dict = field(default_factory=dict)

    def __post_init__(self):
        names = [o.name for o in self.options]
        flags = {o.flag for o in self.options} | {o.short for o in self.options if o.short}
        reserved = ({"out_dir", "fresh", "quiet"} & set(names)) or ({"--out", "--fresh", "--quiet", "-q"} & flags)
        if len(set(names)) < len(names) or reserved:
            raise ValueError(f"benchmark {self.name}: options {names} repeat a name or use one of every "
                             f"benchmark's (out, fresh, quiet)")

    def measuring(self) -> Callable:
        return resolve(self.measure)

    def tabulating(self) -> Callable[[list[dict]], str]:
        return resolve(self.table)

    def checked(self, given: dict) -> dict:
        """The options the rows store: each option's value checked in declaration order, then
        ``check``; BadOption on the first value refused."""
        values = {o.name: o.parse(given[o.name]) for o in self.options}
        stored = {o.name: values[o.name] for o in self.options if o.stored}
        return resolve(self.check)(stored) if self.check is not None else stored
