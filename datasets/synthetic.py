"""Deterministic SPD matrix generators: the synthetic stand-ins for the SpTrSV paper's matrices.

Every generator returns the full symmetric matrix as float64 CSR with sorted indices, in the
natural (lexicographic grid / point) order. Random ones draw from ``numpy.random.default_rng(seed)``
in a fixed order, so the same parameters give the same matrix. Bump ``GENERATOR_VERSION`` when
any generator's output changes: it is part of every synthetic checksum, hence of every run_id.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from .errors import DatasetError
from .fem_mesh import ELEMENTS, bundle_adjustment, fem_mesh
from .resources import out_of_memory

GENERATOR_VERSION = 2
#: the most rows a generated matrix may have, and the largest tile width: the SpTrSV kernels index
#: rows with int32
MAX_ROWS = 2**31 - 1


@dataclass(frozen=True)
class Param:
    """One generator parameter: its type (int, float or str), default, bounds and meaning
    (``below``: an upper bound the value must stay under)."""

    type: type
    default: object
    help: str
    minimum: float | None = None
    choices: tuple | None = None
    maximum: float | None = None
    below: float | None = None

    def expected(self) -> str:
        """The accepted values in words, for error messages."""
        text = f"{self.type.__name__}"
        if self.choices is not None:
            text += f" in {list(self.choices)}"
        elif self.minimum is not None:
            text += f" >= {self.minimum}"
        if self.maximum is not None:
            text += f" and <= {self.maximum:,}"
        if self.below is not None:
            text += f" and < {self.below:g}"
        if self.default is None:
            text += " or null"
        return text

    def outside(self, value) -> bool:
        """Whether a value of the right type is out of the bounds."""
        return ((self.choices is not None and value not in self.choices)
                or (self.minimum is not None and value < self.minimum)
                or (self.maximum is not None and value > self.maximum)
                or (self.below is not None and value >= self.below))


@dataclass(frozen=True)
class Generator:
    """A named matrix family: its parameters and the function building the matrix from them."""

    name: str
    summary: str
    params: dict
    build: Callable[..., sp.csr_matrix]
    rows: Callable[[dict], int]
    scale: Callable[[dict, float], dict] | None = None  # params for ~factor x the rows (default: n / grid)


def _grid(help_text: str, default: int) -> Param:
    return Param(int, default, help_text, minimum=2)


def _tridiag(m: int, off: float, diag: float) -> sp.csr_matrix:
    """The m x m tridiagonal matrix with ``diag`` on the diagonal and ``off`` beside it."""
    return sp.diags([np.full(m - 1, off), np.full(m, diag), np.full(m - 1, off)], [-1, 0, 1], format="csr")


def _kron_all(*factors) -> sp.csr_matrix:
    out = factors[0]
    for factor in factors[1:]:
        out = sp.kron(out, factor, format="csr")
    return out


def _finish(A) -> sp.csr_matrix:
    """Canonical CSR: float64, duplicates summed, explicit zeros dropped, sorted column indices."""
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.eliminate_zeros()
    A.sort_indices()
    return A


def lap2d_5pt(grid: int) -> sp.csr_matrix:
    """2D Poisson, 5-point stencil, Dirichlet boundary: ``grid**2`` rows."""
    T = _tridiag(grid, -1.0, 2.0)
    I = sp.identity(grid, format="csr")
    return _finish(sp.kron(I, T) + sp.kron(T, I))


def lap2d_9pt(grid: int) -> sp.csr_matrix:
    """2D 9-point Laplacian (8 on the diagonal, -1 to the 8 neighbours): ``grid**2`` rows.

    ``9 I - B (x) B`` with B = tridiag(1, 1, 1): eigenvalues of B lie in (-1, 3), so it is SPD.
    """
    B = _tridiag(grid, 1.0, 1.0)
    return _finish(9.0 * sp.identity(grid * grid) - sp.kron(B, B))


def lap3d_7pt(grid: int) -> sp.csr_matrix:
    """3D Poisson, 7-point stencil, Dirichlet boundary: ``grid**3`` rows."""
    T = _tridiag(grid, -1.0, 2.0)
    I = sp.identity(grid, format="csr")
    return _finish(_kron_all(T, I, I) + _kron_all(I, T, I) + _kron_all(I, I, T))


def lap3d_27pt(grid: int) -> sp.csr_matrix:
    """3D 27-point Laplacian (26 on the diagonal, -1 to the 26 neighbours): ``grid**3`` rows.

    ``27 I - B (x) B (x) B`` with B = tridiag(1, 1, 1): eigenvalues in (0, 36), SPD.
    """
    B = _tridiag(grid, 1.0, 1.0)
    return _finish(27.0 * sp.identity(grid**3) - _kron_all(B, B, B))


def elasticity3d(grid: int, seed: int) -> sp.csr_matrix:
    """3D elasticity-like matrix: 3 dof per node of a grid, 27-point node coupling by 3x3 blocks.

    Off-diagonal blocks are uniform(-1, 1), drawn per node pair in lexicographic order; the
    diagonal is the absolute row sum plus one, so the matrix is strictly diagonally dominant
    and SPD. Rows ``3 * grid**3``, the 3 dof of a node consecutive.
    """
    rng = np.random.default_rng(seed)
    B = _tridiag(grid, 1.0, 1.0)
    upper = sp.triu(_kron_all(B, B, B), k=1, format="coo")
    order = np.lexsort((upper.col, upper.row))
    ni, nj = upper.row[order].astype(np.int64), upper.col[order].astype(np.int64)
    blocks = rng.uniform(-1.0, 1.0, size=(ni.size, 3, 3))
    a = np.arange(3)
    rows = np.broadcast_to(3 * ni[:, None, None] + a[:, None], blocks.shape)
    cols = np.broadcast_to(3 * nj[:, None, None] + a[None, :], blocks.shape)
    nodes = grid**3
    inner = rng.uniform(-1.0, 1.0, size=(nodes, 3))
    pa, pb = np.array([0, 0, 1]), np.array([1, 2, 2])
    base = 3 * np.arange(nodes, dtype=np.int64)[:, None]
    r = np.concatenate([rows.ravel(), (base + pa).ravel()])
    c = np.concatenate([cols.ravel(), (base + pb).ravel()])
    v = np.concatenate([blocks.ravel(), inner.ravel()])
    n = 3 * nodes
    U = sp.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
    off = U + U.T
    diag = np.asarray(abs(off).sum(axis=1)).ravel() + 1.0
    return _finish(off + sp.diags(diag))


def rgg_spd(n: int, avg_degree: float, radius: float | None, dim: int, shift: float, seed: int) -> sp.csr_matrix:
    """Random geometric graph in the unit square/cube: graph Laplacian + ``shift * I`` (SPD).

    Points are uniform, in the order drawn; ``radius`` defaults to the one giving an expected
    ``avg_degree`` away from the boundary (n * ball volume(radius) = avg_degree).
    """
    rng = np.random.default_rng(seed)
    points = rng.random((n, dim))
    if radius is None:
        ball = np.pi if dim == 2 else 4.0 * np.pi / 3.0
        radius = (avg_degree / (max(n - 1, 1) * ball)) ** (1.0 / dim)
    pairs = cKDTree(points).query_pairs(radius, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    ones = np.ones(i.size)
    adj = sp.coo_matrix((np.concatenate([ones, ones]), (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(n, n)).tocsr()
    degree = np.asarray(adj.sum(axis=1)).ravel()
    return _finish(sp.diags(degree + shift) - adj)


def _mesh_rows(p: dict) -> int:
    """Rows of a fem-mesh without porosity: dof x nodes of the box."""
    dim, span = ELEMENTS[p["element"]][:2]
    return p["dof"] * math.prod(c * span + 1 for c in (p["cells_x"], p["cells_y"], p["cells_z"])[:dim])


def _mesh_scaled(p: dict, factor: float) -> dict:
    """Every cell count of the mesh times factor^(1/dim); the tiles (the numbering) stay as they are."""
    dim = ELEMENTS[p["element"]][0]
    keys = ("cells_x", "cells_y", "cells_z")[:dim]
    return {**p, **{k: max(1, int(round(p[k] * factor ** (1 / dim)))) for k in keys}}


def _ba_scaled(p: dict, factor: float) -> dict:
    return {**p, "cameras": max(p["track"], int(round(p["cameras"] * factor))),
            "points": max(1, int(round(p["points"] * factor)))}


def _cells(help_text: str) -> Param:
    return Param(int, 10, help_text, minimum=1)


def _tile(axis: str) -> Param:
    return Param(int, 0, f"tile width along {axis} in nodes (0: the whole axis, no tiling)", minimum=0,
                 maximum=MAX_ROWS)


GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in [
        Generator("lap2d-5pt", "2D Poisson, 5-point stencil on a grid x grid mesh",
                  {"grid": _grid("points per side", 100)}, lap2d_5pt, lambda p: p["grid"] ** 2),
        Generator("lap2d-9pt", "2D 9-point Laplacian on a grid x grid mesh",
                  {"grid": _grid("points per side", 100)}, lap2d_9pt, lambda p: p["grid"] ** 2),
        Generator("lap3d-7pt", "3D Poisson, 7-point stencil on a grid^3 mesh",
                  {"grid": _grid("points per side", 30)}, lap3d_7pt, lambda p: p["grid"] ** 3),
        Generator("lap3d-27pt", "3D 27-point Laplacian on a grid^3 mesh",
                  {"grid": _grid("points per side", 30)}, lap3d_27pt, lambda p: p["grid"] ** 3),
        Generator("elasticity3d", "3D elasticity-like: 3 dof per node, 27-point coupling, 3x3 blocks",
                  {"grid": _grid("nodes per side", 20), "seed": Param(int, 0, "random seed", minimum=0)},
                  elasticity3d, lambda p: 3 * p["grid"] ** 3),
        Generator("rgg-spd", "random geometric graph Laplacian + shift, unit square/cube",
                  {"n": Param(int, 10000, "vertices", minimum=2),
                   "avg_degree": Param(float, 8.0, "expected neighbours (ignored if radius given)", minimum=0.0),
                   "radius": Param(float, None, "connection radius (default: from avg_degree)", minimum=0.0),
                   "dim": Param(int, 2, "dimension", choices=(2, 3)),
                   "shift": Param(float, 1.0, "added to the diagonal", minimum=0.0),
                   "seed": Param(int, 0, "random seed", minimum=0)},
                  rgg_spd, lambda p: p["n"]),
        Generator("fem-mesh", "FE matrix: element type on a (porous) box mesh, dof per node, block multicolour numbering",
                  {"element": Param(str, "hex8", "element type", choices=tuple(ELEMENTS)),
                   "dof": Param(int, 3, "unknowns per node", minimum=1),
                   "cells_x": _cells("cells along x"), "cells_y": _cells("cells along y"),
                   "cells_z": _cells("cells along z (3D elements)"),
                   "tile_x": _tile("x"), "tile_y": _tile("y"), "tile_z": _tile("z"),
                   "porosity": Param(float, 0.0, "fraction of cells removed at random", minimum=0.0, below=1.0),
                   "seed": Param(int, 0, "random seed", minimum=0)},
                  fem_mesh, _mesh_rows, _mesh_scaled),
        Generator("bundle-adjustment", "bundle adjustment J^T J + I: 3-dof points, then 6-dof cameras",
                  {"cameras": Param(int, 200, "cameras (6 unknowns each)", minimum=1),
                   "points": Param(int, 5000, "points (3 unknowns each)", minimum=1),
                   "track": Param(int, 3, "consecutive cameras seeing each point", minimum=1),
                   "seed": Param(int, 0, "random seed", minimum=0)},
                  bundle_adjustment, lambda p: 3 * p["points"] + 6 * p["cameras"], _ba_scaled),
    ]
}


def get_generator(name: str) -> Generator:
    """The generator called ``name``; DatasetError listing the known ones otherwise."""
    try:
        return GENERATORS[name]
    except KeyError:
        raise DatasetError(f"unknown generator {name!r}; expected one of {', '.join(GENERATORS)}") from None


def _coerce(gen: Generator, key: str, spec: Param, value):
    """``value`` checked against ``spec`` (ints accepted for floats, bools never for numbers)."""
    where = f"{gen.name}: parameter {key!r}"
    if value is None and spec.default is None:
        return None
    ok_int = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    ok_float = ok_int or (isinstance(value, (float, np.floating)) and np.isfinite(value))
    if spec.type is str and isinstance(value, str):
        pass
    elif spec.type is int and ok_int:
        value = int(value)
    elif spec.type is float and ok_float:
        value = float(value)
    else:
        raise DatasetError(f"{where} must be {spec.expected()}, got {value!r} ({type(value).__name__})")
    if spec.outside(value):
        raise DatasetError(f"{where} must be {spec.expected()}, got {value!r}")
    return value


def _count(number: int) -> str:
    """``8,000,000,000``; a number too long to read as ``1e+40``."""
    return f"{number:,}" if number < 10**15 else f"{float(number):.3g}"


def _check_size(gen: Generator, full: dict) -> None:
    """DatasetError when the parameters give more rows than the kernels index, or an rgg-spd
    degree beyond its vertices: refused before anything is generated."""
    rows = gen.rows(full)
    if rows > MAX_ROWS:
        given = ",".join(f"{k}={_fmt(v)}" for k, v in full.items() if v != gen.params[k].default)
        raise DatasetError(f"{gen.name}[{given}]: {_count(rows)} rows, more than the {MAX_ROWS:,} the SpTrSV "
                           f"kernels' int32 indices address")
    if gen.name == "rgg-spd" and full["radius"] is None and full["avg_degree"] > full["n"] - 1:
        raise DatasetError(f"rgg-spd: parameter 'avg_degree' must be at most n - 1 = {full['n'] - 1} "
                           f"(every other vertex), got {full['avg_degree']!r}")


def check_params(name: str, params: Mapping | None = None) -> dict:
    """All parameters of generator ``name`` (defaults filled, spec order), validated.

    Unknown names, wrong types and values out of range (a matrix beyond ``MAX_ROWS`` rows
    included) raise DatasetError naming the parameter and what was expected.
    """
    gen = get_generator(name)
    params = dict(params or {})
    unknown = [k for k in params if k not in gen.params]
    if unknown:
        expected = ", ".join(f"{k} ({p.expected()})" for k, p in gen.params.items())
        raise DatasetError(f"{name}: unknown parameter {unknown[0]!r}; expected {expected}")
    if name == "rgg-spd" and params.get("radius") is not None and "avg_degree" in params:
        raise DatasetError("rgg-spd: give avg_degree or radius, not both")
    full = {k: _coerce(gen, k, spec, params.get(k, spec.default)) for k, spec in gen.params.items()}
    _check_size(gen, full)
    return full


def generate(name: str, params: Mapping | None = None) -> sp.csr_matrix:
    """The matrix of generator ``name`` with ``params`` (full symmetric, float64 CSR); a one-line
    DatasetError when it does not fit in memory."""
    full = check_params(name, params)
    try:
        return GENERATORS[name].build(**full)
    except MemoryError:
        raise out_of_memory(label(name, full), f"generating {_count(GENERATORS[name].rows(full))} rows") from None


def label(name: str, params: Mapping | None = None) -> str:
    """Row name of a generated matrix: parameters differing from the defaults, ``lap2d-5pt[grid=200]``."""
    full = check_params(name, params)
    defaults = GENERATORS[name].params
    shown = [f"{k}={_fmt(v)}" for k, v in full.items() if v != defaults[k].default]
    return f"{name}[{','.join(shown)}]" if shown else name


def checksum(name: str, params: Mapping | None = None) -> str:
    """sha256 of the canonical description (generator, all parameters, GENERATOR_VERSION)."""
    full = check_params(name, params)
    text = json.dumps({"generator": name, "params": full, "version": GENERATOR_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _fmt(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def scaled_params(name: str, params: Mapping | None, factor: float) -> dict:
    """``params`` of generator ``name`` resized so the matrix has about ``factor`` times the rows:
    ``n`` scaled directly, ``grid`` by factor^(1/d) where d is the grid's dimension (read off the
    generator's row count); other parameters unchanged. Used by ``--scale small``."""
    gen = get_generator(name)
    full = check_params(name, params)
    if gen.scale is not None:
        return check_params(name, gen.scale(full, factor))
    if "n" in full:
        full["n"] = max(gen.params["n"].minimum or 2, int(round(full["n"] * factor)))
    elif "grid" in full:
        g = full["grid"]
        dim = round(math.log(gen.rows({**full, "grid": 2 * g}) / gen.rows(full), 2))
        full["grid"] = max(int(gen.params["grid"].minimum or 2), int(round(g * factor ** (1 / max(dim, 1)))))
    return full
