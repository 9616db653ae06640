"""Random lower-triangular test matrices for the SpTrSV tests."""
import numpy as np
import pytest
import scipy.sparse as sp


def _random_lower(n, density=0.1, seed=0, diag_only_rows=0.2, shuffle=False):
    """Random well-conditioned lower-triangular CSR (int32, diagonal last); some rows diagonal-only.

    With ``shuffle`` the column indices inside each row are permuted (unsorted CSR).
    """
    rng = np.random.default_rng(seed)
    strict = sp.random(n, n, density=density, random_state=rng, format="coo")
    strict = sp.tril(strict, k=-1, format="csr")
    keep = rng.random(n) >= diag_only_rows
    strict = sp.diags(keep.astype(float)) @ strict
    strict.data = rng.uniform(-1.0, 1.0, strict.nnz)
    row_sums = np.asarray(abs(strict).sum(axis=1)).ravel()
    diag = (row_sums + rng.uniform(1.0, 2.0, n)) * rng.choice([-1.0, 1.0], n)
    L = (strict + sp.diags(diag)).tocsr()
    L.sum_duplicates()
    L.sort_indices()
    L.indices = L.indices.astype(np.int32)
    L.indptr = L.indptr.astype(np.int32)
    if shuffle:
        for i in range(n):
            lo, hi = L.indptr[i], L.indptr[i + 1]
            order = lo + rng.permutation(hi - lo)
            L.indices[lo:hi] = L.indices[order]
            L.data[lo:hi] = L.data[order]
        L.has_sorted_indices = False
    return L


def _laplacian_2d(grid):
    """2-D 5-point Laplacian on a grid x grid mesh (full symmetric matrix)."""
    T = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(grid, grid))
    S = sp.diags([-1.0, -1.0], [-1, 1], shape=(grid, grid))
    return (sp.kron(sp.eye(grid), T) + sp.kron(S, sp.eye(grid))).tocsr()


@pytest.fixture
def random_lower():
    """Factory: random_lower(n, density=0.1, seed=0, diag_only_rows=0.2, shuffle=False)."""
    return _random_lower


@pytest.fixture
def laplacian_2d():
    """Factory: laplacian_2d(grid) -> full 5-point Laplacian."""
    return _laplacian_2d


@pytest.fixture
def schedule_digest():
    """sha256[:16] of a schedule's int32 core array then superstep array (pins reference outputs)."""
    import hashlib

    def digest(s):
        raw = np.concatenate([s.core, s.superstep]).astype("<i4").tobytes()
        return hashlib.sha256(raw).hexdigest()[:16]
    return digest


@pytest.fixture(scope="session")
def patterned_lower():
    """Deterministic irregular DAG (n = 4000): row i reads some of i-1, i-7, i-13, i-64; every 5th row none."""
    from spbench.sptrsv.execute import prepare_lower
    n, rows, cols = 4000, [], []
    for i in range(n):
        if i % 5 == 0:
            continue
        for d in (1, 7, 13, 64):
            if i - d >= 0 and (i * 31 + d) % 3 != 0:
                rows.append(i)
                cols.append(i - d)
    A = sp.csr_matrix((-np.ones(len(rows)), (rows, cols)), shape=(n, n)) + 8 * sp.eye(n)
    return prepare_lower(A.tocsr())


@pytest.fixture
def chain_lower():
    """chain_lower(n): lower bidiagonal matrix, a DAG with no parallelism."""
    from spbench.sptrsv.execute import prepare_lower
    return lambda n: prepare_lower(sp.diags([np.full(n - 1, -1.0), np.full(n, 2.0)], [-1, 0]))
