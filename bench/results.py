"""Result storage (DESIGN.md §5): one JSON fragment per run, written atomically, and meta.json.

`results/<sweep>/runs/<run_id>.json` holds one row; a crash or Ctrl-C loses at most the run in
flight, concurrent jobs never share a file, and loading all fragments gives one tidy DataFrame.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

#: a stored run with one of these statuses is not run again on resume
FINAL_STATUSES = ("ok", "invalid", "skipped")


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so readers see either the old content or the whole new one (temp + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _clean_floats(value):
    """JSON has no NaN/inf: store them as null (NaN) or as the strings 'inf'/'-inf'."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _clean_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_floats(v) for v in value]
    return value


class ResultStore:
    """The results folder of one sweep: fragments under runs/, meta.json beside them."""

    def __init__(self, root):
        self.root = Path(root)
        self.runs = self.root / "runs"

    def fresh(self) -> None:
        """Forget every stored run (the `--fresh` flag)."""
        if self.runs.exists():
            shutil.rmtree(self.runs)
        meta = self.root / "meta.json"
        if meta.exists():
            meta.unlink()

    def clean_stale(self) -> int:
        """Remove temp files left by a killed writer; return how many."""
        if not self.runs.is_dir():
            return 0
        stale = list(self.runs.glob(".*.tmp"))
        for p in stale:
            p.unlink(missing_ok=True)
        return len(stale)

    def done(self) -> dict:
        """run_id → status of every stored fragment."""
        out = {}
        if self.runs.is_dir():
            for p in self.runs.glob("*.json"):
                try:
                    out[p.stem] = json.loads(p.read_text()).get("status")
                except (OSError, json.JSONDecodeError):
                    continue
        return out

    def write_row(self, row: dict) -> Path:
        """Store one run's row as runs/<run_id>.json, atomically."""
        path = self.runs / f"{row['run_id']}.json"
        atomic_write_text(path, json.dumps(_clean_floats(row), default=_json_default, indent=1, sort_keys=True))
        return path

    def read_meta(self) -> dict | None:
        path = self.root / "meta.json"
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError:
            return None

    def write_meta(self, meta: dict) -> None:
        atomic_write_text(self.root / "meta.json", json.dumps(_clean_floats(meta), default=_json_default,
                                                               indent=1, sort_keys=True))


def find_result_dirs(path) -> list[Path]:
    """The sweep folders under path: path itself when it has runs/, else its children that do."""
    path = Path(path)
    if (path / "runs").is_dir():
        return [path]
    return sorted(p for p in path.iterdir() if (p / "runs").is_dir()) if path.is_dir() else []


def load_rows(path) -> pd.DataFrame:
    """All rows of one results folder (or of every sweep folder under it) as one DataFrame."""
    rows = []
    for folder in find_result_dirs(path):
        for frag in sorted((folder / "runs").glob("*.json")):
            try:
                row = json.loads(frag.read_text())
            except json.JSONDecodeError as exc:
                raise ValueError(f"{frag}: not a valid result fragment ({exc.msg})") from None
            rows.append(row)
    return pd.DataFrame(rows)
