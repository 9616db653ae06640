"""Which stored rows `spbench profile` and `spbench compare` read: a row whose fields are not as its kind
declares (:mod:`spbench.store.row_schema`), or one of another experiment than its folder's, is left out with
one line naming its file and what was expected, never a traceback somewhere in a table.

A reader checks every declared field a row carries against its declared types, and asks only for the
fields it reads (a row's identity, outcome and sweep axes): rows written by hand or by an older
spbench that lack a field no report reads still load.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from spbench.experiment import Experiment
from spbench.experiment_registry import ROW_KINDS, get_row_kind
from spbench.store.row_schema import declared_fields

#: what every profile reads of a row besides its kind's axes: its identity and its outcome
PROFILE_FIELDS = ("run_id", "schema_version", "experiment", "config", "dataset", "execution", "status", "repeat")
#: what `spbench compare` matches and filters rows by, besides the sweep's axes
COMPARE_FIELDS = ("experiment", "dataset", "execution", "status")
#: lists of timed repetitions, read as numbers
SAMPLE_FIELDS = ("solve_times", "times")
#: how a message names a declared JSON type
TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "text", dict: "a JSON object",
              list: "a list", None: "null"}
#: problems a left-out line names before saying how many more there are
SHOWN_PROBLEMS = 3


def expected_types(types: tuple) -> str:
    """A declared field's types in words: "an integer", "a number or null"."""
    words = ["a number" if t is int and float in types else TYPE_WORDS.get(t, getattr(t, "__name__", str(t)))
             for t in types if not (t is float and int in types)]
    return " or ".join(dict.fromkeys(words))


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def field_problems(row: dict, fields: dict, needed) -> list[str]:
    """Each of ``needed`` that ``row`` lacks, each field of ``fields`` it carries with a value of another
    type, each list of timed repetitions holding something other than numbers."""
    problems = [f"no field {name!r}" + (f", expected {expected_types(fields[name].types)}" if name in fields else "")
                for name in dict.fromkeys(needed) if name not in row]
    problems += [f"field {name!r} = {_shown(value)}, expected {expected_types(fields[name].types)}"
                 for name, value in row.items() if name in fields and not fields[name].accepts(value)]
    problems += [f"field {name!r} = {_shown(row[name])}, expected a list of numbers" for name in SAMPLE_FIELDS
                 if isinstance(row.get(name), list) and not all(v is None or _is_number(v) for v in row[name])]
    return problems


def _kind_problem(row: dict) -> str | None:
    experiment = row.get("experiment")
    known = f"expected one of {', '.join(ROW_KINDS)}"
    if "experiment" not in row:
        return f"no field 'experiment', {known}"
    return None if isinstance(experiment, str) and experiment in ROW_KINDS else \
        f"field 'experiment' = {_shown(experiment)}, {known}"


def kind_axes(kind) -> tuple:
    """The fields naming a point of ``kind`` besides data set and execution: an experiment's sweep
    axes, another kind's identity axes."""
    return tuple(kind.axes) if isinstance(kind, Experiment) else tuple(kind.identity_axes())


def profile_problems(row: dict) -> list[str]:
    """What keeps ``row`` (a row of this schema version) out of a profile: an unknown kind, a field
    every profile reads missing, a declared field of another type."""
    problem = _kind_problem(row)
    if problem:
        return [problem]
    kind = get_row_kind(row["experiment"])
    return field_problems(row, declared_fields(kind), PROFILE_FIELDS + kind_axes(kind))


def compare_problems(row, axes=()) -> list[str]:
    """What keeps ``row`` out of `spbench compare`: not a JSON object, a field it matches rows by (those
    of :data:`COMPARE_FIELDS`, ``axes``) missing, a declared field of another type. A row of a kind
    no spbench declares is compared by the metric asked for, its fields unchecked."""
    if not isinstance(row, dict):
        return [f"expected a JSON object, got {type(row).__name__}"]
    experiment = row.get("experiment")
    if not isinstance(experiment, str):
        return [_kind_problem(row)]
    fields = declared_fields(get_row_kind(experiment)) if experiment in ROW_KINDS else {}
    return field_problems(row, fields, COMPARE_FIELDS + tuple(axes))


def left_out_line(frag, problems: list[str]) -> str:
    """One line naming the fragment and what was expected of it."""
    more = len(problems) - SHOWN_PROBLEMS
    said = "; ".join(problems[:SHOWN_PROBLEMS]) + (f"; {more} more" if more > 0 else "")
    return f"{frag}: not a row as its kind declares ({said})"


def folder_experiment(meta, rows) -> str | None:
    """The experiment of a folder's rows: its meta.json's config says it (a sweep's does), else the one
    most of ``rows`` have (the first by name of those as many)."""
    config = meta.get("config") if isinstance(meta, dict) else None
    named = config.get("experiment") if isinstance(config, dict) else None
    if isinstance(named, str) and named:
        return named
    counts = Counter(row["experiment"] for row in rows if isinstance(row.get("experiment"), str))
    return min(counts, key=lambda e: (-counts[e], e)) if counts else None


def rows_read(pairs: list, meta, problems, left_out: list) -> list[dict]:
    """The rows of ``pairs`` ((fragment, row) of one folder) a reader reads: those of the folder's
    experiment (:func:`folder_experiment`) for which ``problems(row)`` finds none. Each other one is
    left out, its line appended to ``left_out``."""
    experiment = folder_experiment(meta, [row for _, row in pairs if isinstance(row, dict)])
    kept = []
    for frag, row in pairs:
        named = row.get("experiment") if isinstance(row, dict) else None
        if isinstance(named, str) and named != experiment:
            left_out.append(f"{frag}: a row of experiment {_shown(named)} in a folder of {experiment} rows, "
                            f"expected {experiment}")
            continue
        found = problems(row)
        if found:
            left_out.append(left_out_line(frag, found))
        else:
            kept.append(row)
    return kept


def read_meta(folder) -> dict:
    """A results folder's meta.json as read; empty when it has none or holds no JSON object."""
    try:
        meta = json.loads((Path(folder) / "meta.json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}
