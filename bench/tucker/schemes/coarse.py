"""CoarseG (paper §5, following Smith & Karypis [25]): whole slices, random order, contiguous blocks.

Along every mode n independently: shuffle the slice ids with a seeded permutation (stream
``(seed, n)``), then cut the shuffled sequence into P contiguous blocks of balanced element
counts (``contiguous_blocks``: each slice goes to the block holding its midpoint in the running
element count). All slices are good (R_n^sum = L_n); E_n^max suffers from large slices.

One core, :func:`coarse_slice_owners` (slice sizes → the owner of every slice), for the three
forms: serial and parallel (:func:`coarse_policies`: the slice sizes are an Allreduce of the local
bincounts, a copy on :class:`..mpi.LocalComm`; everything else is computed redundantly from the
same seed) and streamed (:func:`coarse_stream`: the owners applied chunk by chunk).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from spbench.tucker.mpi.collectives import LocalComm, allreduce
from .distribution import PAIR_BLOCK, Distribution, PolicyStream, contiguous_blocks, permuted_cut

__all__ = ["coarse", "coarse_parallel", "coarse_policies", "coarse_slice_owners", "coarse_stream"]


def coarse_slice_owners(sizes: np.ndarray, mode: int, nparts: int, seed: int) -> np.ndarray:
    """The owner (int32) of every slice of ``mode`` from the slice sizes (the whole tensor's)."""
    return permuted_cut(sizes, mode, seed, lambda ordered: contiguous_blocks(ordered, nparts), np.int32)


def coarse_policies(comm, coords: np.ndarray, dims, nparts: int, seed: int) -> list:
    """π_n (int32) of the elements ``coords`` (this rank's share; the union over ``comm`` is the
    tensor) for every mode, for ``nparts`` processors."""
    out = []
    for n, length in enumerate(dims):
        index = coords[:, n]
        sizes = allreduce(comm, np.bincount(index, minlength=length).astype(np.int64))
        out.append(coarse_slice_owners(sizes, n, nparts, seed)[index])
    return out


class _CoarseStream(PolicyStream):
    def __init__(self, slice_sizes: list, nparts: int, seed: int):
        super().__init__("coarse", nparts, len(slice_sizes), True, {"seed": int(seed)})
        self.owners = [coarse_slice_owners(np.asarray(s, dtype=np.int64), n, nparts, seed)
                       for n, s in enumerate(slice_sizes)]
        self._nonempty = [np.flatnonzero(np.asarray(s) > 0) for s in slice_sizes]

    def fill_jobs(self, lo: int, cols: list, out: np.ndarray) -> list:
        """One gather per mode."""
        return [partial(np.take, self.owners[n], index, out=out[n, :len(index)]) for n, index in enumerate(cols)]

    def slice_owners(self, mode: int):
        """Whole slices: every element of slice l goes to ``owners[mode][l]``."""
        return self.owners[mode]

    def slice_pairs(self, mode: int):
        """Whole slices: every non-empty slice has one sharer, its owner."""
        ids, owners = self._nonempty[mode], self.owners[mode]
        return ((ids[lo:lo + PAIR_BLOCK], owners[ids[lo:lo + PAIR_BLOCK]]) for lo in range(0, ids.size, PAIR_BLOCK))


def coarse_stream(slice_sizes: list, nparts: int, *, seed: int = 0) -> PolicyStream:
    """CoarseG applied chunk by chunk (``slice_sizes``: per mode, the tensor's slice sizes)."""
    return _CoarseStream(slice_sizes, int(nparts), seed)


def coarse(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """CoarseG along every mode (multi-policy), for any number of processors."""
    policies = coarse_policies(LocalComm(), tensor.coords, tensor.dims, int(nparts), seed)
    return Distribution("coarse", int(nparts), tuple(policies), True, {"seed": int(seed)})


def coarse_parallel(comm, block, *, seed: int = 0) -> tuple[list, dict]:
    """CoarseG of this rank's input block under MPI (P = comm.size): (policies, info)."""
    return coarse_policies(comm, block.coords, block.dims, comm.size, seed), {}
