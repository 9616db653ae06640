"""The SpTrSV paper's matrices (sptrsv-elasticity Tables A.1-A.3) and their synthetic stand-ins.

Table A.1 lists each matrix's size, the nonzeros of its lower triangle and the average wavefront
size (rows / wavefronts of the lower triangle); the SuiteSparse groups are recalled, not
checked: a wrong group shows up as an HTTP 404 on first download). SuiteSparse publishes no
checksums, so ``sha256`` is None and the first download's hash is recorded.

Every matrix has a stand-in that reproduces its rows at n/15 (clipped to
[1e4, 1e5]; up to 2e5 where the average wavefront needs more rows than that), its nonzeros per
row of the lower triangle (within 1.25x) and its average wavefront (within 1.5x). Each is an FE
matrix built the way the real one was (``fem_mesh``): the element and dofs per node that give the
real matrix's nonzeros per row (hexahedra with 3 dofs for 3D solids, Kuhn tetrahedra for the
unstructured geomechanics meshes, 6-dof quadrilateral shells for car bodies and ship sections,
triangles or 5/7-point stencils for scalar 2D/3D problems, cubic quadrilaterals for Dubcova3's
higher-order FEM, porous voxel meshes for trabecular bone), a box mesh of the rows' size, and a
block multicolour numbering whose tile width sets the wavefront count. ``STANDINS`` holds the
recipes; docs/reproducing.md "SpTrSV stand-ins" gives the measured statistics beside the paper's and the
command that measures them, and says which matrix misses a bound and why (bundle_adj: a
bundle-adjustment matrix has 9 wavefronts at any size, so 2e5 rows give 22,222, not 57,039).

Tables A.2 and A.3 (``ICHOL_TABLE``, ``METIS_TABLE``) hold the transformed matrices as the paper
reports them (n, nnz of the lower triangle, average wavefront), for comparison only: a stand-in's
iChol / METIS variant is whatever the transform makes of it. Table A.3 uses 12 matrices outside
Table A.1, registered in ``METIS_ONLY`` (groups recalled, not checked); their stand-ins match rows
and nonzeros per row and keep the natural numbering (the paper gives only their METIS wavefront).
Where several share an element and dofs (cant, gyro, raefsky4 and ship_003; nasasrb and shipsec8;
m_t1 and x104), each box is shaped after its part and its nonzeros per row (a slender beam has
more boundary, so fewer nonzeros per row, than a cube), so no two data sets of a set coincide.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import synthetic

DEFAULT_URL_BASE = "https://sparse.tamu.edu/MM"


def url_base() -> str:
    """SuiteSparse's Matrix Market base URL, overridable by ``$SPBENCH_SUITESPARSE_URL`` (mirrors)."""
    return (os.environ.get("SPBENCH_SUITESPARSE_URL") or DEFAULT_URL_BASE).rstrip("/")


@dataclass(frozen=True)
class SuiteSparseMatrix:
    """One row of the paper's Table A.1 plus where to get it and its synthetic stand-in."""

    name: str
    group: str
    n: int
    nnz: int
    avg_wavefront: int
    problem: str
    standin: str
    standin_params: dict = field(hash=False)
    sha256: str | None = None

    def url(self, base: str | None = None) -> str:
        """``<base>/<Group>/<Name>.tar.gz``."""
        return f"{(base or url_base()).rstrip('/')}/{self.group}/{self.name}.tar.gz"

    def standin_label(self) -> str:
        """The stand-in recipe as a row name, e.g. ``fem-mesh[element=tet4,cells_x=40,...]``."""
        return synthetic.label(self.standin, self.standin_params)

    def standin_rows(self) -> int:
        """The rows the stand-in aims at: n/15 clipped to [1e4, 1e5], or 2e5 where that is less than
        twice the paper's average wavefront (bundle_adj, parabolic_fem: a few wavefronts at most)."""
        rows = min(1e5, max(1e4, self.n / 15))
        table_a1 = self.name not in METIS_ONLY  # a METIS-only entry's wavefront is of its METIS order
        return int(round(2e5 if table_a1 and rows < 2 * self.avg_wavefront else rows))


def _box(cells: tuple, tiles: tuple) -> dict:
    """A ``fem-mesh``'s box parameters: cells per axis and tile widths in nodes, as many axes as given."""
    return {**dict(zip(("cells_x", "cells_y", "cells_z"), cells)), **dict(zip(("tile_x", "tile_y", "tile_z"), tiles))}


def _mesh(element: str, dof: int, cells: tuple, tiles: tuple = (0, 0, 0), porosity: float = 0.0) -> tuple:
    """A ``fem-mesh`` recipe: element, dofs per node, cells per axis, tile widths in nodes (0: none), porosity."""
    params = {"element": element, "dof": dof, **_box(cells, tiles)}
    if porosity:
        params["porosity"] = porosity
    return "fem-mesh", params


def _bundle(**params) -> tuple:
    return "bundle-adjustment", params


def _m(name, group, n, nnz, wavefront, problem, recipe) -> SuiteSparseMatrix:
    family, params = recipe
    return SuiteSparseMatrix(name, group, n, nnz, wavefront, problem, family, synthetic.check_params(family, params))


# Recipes found by `spbench datasets standin-search NAME` (element and dofs chosen from the
# matrix's problem, mesh and tiles searched); docs/reproducing.md "SpTrSV stand-ins" lists what they measure.
SUITESPARSE: dict[str, SuiteSparseMatrix] = {m.name: m for m in [
    _m("af_0_k101", "Schenk_AFE", 503625, 9027150, 74, "sheet metal forming (shell, 4 dofs)",
       _mesh("quad4", 4, (259, 32), (20, 16))),
    _m("af_shell7", "Schenk_AFE", 504855, 9046865, 135, "sheet metal forming (shell, 4 dofs)",
       _mesh("quad4", 4, (259, 32), (10, 10))),
    _m("apache2", "GHS_psdef", 715176, 2766523, 1077, "3D finite differences (7-point)",
       _mesh("fd7", 1, (36, 36, 36), (12, 12, 12))),
    _m("audikw_1", "GHS_psdef", 943695, 39297771, 203, "3D structural FEM (hexahedra, 3 dofs)",
       _mesh("hex8", 3, (43, 21, 21), (5, 5, 5))),
    _m("bmw7st_1", "GHS_psdef", 141347, 3740507, 199, "3D structural FEM, car body (shells, 6 dofs)",
       _mesh("quad4", 6, (82, 20), (1, 2))),
    _m("bmwcra_1", "GHS_psdef", 148770, 5396386, 204, "3D structural FEM, crankshaft (hexahedra)",
       _mesh("hex8", 3, (14, 14, 14), (1, 1, 2))),
    _m("bone010", "Oberwolfach", 986703, 36326514, 470, "trabecular bone micro-FE (voxel hexahedra)",
       _mesh("hex8", 3, (112, 28, 7), (2, 2, 2))),
    _m("boneS01", "Oberwolfach", 127224, 3421188, 156, "trabecular bone micro-FE (porous voxels)",
       _mesh("hex8", 3, (14, 14, 14), (1, 1, 2), porosity=0.5)),
    _m("boneS10", "Oberwolfach", 914898, 28191660, 386, "trabecular bone micro-FE (porous voxels)",
       _mesh("hex8", 3, (108, 26, 6), (2, 2, 2), porosity=0.3)),
    _m("Bump_2911", "Janna", 2911419, 65320659, 283, "3D geomechanical FEM (tetrahedra, 3 dofs)",
       _mesh("tet4", 3, (81, 41, 10))),
    _m("bundle_adj", "Mazaheri", 513351, 10360701, 57039, "bundle adjustment (3-dof points, then 6-dof cameras)",
       _bundle(cameras=2000, points=62667, track=3)),
    _m("consph", "Williams", 83334, 3046907, 139, "3D FEM, concentric spheres (hexahedra)",
       _mesh("hex8", 3, (14, 14, 14), (2, 1, 2))),
    _m("Dubcova3", "UTEP", 146689, 1891669, 44, "2D PDE, higher-order FEM (cubic quads)",
       _mesh("quad16", 1, (33, 33), (16, 16))),
    _m("ecology2", "McRae", 999999, 2997995, 500, "2D 5-point grid (landscape ecology)",
       _mesh("fd5", 1, (258, 258), (40, 48))),
    _m("Emilia_923", "Janna", 923136, 20964171, 176, "3D geomechanical FEM (tetrahedra, 3 dofs)",
       _mesh("tet4", 3, (108, 26, 6), (12, 14, 12))),
    _m("Fault_639", "Janna", 638802, 14626683, 143, "3D geomechanical FEM, faulted reservoir (tetrahedra)",
       _mesh("tet4", 3, (96, 23, 5), (10, 12, 10))),
    _m("Flan_1565", "Janna", 1564794, 59485419, 200, "3D structural FEM, steel flange (hexahedra)",
       _mesh("hex8", 3, (64, 32, 16), (10, 10, 12))),
    _m("G3_circuit", "AMD", 1585478, 4623152, 611, "circuit simulation (grid-like resistor network)",
       _mesh("fd5", 1, (894, 112), (48, 64))),
    _m("Geo_1438", "Janna", 1437960, 32297325, 246, "3D geomechanical FEM (tetrahedra, 3 dofs)",
       _mesh("tet4", 3, (127, 32, 8), (16, 20, 16))),
    _m("hood", "GHS_psdef", 220542, 5494489, 365, "3D structural FEM, car hood (shells, 6 dofs)",
       _mesh("quad4", 6, (140, 18), (1, 2))),
    _m("Hook_1498", "Janna", 1498023, 31207734, 95, "3D structural FEM, steel hook (tetrahedra)",
       _mesh("tet4", 3, (375, 8, 8), (40, 32, 32))),
    _m("inline_1", "GHS_psdef", 503712, 18660027, 287, "3D structural FEM, inline skate (hexahedra)",
       _mesh("hex8", 3, (44, 21, 10), (1, 2, 2))),
    _m("ldoor", "GHS_psdef", 952203, 23737339, 141, "3D structural FEM, car door (shells, 6 dofs)",
       _mesh("quad4", 6, (206, 51), (12, 12))),
    _m("msdoor", "INPRO", 415863, 10328399, 59, "3D structural FEM, car door (shells, 6 dofs)",
       _mesh("quad4", 6, (136, 34), (12, 14))),
    _m("offshore", "Um", 259789, 2251231, 75, "3D electromagnetics FEM (tetrahedra, 1 dof)",
       _mesh("tet4", 1, (206, 12, 5), (24, 24, 24))),
    _m("parabolic_fem", "Wissgott", 525825, 2100225, 75117, "2D parabolic FEM (triangles, multicolour order)",
       _mesh("tri3", 1, (447, 447), (1, 1))),
    _m("PFlow_742", "Janna", 742793, 18940627, 118, "3D pressure-temperature flow FEM (tetrahedra)",
       _mesh("tet4", 3, (127, 15, 7), (14, 16, 14))),
    _m("Queen_4147", "Janna", 4147110, 166823197, 342, "3D structural FEM (hexahedra, 3 dofs)",
       _mesh("hex8", 3, (32, 32, 32), (5, 5, 5))),
    _m("s3dkt3m2", "GHS_psdef", 90449, 1921955, 60, "cylindrical shell FEM (5 dofs)",
       _mesh("quad4", 5, (89, 22), (5, 5))),
    _m("Serena", "Janna", 1391349, 32961525, 298, "3D gas reservoir geomechanics FEM (tetrahedra)",
       _mesh("tet4", 3, (79, 40, 10), (16, 16, 16))),
    _m("shipsec1", "DNVS", 140874, 3977139, 67, "3D structural FEM, ship section (shells)",
       _mesh("quad4", 6, (82, 20), (4, 3))),
    _m("StocF-1465", "Janna", 1465137, 11235263, 487, "3D porous-media flow FEM (tetrahedra, 1 dof)",
       _mesh("tet4", 1, (184, 46, 12), (28, 32, 28))),
    _m("thermal2", "Schmid", 1228045, 4904179, 991, "2D steady-state thermal FEM (triangles)",
       _mesh("tri3", 1, (286, 286), (20, 20))),
]}

METIS_ONLY: dict[str, SuiteSparseMatrix] = {m.name: m for m in [
    # Matrices of Table A.3 outside Table A.1; n and nnz from Table A.3, wavefront of the METIS order;
    # stand-ins in natural order (no target wavefront before METIS), boxes shaped after the part
    # (cantilever beam, gyroscope plate, ship hull, booster strip, beam joint) at ~1e4 rows.
    _m("af_shell10", "Schenk_AFE", 1508065, 27090195, 1065, "sheet metal forming (shell, 4 dofs)",
       _mesh("quad4", 4, (158, 158))),
    _m("cant", "Williams", 62451, 2034917, 333, "3D FEM cantilever (hexahedra)",
       _mesh("hex8", 3, (59, 6, 6))),
    _m("crankseg_2", "GHS_psdef", 63838, 7106348, 86, "3D structural FEM, crankshaft segment (27-node hexahedra)",
       _mesh("hex27", 3, (7, 7, 7))),
    _m("gyro", "Oberwolfach", 17361, 519260, 88, "micro-gyroscope FEM (hexahedra)",
       _mesh("hex8", 3, (32, 32, 2))),
    _m("m_t1", "DNVS", 97578, 4925574, 268, "3D structural FEM, tubular joint (9-node shells)",
       _mesh("quad9", 6, (20, 20))),
    _m("nasasrb", "Nasa", 54870, 1366097, 287, "3D structural FEM, shuttle rocket booster (shells)",
       _mesh("quad4", 6, (199, 7))),
    _m("pwtk", "Boeing", 217918, 5926171, 511, "3D structural FEM, pressurized wind tunnel (shells)",
       _mesh("quad4", 6, (49, 49))),
    _m("raefsky4", "Simon", 19779, 674195, 111, "3D structural buckling FEM (hexahedra)",
       _mesh("hex8", 3, (14, 14, 14))),
    _m("ship_003", "DNVS", 121728, 4103881, 494, "3D structural FEM, ship (hexahedra)",
       _mesh("hex8", 3, (35, 9, 8))),
    _m("shipsec8", "DNVS", 114919, 3384159, 456, "3D structural FEM, ship section (shells)",
       _mesh("quad4", 6, (41, 41))),
    _m("tmt_sym", "CEMW", 726713, 2903837, 26915, "electromagnetics (2D-like, triangles)",
       _mesh("tri3", 1, (220, 220))),
    _m("x104", "DNVS", 108384, 5138004, 306, "3D structural FEM, beam joint (9-node shells)",
       _mesh("quad9", 6, (40, 10))),
]}


BEYOND_BOUNDS: dict[str, tuple] = {
    # stand-ins that cannot meet a bound honestly: (the statistic that misses, why)
    "bundle_adj": ("avg_wavefront", "a bundle-adjustment matrix in points-first order has 3 + 6 = 9 wavefronts "
                   "at any size (the real one: 513,351 / 9 = 57,039), so 2e5 rows give 22,222, 2.6x below"),
    "crankseg_2": ("nnz", "111 nonzeros per row need ~74 coupled nodes per node; 27-node hexahedra at 1e4 rows "
                   "(7^3 cells, most nodes on the boundary) reach 83, 1.34x below"),
}


# Paper-size recipes (``--scale paper``): each Table A.1 fem-mesh stand-in's cells and tiles at the
# matrix's own rows, found by `spbench datasets standin-search --paper-size NAME` (the box elongated
# along its slow axis and the tile width searched for Table A.1's nonzeros per row and average
# wavefront; docs/reproducing.md "SpTrSV stand-ins at the paper's sizes" lists what they measure).
# Element, dofs, porosity and seed are the n/15 recipe's. Not listed: scaled to the real rows by
# ``synthetic.scaled_params`` (the METIS-only matrices, natural order; bundle_adj).
PAPER_SIZE: dict[str, tuple[tuple, tuple]] = {
    "af_0_k101": ((1428, 87), (0, 0)),  # rows 503,008, nnz/row 18.4 (17.9), avg wavefront 78.4 (74)
    "af_shell7": ((179, 700), (192, 192)),  # rows 504,720, nnz/row 18.4 (17.9), avg wavefront 133.4 (135)
    "apache2": ((35, 35, 551), (0, 0, 0)),  # rows 715,392, nnz/row 3.9 (3.9), avg wavefront 1150.1 (1077)
    "audikw_1": ((35, 17, 484), (192, 192, 192)),  # rows 942,840, nnz/row 38.7 (41.6), avg wavefront 196.2 (203)
    "bmw7st_1": ((440, 52), (4, 0)),  # rows 140,238, nnz/row 27.1 (26.5), avg wavefront 185.5 (199)
    "bmwcra_1": ((18, 18, 136), (24, 24, 24)),  # rows 148,371, nnz/row 38.0 (36.3), avg wavefront 203.5 (204)
    "bone010": ((87, 22, 162), (4, 4, 0)),  # rows 989,736, nnz/row 39.4 (36.8), avg wavefront 453.2 (470)
    "boneS01": ((28, 28, 49), (4, 4, 0)),  # rows 124,137, nnz/row 28.4 (26.9), avg wavefront 151.0 (156)
    "boneS10": ((450, 108, 5), (96, 96, 96)),  # rows 882,024, nnz/row 31.3 (30.8), avg wavefront 407.8 (386)
    "Bump_2911": ((20, 10, 4200), (4, 4, 0)),  # rows 2,911,293, nnz/row 21.4 (22.4), avg wavefront 229.5 (283)
    "consph": ((30, 30, 28), (4, 4, 0)),  # rows 83,607, nnz/row 38.4 (36.6), avg wavefront 145.9 (139)
    "Dubcova3": ((64, 253), (0, 0)),  # rows 146,680, nnz/row 12.9 (12.9), avg wavefront 45.4 (44)
    "ecology2": ((500, 1995), (4, 0)),  # rows 999,996, nnz/row 3.0 (3.0), avg wavefront 499.2 (500)
    "Emilia_923": ((28, 7, 1325), (0, 0, 0)),  # rows 922,896, nnz/row 21.1 (22.7), avg wavefront 226.0 (176)
    "Fault_639": ((20, 5, 1689), (0, 0, 0)),  # rows 638,820, nnz/row 20.5 (22.9), avg wavefront 124.2 (143)
    "Flan_1565": ((40, 20, 605), (4, 4, 0)),  # rows 1,565,298, nnz/row 39.0 (38.0), avg wavefront 208.7 (200)
    "G3_circuit": ((629, 2516), (4, 0)),  # rows 1,585,710, nnz/row 3.0 (2.9), avg wavefront 628.3 (611)
    "Geo_1438": ((31, 8, 1663), (4, 4, 0)),  # rows 1,437,696, nnz/row 21.3 (22.5), avg wavefront 282.2 (246)
    "hood": ((535, 68), (16, 16)),  # rows 221,904, nnz/row 27.2 (24.9), avg wavefront 369.8 (365)
    "Hook_1498": ((64, 1, 3840), (0, 0, 0)),  # rows 1,497,990, nnz/row 16.9 (20.8), avg wavefront 127.8 (95)
    "inline_1": ((36, 17, 251), (64, 64, 64)),  # rows 503,496, nnz/row 38.7 (37.0), avg wavefront 289.9 (287)
    "ldoor": ((283, 558), (4, 0)),  # rows 952,536, nnz/row 27.4 (24.9), avg wavefront 139.5 (141)
    "msdoor": ((132, 520), (0, 0)),  # rows 415,758, nnz/row 27.3 (24.8), avg wavefront 59.1 (59)
    "offshore": ((36, 2, 2339), (0, 0, 0)),  # rows 259,740, nnz/row 6.6 (8.7), avg wavefront 109.2 (75)
    "parabolic_fem": ((725, 723), (2, 2)),  # rows 525,624, nnz/row 4.0 (4.0), avg wavefront 75089.1 (75117)
    "PFlow_742": ((26, 3, 2292), (0, 0, 0)),  # rows 742,932, nnz/row 19.6 (25.5), avg wavefront 106.7 (118)
    "Queen_4147": ((35, 35, 1066), (4, 4, 0)),  # rows 4,148,496, nnz/row 39.5 (40.2), avg wavefront 318.3 (342)
    "s3dkt3m2": ((135, 132), (4, 0)),  # rows 90,440, nnz/row 22.8 (21.2), avg wavefront 63.2 (60)
    "Serena": ((24, 12, 1426), (4, 4, 0)),  # rows 1,391,325, nnz/row 21.6 (23.7), avg wavefront 318.3 (298)
    "shipsec1": ((219, 106), (64, 64)),  # rows 141,240, nnz/row 27.3 (28.2), avg wavefront 66.9 (67)
    "StocF-1465": ((44, 11, 2712), (4, 4, 0)),  # rows 1,465,020, nnz/row 7.6 (7.7), avg wavefront 533.3 (487)
    "thermal2": ((1108, 1106), (4, 0)),  # rows 1,227,663, nnz/row 4.0 (4.0), avg wavefront 1098.1 (991)
}


def paper_size_params(name: str) -> tuple[str, dict]:
    """(family, parameters) of matrix ``name``'s stand-in at its real rows (``PAPER_SIZE``)."""
    m = suitesparse_matrix(name)
    if name in PAPER_SIZE:
        return m.standin, synthetic.check_params(m.standin, {**m.standin_params, **_box(*PAPER_SIZE[name])})
    factor = m.n / synthetic.get_generator(m.standin).rows(m.standin_params)
    return m.standin, synthetic.scaled_params(m.standin, m.standin_params, factor)


def suitesparse_matrix(name: str) -> SuiteSparseMatrix | None:
    """The registry entry of a SuiteSparse matrix: Table A.1 (``SUITESPARSE``) or ``METIS_ONLY``."""
    return SUITESPARSE.get(name) or METIS_ONLY.get(name)




@dataclass(frozen=True)
class PaperRow:
    """One row of Table A.2 (iChol) or A.3 (METIS): the transformed matrix as the paper reports it."""

    name: str
    base: str
    transform: str
    n: int
    nnz: int
    avg_wavefront: int


def _rows(transform: str, rows: list[tuple[str, int, int, int]]) -> dict[str, PaperRow]:
    return {f"{b}+{transform}": PaperRow(f"{b}+{transform}", b, transform, n, nnz, w) for b, n, nnz, w in rows}


# Table A.2: 32 matrices (bundle_adj crashed Eigen); nnz preserved by the factorization.
ICHOL_TABLE: dict[str, PaperRow] = _rows("ichol", [
    ("af_0_k101", 503625, 9027150, 195), ("af_shell7", 504855, 9046865, 668),
    ("apache2", 715176, 2766523, 79464), ("audikw_1", 943695, 39297771, 138),
    ("bmw7st_1", 141347, 3740507, 340), ("bmwcra_1", 148770, 5396386, 89),
    ("bone010", 986703, 36326514, 340), ("boneS01", 127224, 3421188, 245),
    ("boneS10", 914898, 28191660, 521), ("Bump_2911", 2911419, 65320659, 1048),
    ("consph", 83334, 3046907, 78), ("Dubcova3", 146689, 1891669, 1594),
    ("ecology2", 999999, 2997995, 142857), ("Emilia_923", 923136, 20964171, 511),
    ("Fault_639", 638802, 14626683, 422), ("Flan_1565", 1564794, 59485419, 689),
    ("G3_circuit", 1585478, 4623152, 88082), ("Geo_1438", 1437960, 32297325, 768),
    ("hood", 220542, 5494489, 1050), ("Hook_1498", 1498023, 31207734, 649),
    ("inline_1", 503712, 18660027, 679), ("ldoor", 952203, 23737339, 3317),
    ("msdoor", 415863, 10328399, 956), ("offshore", 259789, 2251231, 1114),
    ("parabolic_fem", 525825, 2100225, 19475), ("PFlow_742", 742793, 18940627, 240),
    ("Queen_4147", 4147110, 166823197, 719), ("s3dkt3m2", 90449, 1921955, 104),
    ("Serena", 1391349, 32961525, 940), ("shipsec1", 140874, 3977139, 259),
    ("StocF-1465", 1465137, 11235263, 2990), ("thermal2", 1228045, 4904179, 47232),
])

# Table A.3: 34 matrices ordered by METIS NodeND (the data set of Zhang et al., HDagg).
METIS_TABLE: dict[str, PaperRow] = _rows("metis", [
    ("af_0_k101", 503625, 9027150, 610), ("af_shell10", 1508065, 27090195, 1065),
    ("apache2", 715176, 2766523, 47678), ("audikw_1", 943695, 39297771, 1734),
    ("bmwcra_1", 148770, 5396386, 473), ("bone010", 986703, 36326514, 1326),
    ("boneS10", 914898, 28191660, 2401), ("bundle_adj", 513351, 10360701, 11407),
    ("cant", 62451, 2034917, 333), ("consph", 83334, 3046907, 247),
    ("crankseg_2", 63838, 7106348, 86), ("ecology2", 999999, 2997995, 62499),
    ("Emilia_923", 923136, 20964171, 2107), ("Fault_639", 638802, 14626683, 1458),
    ("Flan_1565", 1564794, 59485419, 2569), ("G3_circuit", 1585478, 4623152, 93263),
    ("Geo_1438", 1437960, 32297325, 2887), ("gyro", 17361, 519260, 88),
    ("hood", 220542, 5494489, 984), ("Hook_1498", 1498023, 31207734, 4059),
    ("inline_1", 503712, 18660027, 1549), ("ldoor", 952203, 23737339, 4858),
    ("m_t1", 97578, 4925574, 268), ("msdoor", 415863, 10328399, 1856),
    ("nasasrb", 54870, 1366097, 287), ("PFlow_742", 742793, 18940627, 1023),
    ("pwtk", 217918, 5926171, 511), ("raefsky4", 19779, 674195, 111),
    ("ship_003", 121728, 4103881, 494), ("shipsec8", 114919, 3384159, 456),
    ("StocF-1465", 1465137, 11235263, 11446), ("thermal2", 1228045, 4904179, 45483),
    ("tmt_sym", 726713, 2903837, 26915), ("x104", 108384, 5138004, 306),
])

