"""Matrix transforms before a triangular solve: the lower triangle the SpTrSV kernels take.

The paper's other two data sets (sptrsv-elasticity §5.2.2-5.2.3) are
transforms: ``metis_nd`` (full matrix -> full matrix, METIS nested dissection, before
``lower_triangle``) and ``ichol`` (full matrix -> lower factor, Eigen's AMD + incomplete Cholesky).
``apply_transform`` fixes the order: what a data set with a ``transform`` key loads as.

The kernels assume float64 values, int32 indices, sorted columns and the diagonal as the last
entry of every row (OneStopParallel's convention).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import DatasetError


#: how the errors below number rows: as a Matrix Market file does, so a row can be found in it
ROWS_FROM_1 = "rows counted from 1, as in Matrix Market"


def lower_triangle(A) -> sp.csr_matrix:
    """The lower triangle of ``A`` incl. the diagonal, in the kernels' CSR layout.

    float64 data, int32 indptr/indices, duplicates summed, sorted columns; explicit zeros stay
    (they are part of the pattern, hence of the DAG); every diagonal entry present, nonzero and
    finite, hence last in its row. Errors say what is wrong with the matrix; callers name its file.
    """
    if not sp.issparse(A):
        A = np.asarray(A)
        if A.ndim != 2:
            raise DatasetError(f"expected a 2-D matrix, got {A.ndim} dimensions")
    if A.shape[0] != A.shape[1]:
        raise DatasetError(f"expected a square matrix, got {A.shape[0]} x {A.shape[1]}")
    if _in_layout(A):  # already the kernels' lower triangle (a paper-size stand-in): no copy
        return A
    L = sp.tril(sp.csr_matrix(A, dtype=np.float64), k=0, format="csr")
    L.sum_duplicates()
    L.sort_indices()
    n = L.shape[0]
    if L.nnz >= np.iinfo(np.int32).max:
        raise DatasetError(f"its lower triangle has {L.nnz:,} nonzeros; the SpTrSV kernels' int32 indices "
                           f"address at most {np.iinfo(np.int32).max - 1:,}")
    if not np.all(np.isfinite(L.data)):
        bad = int(np.searchsorted(L.indptr, np.flatnonzero(~np.isfinite(L.data))[0], side="right") - 1)
        raise DatasetError(f"row {bad + 1} has a non-finite value ({ROWS_FROM_1})")
    indptr = L.indptr.astype(np.int32)
    indices = L.indices.astype(np.int32)
    ends = indptr[1:]
    nonempty = ends > indptr[:-1]
    last_col = np.full(n, -1, dtype=np.int64)
    last_col[nonempty] = indices[ends[nonempty] - 1]
    has_diag = last_col == np.arange(n)
    zero_diag = np.zeros(n, dtype=bool)
    zero_diag[has_diag] = L.data[ends[has_diag] - 1] == 0
    bad_rows = np.flatnonzero(~has_diag | zero_diag)
    if bad_rows.size:
        raise DatasetError(f"row {int(bad_rows[0]) + 1} has no nonzero diagonal entry "
                           f"({bad_rows.size} such rows; {ROWS_FROM_1}); a triangular solve needs every diagonal")
    out = sp.csr_matrix((L.data, indices, indptr), shape=L.shape, copy=False)
    out.has_sorted_indices = True
    return out


def _in_layout(A) -> bool:
    """Whether ``A`` is already what ``lower_triangle`` returns: float64 CSR, int32 indices, sorted
    without duplicates, every row ending in its nonzero finite diagonal (hence lower); O(n) plus
    one pass over the values."""
    if not (sp.isspmatrix_csr(A) and A.dtype == np.float64 and A.indptr.dtype == np.int32
            and A.indices.dtype == np.int32 and A.shape[0] > 0 and A.has_canonical_format):
        return False
    ends = A.indptr[1:].astype(np.int64)
    if np.any(ends <= A.indptr[:-1]):
        return False
    if not np.array_equal(A.indices[ends - 1], np.arange(A.shape[0], dtype=np.int32)):
        return False
    return bool(np.all(A.data[ends - 1] != 0) and np.isfinite(A.data).all())


# --- the paper's other two data sets (sptrsv-elasticity §5.2.2-5.2.3) -----------------------------

TRANSFORM_VERSION = 1
"""Part of every transformed data set's checksum: bump when a transform's output changes."""

TRANSFORMS = ("ichol", "metis")
"""Names a data set entry's ``transform`` may take; ``apply_transform`` says what each does."""

NON_SYMMETRIC_INPUT = {
    "ichol": "iChol factors the symmetric matrix of its lower triangle (Eigen's selfadjointView<Lower>), "
             "its upper triangle is not read",
    "metis": "METIS orders the pattern of A + Aᵀ and the lower triangle of the permuted matrix is solved",
}
"""What each transform makes of a matrix that is not symmetric (the paper's inputs are SPD)."""


class IcholBreakdown(DatasetError):
    """iChol met a non-positive pivot in every attempt: the data set has no factor to solve with.
    ``checksum`` and ``source`` name the transformed data set when the loader knows them, so a
    sweep can store an error row for each of its points instead of refusing the whole sweep."""

    def __init__(self, message: str, *, checksum: str | None = None, source: str | None = None,
                 symmetric: bool | None = None):
        super().__init__(message)
        self.checksum, self.source, self.symmetric = checksum, source, symmetric


def is_symmetric(A) -> bool:
    """Whether a square sparse matrix equals its transpose (pattern and values)."""
    return (A != A.T).nnz == 0

SKSPARSE_HINT = ("iChol needs CHOLMOD's AMD: apt-get install libsuitesparse-dev (or conda install suitesparse), "
                 "then pip install scikit-sparse==0.4.16")


def _square_csr(A, what: str) -> sp.csr_matrix:
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise DatasetError(f"{what}: expected a square matrix, got shape {A.shape[0]}x{A.shape[1]}")
    A.sum_duplicates()
    A.sort_indices()
    return A


def _symmetric_from_lower(A) -> sp.csr_matrix:
    """The symmetric matrix whose lower triangle is A's (Eigen's ``selfadjointView<Lower>``)."""
    low = sp.tril(A, k=0, format="csr")
    full = (low + sp.tril(low, k=-1).T).tocsr()
    full.sort_indices()
    return full


def _adjacency(A) -> tuple[np.ndarray, np.ndarray]:
    """CSR graph of A's symmetrized pattern without the diagonal (what METIS takes)."""
    P = sp.csr_matrix((np.ones(A.nnz, dtype=np.int8), A.indices, A.indptr), shape=A.shape)
    G = (P + P.T).tocsr()
    G.setdiag(0)
    G.eliminate_zeros()
    G.sort_indices()
    return G.indptr.astype(np.int64), G.indices.astype(np.int64)


def metis_permutation(A) -> np.ndarray:
    """METIS NodeND fill-reducing order of A's symmetric pattern: ``A[perm][:, perm]`` is the reordering.

    pymetis returns (perm, iperm); perm lists the old index of each new position (iperm would
    double the fill; pymetis 2025.2).
    """
    A = _square_csr(A, "metis")
    n = A.shape[0]
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    try:
        import pymetis
    except ImportError as exc:
        raise DatasetError(f"metis: pymetis is not installed ({exc}); pip install pymetis") from None
    indptr, indices = _adjacency(A)
    perm, _iperm = pymetis.nested_dissection(adjacency=pymetis.CSRAdjacency(indptr, indices))
    perm = np.asarray(perm, dtype=np.int64)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise DatasetError(f"metis: pymetis returned no permutation of {n} rows")
    return perm


def metis_nd(A) -> sp.csr_matrix:
    """The full matrix symmetrically permuted by METIS nested dissection, P A Pᵀ (sorted CSR)."""
    A = _square_csr(A, "metis")
    perm = metis_permutation(A)
    out = A[perm][:, perm].tocsr()
    out.sort_indices()
    return out


def amd_permutation(A) -> np.ndarray:
    """CHOLMOD's AMD order (with its postorder) of A's symmetric pattern, via scikit-sparse."""
    try:
        from sksparse import cholmod
    except ImportError:
        raise DatasetError(f"ichol: scikit-sparse is not installed; {SKSPARSE_HINT}") from None
    A = sp.csc_matrix(A, dtype=np.float64)
    if A.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    factor = cholmod.analyze(A, mode="simplicial", ordering_method="amd")
    return np.asarray(factor.P(), dtype=np.int64)


@dataclass(frozen=True)
class IcholFactor:
    """Result of ``ichol_factor``: L (lower CSR, kernels' layout) of S P A Pᵀ S ≈ L Lᵀ.

    ``perm``: A[perm][:, perm] is the ordered matrix; ``scale``: S's diagonal (after ordering);
    ``shift``: added to the scaled diagonal in the successful attempt; ``attempts``: 1 = no breakdown.
    """

    L: sp.csr_matrix
    perm: np.ndarray
    scale: np.ndarray
    shift: float
    attempts: int


def ichol_factor(A, *, perm=None, initial_shift: float = 1e-3, max_tries: int = 10,
                 reset_dropped: bool = False) -> IcholFactor:
    """Eigen 3.4's ``IncompleteCholesky<double, Lower, AMDOrdering<int>>`` on A's lower triangle.

    Steps (Eigen 3.4's ``IncompleteCholesky``): order by AMD (``perm``; default CHOLMOD's AMD), scale
    symmetrically by 1/sqrt(‖col_j‖₂), shift the diagonal by ``initial_shift`` − min diagonal
    only when the scaled diagonal has a value <= 0, then the Lin–Moré column factorization
    (``spbench.kernels.sptrsv._ichol``) keeping per column as many entries as it had originally; a
    non-positive pivot doubles the shift (at most ``max_tries`` attempts). nnz(L) == nnz(tril(A))
    when A has its diagonal. ``reset_dropped=True`` leaves Eigen's stale-marker quirk out.
    """
    from spbench.kernels.sptrsv import _ichol

    A = _symmetric_from_lower(_square_csr(A, "ichol"))
    n = A.shape[0]
    perm = amd_permutation(A) if perm is None else np.asarray(perm, dtype=np.int64)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise DatasetError(f"ichol: perm is not a permutation of {n} rows")
    B = A[perm][:, perm]
    U = sp.triu(B, k=0, format="csr")  # CSR of the upper triangle = CSC of the lower one
    U.sort_indices()
    rows = np.repeat(np.arange(n), np.diff(U.indptr))
    missing = np.setdiff1d(np.arange(n), rows[U.indices == rows])
    if missing.size:  # Eigen inserts absent diagonals as explicit zeros (the shift then applies)
        coo = U.tocoo()
        U = sp.csr_matrix((np.r_[coo.data, np.zeros(missing.size)],
                           (np.r_[coo.row, missing], np.r_[coo.col, missing])), shape=(n, n))
        U.sort_indices()
        rows = np.repeat(np.arange(n), np.diff(U.indptr))
    if U.nnz >= np.iinfo(np.int32).max:
        raise DatasetError(f"ichol: {U.nnz} nonzeros do not fit int32 indices")
    vals = U.data.astype(np.float64, copy=True)
    cols = U.indices.astype(np.int32, copy=True)  # row indices of the lower triangle
    colptr = U.indptr.astype(np.int64)
    offdiag = cols != rows
    sq = vals * vals
    norm2 = np.bincount(rows, weights=sq, minlength=n) + np.bincount(cols[offdiag], weights=sq[offdiag], minlength=n)
    root = np.sqrt(np.sqrt(norm2))
    scale = np.ones(n)
    big = root > np.finfo(np.float64).tiny
    scale[big] = 1.0 / root[big]
    vals *= scale[rows] * scale[cols]
    if not np.all(np.isfinite(vals)):
        raise DatasetError("ichol: the matrix has a non-finite value")
    mindiag = float(vals[colptr[:-1]].min()) if n else 0.0
    shift = initial_shift - mindiag if mindiag <= 0 else 0.0
    ok, shift, attempts = _ichol.factorize(colptr, cols, vals, shift, initial_shift, max_tries, reset_dropped)
    if not ok:
        raise IcholBreakdown(f"ichol: breakdown (non-positive pivot) in all {attempts} attempts, last shift {shift:g}")
    L = sp.csc_matrix((vals, cols, colptr), shape=(n, n)).tocsr()
    L.sort_indices()
    return IcholFactor(lower_triangle(L), perm, scale, float(shift), int(attempts))


def ichol(A) -> sp.csr_matrix:
    """The incomplete Cholesky factor L of A as the paper's iChol data set has it (``ichol_factor``)."""
    return ichol_factor(A).L


def apply_transform(name: str | None, A) -> sp.csr_matrix:
    """The lower-triangular CSR a data set with transform ``name`` solves with, from its full matrix A.

    None: ``lower_triangle(A)``. ``"metis"``: ``lower_triangle(metis_nd(A))`` (permute, then take
    the lower triangle). ``"ichol"``: ``ichol(A)`` (the factor is already lower; reordering by AMD
    is part of it). The result is a fixed point of ``lower_triangle``.
    """
    if name is None:
        return lower_triangle(A)
    if name == "metis":
        return lower_triangle(metis_nd(A))
    if name == "ichol":
        return ichol(A)
    raise DatasetError(f"unknown transform {name!r}; expected one of {', '.join(TRANSFORMS)}")
