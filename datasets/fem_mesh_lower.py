"""The lower triangle of a ``fem-mesh`` matrix straight from the mesh, compiled: the stand-ins of
the SpTrSV paper's matrices at their own sizes (sptrsv-elasticity Table A.1, up to Queen_4147's
4.1M rows and 167M lower-triangle nonzeros).

``fem_mesh.fem_mesh`` assembles the whole symmetric matrix through scipy COO (about 100 bytes per
nonzero at its peak); here the compiled ``_fem_pattern.lower_csr`` writes the lower triangle's
CSR row by row (12 bytes per nonzero: int32 index, float64 value) from the same mesh: the same
cells (``present_cells``), element pairs (``ELEMENTS``) and node numbering (``node_order``), so
its pattern equals ``tril(fem_mesh(...))`` (tests/test_fem_mesh_lower.py). Any node order can be
given instead of the block multicolour one: a METIS or AMD order of the node graph expands to
the dofs node by node (``node_graph``, ``lower``).

Values: -1 off the diagonal and the row's off-diagonal count + 1 on it (strictly diagonally
dominant, SPD); schedules read the pattern only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .fem_mesh import ELEMENTS, _local_pairs, checked_mesh, node_order, present_cells


@dataclass(frozen=True)
class MeshGrid:
    """A (porous) box mesh's nodes: ``node_id`` maps each grid node (x fastest) to its node number
    (-1 when no present cell touches it); ``coords`` are the used nodes' grid coordinates."""

    element: str
    node_shape: tuple  # nodes per axis, the element's dimension
    cells: tuple
    present: np.ndarray  # uint8 per cell, x fastest
    node_id: np.ndarray  # int64 per grid node
    coords: np.ndarray  # (nodes, dim) int64

    @property
    def nodes(self) -> int:
        return int(self.coords.shape[0])


def mesh_grid(element: str, cells: tuple, porosity: float = 0.0, seed: int = 0) -> MeshGrid:
    """The used nodes of ``element`` on a box of ``cells``, numbered as ``fem_mesh`` numbers them
    (sorted grid index)."""
    cells, _ = checked_mesh(element, cells, (0, 0, 0), porosity)
    dim, span = ELEMENTS[element][:2]
    node_shape = tuple(c * span + 1 for c in cells)
    present = present_cells(cells, porosity, seed)
    origins = np.ravel_multi_index(tuple(np.stack(np.unravel_index(np.flatnonzero(present), cells, order="F"))
                                         * span), node_shape, order="F")
    corner = np.ravel_multi_index(tuple(np.array(list(np.ndindex(*([span + 1] * dim)))).T), node_shape, order="F")
    used = np.zeros(math.prod(node_shape), dtype=bool)
    for offset in corner:
        used[origins + offset] = True
    flat = np.flatnonzero(used)
    node_id = np.full(used.size, -1, dtype=np.int64)
    node_id[flat] = np.arange(flat.size)
    coords = np.stack(np.unravel_index(flat, node_shape, order="F"), axis=1).astype(np.int64)
    return MeshGrid(element, node_shape, cells, present.astype(np.uint8), node_id, coords)


def tile_position(grid: MeshGrid, tiles: tuple) -> np.ndarray:
    """The block multicolour position of every node (``fem_mesh.node_order``)."""
    dim = ELEMENTS[grid.element][0]
    return node_order(grid.element, grid.coords, grid.node_shape, tuple(tiles)[:dim])


def lower(grid: MeshGrid, position: np.ndarray, dof: int, with_values: bool = True) -> sp.csr_matrix:
    """The lower triangle (diagonal last, sorted int32 CSR) with node ``i`` at rows
    ``dof * position[i] ...``; without values the data are ones (a pattern)."""
    from spbench.kernels.sptrsv import _fem_pattern

    dim, span, cliques, _ = ELEMENTS[grid.element]
    local = _local_pairs(cliques)  # (k, 2, dim)
    pairs = np.zeros((local.shape[0], 6), dtype=np.int32)
    pairs[:, :dim], pairs[:, 3:3 + dim] = local[:, 0, :], local[:, 1, :]
    pad = lambda t: np.array(list(t) + [1] * (3 - len(t)), dtype=np.int64)  # noqa: E731
    position = np.ascontiguousarray(position, dtype=np.int64)
    node_at = np.empty(grid.nodes, dtype=np.int64)
    node_at[position] = np.flatnonzero(grid.node_id >= 0)
    indptr, indices, data = _fem_pattern.lower_csr(pad(grid.node_shape), pad(grid.cells), span, grid.present,
                                                   pairs, grid.node_id, position, node_at, int(dof),
                                                   with_values)
    n = dof * grid.nodes
    if data is None:
        data = np.ones(indices.size, dtype=np.int8)
    out = sp.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)
    out.has_sorted_indices = True
    out.has_canonical_format = True
    return out


def node_wavefronts(grid: MeshGrid, position: np.ndarray) -> tuple[int, int]:
    """(wavefronts, strictly lower node pairs) of the node graph numbered by ``position``: with dense
    dof blocks numbered node by node the dof-level wavefronts are exactly dof x these (what the
    stand-in searches score)."""
    from spbench.kernels.sptrsv import _dag

    L = lower(grid, position, 1, with_values=False)
    return int(_dag.levels(L.indptr, L.indices).max()) + 1, int(L.nnz - grid.nodes)


def node_graph(grid: MeshGrid) -> tuple[np.ndarray, np.ndarray]:
    """The symmetric node adjacency (CSR indptr, indices; no diagonal) in node-number order, what
    METIS and AMD order (dense dof blocks: ordering the node graph and expanding each node to its
    dofs is what METIS's graph compression and AMD's supervariables do)."""
    L = lower(grid, np.arange(grid.nodes), 1, with_values=False)
    strict = sp.csr_matrix((np.ones(L.nnz - grid.nodes, dtype=np.int8), _strict_indices(L),
                            L.indptr - np.arange(grid.nodes + 1, dtype=np.int32)), shape=L.shape)
    full = (strict + strict.T).tocsr()
    full.sort_indices()
    return full.indptr.astype(np.int64), full.indices.astype(np.int64)


def _strict_indices(L: sp.csr_matrix) -> np.ndarray:
    """L's column indices without the diagonal (the last entry of every row)."""
    keep = np.ones(L.nnz, dtype=bool)
    keep[L.indptr[1:] - 1] = False
    return L.indices[keep]


def fem_mesh_lower(element: str, dof: int, cells_x: int, cells_y: int, cells_z: int, tile_x: int, tile_y: int,
                   tile_z: int, porosity: float, seed: int, with_values: bool = True) -> sp.csr_matrix:
    """``tril(fem_mesh(...))``'s pattern (the same parameters), block multicolour numbered."""
    checked_mesh(element, (cells_x, cells_y, cells_z), (tile_x, tile_y, tile_z), porosity)
    grid = mesh_grid(element, (cells_x, cells_y, cells_z), porosity, seed)
    return lower(grid, tile_position(grid, (tile_x, tile_y, tile_z)), dof, with_values)
