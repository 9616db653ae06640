"""The iChol and METIS transforms (sptrsv-elasticity §5.2.2-5.2.3) and transformed data set entries."""
import numpy as np
import pytest
import scipy.sparse as sp

from spbench.datasets import registry, synthetic
from spbench.datasets.registry import ICHOL_TABLE, METIS_TABLE, SUITESPARSE, DatasetError, resolve
from spbench.datasets.transforms import (SKSPARSE_HINT, apply_transform, ichol, ichol_factor, lower_triangle,
                                         metis_nd, metis_permutation)
from spbench.datasets.matrix_market import write_matrix

try:
    from sksparse import cholmod  # noqa: F401
    HAVE_SKSPARSE = True
except ImportError:
    HAVE_SKSPARSE = False
needs_sksparse = pytest.mark.skipif(not HAVE_SKSPARSE, reason=SKSPARSE_HINT)


def random_spd(n: int, density: float, seed: int) -> sp.csr_matrix:
    """Symmetric, strictly diagonally dominant (so SPD) with a random pattern and random signs."""
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=density, random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))
    S = sp.csr_matrix(R + R.T)
    S.setdiag(0)
    S.eliminate_zeros()
    d = np.asarray(abs(S).sum(axis=1)).ravel() + rng.uniform(0.1, 1.0, n)
    A = (S + sp.diags(d)).tocsr()
    A.sort_indices()
    return A


def permutation_matrix(perm) -> sp.csr_matrix:
    n = len(perm)
    return sp.csr_matrix((np.ones(n), (np.arange(n), perm)), shape=(n, n))


def eigen_reference(A, perm, initial_shift=1e-3):
    """A line-by-line Python port of Eigen 3.4's IncompleteCholesky::factorize (std::list as lists)."""
    B = sp.triu(sp.csr_matrix(A)[perm][:, perm], format="csr")  # = CSC of the lower triangle
    B.sort_indices()
    n = B.shape[0]
    col_ptr, row0, val0 = B.indptr.copy(), B.indices.copy(), B.data.astype(float).copy()
    scale = np.zeros(n)
    for j in range(n):
        for k in range(col_ptr[j], col_ptr[j + 1]):
            scale[j] += val0[k] ** 2
            if row0[k] != j:
                scale[row0[k]] += val0[k] ** 2
    scale = np.sqrt(np.sqrt(scale))
    scale = np.where(scale > np.finfo(float).tiny, 1 / scale, 1.0)
    for j in range(n):
        for k in range(col_ptr[j], col_ptr[j + 1]):
            val0[k] *= scale[j] * scale[row0[k]]
    mindiag = min(val0[col_ptr[j]] for j in range(n))
    shift = initial_shift - mindiag if mindiag <= 0 else 0.0

    def update_list(rows, vals, col, jk, first, lists):
        if jk < col_ptr[col + 1]:
            minpos = jk + int(np.argmin(rows[jk:col_ptr[col + 1]]))
            if rows[minpos] != rows[jk]:
                rows[jk], rows[minpos] = rows[minpos], rows[jk]
                vals[jk], vals[minpos] = vals[minpos], vals[jk]
            first[col] = jk
            lists[rows[jk]].append(col)

    def quick_split(row, ind, ncut):
        ncut -= 1
        first, last = 0, len(row) - 1
        if ncut < first or ncut > last:
            return
        while True:
            mid = first
            key = abs(row[mid])
            for j in range(first + 1, last + 1):
                if abs(row[j]) > key:
                    mid += 1
                    row[mid], row[j] = row[j], row[mid]
                    ind[mid], ind[j] = ind[j], ind[mid]
            row[mid], row[first] = row[first], row[mid]
            ind[mid], ind[first] = ind[first], ind[mid]
            if mid > ncut:
                last = mid - 1
            elif mid < ncut:
                first = mid + 1
            if mid == ncut:
                return

    for _ in range(10):
        rows, vals = list(row0), list(val0)
        first, lists, pattern = [0] * n, [[] for _ in range(n)], [-1] * n
        for j in range(n):
            vals[col_ptr[j]] += shift
        ok = True
        for j in range(n):
            diag = vals[col_ptr[j]]
            cv, ci = [], []
            for i in range(col_ptr[j] + 1, col_ptr[j + 1]):
                pattern[rows[i]] = len(cv)
                cv.append(vals[i])
                ci.append(rows[i])
            for k in lists[j]:
                jk = first[k]
                v = vals[jk]
                jk += 1
                for i in range(jk, col_ptr[k + 1]):
                    l = rows[i]
                    if pattern[l] < 0:
                        pattern[l] = len(cv)
                        cv.append(vals[i] * v)
                        ci.append(l)
                    elif pattern[l] < len(cv):
                        cv[pattern[l]] -= vals[i] * v
                    # else: Eigen writes into a work slot beyond the column (stale marker): no effect
                update_list(rows, vals, k, jk, first, lists)
            if diag <= 0:
                ok = False
                break
            r = np.sqrt(diag)
            vals[col_ptr[j]] = r
            cv = [c / r for c in cv]
            for c, i in zip(cv, ci):
                vals[col_ptr[i]] -= c * c
            p = col_ptr[j + 1] - col_ptr[j] - 1
            quick_split(cv, ci, p)
            for cpt, i in enumerate(range(col_ptr[j] + 1, col_ptr[j + 1])):
                vals[i], rows[i] = cv[cpt], ci[cpt]
                pattern[ci[cpt]] = -1
            update_list(rows, vals, j, col_ptr[j] + 1, first, lists)
        if ok:
            L = sp.csc_matrix((np.array(vals), np.array(rows), col_ptr), shape=(n, n)).tocsr()
            L.sort_indices()
            return L, scale, shift
        shift = max(initial_shift, 2 * shift)
    raise AssertionError("reference: breakdown")


# --- METIS --------------------------------------------------------------------------------------

def test_metis_is_a_symmetric_permutation():
    A = random_spd(300, 0.02, seed=1)
    perm = metis_permutation(A)
    assert sorted(perm) == list(range(300))
    assert not np.array_equal(perm, np.arange(300))
    P = permutation_matrix(perm)
    Ap = metis_nd(A)
    assert abs(Ap - P @ A @ P.T).max() == 0
    assert Ap.nnz == A.nnz
    np.testing.assert_allclose(np.linalg.eigvalsh(Ap.toarray()), np.linalg.eigvalsh(A.toarray()), atol=1e-10)


def test_metis_nested_dissection_on_a_grid():
    A = synthetic.generate("lap2d-5pt", {"grid": 30})
    L = apply_transform("metis", A)
    assert L.nnz == sp.tril(A).nnz
    assert abs(lower_triangle(L) - L).max() == 0
    # nested dissection: the last vertices are a separator, far fewer levels than the grid's 59 wavefronts
    from spbench.kernels.sptrsv import _dag
    assert _dag.levels(L.indptr, L.indices).max() + 1 < 59


# --- iChol --------------------------------------------------------------------------------------

@needs_sksparse
def test_ichol_laplacian_keeps_pattern_and_ic0_relation():
    A = synthetic.generate("lap2d-5pt", {"grid": 20})
    f = ichol_factor(A)
    B = A[f.perm][:, f.perm]
    low = sp.tril(B, format="csr")
    assert f.L.nnz == low.nnz == sp.tril(A).nnz
    assert (abs(f.L) != 0).astype(int).__ne__((abs(low) != 0).astype(int)).nnz == 0  # same pattern
    assert f.shift == 0 and f.attempts == 1
    # Without Eigen's stale-marker quirk, IC(0) holds on the off-diagonal pattern; the diagonal
    # also subtracted the dropped fill: (L Lᵀ)_jj - (S P A Pᵀ S)_jj = -Σ dropped² <= 0.
    g = ichol_factor(A, reset_dropped=True)
    M = sp.diags(g.scale) @ B @ sp.diags(g.scale)
    coo = sp.tril(M).tocoo()
    diff = np.asarray((g.L @ g.L.T).tocsr()[coo.row, coo.col]).ravel() - coo.data
    off = coo.row != coo.col
    assert np.abs(diff[off]).max() < 1e-12
    assert diff[~off].max() < 1e-12 and diff[~off].min() > -0.05


@needs_sksparse
def test_ichol_matches_eigen_reference_on_random_spd():
    A = random_spd(120, 0.05, seed=3)
    f = ichol_factor(A)
    L_ref, scale_ref, shift_ref = eigen_reference(A, f.perm)
    assert f.L.nnz == L_ref.nnz == sp.tril(A).nnz
    np.testing.assert_allclose(f.scale, scale_ref)
    assert f.shift == shift_ref
    assert (abs(f.L) != 0).astype(int).__ne__((abs(L_ref) != 0).astype(int)).nnz == 0
    np.testing.assert_allclose(f.L.toarray(), L_ref.toarray(), atol=1e-13)
    moved = (abs(f.L) != 0).astype(int) - (abs(sp.tril(A[f.perm][:, f.perm])) != 0).astype(int)
    assert moved.nnz > 0  # on a random pattern some entries move (REFERENCES: ~4%)


@needs_sksparse
def test_ichol_layout_and_nnz_on_random_spd():
    A = random_spd(2000, 0.004, seed=5)
    L = ichol(A)
    assert L.nnz == sp.tril(A).nnz
    assert L.indptr.dtype == np.int32 and L.indices.dtype == np.int32 and L.has_sorted_indices
    assert np.all(L.indices[L.indptr[1:] - 1] == np.arange(2000))  # diagonal last
    assert abs(lower_triangle(L) - L).max() == 0 and apply_transform("ichol", A).nnz == L.nnz


def test_ichol_shift_doubles_on_breakdown():
    A = sp.csr_matrix(np.array([[1.0, 1.05], [1.05, 1.0]]))  # indefinite, positive diagonal
    f = ichol_factor(A, perm=[0, 1])
    assert f.attempts == 8 and f.shift == pytest.approx(0.064)  # 0, 1e-3, 2e-3, ..., 64e-3
    z = ichol_factor(sp.csr_matrix(np.array([[0.0, 1e-3], [1e-3, 1.0]])), perm=[0, 1])
    assert (z.shift, z.attempts) == (1e-3, 1)  # min diagonal <= 0: shifted by 1e-3 - min from the start
    with pytest.raises(DatasetError, match="breakdown .* 10 attempts"):
        ichol_factor(sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 1.0]])), perm=[0, 1])


# --- data set entries ---------------------------------------------------------------------------

@needs_sksparse
def test_transform_key_through_resolve():
    ds = resolve({"lap2d-5pt": {"grid": 12, "transform": "ichol"}})
    assert (ds.name, ds.kind, ds.transform, ds.base) == ("lap2d-5pt[grid=12]+ichol", "synthetic", "ichol",
                                                         "lap2d-5pt[grid=12]")
    assert resolve("lap2d-5pt[grid=12]+ichol").name == ds.name
    loaded = ds.load()
    plain = resolve({"lap2d-5pt": {"grid": 12}}).load()
    assert loaded.name == ds.name and loaded.checksum != plain.checksum
    assert abs(loaded.matrix - ichol(plain.matrix)).max() == 0
    assert abs(lower_triangle(loaded.matrix) - loaded.matrix).max() == 0  # what the runner does
    assert resolve({"lap2d-5pt": {"grid": 12, "transform": "metis"}}).load().checksum != loaded.checksum


def test_transform_names_and_errors(tmp_path):
    assert resolve({"Flan_1565": {"transform": "metis"}}).name == "Flan_1565+metis"
    assert resolve("Flan_1565+metis").transform == "metis"
    assert resolve({"cant+metis": None}).kind == "suitesparse"  # Table A.3 only
    assert resolve({"rgg-spd": {"transform": None}}).transform is None
    path = tmp_path / "my.mtx"
    write_matrix(path, synthetic.generate("lap2d-5pt", {"grid": 4}))
    ds = resolve({"path": str(path), "transform": "metis"})
    assert ds.name == "my+metis" and ds.kind == "file"
    assert ds.load().matrix.nnz == 16 + 24
    with pytest.raises(DatasetError, match=r"Flan_1565.*unknown transform 'amd'; expected one of ichol, metis"):
        resolve({"Flan_1565": {"transform": "amd"}})
    with pytest.raises(DatasetError, match="unknown transform 'foo'"):
        resolve("lap2d-5pt+foo")
    with pytest.raises(DatasetError, match="conflicting transforms"):
        resolve({"Flan_1565+ichol": {"transform": "metis"}})


def test_transformed_real_matrix_is_cached(tiny_server, private_cache):
    ds = resolve("Tiny_8+metis")
    first = ds.load()
    files = list(registry.transformed_dir().glob("*.npz"))
    assert [f.stem for f in files] == [first.checksum] and first.source == "real"
    again = ds.load(fetch=False)
    assert again.checksum == first.checksum and abs(again.matrix - first.matrix).max() == 0


def test_paper_tables():
    assert len(ICHOL_TABLE) == 32 and "bundle_adj+ichol" not in ICHOL_TABLE
    assert len(METIS_TABLE) == 34
    for row in ICHOL_TABLE.values():
        m = SUITESPARSE[row.base]
        assert (row.n, row.nnz) == (m.n, m.nnz)  # the factor keeps nnz
    for row in METIS_TABLE.values():
        m = registry.suitesparse_matrix(row.base)
        assert (row.n, row.nnz) == (m.n, m.nnz)
        assert resolve(row.name).name == row.name
    assert ICHOL_TABLE["ecology2+ichol"].avg_wavefront == 142857
    assert METIS_TABLE["Flan_1565+metis"].avg_wavefront == 2569
