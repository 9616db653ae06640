"""Is a results folder's report current? `spbench profile results/` skips a folder whose rows,
meta.json and profile code are those its report was written from.

The stamp (``.profile_stamp.json`` beside the report) holds a hash of the folder's row files
and meta.json by name, size and modification time (a rerun or a resumed sweep rewrites or adds
fragments), a hash of the package's Python sources and plotting libraries' versions (a change to
a table or figure redoes every report), and the files the report wrote (a deleted one redoes it).
It is taken before the rows are read, so a row a running sweep adds meanwhile makes the next
profile redo the folder.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from spbench.store.atomic_files import write_json

STAMP_NAME = ".profile_stamp.json"
#: libraries whose version changes what a report draws
PLOT_LIBRARIES = ("matplotlib", "pandas", "numpy")


@functools.cache
def profile_code_version() -> str:
    """Hash of the spbench package's Python sources and the plotting libraries' versions."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for name in PLOT_LIBRARIES:
        try:
            digest.update(f"{name} {version(name)}".encode())
        except PackageNotFoundError:
            digest.update(f"{name} none".encode())
    return digest.hexdigest()[:16]


def rows_digest(folder: Path) -> str:
    """Hash of runs/*.json (the fragments `spbench profile` reads) and meta.json: names, sizes, mtimes."""
    digest = hashlib.sha256()
    for path in [folder / "meta.json", *sorted((folder / "runs").glob("*.json"))]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            digest.update(f"{path.name} absent".encode())
            continue
        digest.update(f"{path.name} {st.st_size} {st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Stamp:
    """What a report of one results folder was made from."""

    rows: str
    code: str

    @classmethod
    def of(cls, folder: str | os.PathLike) -> "Stamp":
        return cls(rows_digest(Path(folder)), profile_code_version())

    def is_current(self, report_dir: str | os.PathLike) -> bool:
        """True when ``report_dir``'s stamp equals this one and every file it lists is still there."""
        report_dir = Path(report_dir)
        try:
            stored = json.loads((report_dir / STAMP_NAME).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return False
        if not isinstance(stored, dict) or stored.get("rows") != self.rows or stored.get("code") != self.code:
            return False
        files = stored.get("files")
        return isinstance(files, list) and all((report_dir / str(name)).is_file() for name in files)

    def write(self, report_dir: str | os.PathLike, written: list[Path]) -> Path:
        """Record this stamp and the report's files (relative to ``report_dir``) beside the report."""
        report_dir = Path(report_dir)
        files = sorted({os.path.relpath(Path(p).resolve(), report_dir.resolve()) for p in written})
        return write_json(report_dir / STAMP_NAME, {"rows": self.rows, "code": self.code, "files": files})
