"""How the paper-size stand-in recipes were found: mesh shape and tiles at a matrix's own rows.

``spbench datasets standin-search --paper-size NAME`` keeps the element, dofs per node, porosity
and seed of NAME's n/15 recipe and searches, at the real matrix's rows (sptrsv-elasticity Table
A.1), the box's elongation along its slowest-numbered axis and the block-multicolour tile width
for the real nonzeros per row and average wavefront.

Why the shape: in the natural (lexicographic) order a box of nx x ny (x nz) nodes has about
nx + 2 ny (+ 4 nz) node wavefronts, so a cube's wavefront count grows only as rows^(1/3) and its
average wavefront as rows^(2/3); tiles cap the count at about colours x a tile's own (constant in
the rows). The real matrices have many more wavefronts at full size than a cube in natural order
(Queen_4147: 12,126; a 111^3-node cube: 2,313), and a box elongated along its slow axis has them
(the wavefront count grows with its length). Elongation ``e`` multiplies the slow axis by
e^((d-1)/d) and divides the others by e^(1/d) (rows unchanged); tiles then lower the count
where the natural order has too many. Columns (``COLUMN``) keep the natural order's wavefronts
with independent columns per colour; where they fit as well (score within 0.1) they are taken.

It works on the node graph with the compiled generator (``fem_mesh_lower``): dense dof blocks
numbered node by node have exactly ``dof`` x the node wavefronts, so the average wavefront is
nodes / node wavefronts, and the nonzeros follow from the node pairs.
"""
from __future__ import annotations

import math

from .fem_mesh import ELEMENTS
from .fem_mesh_lower import mesh_grid, node_wavefronts, tile_position
from .paper_matrices import SUITESPARSE

#: the box's elongation, searched up from 1 and down from 1/2: the natural order's wavefronts
#: (~ nx + 2 ny + 4 nz) are fewest near a cube and grow either way, so each direction stops early
ELONGATIONS = ((1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), (1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64))
#: columns: tiles COLUMN nodes wide across the box and spanning its slow axis; as many wavefronts as
#: the natural order (a column's own chain is the slow axis), but the columns of a colour are
#: independent, which is the locality a scheduler packing rows per core finds in a real mesh's
#: numbering (hex8, 3 dofs, 21 x 21 x 301 nodes, 16 cores: GrowLocal cuts the 3,783 natural
#: wavefronts 3.4x, the 3,828 of 4-wide columns 13.5x, of 6-wide ones 4.9x)
COLUMN = 4
TILES = (0, 256, 192, 128, 96, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)


def cells_for(element: str, base_cells: tuple, nodes: float, elongation: float) -> tuple:
    """Cells per axis of a box shaped like ``base_cells``, its slow axis ``elongation`` times longer
    relative to the others, with about ``nodes`` nodes."""
    dim, span = ELEMENTS[element][:2]
    shape = [float(c) for c in base_cells[:dim]]
    shape = [s * elongation ** (-1 / dim) for s in shape[:-1]] + [shape[-1] * elongation ** ((dim - 1) / dim)]
    side = (nodes / math.prod(s * span for s in shape)) ** (1 / dim)
    cross = [max(1, round(s * side)) for s in shape[:-1]]
    slow = max(1, round((nodes / math.prod(c * span + 1 for c in cross) - 1) / span))  # rows to one layer
    return tuple(cross) + (slow,) + (1,) * (3 - dim)


def search(name: str, elongations=ELONGATIONS, tiles=TILES) -> list[tuple]:
    """Candidates (score, cells, tiles, rows, nnz per row, average wavefront), best first; score =
    sum of |log ratio| of rows, nonzeros per row and average wavefront to Table A.1's."""
    m = SUITESPARSE[name]
    p = m.standin_params
    element, dof, porosity, seed = p["element"], p["dof"], p["porosity"], p["seed"]
    dim, span = ELEMENTS[element][:2]
    base = (p["cells_x"], p["cells_y"], p["cells_z"])
    found = []

    def evaluate(grid, cells, t, column=False) -> float:
        tiles = (COLUMN,) * (dim - 1) + (0,) if column else (t,) * dim
        fronts, pairs = node_wavefronts(grid, tile_position(grid, tiles))
        rows = grid.nodes * dof
        per_row = (pairs * dof * dof + grid.nodes * dof * (dof + 1) / 2) / rows
        avg = grid.nodes / fronts
        score = (abs(math.log(rows / m.n)) + abs(math.log(per_row / (m.nnz / m.n)))
                 + abs(math.log(avg / m.avg_wavefront)))
        found.append((round(score, 3), cells[:dim], tiles, rows, round(per_row, 1), round(avg, 1)))
        return avg

    for direction in elongations:
        for e in direction:
            cells = cells_for(element, base, m.n / dof, e)  # a porous mesh keeps ~all nodes
            grid = mesh_grid(element, cells, porosity, seed)
            natural = evaluate(grid, cells, 0)
            if min(grid.node_shape[:-1]) > 2 * COLUMN:
                evaluate(grid, cells, 0, column=True)
            if natural < m.avg_wavefront * 1.5:  # tiles only cut the wavefronts (raise the average)
                for t in tiles[1:]:
                    if t < span or t >= max(grid.node_shape):
                        continue
                    if evaluate(grid, cells, t) > 2 * m.avg_wavefront:
                        break
            if natural < m.avg_wavefront / 2:
                break  # a box still further from a cube only adds wavefronts
    # scores within 0.1 are equal fits: then columns first (their locality, module docstring)
    return sorted(found, key=lambda f: (round(f[0], 1), 0 if f[2][-1] == 0 and f[2][0] == COLUMN else 1, f[0]))
