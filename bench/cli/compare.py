"""`spbench compare BASE NEW`: ratios per matched point, with intervals and adjusted p-values."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from spbench.cli.errors import OneLineCommand, UsageFailure


def _fraction(option: str, text: str) -> float:
    """A fraction given as 5% or 0.05 (UsageFailure naming the option otherwise)."""
    value = text.strip()
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise UsageFailure(f"{option}: expected a fraction such as 5% or 0.05, got {text!r}") from None


@click.command(cls=OneLineCommand)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--metric", default=None, help="Row column to compare (default: the experiment's, solve_time "
              "for SpTrSV, hooi_time for Tucker, else dist_time).")
@click.option("--threshold", default="5%", show_default=True,
              help="Smallest ratio change flagged, as 5% or 0.05: a point is flagged when its change is shown "
                   "to lie beyond 1 + threshold (or below 1 / (1 + threshold)).")
@click.option("--fdr", default="5%", show_default=True,
              help="False discovery rate of the Benjamini-Hochberg adjustment over all compared points.")
@click.option("--fail", is_flag=True, help="Exit 1 when any point is flagged as a regression.")
@click.option("--cross-machine", is_flag=True, help="Compare folders measured on different machines.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Write compare.md, compare.csv and the figure compare.png/.pdf here (nothing is written "
                   "without it).")
def compare(base, new, metric, threshold, fdr, fail, cross_machine, out_dir):
    """Ratio NEW/BASE per matched point with a t-interval over the runs, Benjamini-Hochberg adjusted
    p-values and the geometric mean; flags regressions and improvements, says which points are
    inconclusive (one run on a side). Exit 0, 1 with --fail on a regression, 2 for bad input or no
    matched point (one line, nothing written)."""
    from spbench.store.atomic_files import WriteFailed, probe_folder
    from spbench.comparison.compare import CompareError, compare as run_compare, report_lines, write_outputs

    try:
        result = run_compare(base, new, metric=metric, threshold=_fraction("--threshold", threshold),
                             fdr=_fraction("--fdr", fdr), cross_machine=cross_machine)
        if out_dir is not None:
            probe_folder(out_dir)
    except CompareError as exc:
        raise UsageFailure(str(exc)) from None
    except WriteFailed as exc:
        raise UsageFailure(f"--out: {exc}") from None
    click.echo("\n".join(report_lines(result)))
    if out_dir is not None:
        written = write_outputs(result, out_dir)
        click.echo(f"spbench: {len(written)} files in {out_dir}", err=True)
    if fail and result.regressions:
        sys.exit(1)
