"""Declared algorithm parameters (as benchopt's ``parameters``): type, default, range, meaning.

A scheduler (SpTrSV) or a distribution scheme (Tucker) declares its parameters in its own file as
``{name: Parameter(...)}``; the config layer checks a sweep's ``params:`` against them before
anything runs, and the algorithms check again when called directly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Parameter", "check_parameters", "defaults"]

_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "path": "a directory path", "ints": "a list of positive integers"}
#: the C integer types a kernel takes an int parameter as, with their ranges: a value beyond them
#: overflows in the kernel (an error row, or a wrapped number), so it is refused before anything runs
CTYPES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Parameter:
    """A parameter's declaration: ``type`` (int, float, str, bool, path, ints), default, the
    allowed range [low, high] or choices, and what it means; an int (each entry of ints) must also
    fit ``ctype``, the C type the kernel takes it as (int64 unless declared int32)."""

    type: str
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    nullable: bool = True        # None (the default behaviour) is allowed
    ctype: str = "int64"         # int, ints: the C type the value feeds

    def __post_init__(self):
        if self.type not in _TYPES:
            raise ValueError(f"parameter type {self.type!r}: expected one of {', '.join(_TYPES)}")
        if self.ctype not in CTYPES:
            raise ValueError(f"parameter ctype {self.ctype!r}: expected one of {', '.join(CTYPES)}")

    def int_range(self, ctype: bool = True) -> tuple:
        """(low, high) of an int parameter (of each entry of an ints one): the declared range, within
        its C type's range when ``ctype`` (None for a side left open)."""
        lo, hi = CTYPES[self.ctype] if ctype else (None, None)
        for bound in (1 if self.type == "ints" else None, self.low):
            if bound is not None:
                lo = math.ceil(bound) if lo is None else max(lo, math.ceil(bound))
        if self.high is not None:
            hi = math.floor(self.high) if hi is None else min(hi, math.floor(self.high))
        return lo, hi

    def _beyond_ctype(self, value) -> bool:
        """Whether ``value`` (an int, or a list of them) is refused only because its C type cannot hold it."""
        if self.type not in ("int", "ints"):
            return False
        values = value if self.type == "ints" and isinstance(value, (list, tuple)) else [value]
        inside = lambda v, lo, hi: _is_int(v) and (lo is None or v >= lo) and (hi is None or v <= hi)  # noqa: E731
        return (all(inside(v, *self.int_range(ctype=False)) for v in values)
                and not all(inside(v, *self.int_range()) for v in values))

    def expected(self, value=None) -> str:
        """What a valid value looks like, in words; for a ``value`` too large or small for the C type
        the parameter feeds, the whole range and that type."""
        if value is not None and self._beyond_ctype(value):
            lo, hi = self.int_range()
            what = "an integer" if self.type == "int" else "a list of integers"
            feeds = "it feeds" if self.type == "int" else "each feeds"
            return f"{what} in [{lo}, {hi}]" + (" (or null)" if self.nullable else "") + f": {feeds} an {self.ctype}"
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
            lo, hi = self.int_range()
            return (isinstance(value, (list, tuple)) and len(value) > 0
                    and all(_is_int(v) and lo <= v <= hi for v in value))
        if self.type == "bool":
            return isinstance(value, (bool, np.bool_))
        if self.type == "int":
            lo, hi = CTYPES[self.ctype]
            ok = _is_int(value) and lo <= value <= hi
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
                             f"{decl.expected(value)}; known parameters: {known}")
    return params


def defaults(declared: dict) -> dict:
    """The declared defaults, ``{name: default}`` (what a row records besides the given values)."""
    return {key: decl.default for key, decl in declared.items()}
