"""The stored row's schema version and its check on load (DESIGN.md §5, asv's ``api_version``).

A row written by a spbench whose row layout differs carries another ``schema_version`` (or none, if
it predates the field); loading it is refused with one line that says what to do, never a KeyError
somewhere in a table. The run identity hashes the version too, so a new layout never resumes old rows.
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SCHEMA_VERSION", "RowSchemaError", "check_row", "read_row"]

#: the layout of result rows this spbench writes and reads
SCHEMA_VERSION = 1


class RowSchemaError(ValueError):
    """A stored row of another schema version (or not a row at all); a one-line message."""


def check_row(row, source) -> dict:
    """``row`` when it is a row of :data:`SCHEMA_VERSION`; else RowSchemaError naming ``source``."""
    if not isinstance(row, dict):
        raise RowSchemaError(f"{source}: not a result row (expected a JSON object)")
    version = row.get("schema_version")
    if version != SCHEMA_VERSION:
        written = "no schema_version (written before rows carried one)" if version is None \
            else f"schema_version {version!r}"
        raise RowSchemaError(f"{source}: a row with {written}; this spbench reads schema {SCHEMA_VERSION}: "
                             f"rerun its sweep (`spbench run CONFIG --out NEW_FOLDER`) or read it with the "
                             f"spbench that wrote it")
    return row


def read_row(path) -> dict:
    """The row stored in ``path``, checked (RowSchemaError for broken JSON or another schema)."""
    path = Path(path)
    try:
        row = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise RowSchemaError(f"{path}: not a valid result fragment ({exc.msg})") from None
    return check_row(row, path)
