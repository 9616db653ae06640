"""How the stand-in recipes were found: search a mesh shape and tile widths for one paper matrix.

``spbench datasets standin-search NAME [NAME ...]`` keeps the element, dofs per node and
porosity of NAME's recipe (chosen from the real matrix's problem and nonzeros per row) and tries
box aspects and block-multicolour tile widths for the stand-in's rows and the paper's average
wavefront (Table A.1). It works on the node graph: with dense dof blocks numbered node by node,
the dof-level wavefronts are exactly ``dof`` x the node-level ones, so the average wavefront is
nodes / node wavefronts (``fem_mesh``). Prints the best candidates: score (sum of |log ratio| of
rows, nnz per row and average wavefront), cells, tiles, rows, nnz per row, average wavefront.
"""
from __future__ import annotations

import itertools
import math

from .fem_mesh import ELEMENTS
from .fem_mesh_lower import mesh_grid, node_wavefronts, tile_position
from .paper_matrices import METIS_ONLY, SUITESPARSE

ASPECTS = {3: [(1, 1, 1), (2, 1, 1), (4, 2, 1), (8, 4, 1), (16, 4, 1), (16, 2, 1), (32, 2, 1), (40, 1, 1)],
           2: [(1, 1), (2, 1), (4, 1), (8, 1)]}
TILES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 64]


def search(name: str) -> list[tuple]:
    """Candidates (score, cells, tiles, rows, nnz per row, average wavefront), best first."""
    m = SUITESPARSE.get(name) or METIS_ONLY[name]
    p = m.standin_params
    element, dof, porosity = p["element"], p["dof"], p["porosity"]
    dim, span = ELEMENTS[element][:2]
    rows, per_row = m.standin_rows(), m.nnz / m.n
    wave = m.avg_wavefront if name in SUITESPARSE else None
    found = []
    for aspect in ASPECTS[dim] if wave else ASPECTS[dim][:1]:
        side = (rows / dof / math.prod(aspect)) ** (1 / dim)
        cells = tuple(max(1, round((side * a - 1) / span)) for a in aspect)
        grid = mesh_grid(element, cells, porosity, p["seed"])
        nodes = grid.nodes
        got_rows = nodes * dof

        def evaluate(tiles):
            fronts, pairs = node_wavefronts(grid, tile_position(grid, tuple(tiles)))
            avg = nodes / fronts
            got_per_row = (nodes * dof * (dof + 1) / 2 + pairs * dof * dof) / (nodes * dof)
            score = abs(math.log(got_rows / rows)) + abs(math.log(got_per_row / per_row))
            score += abs(math.log(avg / wave)) if wave else 0.0
            found.append((round(score, 3), cells, tuple(tiles), got_rows, round(got_per_row, 1), round(avg, 1)))
            return avg

        previous = None
        for t in TILES if wave else [0]:
            if 0 < t < span:
                continue
            avg = evaluate([t] * dim)
            if wave and previous and t and (previous[1] - wave) * (avg - wave) <= 0:
                for combo in itertools.product([previous[0], t], repeat=dim):  # anisotropic tiles between
                    if len(set(combo)) > 1:
                        evaluate(list(combo))
            if t:
                previous = (t, avg)
            if wave and t and avg < wave / 2:
                break
    return sorted(found)


def fem_mesh_matrix(name: str):
    """The paper matrix ``name`` when its stand-in is a fem mesh (what :func:`search` tunes), else None."""
    m = SUITESPARSE.get(name) or METIS_ONLY.get(name)
    return m if m is not None and m.standin == "fem-mesh" else None
