"""The options of a `spbench bench` benchmark as data (:class:`Option`) and how a given value is
checked: comma-separated integers, names out of a registry, core counts this machine runs.

A value a benchmark refuses raises :class:`BadOption`, whose message starts with the option's flag;
the command prints it as one line (``spbench bench NAME: --flag: why``), exit code 2, nothing
written. Names to choose from are given where they live (``"module:attribute"`` or a function),
loaded when a value is checked or the command's help is shown, never when the benchmarks are listed.
"""
from __future__ import annotations

import importlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

__all__ = ["BadOption", "Option", "Ref", "resolve", "parse_ints", "parse_names", "parse_name", "names_of",
           "within_machine", "executable"]

#: where a thing is: ``"package.module:attribute"`` (imported on first use) or the thing itself
Ref = Union[str, Callable, tuple]

#: the kinds of option values and what each becomes after checking
KINDS = ("int", "float", "text", "flag", "file", "choice", "ints", "names", "name")


class BadOption(ValueError):
    """A value a benchmark refuses; the message starts with the option's flag (``--grids: ...``)."""


def resolve(ref: Ref):
    """The object ``ref`` names: ``"module:attribute"`` imported now, anything else as given."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def names_of(ref: Ref) -> tuple:
    """The names ``ref`` stands for: a tuple, a dict's keys, or what a function returns."""
    found = resolve(ref)
    if callable(found):
        found = found()
    return tuple(found)


def parse_ints(flag: str, text: str, minimum: int = 1) -> list[int]:
    """``"1,2,4"`` → [1, 2, 4]; BadOption naming the flag otherwise."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < minimum:
        raise BadOption(f"{flag}: expected comma-separated integers >= {minimum}, got {text!r}")
    return values


def parse_names(flag: str, text: str, known) -> list[str]:
    """``"a,b"`` → ["a", "b"], each one of ``known``; BadOption naming the flag otherwise."""
    values = [v for v in text.split(",") if v]
    if not values or any(v not in known for v in values):
        raise BadOption(f"{flag}: expected names out of {', '.join(known)}, got {text!r}")
    return values


def parse_name(flag: str, text: str, known) -> str:
    """One name out of ``known``; BadOption naming the flag otherwise."""
    if text not in known:
        raise BadOption(f"{flag}: expected one of {', '.join(known)}, got {text!r}")
    return text


def within_machine(cores: int) -> int:
    """A core count this machine runs (its usable cores); BadOption naming --cores otherwise."""
    from spbench.machine.facts import usable_cores

    if cores > usable_cores():
        raise BadOption(f"--cores: this machine runs at most {usable_cores()} cores, got {cores}")
    return cores


def executable(flag: str, binary: str, hint: str = "") -> str:
    """The absolute path of an executable file given by path or found on PATH; BadOption otherwise."""
    found = shutil.which(binary) if os.sep not in binary else binary
    if not found or not Path(found).is_file() or not os.access(found, os.X_OK):
        raise BadOption(f"{flag}: {binary}: no such executable file{hint}")
    return str(Path(found).resolve())


@dataclass(frozen=True)
class Option:
    """One option of a benchmark: its flag, the kind of value, default and help as `--help` shows them.

    ``kind``: ``int``/``float`` (at least ``minimum``, above it when ``open_minimum``), ``text``,
    ``flag`` (on when given), ``file`` (a path, :class:`pathlib.Path` when ``as_path``), ``choice``
    (one of ``choices``, shown in --help), ``ints`` (comma-separated integers >= ``minimum``, stored
    as a list), ``names`` (comma-separated names out of ``choices``, stored as a list), ``name`` (one
    name out of ``choices``). ``stored=False``: the value reaches the measurement but not the rows'
    options (an output path, say).
    """

    flag: str
    kind: str = "text"
    default: Any = None
    help: str | None = None
    minimum: float | None = None
    open_minimum: bool = False
    choices: Ref = ()
    key: str | None = None
    short: str | None = None
    required: bool = False
    show_default: bool = True
    as_path: bool = False
    stored: bool = True

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option {self.flag}: kind {self.kind!r}, expected one of {', '.join(KINDS)}")

    @property
    def name(self) -> str:
        """The key of the value in the benchmark's options (``--dram-mib`` → ``dram_mib``)."""
        return self.key or self.flag.lstrip("-").replace("-", "_")

    def parse(self, value):
        """The value as the benchmark gets it (lists for ``ints`` and ``names``); None stays None."""
        if value is None:
            return None
        if self.kind == "ints":
            return parse_ints(self.flag, value, int(self.minimum or 1))
        if self.kind == "names":
            return parse_names(self.flag, value, names_of(self.choices))
        if self.kind == "name":
            return parse_name(self.flag, value, names_of(self.choices))
        return value

