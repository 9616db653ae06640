"""A results folder against the sweep about to write into it (docs/design.md, "Results"): one sweep
per folder, one set of settings per execution, and no row kept beside the one that replaces it.

Before a sweep writes anything it reads what the folder holds:

- rows of another sweep (another config name or experiment): refused, the folder is left as it is;
- rows of its execution made with other settings (:func:`spbench.pipeline.sweep.sweep_settings`: another
  calibration, barrier, repeats, thread binding, launcher …): refused in one line naming the first
  setting that differs and both values, unless ``--fresh``, which moves them as a whole to
  runs/superseded/ before the first point runs;
- rows of its own points made by other code or data (another run_id), rows of another row schema
  (a hand-edited ``schema_version`` under the same run_id too), repeats beyond the sweep's
  runs, and rows written before rows recorded their settings: moved to runs/superseded/ before
  the first point runs, so a sweep interrupted part way never leaves old and new runs of a point
  side by side for `spbench profile` to pool.

Nothing complete is deleted: superseded rows stay readable in runs/superseded/.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from spbench.experiment import RunError
from spbench.store.row_schema import SCHEMA_VERSION


@dataclass
class FolderPlan:
    """What a sweep does with the rows it finds: ``conflicts`` (other settings), ``stale`` (its
    points' rows of older code or data), ``schema`` (its points' rows of another row schema, whatever
    their run_id), ``extra`` (repeats at or beyond its runs), ``legacy`` (no recorded settings),
    each a list of (fragment, row)."""

    conflicts: list = field(default_factory=list)
    stale: list = field(default_factory=list)
    schema: list = field(default_factory=list)
    extra: list = field(default_factory=list)
    legacy: list = field(default_factory=list)


def check_one_sweep(root: Path, name: str, experiment: str) -> None:
    """RunError when the folder at ``root`` holds another sweep's rows (its meta.json's sweep name
    or experiment, else its rows' ``config``/``experiment``): one folder holds one sweep."""
    held = _held_sweep(root)
    if held is None or held == (name, experiment) or (held[0] == name and held[1] is None):
        return
    other_name, other_experiment = held
    what = f"sweep {other_name!r}" + (f" ({other_experiment})" if other_experiment != experiment else "")
    raise RunError(f"{root}: holds the rows of {what}, not of {name!r} ({experiment}); a results folder holds "
                   f"one sweep: choose another --out")


def _held_sweep(root: Path):
    """(sweep name, experiment) of what ``root`` holds, or None when it holds nothing yet."""
    try:
        meta = json.loads((root / "meta.json").read_text())
    except (OSError, ValueError):
        meta = None
    if isinstance(meta, dict) and isinstance(meta.get("sweep"), str):
        config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
        return meta["sweep"], meta.get("experiment") or config.get("experiment")
    for _, row in _rows(root / "runs"):
        if isinstance(row.get("config"), str):
            return row["config"], row.get("experiment")
    return None


def _rows(runs: Path):
    """(row) of every readable fragment directly in ``runs`` (other files are the runner's to set aside)."""
    for frag in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        try:
            row = json.loads(frag.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(row, dict):
            yield frag, row


def plan(runs: Path, execution: str, settings: dict, wanted: dict, runs_per_point: int, identity) -> FolderPlan:
    """Sort the rows in ``runs`` of ``execution`` against the sweep: ``wanted`` maps each of its
    points' identities (``identity(dataset, repeat, execution, axes)``) to the run_id it has now;
    a row of a wanted point (any repeat) with another run_id is stale, as is one of a repeat at or
    beyond ``runs_per_point``; one of another ``schema_version`` is of another schema (its run_id may
    still match: a resumed sweep would count it stored, a report refuses it); a row recording other ``settings`` conflicts. Rows of other
    executions, and of points the sweep does not run, are left alone."""
    out = FolderPlan()
    axis_names = sorted({k for key in wanted for k, _ in key[3]})
    points = {(key[0], key[2], key[3]) for key in wanted}
    for frag, row in _rows(runs):
        if row.get("execution") != execution:
            continue
        recorded = row.get("settings")
        key = identity(row.get("dataset"), _int(row.get("repeat")), execution,
                       {k: row.get(k) for k in axis_names if k in row})
        ours = (key[0], key[2], key[3]) in points
        if isinstance(recorded, dict) and recorded != settings:
            out.conflicts.append((frag, row))
        elif not ours:
            continue
        elif not isinstance(recorded, dict):
            out.legacy.append((frag, row))
        elif key[1] >= runs_per_point:
            out.extra.append((frag, row))
        elif row.get("schema_version") != SCHEMA_VERSION:
            out.schema.append((frag, row))
        elif key in wanted and wanted[key] != frag.stem:
            out.stale.append((frag, row))
    return out


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def conflict_message(root: Path, execution: str, conflicts: list, settings: dict) -> str:
    """One line: the first setting the stored rows differ in, both values, and what to do."""
    _, row = conflicts[0]
    stored = row.get("settings") or {}
    differ = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
    first = differ[0]
    more = f" (and {len(differ) - 1} more setting{'s' if len(differ) > 2 else ''}: {', '.join(differ[1:])})" \
        if len(differ) > 1 else ""
    return (f"{root}: its {len(conflicts)} {execution} row{'s' if len(conflicts) != 1 else ''} were made with "
            f"{first} = {_shown(stored.get(first))}, this run has {first} = {_shown(settings.get(first))}{more}; "
            f"rerun with --fresh to replace them (they move to {root / 'runs' / 'superseded'}), or choose another --out")


def _shown(value) -> str:
    return "unset" if value is None else repr(value)
