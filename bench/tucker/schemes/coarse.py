"""CoarseG (paper §5, following Smith & Karypis [25]): whole slices, random order, contiguous blocks.

Along every mode n independently: shuffle the slice ids with a seeded permutation (stream
``(seed, n)``), then cut the shuffled sequence into P contiguous blocks of balanced element
counts (``contiguous_blocks``: each slice goes to the block holding its midpoint in the running
element count). All slices are good (R_n^sum = L_n); E_n^max suffers from large slices.

One core, :func:`coarse_policies`, for both forms: the slice sizes are an Allreduce of the local
bincounts (a copy on :class:`..mpi.LocalComm`, which the serial form uses on the whole tensor);
everything else is computed redundantly from the same seed.
"""
from __future__ import annotations

import numpy as np

from ..mpi import LocalComm, allreduce
from .distribution import Distribution, contiguous_blocks, mode_rng

__all__ = ["coarse", "coarse_parallel", "coarse_policies"]


def coarse_policies(comm, coords: np.ndarray, dims, nparts: int, seed: int) -> list:
    """π_n (int32) of the elements ``coords`` (this rank's share; the union over ``comm`` is the
    tensor) for every mode, for ``nparts`` processors."""
    out = []
    for n, length in enumerate(dims):
        index = coords[:, n]
        sizes = allreduce(comm, np.bincount(index, minlength=length).astype(np.int64))
        perm = mode_rng(seed, n).permutation(length)
        slice_owner = np.empty(length, dtype=np.int32)
        slice_owner[perm] = contiguous_blocks(sizes[perm], nparts)
        out.append(slice_owner[index])
    return out


def coarse(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """CoarseG along every mode (multi-policy), for any number of processors."""
    policies = coarse_policies(LocalComm(), tensor.coords, tensor.dims, int(nparts), seed)
    return Distribution("coarse", int(nparts), tuple(policies), True, {"seed": int(seed)})


def coarse_parallel(comm, block, *, seed: int = 0) -> tuple[list, dict]:
    """CoarseG of this rank's input block under MPI (P = comm.size): (policies, info)."""
    return coarse_policies(comm, block.coords, block.dims, comm.size, seed), {}
