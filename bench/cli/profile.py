"""`spbench profile RESULTS`: tables, figures and REPORT.md of every sweep folder."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from spbench.cli.errors import OneLineCommand, UsageFailure


@click.command(cls=OneLineCommand)
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "plots_dir", type=click.Path(path_type=Path), default=Path("plots"),
              help="Where the tables and figures go (one folder per sweep).")
@click.option("--force", is_flag=True, help="Redo every folder's report, also those whose rows and code did not "
              "change since it was written.")
def profile(results_dir, plots_dir, force):
    """Tables and figures from RESULTS_DIR (one sweep folder, or a folder of them); a folder whose
    rows, meta.json and profile code did not change since its report is skipped (--force redoes it).

    Exit code: 0; 1 when fragments holding no row, or rows not as their kind declares, were left out
    (listed on stderr), a folder's rows could not be profiled (one line, the other folders are) or a
    write failed part way (that folder's old report and the reports written before it are kept); 2
    for a folder without results, a row of another schema version, or an --out nothing can be
    written into (nothing written). Each report is swapped in whole (spbench.report.profile_folders)."""
    _profile_folders(results_dir, plots_dir, force)


def _profile_folders(results_dir, plots_dir, force: bool) -> None:
    """Every folder's rows read first, then each report written and swapped in whole
    (:mod:`spbench.report.profile_folders`); a refusal writes nothing and makes no folder."""
    from spbench.store.atomic_files import WriteFailed, probe_folder
    from spbench.report.profile_folders import folder_rows, write_reports
    from spbench.report.report_stamp import Stamp
    from spbench.store.results import find_result_dirs
    from spbench.store.row_schema import RowSchemaError

    plots_dir = Path(plots_dir)
    folders = find_result_dirs(results_dir)
    if not folders:
        raise UsageFailure(f"{results_dir}: no results here (expected a folder with runs/ or folders of them)")
    created = [p for p in (plots_dir.absolute(), *plots_dir.absolute().parents) if not p.exists()]
    try:
        probe_folder(plots_dir)
    except WriteFailed as exc:
        raise UsageFailure(f"--out: {exc}") from None
    left_out: list[str] = []
    todo = []
    try:
        for folder in folders:
            stamp = Stamp.of(folder)  # before the rows are read: a row added meanwhile redoes it next time
            if not force and stamp.is_current(plots_dir / folder.name):
                click.echo(f"{folder.name}: unchanged since its report in {plots_dir / folder.name}, skipped "
                           f"(--force redoes it)")
                continue
            before = len(left_out)
            try:
                df = folder_rows(folder, left_out)
            except RowSchemaError as exc:
                raise UsageFailure(str(exc)) from None
            if df.empty:
                gone = len(left_out) - before
                click.echo(f"spbench: {folder}: no rows" + (f" left ({gone} left out)" if gone else " yet")
                           + ", skipped", err=True)
                continue
            todo.append((folder, stamp if len(left_out) == before else None, df))  # left out: warns again
        failed = write_reports(todo, plots_dir)
    finally:
        for line in left_out:
            click.echo(f"spbench: warning: {line}; left out of the report", err=True)
        for path in created:  # deepest first: the folders this command made and left empty
            with contextlib.suppress(OSError):
                path.rmdir()
    if left_out or failed:
        sys.exit(1)
