"""A distribution scheme's output (:class:`Distribution`: one owner policy per mode) and the helpers
the scheme files share (contiguous balanced blocks, per-mode random streams), tucker-lite §5–§6.

A scheme's policies can also be applied chunk by chunk in storage order (:class:`PolicyStream`),
which is how a simulated point streams a tensor store without a per-element array of the whole
tensor; :meth:`Distribution.stream` serves in-memory policies through the same interface.

A leaf of :mod:`spbench.tucker.schemes`: the scheme files import it, the registry re-exports it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

__all__ = ["Distribution", "PolicyStream", "contiguous_blocks", "mode_rng", "permuted_cut"]


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

    def stream(self) -> "PolicyStream":
        """These policies served chunk by chunk (:class:`PolicyStream`)."""
        return _HeldPolicies(self)


#: slices per block of :meth:`PolicyStream.slice_pairs` (bounded memory on tens of millions of slices)
PAIR_BLOCK = 1 << 22


class PolicyStream:
    """A scheme's policies for ``nparts`` ranks, applied to consecutive chunks of the elements in
    storage order (tucker-lite §5–§6: every scheme decides per slice from the slice sizes, then
    places elements). ``rows`` policies are filled per chunk: one per mode (multi-policy) or one
    for all modes (uni-policy). Stateful schemes restart at element 0 with :meth:`restart`."""

    def __init__(self, scheme: str, nparts: int, nmodes: int, multi_policy: bool, info: dict | None = None):
        self.scheme, self.nparts, self.nmodes = scheme, int(nparts), int(nmodes)
        self.multi_policy, self.info = bool(multi_policy), dict(info or {})

    @property
    def rows(self) -> int:
        return self.nmodes if self.multi_policy else 1

    def restart(self) -> None:
        """Start again at the first element (a new pass over the store)."""

    def fill(self, lo: int, cols: list, out: np.ndarray) -> None:
        """``out[j, :m]`` = policy j of elements lo .. lo + m − 1, whose coordinates are ``cols``
        (one array per mode); chunks come in storage order, each once per pass. A scheme
        overrides this or :meth:`fill_jobs` (each defaults to the other)."""
        for job in self.fill_jobs(lo, cols, out):
            job()

    def fill_jobs(self, lo: int, cols: list, out: np.ndarray) -> list:
        """Callables that together do :meth:`fill` and may run at the same time on different
        threads (a scheme whose policy rows are independent gives one per row)."""
        return [partial(self.fill, lo, cols, out)]

    def slice_pairs(self, mode: int):
        """The distinct (slice, rank) pairs of ``mode`` as an iterable of ``(slices, ranks)`` blocks
        (bounded memory), when the scheme knows them from its per-slice decisions (no pass over the
        elements); None otherwise."""
        return None

    def slice_owners(self, mode: int):
        """σ (int32, one rank per slice of ``mode``) when π_mode places whole slices, i.e. every
        element of slice l goes to σ[l] (CoarseG, tucker-lite §5): then a rank's CSF prefix counts
        are sums of per-slice counts (:mod:`..slice_prefixes`); None otherwise."""
        return None


class _HeldPolicies(PolicyStream):
    """A :class:`Distribution`'s policies, held in memory, served as a stream."""

    def __init__(self, dist: Distribution):
        super().__init__(dist.scheme, dist.nparts, len(dist.policies), dist.multi_policy, dist.info)
        self._policies = dist.policies

    def fill(self, lo: int, cols: list, out: np.ndarray) -> None:
        m = len(cols[0])
        for j in range(self.rows):
            out[j, :m] = self._policies[j][lo:lo + m]


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


def permuted_cut(sizes: np.ndarray, mode: int, seed: int, cut, dtype) -> np.ndarray:
    """The part of every index of ``mode`` when the indices, in the seeded random order of stream
    ``(seed, mode)``, are cut by ``cut(sizes in that order)`` (CoarseG's blocks, MediumG's layers)."""
    length = sizes.shape[0]
    perm = mode_rng(seed, mode).permutation(length)
    part = np.empty(length, dtype=dtype)
    part[perm] = cut(sizes[perm])
    return part
