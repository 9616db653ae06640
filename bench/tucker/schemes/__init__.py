"""Distribution schemes (paper §5–§6): one function per scheme, registered in ``SCHEMES``.

A scheme is data (STYLE.md): ``scheme(tensor, P, *, seed=0, **params) -> Distribution``, where
``Distribution.policies[n]`` is an int32 array over the elements giving π_n(e) ∈ [0, P).
Uni-policy schemes (MediumG, HyperG) use one array for all modes (the same object N times);
multi-policy schemes (CoarseG, Lite) build one per mode. Adding a scheme is one file plus one
line in ``SCHEMES``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Distribution", "Scheme", "SCHEMES", "get_scheme", "contiguous_blocks", "mode_rng"]


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


@dataclass(frozen=True)
class Scheme:
    """A registered scheme: ``name``, the function, and whether it builds one policy per mode."""

    name: str
    func: Callable[..., Distribution]
    multi_policy: bool
    description: str = ""

    def __call__(self, tensor, nparts: int, **params) -> Distribution:
        return self.func(tensor, nparts, **params)


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


from .coarse import coarse  # noqa: E402  (the registry needs Distribution defined first)
from .hyper import hyper  # noqa: E402
from .lite import lite  # noqa: E402
from .medium import medium  # noqa: E402

SCHEMES: dict[str, Scheme] = {
    "lite": Scheme("lite", lite, True, "Lite (paper §6, Figure 8): sorted slices, round-robin then bin filling"),
    "coarse": Scheme("coarse", coarse, True, "CoarseG: random slice order, contiguous balanced blocks per mode"),
    "medium": Scheme("medium", medium, False, "MediumG: SPLATT processor grid over randomly permuted indices"),
    "hyper": Scheme("hyper", hyper, False, "HyperG: fine-grained hypergraph partitioning (Mt-KaHyPar, KM1, ε=0.03)"),
}


def get_scheme(name: str) -> Scheme:
    """The registered scheme ``name``; an error lists the known ones."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise KeyError(f"unknown distribution scheme {name!r}; known: {', '.join(sorted(SCHEMES))}") from None
