"""CoarseG (paper §5, following Smith & Karypis [25]): whole slices, random order, contiguous blocks.

Along every mode n independently: shuffle the slice ids with a seeded permutation (stream
``(seed, n)``), then cut the shuffled sequence into P contiguous blocks of balanced element
counts (``contiguous_blocks``: each slice goes to the block holding its midpoint in the running
element count). All slices are good (R_n^sum = L_n); E_n^max suffers from large slices.
"""
from __future__ import annotations

import numpy as np

from . import Distribution, contiguous_blocks, mode_rng

__all__ = ["coarse", "coarse_mode"]


def coarse_mode(index: np.ndarray, length: int, nparts: int, rng: np.random.Generator) -> np.ndarray:
    """π_n (int32) for one mode: owner of every element = block of its slice."""
    sizes = np.bincount(index, minlength=length)
    perm = rng.permutation(length)
    slice_owner = np.empty(length, dtype=np.int32)
    slice_owner[perm] = contiguous_blocks(sizes[perm], nparts)
    return slice_owner[index]


def coarse(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """CoarseG along every mode (multi-policy)."""
    policies = tuple(coarse_mode(tensor.coords[:, n], tensor.dims[n], nparts, mode_rng(seed, n))
                     for n in range(tensor.nmodes))
    return Distribution("coarse", int(nparts), policies, True, {"seed": int(seed)})
