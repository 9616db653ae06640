"""`spbench profile RESULTS --out PLOTS`: each results folder's report, written whole or not at all.

A folder's rows are read first (fragments that hold no row, and rows not as their kind declares, are
left out with one line each: :mod:`spbench.report.row_check`); a row of another schema version stops
the command before anything is written. Each report is written into a temporary folder beside it,
``PLOTS/<name>.tmp-<pid>/<name>`` (the report's own folder name, so what it writes is what it would
write in place), and swapped in only when complete: the old report renamed aside, the new one
renamed in, the old one removed. A failure removes the temporary folder and keeps the old report; a
killed profile's temporary folder goes at the next start. A folder whose rows cannot be profiled
(rows of two sweeps, say) is one line and the others are still profiled.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path

import click

from spbench.store.atomic_files import WriteFailed
from spbench.report.report_stamp import Stamp
from spbench.report.row_check import profile_problems, read_meta, rows_read
from spbench.store.results import stored_rows

#: a temporary report folder is PLOTS/<name><STAGING><pid>; this file in it marks it as one
STAGING, MARKER = ".tmp-", ".spbench-profile"
#: what a folder's profile raises for rows it cannot profile (several sweeps, say): one line, the others go on
REPORT_ERRORS = (ValueError, TypeError, KeyError, IndexError, ArithmeticError)


def staging_folder(plots_dir, name: str, pid: int | None = None) -> Path:
    """The temporary folder a profile (process ``pid``, default this one) writes report ``name`` into."""
    return Path(plots_dir) / f"{name}{STAGING}{os.getpid() if pid is None else pid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_staging(plots_dir) -> None:
    """Remove temporary report folders a killed profile left in ``plots_dir`` (those of a profile
    still running, another process, are left alone; a folder without the marker only when empty)."""
    for path in sorted(Path(plots_dir).glob(f"*{STAGING}*")):
        pid = path.name.rpartition(STAGING)[2]
        if not pid.isdigit() or path.is_symlink() or not path.is_dir():
            continue
        if int(pid) != os.getpid() and _alive(int(pid)):
            continue
        if (path / MARKER).is_file():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.rmdir()


def folder_rows(folder: Path, left_out: list):
    """The rows of one sweep folder a profile reads, as a DataFrame; each fragment left out appends its
    line to ``left_out``. RowSchemaError for a row of another schema version."""
    import pandas as pd

    pairs = list(stored_rows(folder, corrupt=left_out))
    return pd.DataFrame(rows_read(pairs, read_meta(folder), profile_problems, left_out))


def _named_in_place(exc: WriteFailed, new: Path, final: Path) -> WriteFailed:
    """``exc`` naming the file as it would be in the report's own folder, not the temporary one."""
    try:
        return WriteFailed(final / exc.path.relative_to(new), exc.cause, exc.errno)
    except ValueError:
        return exc


def _swap(new: Path, final: Path, stage: Path) -> None:
    """Move the complete report ``new`` to ``final``: the old one aside into ``stage``, the new one in."""
    old = stage / f"{final.name}.old"
    try:
        had_old = final.exists() or final.is_symlink()
        if had_old:
            os.rename(final, old)
        try:
            os.rename(new, final)
        except OSError:
            if had_old:
                os.rename(old, final)
            raise
    except OSError as exc:
        raise WriteFailed.from_os_error(final, exc) from None


def write_report(df, final: Path, stamp: Stamp | None) -> list[Path]:
    """Write the profile of ``df`` into a temporary folder, with ``stamp`` when given, and swap it into
    ``final``; return the paths written (in ``final``). A failure leaves ``final`` as it was."""
    from spbench.report import report

    if final.exists() and not final.is_dir():
        raise WriteFailed(final, "a file, not a folder", errno.ENOTDIR)
    stage = staging_folder(final.parent, final.name)
    new = stage / final.name
    shutil.rmtree(stage, ignore_errors=True)
    try:
        try:
            stage.mkdir(parents=True)
            (stage / MARKER).write_text(f"a temporary report of {final}, removed when done\n")
            new.mkdir()
        except OSError as exc:
            raise WriteFailed.from_os_error(stage, exc) from None
        try:
            written = report.write_profile(df, new)
            if stamp is not None:
                stamp.write(new, written)
        except WriteFailed as exc:
            raise _named_in_place(exc, new, final) from None
        in_place = [final / os.path.relpath(Path(p).resolve(), new.resolve()) for p in written]
        _swap(new, final, stage)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return in_place


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def _kept(final: Path, had_report: bool) -> str:
    return f"{final} kept as it was" if had_report else f"no report in {final}"


def write_reports(todo: list, plots_dir: Path) -> int:
    """Write each (folder, stamp, rows) report; return how many folders could not be profiled.
    A write failure stops here (ClickException naming what was kept)."""
    if plots_dir.is_dir():
        remove_stale_staging(plots_dir)
    done, failed = [], 0
    for folder, stamp, df in todo:
        final = plots_dir / folder.name
        had_report = final.is_dir()
        try:
            written = write_report(df, final, stamp)
        except WriteFailed as exc:
            raise click.ClickException(f"{exc}; {_kept(final, had_report)}" + (
                f"; the reports written before it are kept ({', '.join(done)})" if done else "")) from None
        except REPORT_ERRORS as exc:
            click.echo(f"spbench: error: {folder}: {_one_line(exc)}; {_kept(final, had_report)}", err=True)
            failed += 1
            continue
        done.append(folder.name)
        click.echo(f"{folder.name}: {len(df)} rows → {final} ({len(written)} files)")
    return failed
