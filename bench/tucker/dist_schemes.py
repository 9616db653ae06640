"""Distribution schemes computed IN PARALLEL under MPI (tucker-lite-distribution §5, §6.1).

Every rank starts with a contiguous block of about nnz/P elements of the input (``Block``:
global element ids ``offset .. offset + m``) and ends with, per mode n, the elements it owns
under π_n (``LocalElements``, sorted by global id). The policies equal the single-process
schemes of :mod:`.schemes` element for element (tests gather them and compare):

* Lite (§6.1, Figure 8): slice sizes by an Allreduce of local bincounts; the non-empty slices,
  keyed by (size, slice id) (the serial stable sort's order), sorted by a parallel sample sort
  (random sample per rank, Allgatherv, P − 1 splitters, bucket exchange by Alltoallv, local
  sort); stage 1's column-wise prefix loads by an Exscan of per-residue sums and t̂ by an
  Allreduce(MIN); stage-1 loads by an Allreduce; stage-2 stream offsets by an Exscan. The slice
  decisions (stage-1 owner or stage-2 stream start) are spread by one Allreduce over L_n; the
  rank of an element inside its stage-2 slice (storage order, Figure 8's "any g elements") by an
  Exscan of the per-slice local counts of the stage-2 slices.
* CoarseG / MediumG: slice sizes by an Allreduce of bincounts, then the (seeded, identical on
  every rank) slice permutation, blocks / SPLATT layers computed redundantly on every rank.
* HyperG: offline on rank 0 (``schemes.hyper``, partition cache), blocks gathered there and the
  policy scattered back; ``dist_time`` is the partition time (``dist_time_kind`` says so).

Then ONE Alltoallv moves every element to its owner for every mode (records
``[gid, coords..., value bits]`` tagged by mode; uni-policy schemes move one copy).
Counts and displacements are MPI ints: a rank may send at most 2**31 − 1 words per call.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .schemes import contiguous_blocks, mode_rng
from .schemes.medium import splatt_grid, splatt_layers

__all__ = ["Block", "LocalElements", "DistributedTensor", "block_range", "read_block", "split_block",
           "sample_sort", "lite_owners", "coarse_owners", "medium_owners", "hyper_owners",
           "redistribute", "distribute", "gather_policies", "alltoallv", "allgatherv", "Exchange",
           "DIST_SCHEMES"]

DIST_SCHEMES = ("lite", "coarse", "medium", "hyper")


# ---- input blocks ----------------------------------------------------------------------------
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


def block_range(n: int, parts: int, rank: int) -> tuple[int, int]:
    """[lo, hi) of the ``rank``-th of ``parts`` contiguous, balanced pieces of ``n`` items."""
    return (n * rank) // parts, (n * (rank + 1)) // parts


def read_block(tensor_dir, comm) -> Block:
    """This rank's block of ``coords.npy``/``values.npy`` (memory-mapped: only the block is read)."""
    d = Path(tensor_dir)
    meta = json.loads((d / "meta.json").read_text())
    coords = np.load(d / "coords.npy", mmap_mode="r")
    values = np.load(d / "values.npy", mmap_mode="r")
    nnz = int(values.shape[0])
    if coords.ndim != 2 or coords.shape[0] != nnz:
        raise ValueError(f"{d}: coords.npy has shape {coords.shape}, values.npy {values.shape}")
    dims = tuple(int(x) for x in meta["dims"])
    if len(dims) != coords.shape[1]:
        raise ValueError(f"{d}: meta.json has {len(dims)} dims for {coords.shape[1]} modes")
    lo, hi = block_range(nnz, comm.size, comm.rank)
    return Block(np.ascontiguousarray(coords[lo:hi], dtype=np.int64),
                 np.ascontiguousarray(values[lo:hi], dtype=np.float64), lo, nnz, dims)


def split_block(tensor, comm) -> Block:
    """This rank's block of an in-memory SparseTensor (tests)."""
    lo, hi = block_range(tensor.nnz, comm.size, comm.rank)
    return Block(np.ascontiguousarray(tensor.coords[lo:hi]), np.ascontiguousarray(tensor.values[lo:hi]),
                 lo, tensor.nnz, tuple(tensor.dims))


# ---- small MPI helpers -----------------------------------------------------------------------
def _mpi():
    from mpi4py import MPI
    return MPI


_INT_MAX = (1 << 31) - 1


def _mpi_counts(*arrays):
    """int32 copies of MPI counts/displacements; an error instead of a silent overflow."""
    out = []
    for a in arrays:
        a = np.asarray(a, dtype=np.int64)
        if a.size and (int(a.max()) > _INT_MAX):
            raise OverflowError("a message exceeds 2**31 - 1 words: use more ranks")
        out.append(a.astype(np.int32))
    return out


def _exscan(comm, arr):
    """Exclusive prefix sum over ranks of an int64 array (zeros on rank 0)."""
    MPI = _mpi()
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    out = np.zeros_like(arr)
    if comm.size > 1:
        comm.Exscan(arr, out, op=MPI.SUM)
        if comm.rank == 0:
            out[:] = 0
    return out


def _allreduce(comm, arr, op=None):
    MPI = _mpi()
    arr = np.ascontiguousarray(arr)
    out = np.empty_like(arr)
    comm.Allreduce(arr, out, op=op or MPI.SUM)
    return out


def alltoallv(comm, sendbuf, sendcounts, width: int = 1):
    """Alltoallv of a contiguous array whose first axis is ordered by destination.
    ``sendcounts``: items (rows) per destination; ``width``: words per item. Returns
    (recvbuf, recvcounts)."""
    MPI = _mpi()
    sendcounts = np.ascontiguousarray(sendcounts, dtype=np.int64)
    recvcounts = np.empty_like(sendcounts)
    comm.Alltoall(sendcounts, recvcounts)
    dtype = sendbuf.dtype
    tail = sendbuf.shape[1:]
    recv = np.empty((int(recvcounts.sum()),) + tail, dtype=dtype)
    sc = sendcounts * width
    rc = recvcounts * width
    sd = np.zeros_like(sc)
    rd = np.zeros_like(rc)
    np.cumsum(sc[:-1], out=sd[1:])
    np.cumsum(rc[:-1], out=rd[1:])
    mt = MPI._typedict[dtype.char]
    sc, sd, rc, rd = _mpi_counts(sc, sd, rc, rd)
    comm.Alltoallv([np.ascontiguousarray(sendbuf), (sc, sd), mt], [recv, (rc, rd), mt])
    return recv, recvcounts


class Exchange:
    """A precomputed Alltoallv pattern (counts known on both sides: no count exchange per call).
    ``send_counts[q]`` items go to rank q, ``recv_counts[q]`` come from it; ``width`` words each."""

    def __init__(self, send_counts, recv_counts):
        self.send_counts = np.asarray(send_counts, dtype=np.int64)
        self.recv_counts = np.asarray(recv_counts, dtype=np.int64)
        self.nsend = int(self.send_counts.sum())
        self.nrecv = int(self.recv_counts.sum())
        self._specs = {}

    def _spec(self, width: int):
        if width not in self._specs:
            sc = self.send_counts * width
            rc = self.recv_counts * width
            sd = np.zeros_like(sc)
            rd = np.zeros_like(rc)
            np.cumsum(sc[:-1], out=sd[1:])
            np.cumsum(rc[:-1], out=rd[1:])
            self._specs[width] = tuple(_mpi_counts(sc, sd, rc, rd))
        return self._specs[width]

    def __call__(self, comm, sendbuf: np.ndarray, width: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        """Send ``sendbuf`` (first axis ordered by destination); returns the received items."""
        MPI = _mpi()
        sc, sd, rc, rd = self._spec(width)
        sendbuf = np.ascontiguousarray(sendbuf)
        if out is None:
            out = np.empty((self.nrecv,) + sendbuf.shape[1:], dtype=sendbuf.dtype)
        mt = MPI._typedict[sendbuf.dtype.char]
        comm.Alltoallv([sendbuf, (sc, sd), mt], [out, (rc, rd), mt])
        return out


def allgatherv(comm, arr):
    """Concatenation over ranks of 1-D arrays (all ranks get it); returns (array, counts)."""
    MPI = _mpi()
    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.allgather(int(arr.shape[0])), dtype=np.int64)
    out = np.empty(int(counts.sum()), dtype=arr.dtype)
    displ = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=displ[1:])
    mt = MPI._typedict[arr.dtype.char]
    comm.Allgatherv([arr, mt], [out, (counts.astype(np.int32), displ.astype(np.int32)), mt])
    return out, counts


# ---- parallel sample sort ----------------------------------------------------------------------
def sample_sort(comm, keys: np.ndarray, rng: np.random.Generator, oversample: int = 32) -> np.ndarray:
    """Parallel sample sort of distinct int64 keys (the paper's [10]): every rank draws a random
    sample of up to ``oversample``·P of its keys, the samples are gathered everywhere (Allgatherv),
    P − 1 evenly spaced splitters cut them, every key goes to its bucket's rank (Alltoallv), each
    rank sorts its bucket. Returns this rank's sorted bucket; the concatenation over ranks is the
    sorted input."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    P = comm.size
    if P == 1:
        return np.sort(keys)
    ns = min(keys.size, oversample * P)
    sample = rng.choice(keys, size=ns, replace=False) if ns else np.zeros(0, dtype=np.int64)
    samples, _ = allgatherv(comm, sample)
    samples.sort()
    if samples.size:
        splitters = samples[(np.arange(1, P) * samples.size) // P]
    else:
        splitters = np.zeros(0, dtype=np.int64)
    dest = np.searchsorted(splitters, keys, side="right")
    order = np.argsort(dest, kind="stable")
    bucket, _ = alltoallv(comm, keys[order], np.bincount(dest, minlength=P))
    bucket.sort()
    return bucket


# ---- Lite (Figure 8) in parallel ----------------------------------------------------------------
def lite_owners(comm, index: np.ndarray, length: int, *, rng: np.random.Generator | None = None,
                info: dict | None = None) -> np.ndarray:
    """π_n (int32) of this rank's block elements (mode-n indices ``index``; block order =
    global storage order), identical to ``schemes.lite.lite_mode`` on the whole tensor."""
    MPI = _mpi()
    P, r = comm.size, comm.rank
    L = int(length)
    index = np.asarray(index, dtype=np.int64)
    rng = rng or np.random.default_rng([0, r])
    local = np.bincount(index, minlength=L).astype(np.int64)
    sizes = _allreduce(comm, local)                        # |Slice_n^l|, distributed count
    total = int(sizes.sum())
    limit = -(-total // P)
    # sample sort of the non-empty slices by (size, id): rank r brings its range of slice ids
    a, b = block_range(L, P, r)
    ids = a + np.flatnonzero(sizes[a:b] > 0)
    span = max(L, 1)
    keys = sample_sort(comm, sizes[ids] * span + ids, rng)
    sl = keys % span                                      # slice ids S_t, t = start .. start+cnt−1
    sz = keys // span                                     # |S_t|
    cnt = int(keys.size)
    start = int(_exscan(comm, np.array([cnt]))[0])
    t = start + np.arange(cnt, dtype=np.int64)
    # stage 1: load of processor t mod P right after S_t (column-wise prefix sums)
    res = t % P
    before = _exscan(comm, np.bincount(res, weights=sz, minlength=P).round().astype(np.int64))
    shift = start % P
    rows = -(-(shift + cnt) // P) if cnt else 0
    padded = np.zeros(rows * P, dtype=np.int64)
    padded[shift:shift + cnt] = sz
    after = padded.reshape(rows, P).cumsum(axis=0).reshape(-1)[shift:shift + cnt] + before[res]
    over = np.flatnonzero(after > limit)
    Lnz = int(_allreduce(comm, np.array([cnt]))[0])
    first = np.array([int(t[over[0]]) if over.size else Lnz], dtype=np.int64)
    t_hat = int(_allreduce(comm, first, op=MPI.MIN)[0])
    s1 = t < t_hat
    loads = _allreduce(comm, np.bincount(res[s1], weights=sz[s1], minlength=P).round().astype(np.int64))
    bounds = np.zeros(P + 1, dtype=np.int64)
    np.cumsum(limit - loads, out=bounds[1:])
    # stage 2: stream offsets of the remaining slices (in sorted order)
    sz2 = np.where(s1, 0, sz)
    off = int(_exscan(comm, np.array([int(sz2.sum())]))[0])
    stream_start = off + np.cumsum(sz2) - sz2
    # one Allreduce spreads the decisions: owner+1 (stage 1) or −(stream start+1) (stage 2)
    code = np.zeros(L, dtype=np.int64)
    code[sl[s1]] = res[s1] + 1
    code[sl[~s1]] = -(stream_start[~s1] + 1)
    code = _allreduce(comm, code)
    owners = np.empty(index.size, dtype=np.int32)
    c = code[index]
    st1 = c > 0
    owners[st1] = (c[st1] - 1).astype(np.int32)
    e2 = np.flatnonzero(~st1)
    if info is not None:
        info.setdefault("limit", []).append(limit)
        info.setdefault("stage1_slices", []).append(t_hat)
        info.setdefault("stage2_slices", []).append(Lnz - t_hat)
    stage2_ids = np.flatnonzero(code < 0)                  # increasing slice id, same on every rank
    if stage2_ids.size == 0:
        return owners
    # rank of each element inside its stage-2 slice, in global storage order
    k2 = np.searchsorted(stage2_ids, index[e2])
    prior = _exscan(comm, np.bincount(k2, minlength=stage2_ids.size))
    order = np.argsort(k2, kind="stable")
    ks = k2[order]
    grp_start = np.searchsorted(ks, ks, side="left")
    within = np.empty(e2.size, dtype=np.int64)
    within[order] = np.arange(e2.size) - grp_start
    pos = -code[index[e2]] - 1 + prior[k2] + within
    owners[e2] = (np.searchsorted(bounds, pos, side="right") - 1).astype(np.int32)
    return owners


# ---- CoarseG, MediumG ----------------------------------------------------------------------------
def coarse_owners(comm, index: np.ndarray, length: int, mode: int, seed: int) -> np.ndarray:
    """π_n of this rank's block elements under CoarseG (= ``schemes.coarse.coarse_mode``)."""
    sizes = _allreduce(comm, np.bincount(index, minlength=length).astype(np.int64))
    perm = mode_rng(seed, mode).permutation(length)
    slice_owner = np.empty(length, dtype=np.int32)
    slice_owner[perm] = contiguous_blocks(sizes[perm], comm.size)
    return slice_owner[index]


def medium_owners(comm, block: Block, seed: int, grid=None) -> tuple[np.ndarray, tuple]:
    """The MediumG policy of this rank's block elements (= ``schemes.medium.medium``) and the grid."""
    P = comm.size
    q = tuple(int(x) for x in grid) if grid is not None else splatt_grid(block.dims, P)
    if len(q) != block.nmodes or int(np.prod(q)) != P:
        raise ValueError(f"grid {q} does not match {block.nmodes} modes and P = {P}")
    owner = np.zeros(block.values.shape[0], dtype=np.int64)
    for n in range(block.nmodes):
        idx = block.coords[:, n]
        length = block.dims[n]
        sizes = _allreduce(comm, np.bincount(idx, minlength=length).astype(np.int64))
        perm = mode_rng(seed, n).permutation(length)
        layer = np.empty(length, dtype=np.int64)
        layer[perm] = splatt_layers(sizes[perm], q[n])
        owner = owner * q[n] + layer[idx]
    return owner.astype(np.int32), q


def hyper_owners(comm, block: Block, seed: int, params: dict) -> tuple[np.ndarray, dict]:
    """HyperG offline on rank 0: blocks gathered there, ``schemes.hyper`` (with its partition
    cache, ``params['cache_dir']``), the policy scattered back. Returns (block policy, info)."""
    MPI = _mpi()
    from .schemes.hyper import hyper
    from .tensor import SparseTensor

    N = block.nmodes
    m = block.values.shape[0]
    counts = np.array(comm.gather(m, root=0) or [0], dtype=np.int64)
    if comm.rank == 0:
        coords = np.empty((block.nnz, N), dtype=np.int64)
        values = np.empty(block.nnz, dtype=np.float64)
        displ = np.zeros_like(counts)
        np.cumsum(counts[:-1], out=displ[1:])
        rc, rd = ((counts * N).astype(np.int32), (displ * N).astype(np.int32))
        comm.Gatherv([block.coords, MPI.INT64_T], [coords, (rc, rd), MPI.INT64_T], root=0)
        comm.Gatherv([block.values, MPI.DOUBLE], [values, (counts.astype(np.int32), displ.astype(np.int32)),
                                                  MPI.DOUBLE], root=0)
        tensor = SparseTensor(coords, values, block.dims, sum_duplicates=False, check=False)
        dist = hyper(tensor, comm.size, seed=seed, **params)
        policy = np.ascontiguousarray(dist.policy(0), dtype=np.int32)
        info = {k: v for k, v in dist.info.items() if isinstance(v, (int, float, str, bool))}
        sendspec = [policy, (counts.astype(np.int32), displ.astype(np.int32)), MPI.INT32_T]
    else:
        comm.Gatherv([block.coords, MPI.INT64_T], None, root=0)
        comm.Gatherv([block.values, MPI.DOUBLE], None, root=0)
        info, sendspec = None, None
    out = np.empty(m, dtype=np.int32)
    comm.Scatterv(sendspec, [out, MPI.INT32_T], root=0)
    info = comm.bcast(info, root=0)
    return out, info


# ---- element exchange ----------------------------------------------------------------------------
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
    policy."""
    P = comm.size
    N = block.nmodes
    S = len(owners)
    m = block.values.shape[0]
    W = N + 2
    rec = np.empty((m, W), dtype=np.int64)
    rec[:, 0] = block.gids
    rec[:, 1:N + 1] = block.coords
    rec[:, N + 1] = block.values.view(np.int64)
    dest = np.concatenate([np.asarray(o, dtype=np.int64) for o in owners]) if S else np.zeros(0, np.int64)
    tag = np.repeat(np.arange(S, dtype=np.int64), m)
    key = dest * S + tag
    # stable counting-style sort by (destination, policy): radix sort on a narrow key
    narrow = np.uint16 if P * S < (1 << 16) else np.int64
    order = np.argsort(key.astype(narrow), kind="stable")
    pertag = np.bincount(key, minlength=P * S).reshape(P, S)      # items per (dest, policy)
    recv_pertag = np.empty_like(pertag)
    comm.Alltoall(pertag, recv_pertag)
    sendbuf = rec[order % m] if m else np.zeros((0, W), dtype=np.int64)
    recv, _ = alltoallv(comm, sendbuf, pertag.sum(axis=1), width=W)
    # per source, items ordered by policy; every piece is sorted by gid (blocks are contiguous
    # and increasing by rank, the sort is stable), so concatenating a policy's pieces by source
    # keeps the global storage order
    seg = np.zeros(P * S + 1, dtype=np.int64)
    np.cumsum(recv_pertag.reshape(-1), out=seg[1:])
    out = []
    for s in range(S):
        pieces = [recv[seg[q * S + s]:seg[q * S + s + 1]] for q in range(P)]
        part = np.concatenate(pieces) if pieces else np.zeros((0, W), dtype=np.int64)
        out.append(LocalElements(np.ascontiguousarray(part[:, 0]), np.ascontiguousarray(part[:, 1:N + 1]),
                                 np.ascontiguousarray(part[:, N + 1]).view(np.float64)))
    return out


# ---- driver ------------------------------------------------------------------------------------
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
    """Compute ``scheme``'s policies in parallel and move the elements to their owners.
    ``times['dist']`` (local) covers both steps; for HyperG ``info['partition_seconds']`` is the
    offline partition time."""
    params = dict(params or {})
    N = block.nmodes
    info: dict = {"seed": int(seed)}
    t0 = time.perf_counter()
    if scheme == "lite":
        rng = np.random.default_rng([int(seed), 0x5A, comm.rank])
        owners = [lite_owners(comm, block.coords[:, n], block.dims[n], rng=rng, info=info) for n in range(N)]
        multi = True
    elif scheme == "coarse":
        owners = [coarse_owners(comm, block.coords[:, n], block.dims[n], n, seed) for n in range(N)]
        multi = True
    elif scheme == "medium":
        pol, grid = medium_owners(comm, block, seed, params.get("grid"))
        owners, multi = [pol] * N, False
        info["grid"] = list(grid)
    elif scheme == "hyper":
        pol, hinfo = hyper_owners(comm, block, seed, params)
        owners, multi = [pol] * N, False
        info.update(hinfo)
    else:
        raise ValueError(f"unknown distribution scheme {scheme!r}; known: {', '.join(DIST_SCHEMES)}")
    t1 = time.perf_counter()
    sets = redistribute(comm, block, owners if multi else owners[:1])
    if not multi:
        sets = sets * N
    t2 = time.perf_counter()
    return DistributedTensor(scheme, tuple(block.dims), int(block.nnz), comm.size, comm.rank, multi, sets,
                             owners, int(block.offset),
                             {"policy": t1 - t0, "redistribute": t2 - t1, "dist": t2 - t0}, info)


def gather_policies(comm, dt: DistributedTensor, root: int = 0):
    """The global policies (N int32 arrays over all elements) on ``root``, None elsewhere (tests)."""
    out = []
    for n in range(dt.nmodes):
        parts = comm.gather(dt.block_owners[n], root=root)
        out.append(np.concatenate(parts).astype(np.int32) if comm.rank == root else None)
    return out if comm.rank == root else None
