"""Distribution schemes (paper §5–§6): one file per scheme, registered in ``SCHEMES``.

A scheme is data (STYLE.md). Each file holds both forms over one shared core:

* serial ``scheme(tensor, P, *, seed=0, **params) -> Distribution`` for any P (simulation), where
  ``Distribution.policies[n]`` is an int32 array over the elements giving π_n(e) ∈ [0, P);
* parallel ``scheme_parallel(comm, block, *, seed=0, **params) -> (owners, info)`` under MPI
  (P = comm.size): ``owners[n]`` is π_n of this rank's input block (:class:`.distribute.Block`),
  equal element for element to the serial policy (tests gather and compare at 1, 2, 3 ranks).

Uni-policy schemes (MediumG, HyperG) use one array for all modes (the same object N times);
multi-policy schemes (CoarseG, Lite) build one per mode. Adding a scheme is one file plus one
line in ``SCHEMES``; :func:`.distribute.distribute` and the simulation both dispatch through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...parameters import Parameter, check_parameters

__all__ = ["Distribution", "Scheme", "Parameter", "SCHEMES", "get_scheme", "contiguous_blocks", "mode_rng"]


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
    """A registered scheme: ``name``, its serial and parallel functions, whether it builds one
    policy per mode, the paper's figure label and its declared ``parameters``."""

    name: str
    serial: Callable[..., Distribution]
    parallel: Callable[..., tuple]
    multi_policy: bool
    label: str
    description: str = ""
    parameters: dict = field(default_factory=dict)     # name -> Parameter

    def validate(self, params: dict | None) -> dict:
        """``params`` checked against :attr:`parameters`; a ValueError names the scheme, the key,
        what was expected and the known keys."""
        return check_parameters(f"scheme {self.name!r}", self.parameters, params)

    def __call__(self, tensor, nparts: int, *, seed: int = 0, **params) -> Distribution:
        return self.serial(tensor, nparts, seed=seed, **self.validate(params))


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


from .coarse import coarse, coarse_parallel  # noqa: E402  (the registry needs Distribution defined first)
from .hyper import HYPER_PARAMETERS, hyper, hyper_parallel  # noqa: E402
from .lite import lite, lite_parallel  # noqa: E402
from .medium import MEDIUM_PARAMETERS, medium, medium_parallel  # noqa: E402

SCHEMES: dict[str, Scheme] = {
    "lite": Scheme("lite", lite, lite_parallel, True, "Lite",
                   "Lite (paper §6, Figure 8): sorted slices, round-robin then bin filling"),
    "coarse": Scheme("coarse", coarse, coarse_parallel, True, "CoarseG",
                     "CoarseG: random slice order, contiguous balanced blocks per mode"),
    "medium": Scheme("medium", medium, medium_parallel, False, "MediumG",
                     "MediumG: SPLATT processor grid over randomly permuted indices", MEDIUM_PARAMETERS),
    "hyper": Scheme("hyper", hyper, hyper_parallel, False, "HyperG",
                    "HyperG: fine-grained hypergraph partitioning (Mt-KaHyPar, KM1)", HYPER_PARAMETERS),
}


def get_scheme(name: str) -> Scheme:
    """The registered scheme ``name``; an error lists the known ones."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise KeyError(f"unknown distribution scheme {name!r}; known: {', '.join(sorted(SCHEMES))}") from None
