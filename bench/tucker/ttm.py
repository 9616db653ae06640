"""The local TTM of HOOI (tucker-lite-distribution §3, Appendix A): per mode, the Kronecker
product of the N−1 factor rows of every element times its value, accumulated into the compact
penultimate matrix Z_n (one row per mode-n slice held, K̂_n = Π_{j≠n} K_j columns, lowest mode
fastest). The Cython kernel ``spbench.kernels._ttm`` does the work over a :class:`TTMPlan`
(elements grouped by compact row, prepared once per mode).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg.cython_blas  # noqa: F401  (the TTM kernel's dgemm: load it before threadpoolctl looks)

from .tensor import SparseTensor, unique_sorted

__all__ = ["TTMPlan", "ttm", "ttm_scratch_len", "khat", "ttm_flops", "unfold", "fold"]


@dataclass(frozen=True)
class TTMPlan:
    """Elements of one mode's policy on this rank, grouped by compact row.

    ``rows``: the distinct mode-n slice ids held (increasing), one per compact row;
    ``row_ptr``/``elems``: ``elems[row_ptr[r]:row_ptr[r+1]]`` are the elements of compact row r;
    """

    mode: int
    rows: np.ndarray      # int64 (R,)
    row_ptr: np.ndarray   # int64 (R + 1,)
    elems: np.ndarray     # int64 (|E_n^p|,)

    @property
    def nrows(self) -> int:
        return int(self.rows.shape[0])

    @classmethod
    def build(cls, tensor: SparseTensor, mode: int, elements: np.ndarray | None = None) -> "TTMPlan":
        """Plan for ``elements`` (an index array into the tensor; default: all of them)."""
        if elements is None:
            sl = tensor.slices(mode)
            sizes = sl.sizes
            rows = np.flatnonzero(sizes).astype(np.int64)
            row_ptr = np.zeros(rows.size + 1, dtype=np.int64)
            np.cumsum(sizes[rows], out=row_ptr[1:])
            return cls(mode, rows, row_ptr, np.ascontiguousarray(sl.order, dtype=np.int64))
        elements = np.ascontiguousarray(elements, dtype=np.int64).reshape(-1)
        idx = tensor.coords[elements, mode]
        order = np.argsort(idx, kind="stable")
        rows = unique_sorted(idx)
        row_ptr = np.empty(rows.size + 1, dtype=np.int64)
        row_ptr[:-1] = np.searchsorted(idx[order], rows, side="left")
        row_ptr[-1] = elements.size
        return cls(mode, rows.astype(np.int64), row_ptr, np.ascontiguousarray(elements[order]))


def khat(K, mode: int) -> int:
    """K̂_n = Π_{j≠n} K_j."""
    return int(np.prod([int(k) for j, k in enumerate(K) if j != mode], dtype=np.int64))


def ttm_flops(nelements: int, K, mode: int) -> float:
    """FLOPs of the TTM kernel: per element the final multiply–add over K̂_n (2·K̂_n) plus the
    partial Kronecker products of the earlier modes (Σ of their running lengths)."""
    ks = [int(k) for j, k in enumerate(K) if j != mode]
    partial, length = 0, 1
    for k in ks[:-1]:
        length *= k
        partial += length
    return float(nelements) * (2.0 * khat(K, mode) + partial)


def ttm(tensor: SparseTensor, plan: TTMPlan, factors, *, out: np.ndarray | None = None,
        scratch: np.ndarray | None = None, threads: int = 1) -> np.ndarray:
    """Compact penultimate matrix Z (plan.nrows × K̂_n) of ``plan.mode`` (Cython kernel).

    ``factors``: N C-contiguous float64 (L_j, K_j) matrices (``factors[mode]`` unused; pass any
    (L, K) array, its K is ignored); ``out`` and ``scratch`` (threads × ``ttm_scratch_len``)
    are reused when given.  With ``threads`` > 1 BLAS is held at one thread during the call.
    """
    from spbench.kernels import _ttm

    n = plan.mode
    N = tensor.nmodes
    if len(factors) != N:
        raise ValueError(f"{len(factors)} factors for a {N}-mode tensor")
    fs = []
    for j, F in enumerate(factors):
        if j == n:
            fs.append(None)
            continue
        F = np.asarray(F)
        if F.ndim != 2 or F.shape[0] != tensor.dims[j]:
            raise ValueError(f"factor {j} must be ({tensor.dims[j]}, K_{j}), got {F.shape}")
        if F.dtype != np.float64 or not F.flags.c_contiguous:
            F = np.ascontiguousarray(F, dtype=np.float64)
        fs.append(F)
    kh = int(np.prod([F.shape[1] for j, F in enumerate(fs) if j != n], dtype=np.int64))
    threads = max(1, int(threads))
    if out is None:
        out = np.empty((plan.nrows, kh))
    elif out.shape != (plan.nrows, kh) or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 ({plan.nrows}, {kh}) array")
    if scratch is None:
        scratch = np.empty((threads, ttm_scratch_len([F.shape[1] if F is not None else 0 for F in fs], n)))
    fs[n] = np.zeros((1, 1))
    if threads > 1:                 # never nest BLAS threads inside the OpenMP region
        with _blas_controller().limit(limits=1, user_api="blas"):
            _ttm.ttm_rows(tensor.coords, tensor.values, fs, n, plan.row_ptr, plan.elems, out,
                          scratch, threads)
    else:
        _ttm.ttm_rows(tensor.coords, tensor.values, fs, n, plan.row_ptr, plan.elems, out, scratch,
                      threads)
    return out


_CONTROLLER = None


def _blas_controller():
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def ttm_scratch_len(K, mode: int) -> int:
    """Doubles of per-thread scratch the TTM kernel needs for ``mode`` (core sizes ``K``)."""
    from spbench.kernels import _ttm

    return int(_ttm.scratch_len([int(k) for k in K], mode))


def unfold(X: np.ndarray, mode: int) -> np.ndarray:
    """Mode-n unfolding, columns in lexicographic order with the lowest other mode fastest."""
    return np.reshape(np.moveaxis(X, mode, 0), (X.shape[mode], -1), order="F")


def fold(M: np.ndarray, mode: int, shape) -> np.ndarray:
    """Inverse of :func:`unfold`."""
    shape = tuple(shape)
    rest = shape[:mode] + shape[mode + 1:]
    return np.moveaxis(np.reshape(M, (shape[mode],) + rest, order="F"), 0, mode)
