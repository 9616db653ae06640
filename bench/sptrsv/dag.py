"""The dependency DAG G_A of a lower-triangular sparse matrix (sptrsv-elasticity §2.1, Eqs. 2.2-2.4)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spbench.kernels.sptrsv import _dag


def check_lower(L: sp.csr_matrix) -> None:
    """Raise ValueError unless L is square int32 CSR, strictly lower off the diagonal, diagonal last."""
    if not sp.issparse(L) or L.format != "csr":
        raise ValueError(f"expected a scipy CSR matrix, got {type(L).__name__}")
    n, m = L.shape
    if n != m:
        raise ValueError(f"matrix must be square, got shape {L.shape}")
    if L.indptr.dtype != np.int32 or L.indices.dtype != np.int32:
        raise ValueError("CSR indptr/indices must be int32 (use execute.prepare_lower)")
    if n == 0:
        raise ValueError("matrix is empty (n = 0)")
    lengths = np.diff(L.indptr)
    empty = np.flatnonzero(lengths == 0)
    if empty.size:
        raise ValueError(f"row {empty[0]} has no entries (diagonal missing)")
    last = L.indices[L.indptr[1:] - 1]
    rows = np.arange(n, dtype=np.int32)
    bad = np.flatnonzero(last != rows)
    if bad.size:
        raise ValueError(f"row {bad[0]}: last entry is column {last[bad[0]]}, expected the diagonal "
                         "(need lower-triangular CSR with sorted indices, diagonal last)")
    row_of = np.repeat(rows, lengths)
    off = np.ones(L.nnz, dtype=bool)
    off[L.indptr[1:] - 1] = False
    bad = np.flatnonzero(off & ((L.indices >= row_of) | (L.indices < 0)))
    if bad.size:
        k = bad[0]
        raise ValueError(f"entry ({row_of[k]}, {L.indices[k]}) is not strictly below the diagonal")


class DAG:
    """G_A = (V, E) with E = {(j, i) : A_ij != 0, i != j} and vertex weights = row nnz (Eq. 2.4).

    Vertices are row ids 0..n-1; parents of i are the off-diagonal columns of row i (CSR
    ``parent_ptr``/``parent_idx``), children the transpose (``child_ptr``/``child_idx``, sorted).
    """

    def __init__(self, L: sp.csr_matrix):
        check_lower(L)
        self.n = int(L.shape[0])
        self.nnz = int(L.nnz)
        self.weights = np.diff(L.indptr).astype(np.int64)
        off = np.ones(self.nnz, dtype=bool)
        off[L.indptr[1:] - 1] = False
        self.parent_ptr = (L.indptr - np.arange(self.n + 1, dtype=np.int32)).astype(np.int32)
        self.parent_idx = np.ascontiguousarray(L.indices[off], dtype=np.int32)
        pattern = sp.csr_matrix(
            (np.ones(self.parent_idx.size, dtype=np.int8), self.parent_idx, self.parent_ptr),
            shape=(self.n, self.n),
        )
        transposed = pattern.T.tocsr()
        transposed.sort_indices()
        self.child_ptr = transposed.indptr.astype(np.int32)
        self.child_idx = transposed.indices.astype(np.int32)
        self._levels: np.ndarray | None = None

    @property
    def n_edges(self) -> int:
        """|E|: off-diagonal nonzeros."""
        return int(self.parent_idx.size)

    def parents(self, v: int) -> np.ndarray:
        """In-neighbours of v (rows j < v that row v reads)."""
        return self.parent_idx[self.parent_ptr[v]:self.parent_ptr[v + 1]]

    def children(self, v: int) -> np.ndarray:
        """Out-neighbours of v (rows that read x_v)."""
        return self.child_idx[self.child_ptr[v]:self.child_ptr[v + 1]]

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All edges (src, dst) as two int32 arrays, src = parent, dst = child, grouped by child."""
        dst = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.parent_ptr))
        return self.parent_idx, dst

    def levels(self) -> np.ndarray:
        """Wavefront index of every vertex: longest path (in edges) from a source; cached."""
        if self._levels is None:
            self._levels = _dag.levels(self.parent_ptr, self.parent_idx)
        return self._levels

    @property
    def wavefronts(self) -> int:
        """Number of wavefronts (level sets), Table A.1."""
        return int(self.levels().max()) + 1

    @property
    def avg_wavefront(self) -> float:
        """n / wavefronts, the average wavefront size of Table A.1 (shown rounded down)."""
        return self.n / self.wavefronts

    def __repr__(self) -> str:
        return f"DAG(n={self.n}, nnz={self.nnz}, wavefronts={self.wavefronts})"
