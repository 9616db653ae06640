"""Counter-based normal random numbers: value (i, j) depends only on (seed, stream, i, j).

The distributed HOOI draws row l of a start matrix (or of a Lanczos breakdown vector) at the rank
that owns row l (tucker-lite-distribution §3 "Factor Matrix Transfer"), so the numbers must not
depend on which rank draws them or on P. A SplitMix64 hash of the counter gives two uniforms per
entry and Box–Muller makes them normal; vectorized numpy on uint64 (wrap-around is the point).
"""
from __future__ import annotations

import numpy as np

__all__ = ["counter_normal"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer of ``x + golden`` (uint64 array in, uint64 array out)."""
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


_CHUNK_ROWS = 1 << 15     # rows per pass: the temporaries stay a few MB whatever len(ids) is


def counter_normal(seed: int, stream: int, ids, width: int) -> np.ndarray:
    """Standard normals of shape (len(ids), width): entry (r, j) is a function of
    (seed, stream, ids[r], j) only."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    width = int(width)
    out = np.empty((ids.size, width))
    for lo in range(0, ids.size, _CHUNK_ROWS):
        out[lo:lo + _CHUNK_ROWS] = _normals(seed, stream, ids[lo:lo + _CHUNK_ROWS], width)
    return out


def _normals(seed: int, stream: int, ids: np.ndarray, width: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        key = _splitmix(np.array([int(seed) & (2**64 - 1)], dtype=np.uint64))
        key = _splitmix(key ^ np.uint64(int(stream) & (2**64 - 1)))
        ctr = (ids.astype(np.uint64)[:, None] * np.uint64(max(width, 1)) * np.uint64(2)
               + np.arange(2 * width, step=2, dtype=np.uint64)[None, :])
        a = _splitmix(ctr ^ key)
        b = _splitmix((ctr + np.uint64(1)) ^ key)
    u1 = ((a >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53   # (0, 1)
    u2 = (b >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
