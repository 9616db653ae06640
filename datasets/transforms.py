"""Matrix transforms before a triangular solve: the lower triangle the SpTrSV kernels take.

The reorderings of DESIGN.md section 7 (AMD + incomplete Cholesky, METIS nested dissection)
belong here too, each a function from a full matrix to a full matrix before ``lower_triangle``.

The kernels assume float64 values, int32 indices, sorted columns and the diagonal as the last
entry of every row (OneStopParallel's convention, REFERENCES.md "SpTrSV facts").
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .errors import DatasetError


def lower_triangle(A) -> sp.csr_matrix:
    """The lower triangle of ``A`` incl. the diagonal, in the kernels' CSR layout.

    float64 data, int32 indptr/indices, duplicates summed, sorted columns; explicit zeros stay
    (they are part of the pattern, hence of the DAG); every diagonal entry present, nonzero and
    finite, hence last in its row.
    """
    if not sp.issparse(A):
        A = np.asarray(A)
        if A.ndim != 2:
            raise DatasetError(f"lower_triangle: expected a 2-D matrix, got {A.ndim} dimensions")
    if A.shape[0] != A.shape[1]:
        raise DatasetError(f"lower_triangle: expected a square matrix, got shape {A.shape[0]}x{A.shape[1]}")
    L = sp.tril(sp.csr_matrix(A, dtype=np.float64), k=0, format="csr")
    L.sum_duplicates()
    L.sort_indices()
    n = L.shape[0]
    if L.nnz >= np.iinfo(np.int32).max:
        raise DatasetError(f"lower_triangle: {L.nnz} nonzeros do not fit int32 indices")
    if not np.all(np.isfinite(L.data)):
        bad = int(np.searchsorted(L.indptr, np.flatnonzero(~np.isfinite(L.data))[0], side="right") - 1)
        raise DatasetError(f"lower_triangle: row {bad} has a non-finite value")
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
        raise DatasetError(f"lower_triangle: row {int(bad_rows[0])} has no nonzero diagonal entry "
                           f"({bad_rows.size} such rows); a triangular solve needs every diagonal")
    out = sp.csr_matrix((L.data, indices, indptr), shape=L.shape, copy=False)
    out.has_sorted_indices = True
    return out
