"""The SpTrSV paper's matrices' stand-ins at the matrices' own sizes (``--scale paper``;
sptrsv-elasticity Tables A.1-A.3: up to Queen_4147's 4.1M rows and 167M lower nonzeros).

A paper-size stand-in is the n/15 stand-in's family and element at the real rows:
``paper_matrices.PAPER_SIZE`` holds each fem-mesh's cells and tiles at full size (found by
``spbench datasets standin-search --paper-size NAME``, ``paper_size_search``), so its average
wavefront stays near Table A.1's as the real matrix's does (a constant tiling would multiply it by
the size factor). The lower triangle is written directly by the compiled generator
(``fem_mesh_lower``), never the symmetric matrix, in the data set's order:

- no transform: the block multicolour order of the recipe's tiles;
- ``metis``: METIS NodeND of the node graph, each node expanded to its dofs (§5.2.3);
- ``ichol``: AMD (CHOLMOD) of the node graph, expanded likewise; IC(0) keeps the pattern of the
  AMD-ordered lower triangle, so that pattern is the factor's (§5.2.2). Its values are the
  generator's (diagonally dominant), not a factor's: schedules read the pattern only.

Ordering the node graph and expanding each node to its dofs is what METIS's graph compression and
AMD's supervariables do with dense dof blocks. The two orders are the slow part (seconds to a
minute at 1.4M nodes), so they are cached as ``$SPBENCH_DATA/paper_size/<checksum>.npy`` (one
int64 per node, atomic writes); the lower triangle itself is regenerated (about 1.6 s and 12
bytes per nonzero for Queen_4147's 165M), which costs less than reading it from disk and keeps
the cache small. bundle_adj's stand-in (bundle adjustment, 9 wavefronts at any size, hence
Table A.1's average wavefront exactly at its real rows) is assembled by its numpy generator.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spbench.store.atomic_files import atomic_output

from . import synthetic
from .errors import DatasetError
from .fem_mesh_lower import lower, mesh_grid, node_graph, tile_position
from .paper_matrices import SuiteSparseMatrix, paper_size_params
from .transforms import TRANSFORM_VERSION, amd_permutation, apply_transform, metis_permutation

#: part of every paper-size stand-in's checksum: bump when the compiled generator's output changes
BUILDER_VERSION = 1


def paper_size_checksum(m: SuiteSparseMatrix, transform: str | None) -> str:
    """sha256 of the recipe, the builder and the transform (a paper-size stand-in's identity)."""
    family, params = paper_size_params(m.name)
    text = json.dumps({"generator": family, "params": params, "version": synthetic.GENERATOR_VERSION,
                       "size": "paper", "builder": BUILDER_VERSION, "transform": transform,
                       "transform_version": TRANSFORM_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def order_dir() -> Path:
    """Where node orders of paper-size stand-ins are cached."""
    from spbench.store.cache_root import data_dir
    return data_dir() / "paper_size"


def _node_order(grid, transform: str, checksum: str) -> np.ndarray:
    """The node position array of ``transform``'s order of the node graph, cached on disk."""
    path = order_dir() / f"{checksum}.npy"
    try:
        position = np.load(path)
        if position.shape == (grid.nodes,):
            return position
    except (OSError, ValueError):
        pass
    indptr, indices = node_graph(grid)
    G = sp.csr_matrix((np.ones(indices.size, dtype=np.float64), indices, indptr), shape=(grid.nodes, grid.nodes))
    if transform == "metis":
        perm = metis_permutation(G)
    else:  # ichol: AMD of the pattern with its diagonal
        perm = amd_permutation((G + sp.identity(grid.nodes, format="csr")).tocsc())
    del G, indptr, indices
    position = np.empty(grid.nodes, dtype=np.int64)
    position[perm] = np.arange(grid.nodes)
    with atomic_output(path) as tmp:
        np.save(tmp, position)
    return position


def paper_size_lower(m: SuiteSparseMatrix, transform: str | None) -> tuple[str, sp.csr_matrix]:
    """(checksum, lower triangle in the kernels' layout) of ``m``'s paper-size stand-in after
    ``transform`` (None, "metis" or "ichol")."""
    family, params = paper_size_params(m.name)
    checksum = paper_size_checksum(m, transform)
    if family != "fem-mesh":
        return checksum, apply_transform(transform, synthetic.generate(family, params))
    p = params
    grid = mesh_grid(p["element"], (p["cells_x"], p["cells_y"], p["cells_z"]), p["porosity"], p["seed"])
    if transform is None:
        position = tile_position(grid, (p["tile_x"], p["tile_y"], p["tile_z"]))
    elif transform in ("metis", "ichol"):
        position = _node_order(grid, transform, checksum)
    else:
        raise DatasetError(f"{m.name}: unknown transform {transform!r}; expected metis or ichol")
    return checksum, lower(grid, position, p["dof"])
