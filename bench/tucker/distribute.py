"""A scheme's distribution computed IN PARALLEL under MPI (tucker-lite-distribution §5, §6.1).

Every rank starts with a contiguous block of about nnz/P elements of the input (:class:`Block`:
global element ids ``offset .. offset + m``), computes π_n of its block elements with the
scheme's parallel form (``SCHEMES[name].parallel``, the same policy as the serial form, see
:mod:`.schemes`), and ends with, per mode n, the elements it owns under π_n
(:class:`LocalElements`, sorted by global id): one Alltoall of counts, then per policy an Alltoallv
per field moves every element to its owner (uni-policy schemes move one copy). Counts and
displacements are MPI ints: a rank may send at most 2**31 − 1 words per call.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .mpi import Exchange, block_range
from .schemes import get_scheme

__all__ = ["Block", "LocalElements", "DistributedTensor", "block_range", "read_block", "split_block",
           "redistribute", "distribute", "gather_policies"]


@dataclass
class Block:
    """This rank's contiguous piece of the input: elements ``offset .. offset + len(values)``."""

    coords: np.ndarray     # (m, N) int64
    values: np.ndarray     # (m,) float64
    offset: int            # global id of the first element
    nnz: int               # global number of elements
    dims: tuple

    @property
    def nmodes(self) -> int:
        return len(self.dims)

    @property
    def gids(self) -> np.ndarray:
        return np.arange(self.offset, self.offset + self.values.shape[0], dtype=np.int64)


def read_block(store, comm) -> Block:
    """This rank's contiguous block of a tensor store (``spbench.datasets.tensor_store``): only
    that range of the memory-mapped columns is read, never the whole tensor (DESIGN.md §4)."""
    from spbench.datasets.tensor_store import read_block as read_range
    from spbench.datasets.tensor_store import read_header

    header = read_header(store)
    lo, hi = block_range(header.nnz, comm.size, comm.rank)
    coords, values = read_range(store, lo, hi)
    return Block(coords, values, lo, int(header.nnz), tuple(int(d) for d in header.dims))


def split_block(tensor, comm) -> Block:
    """This rank's block of an in-memory SparseTensor (tests)."""
    lo, hi = block_range(tensor.nnz, comm.size, comm.rank)
    return Block(np.ascontiguousarray(tensor.coords[lo:hi]), np.ascontiguousarray(tensor.values[lo:hi]),
                 lo, tensor.nnz, tuple(tensor.dims))


@dataclass
class LocalElements:
    """Elements this rank owns under one policy, sorted by global id."""

    gids: np.ndarray       # (m,) int64
    coords: np.ndarray     # (m, N) int64
    values: np.ndarray     # (m,) float64

    @property
    def size(self) -> int:
        return int(self.gids.shape[0])


def redistribute(comm, block: Block, owners: list) -> list:
    """Move every element to its owner under every policy in ``owners`` (a list of int32 block
    policies: N for multi-policy, 1 for uni-policy). Returns one LocalElements per policy.

    Per policy, the block's elements are ordered by destination (a stable radix sort, so storage
    order is kept) and sent field by field (global ids, coordinates, values) by a precomputed
    Alltoallv straight into the output arrays: the pieces arrive by source rank, and blocks are
    contiguous and increasing by rank, so they are in global storage order with no reordering.
    Peak memory beyond the block and the output: one field of one policy's send buffer and the
    permutation (8·(N + 1) bytes per block element)."""
    P, N = comm.size, block.nmodes
    m = block.values.shape[0]
    narrow = np.uint16 if P < (1 << 16) else np.int64
    sent = np.stack([np.bincount(o, minlength=P) for o in owners], axis=1).astype(np.int64)   # (P, S)
    got = np.empty_like(sent)
    comm.Alltoall(sent, got)
    out = []
    for s, o in enumerate(owners):
        order = np.argsort(np.asarray(o).astype(narrow), kind="stable") if m else np.zeros(0, np.int64)
        exchange = Exchange(sent[:, s], got[:, s])
        gids = exchange(comm, order + block.offset)
        coords = exchange(comm, block.coords[order], width=N)
        values = exchange(comm, block.values[order])
        del order
        out.append(LocalElements(gids, coords.reshape(-1, N), values))
    return out


@dataclass
class DistributedTensor:
    """A scheme's result on this rank: per mode the elements it owns under π_n."""

    scheme: str
    dims: tuple
    nnz: int
    nparts: int
    rank: int
    multi_policy: bool
    sets: list                       # N LocalElements (the same object N times if uni-policy)
    block_owners: list               # N int32 arrays: π_n of this rank's INPUT block (tests)
    block_offset: int
    times: dict = field(default_factory=dict)   # local seconds: policy, redistribute, dist
    info: dict = field(default_factory=dict)

    @property
    def nmodes(self) -> int:
        return len(self.dims)


def distribute(comm, block: Block, scheme: str, *, seed: int = 0, params: dict | None = None) -> DistributedTensor:
    """Compute ``scheme``'s policies in parallel (its registered parallel form) and move the
    elements to their owners. ``params`` are checked against the scheme's declared parameters.
    ``times['dist']`` (local) covers both steps; for HyperG ``info['partition_seconds']`` is the
    offline partition time."""
    try:
        sch = get_scheme(scheme)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    params = sch.validate(params)
    info: dict = {"seed": int(seed)}
    t0 = time.perf_counter()
    owners, extra = sch.parallel(comm, block, seed=seed, **params)
    info.update(extra)
    t1 = time.perf_counter()
    sets = redistribute(comm, block, owners if sch.multi_policy else owners[:1])
    if not sch.multi_policy:
        sets = sets * block.nmodes
    t2 = time.perf_counter()
    return DistributedTensor(scheme, tuple(block.dims), int(block.nnz), comm.size, comm.rank, sch.multi_policy,
                             sets, owners, int(block.offset),
                             {"policy": t1 - t0, "redistribute": t2 - t1, "dist": t2 - t0}, info)


def gather_policies(comm, dt: DistributedTensor, root: int = 0):
    """The global policies (N int32 arrays over all elements) on ``root``, None elsewhere (tests)."""
    out = []
    for n in range(dt.nmodes):
        parts = comm.gather(dt.block_owners[n], root=root)
        out.append(np.concatenate(parts).astype(np.int32) if comm.rank == root else None)
    return out if comm.rank == root else None
