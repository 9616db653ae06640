"""The local TTM of HOOI (tucker-lite-distribution §3, Appendix A): per mode, the Kronecker
product of the N−1 factor rows of every element times its value, accumulated into the compact
penultimate matrix Z_n (one row per mode-n slice held, K̂_n = Π_{j≠n} K_j columns, lowest mode
fastest). Two kernels, chosen by the plan (config key ``ttm``): ``paper``, Appendix A's
element-wise form (``spbench.kernels.tucker._ttm`` over a :class:`TTMPlan`: elements grouped by compact
row), and ``csf`` (``spbench.kernels.tucker._ttm_csf`` over a :class:`.csf.CSFPlan`: leaf rows summed
along fibers, partial Kronecker products formed once per tree node, §8's future work).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np
import scipy.linalg.cython_blas  # noqa: F401  (the TTM kernel's dgemm: load it before threadpoolctl looks)

from spbench.tucker.hooi.csf import CSFPlan
from spbench.datasets.sparse_tensor import SparseTensor, unique_sorted
from spbench.tucker.hooi.variants import TTM_KINDS  # config key ``ttm``: the CSF kernel (default) or the paper's

__all__ = ["TTMPlan", "TTM_KINDS", "build_ttm_plan", "ttm", "ttm_scratch_len", "khat", "ttm_flops",
           "unfold", "fold"]


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

    @property
    def nbytes(self) -> int:
        """Bytes of the plan itself (the coordinates and values it reads are the tensor's)."""
        return int(self.rows.nbytes + self.row_ptr.nbytes + self.elems.nbytes)

    def flops(self, K) -> float:
        """Flops one TTM over this plan performs (:func:`ttm_flops`)."""
        return ttm_flops(int(self.elems.size), K, self.mode)

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


def build_ttm_plan(tensor: SparseTensor, mode: int, elements: np.ndarray | None = None, kind: str = "csf",
                   K=None, threads: int = 1):
    """The plan of kernel ``kind`` (:data:`TTM_KINDS`) for ``elements`` of ``tensor`` (default
    all); ``K`` (optional) weighs the CSF level order's flop estimate; ``threads``: the CSF build's."""
    if kind == "csf":
        return CSFPlan.build(tensor, mode, elements, K=K, threads=threads)
    if kind == "paper":
        return TTMPlan.build(tensor, mode, elements)
    raise ValueError(f"ttm must be one of {', '.join(TTM_KINDS)}, got {kind!r}")


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


def ttm(tensor: SparseTensor | None, plan, factors, *, out: np.ndarray | None = None,
        scratch: np.ndarray | None = None, threads: int = 1) -> np.ndarray:
    """Compact penultimate matrix Z (plan.nrows × K̂_n) of ``plan.mode`` (Cython kernel).

    ``plan``: a :class:`TTMPlan` over ``tensor`` or a :class:`.csf.CSFPlan` (which holds its
    elements; ``tensor`` may then be None). ``factors``: N C-contiguous float64 (L_j, K_j)
    matrices (``factors[mode]`` unused; pass any (L, K) array, its K is ignored); ``out`` and
    ``scratch`` (threads × ``ttm_scratch_len``) are reused when given.  With ``threads`` > 1 BLAS
    is held at one thread during the call.
    """
    n = plan.mode
    dims = plan.dims if isinstance(plan, CSFPlan) else tensor.dims
    N = len(dims)
    if len(factors) != N:
        raise ValueError(f"{len(factors)} factors for a {N}-mode tensor")
    fs = []
    for j, F in enumerate(factors):
        if j == n:
            fs.append(None)
            continue
        F = np.asarray(F)
        if F.ndim != 2 or F.shape[0] != dims[j]:
            raise ValueError(f"factor {j} must be ({dims[j]}, K_{j}), got {F.shape}")
        if F.dtype != np.float64 or not F.flags.c_contiguous:
            F = np.ascontiguousarray(F, dtype=np.float64)
        fs.append(F)
    K = [F.shape[1] if F is not None else 1 for F in fs]
    kh = khat(K, n)
    threads = max(1, int(threads))
    if out is None:
        out = np.empty((plan.nrows, kh))
    elif out.shape != (plan.nrows, kh) or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 ({plan.nrows}, {kh}) array")
    if scratch is None:
        scratch = np.empty((threads, ttm_scratch_len(K, n)))
    if isinstance(plan, CSFPlan):
        from spbench.kernels.tucker import _ttm_csf

        args = (list(plan.ptr), list(plan.ids), plan.values, [None] + [fs[j] for j in plan.order[1:]],
                plan.column_perm(K), out, scratch, threads)
        call = _ttm_csf.ttm_csf
    else:
        from spbench.kernels.tucker import _ttm

        fs[n] = np.zeros((1, 1))
        args = (tensor.coords, tensor.values, fs, n, plan.row_ptr, plan.elems, out, scratch, threads)
        call = _ttm.ttm_rows
    if threads > 1:                 # never nest BLAS threads inside the OpenMP region
        with _blas_controller().limit(limits=1, user_api="blas"):
            call(*args)
    else:
        call(*args)
    return out


_CONTROLLER = None


def _blas_controller():
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def ttm_scratch_len(K, mode: int) -> int:
    """Doubles of per-thread scratch either TTM kernel needs for ``mode`` (core sizes ``K``),
    whatever level order a CSF tree of that mode has."""
    from spbench.kernels.tucker import _ttm, _ttm_csf

    K = [int(k) for k in K]
    others = [j for j in range(len(K)) if j != mode]
    csf = max(_ttm_csf.layout([K[mode]] + [K[j] for j in perm])[2] for perm in permutations(others))
    return int(max(_ttm.scratch_len(K, mode), csf))


def unfold(X: np.ndarray, mode: int) -> np.ndarray:
    """Mode-n unfolding, columns in lexicographic order with the lowest other mode fastest."""
    return np.reshape(np.moveaxis(X, mode, 0), (X.shape[mode], -1), order="F")


def fold(M: np.ndarray, mode: int, shape) -> np.ndarray:
    """Inverse of :func:`unfold`."""
    shape = tuple(shape)
    rest = shape[:mode] + shape[mode + 1:]
    return np.moveaxis(np.reshape(M, (shape[mode],) + rest, order="F"), 0, mode)
