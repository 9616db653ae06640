"""The stored row: its declared fields, its schema version and its check on load (docs/design.md
"Results", asv's ``api_version``, OneStopParallel's result columns declared as modules).

Every row has the :data:`COMMON_FIELDS`; each experiment declares the fields it adds
(:attr:`spbench.experiment.Experiment.row_fields`), with their JSON types and whether every row of
it has them; :func:`row_problems` checks a row against both (the tests hold every row a sweep
writes to it). A row written by a spbench whose row layout differs carries another
``schema_version`` (or none, if it predates the field); loading it is refused with one line that
says what to do, never a KeyError somewhere in a table. The run identity hashes the version too, so
a new layout never resumes old rows.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SCHEMA_VERSION", "RowSchemaError", "RowField", "COMMON_FIELDS", "NUMBER", "required", "optional",
           "declared_fields", "row_problems", "CorruptRow", "check_row", "read_row"]

#: the layout of result rows this spbench writes and reads
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RowField:
    """A declared row field: the JSON types its value may have (None for null) and whether every
    row of the experiment has it (failed rows carry only the required ones)."""

    types: tuple
    required: bool = False

    def accepts(self, value) -> bool:
        if isinstance(value, bool):  # a JSON true/false is no number
            return bool in self.types
        return any(value is None if t is None else isinstance(value, t) for t in self.types)


#: a JSON number (a float field may hold an integral value)
NUMBER = (int, float)


def required(*types) -> RowField:
    """A field every row has (``NUMBER`` unpacks to int or float)."""
    return RowField(_flat(types), True)


def optional(*types) -> RowField:
    """A field some rows have (an ok row of one execution, say)."""
    return RowField(_flat(types), False)


def _flat(types) -> tuple:
    return tuple(t for group in types for t in (group if isinstance(group, tuple) else (group,)))


_TEXT_OR_NULL = (str, None)
#: the fields of every row, whatever its experiment and status
COMMON_FIELDS = {
    "run_id": required(str), "schema_version": required(int), "experiment": required(str),
    "config": required(str), "dataset": required(str), "dataset_source": required(str),
    "dataset_checksum": required(str), "repeat": required(int), "status": required(str),
    "execution": required(str), "started_at": required(str), "code_version": required(str),
    "git_sha": required(_TEXT_OR_NULL), "git_dirty": required(bool, None), "host": required(str),
    "shard": required(_TEXT_OR_NULL), "slurm_job_id": required(_TEXT_OR_NULL),
    "slurm_array_job_id": required(_TEXT_OR_NULL), "slurm_array_task_id": required(_TEXT_OR_NULL),
    "algorithm": required(str), "params": required(dict),
    "error": optional(_TEXT_OR_NULL), "omp_threads": optional(int, None),
    # what besides the point changed its numbers (spbench.pipeline.sweep.sweep_settings): a sweep's rows carry it
    "settings": optional(dict),
}


def declared_fields(experiment) -> dict:
    """Every field a row of ``experiment`` (an :class:`spbench.experiment.Experiment`) may have."""
    return {**COMMON_FIELDS, **experiment.row_fields}


def row_problems(row: dict, fields: dict) -> list[str]:
    """What is wrong with ``row`` against ``fields`` (COMMON_FIELDS plus an experiment's): fields not
    declared, required ones missing, values of another type; empty when the row is as declared."""
    problems = [f"undeclared field {name!r}" for name in row if name not in fields]
    problems += [f"missing field {name!r}" for name, decl in fields.items() if decl.required and name not in row]
    problems += [f"field {name!r} = {row[name]!r} is not of the declared types" for name, decl in fields.items()
                 if name in row and not decl.accepts(row[name])]
    return problems


class RowSchemaError(ValueError):
    """A stored row of another schema version (or not a row at all); a one-line message."""


class CorruptRow(RowSchemaError):
    """A fragment that holds no row: not JSON (a truncated write, say), or JSON that is not a row."""


def check_row(row, source) -> dict:
    """``row`` when it is a row of :data:`SCHEMA_VERSION`; else RowSchemaError naming ``source``
    (CorruptRow when it is no row at all: not an object, or one without a ``run_id``)."""
    if not isinstance(row, dict):
        raise CorruptRow(f"{source}: not a result row (expected a JSON object, got {type(row).__name__})")
    if "run_id" not in row:
        raise CorruptRow(f"{source}: not a result row (a JSON object without run_id"
                         + (", empty)" if not row else ")"))
    version = row.get("schema_version")
    if version != SCHEMA_VERSION:
        written = "no schema_version (written before rows carried one)" if version is None \
            else f"schema_version {version!r}"
        raise RowSchemaError(f"{source}: a row with {written}; this spbench reads schema {SCHEMA_VERSION}: "
                             f"rerun its sweep (`spbench run CONFIG --out NEW_FOLDER`) or read it with the "
                             f"spbench that wrote it")
    return row


def read_row(path) -> dict:
    """The row stored in ``path``, checked: CorruptRow for a file that is not JSON (with the
    parser's whole message) or not a row, RowSchemaError for a row of another schema."""
    path = Path(path)
    try:
        row = json.loads(path.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorruptRow(f"{path}: not a valid result fragment ({exc})") from None
    except OSError as exc:   # a folder named *.json, a file nothing can read
        raise CorruptRow(f"{path}: not a valid result fragment ({exc.strerror or exc})") from None
    return check_row(row, path)
