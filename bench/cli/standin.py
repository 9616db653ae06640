"""``spbench datasets standin-search NAME [NAME ...]``: re-run the search that chose a paper matrix's
fem-mesh stand-in (mesh shape and tile widths for its rows, nonzeros per row and average wavefront,
Table A.1; :mod:`spbench.datasets.standin_search`) and print the best candidates."""
from __future__ import annotations

import click

from spbench.cli.errors import UsageFailure
from spbench.cli.datasets import DatasetsCommand


@click.command("standin-search", cls=DatasetsCommand)
@click.argument("names", nargs=-1, required=True)
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True, help="Candidates shown per matrix.")
@click.option("--paper-size", is_flag=True, help="Search at the matrix's own rows (the `--scale paper` recipes, "
              "datasets/paper_matrices.py PAPER_SIZE): box elongation and tiles; Table A.1 matrices only.")
def standin_search(names, top, paper_size):
    """Search mesh shapes and tile widths for the fem-mesh stand-ins of NAMES (paper matrices); prints
    per candidate: score (sum of |log ratio| of rows, nnz per row and average wavefront), cells,
    tiles, rows, nnz per row, average wavefront, best first."""
    from spbench.datasets.paper_matrices import SUITESPARSE
    from spbench.datasets.standin_search import fem_mesh_matrix, search

    if paper_size:
        from spbench.datasets.paper_size_search import search
        outside = [n for n in names if fem_mesh_matrix(n) is not None and n not in SUITESPARSE]
        if outside:
            raise UsageFailure(f"spbench datasets standin-search: {outside[0]}: --paper-size searches Table A.1 "
                               f"matrices only (a METIS-only matrix's paper-size stand-in is its recipe scaled)")

    matrices = {}
    for name in names:
        matrices[name] = fem_mesh_matrix(name)
        if matrices[name] is None:
            raise UsageFailure(f"spbench datasets standin-search: {name}: no fem-mesh stand-in to search; expected "
                               f"a paper matrix whose stand-in is a fem mesh")
    for name, m in matrices.items():
        rows = m.n if paper_size else m.standin_rows()
        click.echo(f"{name}: {m.standin_params['element']}, {m.standin_params['dof']} dofs, rows {rows}, "
                   f"nnz/row {m.nnz / m.n:.1f}, average wavefront {m.avg_wavefront if name in SUITESPARSE else '-'}")
        for candidate in search(name)[:top]:
            click.echo(f"    {candidate}")
