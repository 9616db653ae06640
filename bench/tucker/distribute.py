"""A scheme's distribution computed IN PARALLEL under MPI (tucker-lite-distribution §5, §6.1).

Every rank starts with a contiguous block of about nnz/P elements of the input (:class:`Block`:
global element ids ``offset .. offset + m``), computes π_n of its block elements with the
scheme's parallel form (``SCHEMES[name].parallel``, the same policy as the serial form, see
:mod:`.schemes`), and ends with, per mode n, the elements it owns under π_n
(:class:`LocalElements`, sorted by global id): ONE Alltoallv moves every element to its owner for
every mode (records ``[gid, coords..., value bits]`` tagged by policy; uni-policy schemes move
one copy). Counts and displacements are MPI ints: a rank may send at most 2**31 − 1 words per call.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .mpi import alltoallv, block_range
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
    """ONE Alltoallv moving every element to its owner under every policy in ``owners`` (a list of
    int32 block policies: N for multi-policy, 1 for uni-policy). Returns one LocalElements per
    policy. Peak memory: the send records, then the received ones and the output (the send
    buffer is freed before the output is built)."""
    P, N, S = comm.size, block.nmodes, len(owners)
    m = block.values.shape[0]
    W = N + 2
    # stable sort of the S·m (policy, element) items by (destination, policy), on a narrow key
    narrow = np.uint16 if P * S < (1 << 16) else np.int64
    key = np.empty(S * m, dtype=narrow)
    for s, o in enumerate(owners):
        np.multiply(o, S, out=key[s * m:(s + 1) * m], casting="unsafe")
        key[s * m:(s + 1) * m] += s
    pertag = np.bincount(key, minlength=P * S).reshape(P, S).astype(np.int64)   # items per (dest, policy)
    order = np.argsort(key, kind="stable")
    del key
    np.remainder(order, max(m, 1), out=order)                                   # item -> block element
    sendbuf = np.empty((S * m, W), dtype=np.int64)
    sendbuf[:, 0] = order
    sendbuf[:, 0] += block.offset
    sendbuf[:, 1:N + 1] = block.coords[order]
    sendbuf[:, N + 1] = block.values.view(np.int64)[order]
    del order
    recv_pertag = np.empty_like(pertag)
    comm.Alltoall(pertag, recv_pertag)
    recv, _ = alltoallv(comm, sendbuf, pertag.sum(axis=1), width=W)
    del sendbuf
    # per source, items ordered by policy; every piece is sorted by gid (blocks are contiguous
    # and increasing by rank, the sort is stable), so a policy's pieces in source order keep the
    # global storage order
    seg = np.zeros(P * S + 1, dtype=np.int64)
    np.cumsum(recv_pertag.reshape(-1), out=seg[1:])
    out = []
    for s in range(S):
        lo, hi = seg[s:P * S:S], seg[s + 1:P * S + 1:S]
        size = int((hi - lo).sum())
        gids = np.empty(size, dtype=np.int64)
        coords = np.empty((size, N), dtype=np.int64)
        values = np.empty(size, dtype=np.int64)
        at = 0
        for a, b in zip(lo.tolist(), hi.tolist()):
            gids[at:at + b - a] = recv[a:b, 0]
            coords[at:at + b - a] = recv[a:b, 1:N + 1]
            values[at:at + b - a] = recv[a:b, N + 1]
            at += b - a
        out.append(LocalElements(gids, coords, values.view(np.float64)))
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
