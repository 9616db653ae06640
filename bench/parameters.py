"""Declared algorithm parameters (as benchopt's ``parameters``): type, default, range, meaning.

A scheduler (SpTrSV) or a distribution scheme (Tucker) declares its parameters in its own file as
``{name: Parameter(...)}``; the config layer checks a sweep's ``params:`` against them before
anything runs, and the algorithms check again when called directly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Parameter", "check_parameters", "defaults"]

_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "path": "a directory path", "ints": "a list of positive integers"}


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Parameter:
    """A parameter's declaration: ``type`` (int, float, str, bool, path, ints), default, the
    allowed range [low, high] or choices, and what it means."""

    type: str
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    nullable: bool = True        # None (the default behaviour) is allowed

    def __post_init__(self):
        if self.type not in _TYPES:
            raise ValueError(f"parameter type {self.type!r}: expected one of {', '.join(_TYPES)}")

    def expected(self) -> str:
        """What a valid value looks like, in words."""
        text = _TYPES[self.type]
        if self.choices:
            text = "one of " + ", ".join(map(str, self.choices))
        elif self.low is not None and self.high is not None:
            text += f" in [{self.low}, {self.high}]"
        elif self.low is not None:
            text += f" >= {self.low}"
        elif self.high is not None:
            text += f" <= {self.high}"
        return text + (" (or null)" if self.nullable else "")

    def accepts(self, value) -> bool:
        """Whether ``value`` is valid for this parameter."""
        if value is None:
            return self.nullable
        if self.type == "ints":
            return (isinstance(value, (list, tuple)) and len(value) > 0
                    and all(_is_int(v) and v >= 1 for v in value))
        if self.type == "bool":
            return isinstance(value, (bool, np.bool_))
        if self.type == "int":
            ok = _is_int(value)
        elif self.type == "float":
            ok = _is_int(value) or isinstance(value, (float, np.floating))
        else:
            ok = isinstance(value, str) or (self.type == "path" and hasattr(value, "__fspath__"))
        if not ok:
            return False
        if self.choices is not None and value not in self.choices:
            return False
        if self.low is not None and value < self.low:
            return False
        return self.high is None or value <= self.high


def check_parameters(owner: str, declared: dict, params: dict | None) -> dict:
    """``params`` checked against ``declared``; a ValueError names the owner (``scheme 'medium'``),
    the key, what was expected and the known keys."""
    params = dict(params or {})
    known = ", ".join(sorted(declared)) or "none"
    for key, value in params.items():
        decl = declared.get(key)
        if decl is None:
            raise ValueError(f"{owner}: unknown parameter {key!r}; known parameters: {known}")
        if not decl.accepts(value):
            raise ValueError(f"{owner}: parameter {key!r} = {value!r}, expected "
                             f"{decl.expected()}; known parameters: {known}")
    return params


def defaults(declared: dict) -> dict:
    """The declared defaults, ``{name: default}`` (what a row records besides the given values)."""
    return {key: decl.default for key, decl in declared.items()}
