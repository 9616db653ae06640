"""A distribution scheme's output (:class:`Distribution`: one owner policy per mode) and the helpers
the scheme files share (contiguous balanced blocks, per-mode random streams), tucker-lite §5–§6.

A leaf of :mod:`spbench.tucker.schemes`: the scheme files import it, the registry re-exports it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Distribution", "contiguous_blocks", "mode_rng"]


@dataclass
class Distribution:
    """A distribution scheme's output: one policy per mode over the tensor's elements."""

    scheme: str
    nparts: int
    policies: tuple          # N int32 arrays of length nnz (the same array N times if uni-policy)
    multi_policy: bool
    info: dict = field(default_factory=dict)   # scheme details: grid, km1, seed, ...

    def policy(self, mode: int) -> np.ndarray:
        """π_mode as an int32 array over the elements."""
        return self.policies[mode]

    def validate(self, nnz: int) -> None:
        """Every element has exactly one owner in [0, P) under every mode's policy."""
        for n, pol in enumerate(self.policies):
            if pol.shape != (nnz,):
                raise ValueError(f"{self.scheme}: policy of mode {n} has shape {pol.shape}, expected ({nnz},)")
            if nnz and (pol.min() < 0 or pol.max() >= self.nparts):
                raise ValueError(f"{self.scheme}: policy of mode {n} has owners outside [0, {self.nparts})")


def contiguous_blocks(sizes_in_order: np.ndarray, parts: int) -> np.ndarray:
    """Cut a sequence of items (with element counts ``sizes_in_order``) into ``parts``
    contiguous blocks of balanced element counts; returns the block (int64) of every item.

    Rule (1-D greedy by prefix sums): an item whose elements occupy [s, s + size) of the
    running total goes to block ⌊(s + size/2)·parts/total⌋, i.e. the block containing its
    midpoint. Blocks are nondecreasing along the sequence, so each is contiguous; a block's
    element count exceeds total/parts by at most half the largest item on either side.
    Empty items follow their predecessor's block.
    """
    sizes = np.asarray(sizes_in_order, dtype=np.int64)
    if sizes.size == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(sizes.sum())
    if total == 0 or parts <= 1:
        return np.zeros(sizes.size, dtype=np.int64)
    ends = np.cumsum(sizes)
    mid2 = 2 * ends - sizes                      # twice the midpoint, exact in integers
    block = (mid2 * parts) // (2 * total)
    return np.minimum(block, parts - 1).astype(np.int64)


def mode_rng(seed: int, mode: int, salt: int = 0) -> np.random.Generator:
    """An independent, reproducible random stream per (seed, mode)."""
    return np.random.default_rng([int(seed), int(mode), int(salt)])
