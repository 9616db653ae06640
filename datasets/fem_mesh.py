"""Finite-element-shaped SPD matrices: a mesh, its element type, dofs per node and a numbering.

The stand-ins of the SpTrSV paper's matrices (sptrsv-elasticity Table A.1) must have the rows,
nonzeros per row and average wavefront of the real ones at about n/15 rows. A
matrix's sparsity follows from three choices an FE code makes, and each is a parameter here:

- the mesh: a box of ``cells_x * cells_y (* cells_z)`` cells, optionally porous (cells removed
  at random, as in voxel models of trabecular bone); nodes no cell touches are dropped;
- the element: which nodes of a cell are coupled (``ELEMENTS``): Lagrange hexahedra/quads of
  order 1-3, Kuhn tetrahedra / triangles (a cube split into 6 tets, a square into 2 triangles),
  or finite-difference stencils (7/5 points); ``dof`` unknowns per node, coupled in dense blocks
  (elasticity: 3, shells: 5-6), numbered node by node;
- the numbering: lexicographic (x fastest) over the whole mesh, or *block multicolour*: the mesh
  cut into tiles of ``tile_x * tile_y (* tile_z)`` nodes, tiles coloured so that tiles of one
  colour never share an element, numbered colour by colour, tile by tile, lexicographic inside
  a tile (the block multicolour orderings parallel Gauss-Seidel / ILU codes use, e.g. Iwashita &
  Shimasaki's ABMC). A lexicographic mesh has ~ (nx + 2 ny + 4 nz) dof-chains of wavefronts;
  tiles cut that to ~ colours x the tile's own, which is what lets a mesh of n/15 rows keep the
  real matrix's average wavefront (a natural order would divide it by ~15^(2/3)).

Values: an independent uniform(-1, 1) block per coupled node pair, the diagonal the absolute
row sum plus one, so the matrix is symmetric and strictly diagonally dominant (SPD).
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from .errors import DatasetError


def _corners(span: int, dim: int) -> list[tuple]:
    return list(itertools.product(range(span + 1), repeat=dim))


def _kuhn(dim: int) -> list[list[tuple]]:
    """The simplices of the unit cube's Kuhn triangulation: paths 0 -> e_s1 -> e_s1+e_s2 -> ... -> 1."""
    out = []
    for perm in itertools.permutations(range(dim)):
        point = [0] * dim
        simplex = [tuple(point)]
        for axis in perm:
            point[axis] = 1
            simplex.append(tuple(point))
        out.append(simplex)
    return out


def _axis_edges(dim: int) -> list[list[tuple]]:
    """The cube's edges (pairs of corners differing in one coordinate): a (2 dim + 1)-point stencil."""
    corners = _corners(1, dim)
    return [[a, b] for a, b in itertools.combinations(corners, 2) if sum(x != y for x, y in zip(a, b)) == 1]


#: element -> (dimension, cell span in node steps, node cliques of one cell, colouring (weights, modulus))
#: Two tiles whose colours agree never share a cell when tiles are at least ``span`` nodes wide:
#: parity colours (2^dim) for elements coupling a cell's corners across diagonals, red-black for
#: stencils along the axes only, (I + J) mod 3 for triangles (their diagonal is (1, 1) only).
ELEMENTS = {
    "hex8": (3, 1, [_corners(1, 3)], ((1, 2, 4), 8)),
    "hex27": (3, 2, [_corners(2, 3)], ((1, 2, 4), 8)),
    "tet4": (3, 1, _kuhn(3), ((1, 2, 4), 8)),
    "fd7": (3, 1, _axis_edges(3), ((1, 1, 1), 2)),
    "quad4": (2, 1, [_corners(1, 2)], ((1, 2), 4)),
    "quad9": (2, 2, [_corners(2, 2)], ((1, 2), 4)),
    "quad16": (2, 3, [_corners(3, 2)], ((1, 2), 4)),
    "tri3": (2, 1, _kuhn(2), ((1, 1), 3)),
    "fd5": (2, 1, _axis_edges(2), ((1, 1), 2)),
}


def _local_pairs(cliques: list[list[tuple]]) -> np.ndarray:
    """Distinct unordered pairs of a cell's local nodes coupled by some clique, shape (k, 2, dim)."""
    pairs = {tuple(sorted((a, b))) for clique in cliques for a, b in itertools.combinations(clique, 2)}
    return np.array(sorted(pairs), dtype=np.int64)


def present_cells(cells: tuple, porosity: float, seed: int) -> np.ndarray:
    """Which cells the porous mesh keeps (one bool per cell, x fastest): uniform draws >= porosity."""
    return np.random.default_rng(seed).random(int(np.prod(cells))) >= porosity


def mesh_nodes_and_pairs(element: str, cells: tuple, porosity: float, seed: int):
    """Node coordinates (k, dim) of the mesh and its coupled node pairs (indices into them, a < b)."""
    dim, span, cliques, _ = ELEMENTS[element]
    present = present_cells(cells, porosity, seed)
    origins = np.stack(np.unravel_index(np.flatnonzero(present), cells, order="F"), axis=1) * span
    node_shape = tuple(c * span + 1 for c in cells)
    flat = lambda coords: np.ravel_multi_index(tuple(coords.T), node_shape, order="F")  # noqa: E731
    local = _local_pairs(cliques)
    a = flat((origins[:, None, :] + local[None, :, 0, :]).reshape(-1, dim))
    b = flat((origins[:, None, :] + local[None, :, 1, :]).reshape(-1, dim))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys = np.unique(lo * np.int64(np.prod(node_shape)) + hi)
    lo, hi = np.divmod(keys, np.int64(np.prod(node_shape)))
    used = np.unique(np.concatenate([lo, hi]))
    coords = np.stack(np.unravel_index(used, node_shape, order="F"), axis=1)
    return coords, np.searchsorted(used, lo), np.searchsorted(used, hi), node_shape


def node_order(element: str, coords: np.ndarray, node_shape: tuple, tiles: tuple) -> np.ndarray:
    """New position of every node: block multicolour over tiles (0 = the whole axis), lexicographic inside."""
    _, _, _, (weights, modulus) = ELEMENTS[element]
    sizes = np.array([t if 0 < t < s else s for t, s in zip(tiles, node_shape)], dtype=np.int64)  # wide: whole axis
    tile = coords // sizes
    inner = coords % sizes
    tile_shape = tuple(-(-s // t) for s, t in zip(node_shape, sizes))
    color = (tile @ np.array(weights, dtype=np.int64)) % modulus
    tile_id = np.ravel_multi_index(tuple(tile.T), tile_shape, order="F")
    inner_id = np.ravel_multi_index(tuple(inner.T), tuple(sizes), order="F")
    order = np.lexsort((inner_id, tile_id, color))
    position = np.empty(len(coords), dtype=np.int64)
    position[order] = np.arange(len(coords))
    return position


def checked_mesh(element: str, cells: tuple, tiles: tuple, porosity: float) -> tuple[tuple, tuple]:
    """(cells, tiles) cut to the element's dimension; DatasetError for an unknown element, tiles
    narrower than a cell or a porosity outside [0, 1)."""
    if element not in ELEMENTS:
        raise DatasetError(f"fem-mesh: element must be one of {', '.join(ELEMENTS)}, got {element!r}")
    dim, span, _, _ = ELEMENTS[element]
    cells, tiles = tuple(cells)[:dim], tuple(tiles)[:dim]
    if any(0 < t < span for t in tiles):
        raise DatasetError(f"fem-mesh: tiles of {element} must be 0 or at least {span} nodes wide, got {tiles}")
    if not 0.0 <= porosity < 1.0:
        raise DatasetError(f"fem-mesh: porosity must be in [0, 1), got {porosity}")
    return cells, tiles


def fem_mesh(element: str, dof: int, cells_x: int, cells_y: int, cells_z: int, tile_x: int, tile_y: int,
             tile_z: int, porosity: float, seed: int) -> sp.csr_matrix:
    """The SPD matrix of ``element`` on a (porous) box mesh with ``dof`` per node, block-multicolour numbered."""
    cells, tiles = checked_mesh(element, (cells_x, cells_y, cells_z), (tile_x, tile_y, tile_z), porosity)
    coords, lo, hi, node_shape = mesh_nodes_and_pairs(element, cells, porosity, seed)
    position = node_order(element, coords, node_shape, tiles)
    return _assemble(position[lo], position[hi], len(coords), dof, np.random.default_rng(seed + 1))


def _assemble(lo: np.ndarray, hi: np.ndarray, nodes: int, dof: int, rng) -> sp.csr_matrix:
    """Dense dof x dof blocks on the node pairs and inside every node, diagonal = |row sum| + 1."""
    order = np.lexsort((hi, lo))  # values drawn in a fixed order of the (renumbered) pairs
    lo, hi = np.minimum(lo, hi)[order], np.maximum(lo, hi)[order]
    a = np.arange(dof)
    blocks = rng.uniform(-1.0, 1.0, size=(lo.size, dof, dof))
    rows = (dof * lo[:, None, None] + a[:, None]).repeat(dof, axis=2)
    cols = (dof * hi[:, None, None] + a[None, :]).repeat(dof, axis=1)
    pa, pb = np.triu_indices(dof, k=1)
    base = dof * np.arange(nodes, dtype=np.int64)[:, None]
    inner = rng.uniform(-1.0, 1.0, size=(nodes, pa.size))
    r = np.concatenate([rows.ravel(), (base + pa).ravel()])
    c = np.concatenate([cols.ravel(), (base + pb).ravel()])
    v = np.concatenate([blocks.ravel(), inner.ravel()])
    n = dof * nodes
    upper = sp.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
    off = upper + upper.T
    diag = np.asarray(abs(off).sum(axis=1)).ravel() + 1.0
    return off + sp.diags(diag)


def bundle_adjustment(cameras: int, points: int, track: int, seed: int) -> sp.csr_matrix:
    """Gauss-Newton matrix J^T J + I of bundle adjustment: 3-dof points first, then 6-dof cameras.

    Every point is seen by ``track`` consecutive cameras (a feature tracked along an image
    sequence), starting at a uniform camera; point, camera and point-camera blocks are dense.
    The points-first order is the one Schur-complement solvers use; its lower triangle has
    exactly 3 + 6 = 9 wavefronts at any size (the point block's chain, then the camera's).
    """
    if track > cameras:
        raise DatasetError(f"bundle-adjustment: track ({track}) cannot exceed cameras ({cameras})")
    rng = np.random.default_rng(seed)
    start = rng.integers(0, cameras - track + 1, size=points)
    point = np.repeat(np.arange(points, dtype=np.int64), track)
    camera = (start[:, None] + np.arange(track)).ravel()
    n = 3 * points + 6 * cameras
    obs_rows = (3 * point[:, None, None] + np.arange(3)[:, None]).repeat(6, axis=2)
    obs_cols = (3 * points + 6 * camera[:, None, None] + np.arange(6)[None, :]).repeat(3, axis=1)
    pa, pb = np.triu_indices(3, k=1)
    ca, cb = np.triu_indices(6, k=1)
    p_base = 3 * np.arange(points, dtype=np.int64)[:, None]
    c_base = 3 * points + 6 * np.arange(cameras, dtype=np.int64)[:, None]
    r = np.concatenate([obs_rows.ravel(), (p_base + pa).ravel(), (c_base + ca).ravel()])
    c = np.concatenate([obs_cols.ravel(), (p_base + pb).ravel(), (c_base + cb).ravel()])
    v = rng.uniform(-1.0, 1.0, size=r.size)
    upper = sp.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
    off = upper + upper.T
    diag = np.asarray(abs(off).sum(axis=1)).ravel() + 1.0
    return off + sp.diags(diag)
