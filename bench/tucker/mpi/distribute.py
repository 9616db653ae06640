"""A scheme's distribution computed IN PARALLEL under MPI (tucker-lite-distribution §5, §6.1).

Every rank starts with a contiguous block of about nnz/P elements of the input (:class:`Block`:
global element ids ``offset .. offset + m``), computes π_n of its block elements with the
scheme's parallel form (``SCHEMES[name].parallel``, the same policy as the serial form, see
:mod:`.schemes`), and ends with, per mode n, the elements it owns under π_n
(:class:`LocalElements`, sorted by global id): per policy one Alltoall of counts, then an
Alltoallv per field moves every element to its owner (uni-policy schemes move one copy). Counts
and displacements are MPI ints: a rank may send at most 2**31 − 1 words per call. Indices travel
and stay as int32 when every mode fits (§7.3 counts 4 bytes per index).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from spbench.tucker.mpi.collectives import Exchange, block_range
from spbench.tucker.schemes import get_scheme

__all__ = ["Block", "LocalElements", "DistributedTensor", "block_range", "index_dtype", "read_block",
           "split_block", "redistribute", "distribute", "gather_policies"]


@dataclass
class Block:
    """This rank's contiguous piece of the input: elements ``offset .. offset + len(values)``."""

    coords: np.ndarray     # (m, N) indices: int32 when read from a store (:func:`index_dtype`)
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


def index_dtype(dims):
    """One index dtype for all modes (4 bytes per index, §7.3): the store's widest column dtype."""
    from spbench.datasets.tensor_store import index_dtype as column_dtype
    return max((column_dtype(d) for d in dims), default=np.dtype(np.int32), key=lambda dt: dt.itemsize)


def read_block(store, comm) -> Block:
    """This rank's contiguous block of a tensor store (``spbench.datasets.tensor_store``): only that
    range of each column file is read, by plain reads straight into the block's
    arrays (no mapping: mapped pages would count in the rank's resident size), indices as
    :func:`index_dtype`. ``coords`` is a (m, N) view with contiguous columns."""
    from spbench.datasets.tensor_store import read_header

    header = read_header(store)
    lo, hi = block_range(header.nnz, comm.size, comm.rank)
    cols = np.empty((header.nmodes, hi - lo), dtype=index_dtype(header.dims))
    for n in range(header.nmodes):
        _read_range(header.path / f"coord{n}.npy", header.nnz, lo, cols[n])
    values = np.empty(hi - lo, dtype=np.float64)
    _read_range(header.path / "values.npy", header.nnz, lo, values)
    return Block(cols.T, values, lo, int(header.nnz), tuple(int(d) for d in header.dims))


def _read_range(path, nnz: int, lo: int, out: np.ndarray, chunk: int = 1 << 22) -> None:
    """Items ``lo .. lo + len(out)`` of the 1-D ``.npy`` file ``path`` into ``out`` (converted
    chunk by chunk when the file's dtype differs)."""
    from spbench.datasets.tensor_store import DatasetError

    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(fh)
        if shape != (int(nnz),) or fortran:
            raise DatasetError(f"{path}: damaged store (a column's shape {shape} is not ({nnz},))")
        fh.seek(fh.tell() + lo * dtype.itemsize)
        m = out.shape[0]
        if dtype == out.dtype:
            view = memoryview(out.view(np.uint8))
            done = 0
            while done < view.nbytes:
                got = fh.readinto(view[done:])
                if not got:
                    raise DatasetError(f"{path}: damaged store (the column ends early)")
                done += got
            return
        for a in range(0, m, chunk):
            part = np.fromfile(fh, dtype=dtype, count=min(chunk, m - a))
            if part.shape[0] != min(chunk, m - a):
                raise DatasetError(f"{path}: damaged store (the column ends early)")
            out[a:a + part.shape[0]] = part


def split_block(tensor, comm) -> Block:
    """This rank's block of an in-memory SparseTensor (tests)."""
    lo, hi = block_range(tensor.nnz, comm.size, comm.rank)
    return Block(np.ascontiguousarray(tensor.coords[lo:hi]), np.ascontiguousarray(tensor.values[lo:hi]),
                 lo, tensor.nnz, tuple(tensor.dims))


@dataclass
class LocalElements:
    """Elements this rank owns under one policy, in global storage order."""

    gids: np.ndarray | None    # (m,) int64 global ids (None when not asked for)
    coords: np.ndarray     # (m, N) indices (:func:`index_dtype`)
    values: np.ndarray     # (m,) float64

    @property
    def size(self) -> int:
        held = next((a for a in (self.values, self.coords, self.gids) if a is not None), None)
        return 0 if held is None else int(held.shape[0])


def redistribute(comm, block: Block, owners: list, *, ids: bool = True, release: bool = False) -> list:
    """Move every element to its owner under every policy in ``owners`` (a list of int32 block
    policies: N for multi-policy, 1 for uni-policy). Returns one LocalElements per policy.

    Per policy, the block's elements are ordered by destination (a stable counting sort, so
    storage order is kept) and sent field by field (global ids when ``ids``, each coordinate
    column as :func:`index_dtype`, values) by a precomputed Alltoallv straight into the output
    arrays: the pieces arrive by source rank, and blocks are contiguous and increasing by rank,
    so they are in global storage order with no reordering. Peak memory beyond the block and the
    output: the int32 order and one field's send buffer (8 bytes per block element).
    ``release``: drop each policy from ``owners`` once its elements moved. On one rank nothing
    moves: every set is the block itself (no copy)."""
    from spbench.kernels.tucker import _ttm_csf

    P, N = comm.size, block.nmodes
    m = block.values.shape[0]
    idx = index_dtype(block.dims)
    out = []
    for s in range(len(owners)):
        if P == 1:
            coords = block.coords if block.coords.dtype == idx else block.coords.astype(idx)
            out.append(LocalElements(block.gids if ids else None, coords, block.values))
        else:
            dest = np.asarray(owners[s], dtype=np.int32)
            if m and (int(dest.min()) < 0 or int(dest.max()) >= P):
                raise ValueError(f"policy {s} names a rank outside [0, {P})")
            order = np.empty(m, dtype=np.int32)
            ends = np.empty(P + 1, dtype=np.int64)
            _ttm_csf.stable_order(dest, P, np.zeros(0, np.int32), order, ends)
            del dest
            sent = np.diff(ends[:P], prepend=0)
            got = np.empty_like(sent)
            comm.Alltoall(sent, got)
            exchange = Exchange(sent, got)
            gids = exchange(comm, order.astype(np.int64) + block.offset) if ids else None
            cols = np.empty((N, exchange.nrecv), dtype=idx)
            for j in range(N):
                exchange(comm, block.coords[:, j][order].astype(idx, copy=False), out=cols[j])
            values = exchange(comm, block.values[order])
            del order
            out.append(LocalElements(gids, cols.T, values))
        if release:
            owners[s] = None
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
    block_owners: list | None        # N int32 arrays: π_n of this rank's INPUT block (tests), or None
    block_offset: int
    times: dict = field(default_factory=dict)   # local seconds: policy, redistribute, dist
    info: dict = field(default_factory=dict)

    @property
    def nmodes(self) -> int:
        return len(self.dims)


def distribute(comm, block: Block, scheme: str, *, seed: int = 0, params: dict | None = None,
               ids: bool = True, keep_owners: bool = True) -> DistributedTensor:
    """Compute ``scheme``'s policies in parallel (its registered parallel form) and move the
    elements to their owners. ``params`` are checked against the scheme's declared parameters.
    ``times['dist']`` (local) covers both steps; for HyperG ``info['partition_seconds']`` is the
    offline partition time. ``ids``: the sets carry their elements' global ids; ``keep_owners``:
    keep the block's policies (``block_owners``, else None, each dropped once its elements moved)."""
    try:
        sch = get_scheme(scheme)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    params = sch.validate(params)
    if block.coords.dtype != np.int64 and sch.streamed is None:
        # a scheme that gathers the whole tensor (HyperG) sees int64 coordinates, as its partition
        # cache keys them
        block = Block(np.ascontiguousarray(block.coords, dtype=np.int64), block.values, block.offset,
                      block.nnz, block.dims)
    info: dict = {"seed": int(seed)}
    t0 = time.perf_counter()
    owners, extra = sch.parallel(comm, block, seed=seed, **params)
    info.update(extra)
    t1 = time.perf_counter()
    moving = list(owners if sch.multi_policy else owners[:1])
    kept = owners if keep_owners else None
    del owners
    sets = redistribute(comm, block, moving, ids=ids, release=not keep_owners)
    if not sch.multi_policy:
        sets = sets * block.nmodes
    t2 = time.perf_counter()
    return DistributedTensor(scheme, tuple(block.dims), int(block.nnz), comm.size, comm.rank, sch.multi_policy,
                             sets, kept, int(block.offset),
                             {"policy": t1 - t0, "redistribute": t2 - t1, "dist": t2 - t0}, info)


def gather_policies(comm, dt: DistributedTensor, root: int = 0):
    """The global policies (N int32 arrays over all elements) on ``root``, None elsewhere (tests)."""
    out = []
    for n in range(dt.nmodes):
        parts = comm.gather(dt.block_owners[n], root=root)
        out.append(np.concatenate(parts).astype(np.int32) if comm.rank == root else None)
    return out if comm.rank == root else None
