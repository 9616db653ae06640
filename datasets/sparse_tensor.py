"""N-mode sparse tensor in coordinate format (tucker-lite §3): elements, values, per-mode slices.

The container of the data layer's tensors (readers, stores, stand-ins hand it out) and of the
Tucker code that distributes and decomposes them.

``coords`` is an ``(nnz, N)`` int64 array of 0-based indices, ``values`` a float64 array and
``dims`` the mode lengths L_1..L_N. Duplicate coordinates are summed on construction (in that
case the elements come out in lexicographic order; otherwise the input order is kept). The
mode-n slices (``Slice_n^l``: elements whose n-th index is l) are exposed CSR-like: a stable
sort of the elements by their mode-n index plus offsets, computed lazily and cached.
Everything is vectorized numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["SparseTensor", "SliceIndex", "linear_keys", "unique_sorted", "sorted_member"]


@dataclass(frozen=True)
class SliceIndex:
    """Mode-n slices: elements ``order[offsets[l]:offsets[l+1]]`` form ``Slice_n^l``."""

    mode: int
    order: np.ndarray    # int64 (nnz,), stable sort of the elements by their mode-n index
    offsets: np.ndarray  # int64 (L_n + 1,)

    @property
    def sizes(self) -> np.ndarray:
        """|Slice_n^l| for every l in [0, L_n)."""
        return np.diff(self.offsets)

    def elements(self, l: int) -> np.ndarray:
        """Element ids of slice ``l``."""
        return self.order[self.offsets[l]:self.offsets[l + 1]]


def unique_sorted(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an integer array (np.sort + mask: np.unique in NumPy 2.4 is
    ~50× slower on 1e7 int64 keys)."""
    keys = np.sort(np.asarray(keys).reshape(-1))
    if keys.size < 2:
        return keys
    keep = np.empty(keys.size, dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def sorted_member(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` occur in the sorted array ``sorted_keys``."""
    values = np.asarray(values)
    if sorted_keys.size == 0:
        return np.zeros(values.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[pos] == values


def linear_keys(coords: np.ndarray, dims) -> np.ndarray:
    """One int64 key per row of ``coords``, equal iff the coordinates are equal, increasing in
    lexicographic order. Folds modes left to right and re-ranks (dense ranks) whenever the next
    product would overflow 2**62, so it works for any dims (e.g. delicious, ~1e22 cells)."""
    nnz, nmodes = coords.shape
    if nmodes == 0 or nnz == 0:
        return np.zeros(nnz, dtype=np.int64)
    key = coords[:, 0].astype(np.int64, copy=True)
    span = int(dims[0])
    for n in range(1, nmodes):
        d = int(dims[n])
        if span * d >= 1 << 62:
            uniq = unique_sorted(key)
            key = np.searchsorted(uniq, key).astype(np.int64)
            span = len(uniq)
        key = key * d + coords[:, n]
        span *= d
    return key


class SparseTensor:
    """N-mode COO tensor: ``coords`` (nnz, N) int64 0-based, ``values`` (nnz,) float64, ``dims``."""

    def __init__(self, coords, values, dims=None, *, sum_duplicates: bool = True, check: bool = True):
        coords = np.asarray(coords)
        if coords.ndim != 2:
            raise ValueError(f"coords must be a 2-D (nnz, N) array, got shape {coords.shape}")
        coords = np.ascontiguousarray(coords, dtype=np.int64)
        values = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1))
        if values.shape[0] != coords.shape[0]:
            raise ValueError(f"{coords.shape[0]} coordinates but {values.shape[0]} values")
        nmodes = coords.shape[1]
        if nmodes < 1:
            raise ValueError("a tensor needs at least one mode")
        if dims is None:
            dims = (coords.max(axis=0) + 1) if coords.shape[0] else np.zeros(nmodes, dtype=np.int64)
        dims = tuple(int(d) for d in dims)
        if len(dims) != nmodes:
            raise ValueError(f"dims has {len(dims)} entries for {nmodes} modes")
        if check and coords.shape[0]:
            lo, hi = coords.min(axis=0), coords.max(axis=0)
            for n in range(nmodes):
                if lo[n] < 0 or hi[n] >= dims[n]:
                    raise ValueError(f"mode {n}: indices span [{lo[n]}, {hi[n]}], outside [0, {dims[n]})")
        if sum_duplicates and coords.shape[0] > 1:
            coords, values = _sum_duplicates(coords, values, dims)
        self.coords = coords
        self.values = values
        self.dims = dims
        self._slices: dict[int, SliceIndex] = {}

    # ---- shape -------------------------------------------------------------------------
    @property
    def nmodes(self) -> int:
        return len(self.dims)

    @property
    def nnz(self) -> int:
        return int(self.coords.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims

    def __repr__(self) -> str:
        return f"SparseTensor(dims={self.dims}, nnz={self.nnz})"

    # ---- slices ------------------------------------------------------------------------
    def slice_sizes(self, mode: int) -> np.ndarray:
        """|Slice_mode^l| for every l (int64, length L_mode), without sorting."""
        if mode in self._slices:
            return self._slices[mode].sizes
        return np.bincount(self.coords[:, mode], minlength=self.dims[mode]).astype(np.int64)

    def slices(self, mode: int) -> SliceIndex:
        """The cached CSR-like slice index of ``mode`` (stable sort by the mode's index)."""
        if mode not in self._slices:
            idx = self.coords[:, mode]
            order = np.argsort(idx, kind="stable").astype(np.int64)
            sizes = np.bincount(idx, minlength=self.dims[mode])
            offsets = np.zeros(self.dims[mode] + 1, dtype=np.int64)
            np.cumsum(sizes, out=offsets[1:])
            self._slices[mode] = SliceIndex(mode, order, offsets)
        return self._slices[mode]

    def nonempty_slices(self, mode: int) -> int:
        """L_n as used by the metrics: the number of non-empty mode-n slices."""
        return int(np.count_nonzero(self.slice_sizes(mode)))

    def stats(self, quantiles=(0.5, 0.9, 0.99)) -> dict:
        """nnz, dims and, per mode, non-empty slices, the largest slice and its share of nnz,
        and quantiles of the non-empty slice sizes."""
        modes = []
        for n in range(self.nmodes):
            sizes = self.slice_sizes(n)
            nonempty = sizes[sizes > 0]
            largest = int(nonempty.max()) if nonempty.size else 0
            modes.append({
                "mode": n,
                "length": self.dims[n],
                "slices": int(nonempty.size),
                "largest_slice": largest,
                "largest_share": largest / self.nnz if self.nnz else 0.0,
                "quantiles": {float(q): float(np.quantile(nonempty, q)) if nonempty.size else 0.0
                              for q in quantiles},
            })
        return {"nnz": self.nnz, "dims": list(self.dims), "modes": modes}

    # ---- misc --------------------------------------------------------------------------
    @cached_property
    def norm(self) -> float:
        """Frobenius norm."""
        return float(np.sqrt(np.dot(self.values, self.values)))

    def to_dense(self) -> np.ndarray:
        """Dense ndarray (small tensors only: tests)."""
        out = np.zeros(self.dims)
        np.add.at(out, tuple(self.coords.T), self.values)
        return out


def _sum_duplicates(coords: np.ndarray, values: np.ndarray, dims) -> tuple[np.ndarray, np.ndarray]:
    """Sum entries with equal coordinates; keep the input order when there are none."""
    keys = linear_keys(coords, dims)
    if unique_sorted(keys).size == keys.size:      # fast check (unstable sort) first
        return coords, values
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    new = np.empty(sk.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return (np.ascontiguousarray(coords[order[starts]]),
            np.add.reduceat(values[order], starts))
