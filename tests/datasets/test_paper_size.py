"""The paper-size stand-ins (sptrsv-elasticity Tables A.1-A.3 at the matrices' own rows): the compiled
lower-triangle generator against the numpy one, node orders expanded to dofs, the recipes."""
import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets import paper_size, synthetic
from spbench.datasets.fem_mesh import fem_mesh
from spbench.datasets.fem_mesh_lower import fem_mesh_lower, lower, mesh_grid, node_graph, tile_position
from spbench.datasets.paper_matrices import METIS_ONLY, PAPER_SIZE, SUITESPARSE, paper_size_params
from spbench.datasets.transforms import lower_triangle

CASES = [("hex8", 3, (4, 3, 2), (2, 2, 0), 0.0), ("hex27", 2, (3, 2, 2), (2, 0, 2), 0.3),
         ("tet4", 3, (4, 3, 3), (2, 3, 2), 0.2), ("fd7", 1, (5, 4, 3), (2, 2, 2), 0.0),
         ("quad4", 6, (6, 5, 1), (2, 3, 0), 0.25), ("quad9", 2, (4, 3, 1), (2, 2, 0), 0.0),
         ("quad16", 1, (4, 3, 1), (3, 0, 0), 0.1), ("tri3", 1, (7, 5, 1), (2, 2, 0), 0.3),
         ("fd5", 1, (8, 6, 1), (0, 0, 0), 0.0)]


@pytest.mark.parametrize("element, dof, cells, tiles, porosity", CASES)
def test_compiled_pattern_equals_numpy_generator(element, dof, cells, tiles, porosity):
    A = fem_mesh(element, dof, *cells, *tiles, porosity, 3)
    expected = sp.tril(A).tocsr()
    expected.sort_indices()
    L = fem_mesh_lower(element, dof, *cells, *tiles, porosity, 3)
    assert np.array_equal(L.indptr, expected.indptr) and np.array_equal(L.indices, expected.indices)
    assert L.indices.dtype == np.int32 and L.indptr.dtype == np.int32
    full = (L + sp.tril(L, k=-1).T).toarray()
    assert np.linalg.eigvalsh(full).min() > 0  # diagonally dominant: SPD
    assert lower_triangle(L) is L  # already the kernels' layout: no copy


def test_lower_triangle_still_copies_a_full_matrix():
    A = fem_mesh("quad4", 2, 3, 3, 1, 0, 0, 0, 0.0, 0)
    L = lower_triangle(A)
    assert L is not A and (abs(L - sp.tril(A)) > 0).nnz == 0


def test_node_order_expands_to_dofs():
    """Any node order gives the dof-expanded permutation of the numpy generator's matrix."""
    grid = mesh_grid("hex8", (3, 3, 2), 0.2, 1)
    position = np.random.default_rng(0).permutation(grid.nodes)
    dof = 3
    natural = fem_mesh("hex8", dof, 3, 3, 2, 0, 0, 0, 0.2, 1)
    perm = np.empty(grid.nodes, dtype=np.int64)
    perm[position] = np.arange(grid.nodes)
    dof_perm = (dof * perm[:, None] + np.arange(dof)).ravel()
    expected = sp.tril(natural[dof_perm][:, dof_perm]).tocsr()
    expected.sort_indices()
    L = lower(grid, position, dof)
    assert np.array_equal(L.indptr, expected.indptr) and np.array_equal(L.indices, expected.indices)


def test_node_graph_is_the_symmetric_adjacency():
    grid = mesh_grid("tet4", (3, 2, 2))
    indptr, indices = node_graph(grid)
    A = fem_mesh("tet4", 1, 3, 2, 2, 0, 0, 0, 0.0, 0)
    G = sp.csr_matrix(A.astype(bool).astype(np.int8))
    G.setdiag(0)
    G.eliminate_zeros()
    G.sort_indices()
    assert np.array_equal(indptr, G.indptr) and np.array_equal(indices, G.indices)


@pytest.mark.parametrize("transform", ["metis", "ichol"])
def test_node_orders_are_cached_permutations(transform, tmp_path, monkeypatch):
    if transform == "ichol":
        pytest.importorskip("sksparse")
    pytest.importorskip("pymetis")
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    grid = mesh_grid("quad4", (6, 5))
    position = paper_size._node_order(grid, transform, "x" * 64)
    assert np.array_equal(np.sort(position), np.arange(grid.nodes))
    assert (tmp_path / "paper_size" / f"{'x' * 64}.npy").is_file()
    assert np.array_equal(paper_size._node_order(grid, transform, "x" * 64), position)  # from the cache
    assert not list((tmp_path / "paper_size").glob("*.part"))


def test_every_paper_matrix_has_a_paper_size_recipe():
    for name, m in {**SUITESPARSE, **METIS_ONLY}.items():
        family, params = paper_size_params(name)
        rows = synthetic.get_generator(family).rows(params)
        assert 0.8 < rows / m.n < 1.2, name  # whole cells: gyro's 2-cell-thick plate is 0.83
    assert set(PAPER_SIZE) <= set(SUITESPARSE)


@pytest.mark.parametrize("name", ["s3dkt3m2", "consph"])
def test_small_paper_size_standins_keep_the_average_wavefront(name):
    """Table A.1's average wavefront within 1.5x at the real rows (the smallest two recipes)."""
    from spbench.kernels.sptrsv import _dag

    _, L = paper_size.paper_size_lower(SUITESPARSE[name], None)
    m = SUITESPARSE[name]
    avg = L.shape[0] / (int(_dag.levels(L.indptr, L.indices).max()) + 1)
    assert 1 / 1.5 <= avg / m.avg_wavefront <= 1.5
    assert 0.8 <= (L.nnz / L.shape[0]) / (m.nnz / m.n) <= 1.25
