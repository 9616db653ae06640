"""The MPI helpers of the distributed Tucker code (tucker-lite-distribution §3, §4.2, §6.1):
Alltoallv with counts exchanged or precomputed (:class:`Exchange`), Allgatherv, Allreduce,
Exscan, a parallel sample sort, and :class:`LocalComm`, a one-process communicator.

Importing this module never initializes MPI (the outer process never imports
``mpi4py.MPI``): ``mpi4py.MPI`` is imported inside a helper only when the communicator is a real
one. Every helper also runs on a :class:`LocalComm`, so the P = 1 HOOI of the CLI process takes the
same code path as an MPI rank, with every exchange a local copy.
MPI counts and displacements are C ints: a rank sends at most 2**31 − 1 words per call
(:func:`mpi_counts` raises instead of overflowing).
"""
from __future__ import annotations

import numpy as np

__all__ = ["LocalComm", "alltoallv", "allgatherv", "gatherv", "scatterv", "allreduce", "broadcast", "exscan", "Exchange",
           "sample_sort", "mpi_counts", "block_range"]

_INT_MAX = (1 << 31) - 1
_OPS = ("sum", "max", "min")


def block_range(n: int, parts: int, rank: int) -> tuple[int, int]:
    """[lo, hi) of the ``rank``-th of ``parts`` contiguous, balanced pieces of ``n`` items."""
    return (n * rank) // parts, (n * (rank + 1)) // parts


def mpi_counts(*arrays) -> list:
    """int32 copies of MPI counts/displacements; an error instead of a silent overflow."""
    out = []
    for a in arrays:
        a = np.asarray(a, dtype=np.int64)
        if a.size and int(a.max()) > _INT_MAX:
            raise OverflowError("a message exceeds 2**31 - 1 words: use more ranks")
        out.append(a.astype(np.int32))
    return out


class _LocalBuffer:
    """A buffer specification of :class:`LocalComm`: the flat array and its (count, displacement)
    of rank 0, read from mpi4py's shapes ``buf``, ``[buf, type]``, ``[buf, (counts, displs), type]``
    or ``[buf, counts, displs, type]`` (the datatype is the array's own)."""

    def __init__(self, spec):
        if isinstance(spec, (list, tuple)):
            arr = spec[0]
            rest = [x for x in spec[1:] if not _is_datatype(x)]
            if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
                rest = list(rest[0])
        else:
            arr, rest = spec, []
        arr = np.asarray(arr)
        if not arr.flags.c_contiguous:
            raise ValueError("LocalComm: buffers must be C-contiguous arrays")
        self.flat = arr.reshape(-1)
        self.count = int(np.asarray(rest[0]).reshape(-1)[0]) if rest else self.flat.size
        self.displ = int(np.asarray(rest[1]).reshape(-1)[0]) if len(rest) > 1 else 0

    def view(self) -> np.ndarray:
        return self.flat[self.displ:self.displ + self.count]


def _is_datatype(x) -> bool:
    """A datatype slot of a buffer spec: an mpi4py Datatype, a numpy dtype/char or None."""
    return x is None or isinstance(x, (str, np.dtype, type)) or type(x).__name__ == "Datatype"


def _copy(sendbuf, recvbuf) -> None:
    src, dst = _LocalBuffer(sendbuf).view(), _LocalBuffer(recvbuf).view()
    if src.size != dst.size:
        raise ValueError(f"LocalComm: message of {src.size} items into a buffer of {dst.size}")
    dst[...] = src


class LocalComm:
    """A one-process communicator (size 1, rank 0) with the part of mpi4py's ``Comm`` API the
    Tucker code calls; every collective is a numpy copy and mpi4py is never imported. Reduction
    ``op`` arguments are accepted and ignored (one contribution)."""

    size = 1
    rank = 0

    def Get_size(self) -> int:
        return 1

    def Get_rank(self) -> int:
        return 0

    def Barrier(self) -> None:
        return None

    # lowercase (pickled objects) ---------------------------------------------------------------
    def allreduce(self, obj, op=None):
        return obj

    def allgather(self, obj) -> list:
        return [obj]

    def gather(self, obj, root: int = 0) -> list:
        return [obj]

    def scatter(self, objs, root: int = 0):
        return objs[0]

    def bcast(self, obj, root: int = 0):
        return obj

    # uppercase (buffers) -----------------------------------------------------------------------
    def Allreduce(self, sendbuf, recvbuf, op=None) -> None:
        _copy(sendbuf, recvbuf)

    def Bcast(self, buf, root: int = 0) -> None:
        return None

    def Scan(self, sendbuf, recvbuf, op=None) -> None:
        _copy(sendbuf, recvbuf)

    def Exscan(self, sendbuf, recvbuf, op=None) -> None:
        """MPI leaves rank 0's result undefined; it is left untouched here."""
        return None

    def Alltoall(self, sendbuf, recvbuf) -> None:
        _copy(sendbuf, recvbuf)

    def Alltoallv(self, sendbuf, recvbuf) -> None:
        _copy(sendbuf, recvbuf)

    def Allgatherv(self, sendbuf, recvbuf) -> None:
        _copy(sendbuf, recvbuf)

    def Gatherv(self, sendbuf, recvbuf, root: int = 0) -> None:
        _copy(sendbuf, recvbuf)

    def Scatterv(self, sendbuf, recvbuf, root: int = 0) -> None:
        _copy(sendbuf, recvbuf)


def _local(comm) -> bool:
    return isinstance(comm, LocalComm)


def _datatype(comm, dtype: np.dtype):
    """The MPI datatype of ``dtype`` (the numpy dtype itself on a LocalComm)."""
    if _local(comm):
        return dtype
    from mpi4py import MPI
    return MPI._typedict[dtype.char]


def _op(comm, op: str):
    if op not in _OPS:
        raise ValueError(f"reduction op {op!r}; expected one of {', '.join(_OPS)}")
    if _local(comm):
        return None
    from mpi4py import MPI
    return {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]


def allreduce(comm, arr, op: str = "sum") -> np.ndarray:
    """Element-wise reduction (``op``: "sum", "max" or "min") of an array over ranks, on every rank."""
    arr = np.ascontiguousarray(arr)
    out = np.empty_like(arr)
    comm.Allreduce(arr, out, op=_op(comm, op))
    return out


def broadcast(comm, arr, root: int) -> np.ndarray:
    """``root``'s array on every rank (``shape``/``dtype`` must match on all ranks; the argument is
    filled in place elsewhere)."""
    arr = np.ascontiguousarray(arr)
    if comm.size > 1:
        comm.Bcast([arr, _datatype(comm, arr.dtype)], root=root)
    return arr


def exscan(comm, arr) -> np.ndarray:
    """Exclusive prefix sum over ranks of an int64 array (zeros on rank 0)."""
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    out = np.zeros_like(arr)
    if comm.size > 1:
        comm.Exscan(arr, out, op=_op(comm, "sum"))
        if comm.rank == 0:
            out[:] = 0
    return out


def _displacements(counts: np.ndarray) -> np.ndarray:
    displ = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=displ[1:])
    return displ


def alltoallv(comm, sendbuf, sendcounts, width: int = 1):
    """Alltoallv of a contiguous array whose first axis is ordered by destination.
    ``sendcounts``: items (rows) per destination; ``width``: words per item. Returns
    (recvbuf, recvcounts)."""
    sendbuf = np.ascontiguousarray(sendbuf)
    sendcounts = np.ascontiguousarray(sendcounts, dtype=np.int64)
    recvcounts = np.empty_like(sendcounts)
    comm.Alltoall(sendcounts, recvcounts)
    recv = np.empty((int(recvcounts.sum()),) + sendbuf.shape[1:], dtype=sendbuf.dtype)
    sc, rc = sendcounts * width, recvcounts * width
    sc, sd, rc, rd = mpi_counts(sc, _displacements(sc), rc, _displacements(rc))
    mt = _datatype(comm, sendbuf.dtype)
    comm.Alltoallv([sendbuf, (sc, sd), mt], [recv, (rc, rd), mt])
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
            sc, rc = self.send_counts * width, self.recv_counts * width
            self._specs[width] = tuple(mpi_counts(sc, _displacements(sc), rc, _displacements(rc)))
        return self._specs[width]

    def __call__(self, comm, sendbuf: np.ndarray, width: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        """Send ``sendbuf`` (first axis ordered by destination); returns the received items."""
        sc, sd, rc, rd = self._spec(width)
        sendbuf = np.ascontiguousarray(sendbuf)
        if out is None:
            out = np.empty((self.nrecv,) + sendbuf.shape[1:], dtype=sendbuf.dtype)
        mt = _datatype(comm, sendbuf.dtype)
        comm.Alltoallv([sendbuf, (sc, sd), mt], [out, (rc, rd), mt])
        return out


def allgatherv(comm, arr):
    """Concatenation over ranks of 1-D arrays (all ranks get it); returns (array, counts)."""
    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.allgather(int(arr.shape[0])), dtype=np.int64)
    out = np.empty(int(counts.sum()), dtype=arr.dtype)
    c, d = mpi_counts(counts, _displacements(counts))
    mt = _datatype(comm, arr.dtype)
    comm.Allgatherv([arr, mt], [out, (c, d), mt])
    return out, counts


def gatherv(comm, arr, root: int = 0):
    """Concatenation over ranks of arrays along their first axis, on ``root`` (None elsewhere);
    returns (array or None, items per rank)."""
    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.allgather(int(arr.shape[0])), dtype=np.int64)
    width = int(np.prod(arr.shape[1:], dtype=np.int64))
    mt = _datatype(comm, arr.dtype)
    if comm.rank != root:
        comm.Gatherv([arr, mt], None, root=root)
        return None, counts
    out = np.empty((int(counts.sum()),) + arr.shape[1:], dtype=arr.dtype)
    c, d = mpi_counts(counts * width, _displacements(counts * width))
    comm.Gatherv([arr, mt], [out, (c, d), mt], root=root)
    return out, counts


def scatterv(comm, arr, counts, dtype, root: int = 0) -> np.ndarray:
    """Rank q receives ``counts[q]`` consecutive items of ``root``'s 1-D ``arr`` (ignored elsewhere)."""
    counts = np.asarray(counts, dtype=np.int64)
    dtype = np.dtype(dtype)
    mt = _datatype(comm, dtype)
    out = np.empty(int(counts[comm.rank]), dtype=dtype)
    if comm.rank == root:
        c, d = mpi_counts(counts, _displacements(counts))
        comm.Scatterv([np.ascontiguousarray(arr, dtype=dtype), (c, d), mt], [out, mt], root=root)
    else:
        comm.Scatterv(None, [out, mt], root=root)
    return out


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
    splitters = samples[(np.arange(1, P) * samples.size) // P] if samples.size else np.zeros(0, np.int64)
    dest = np.searchsorted(splitters, keys, side="right")
    order = np.argsort(dest, kind="stable")
    bucket, _ = alltoallv(comm, keys[order], np.bincount(dest, minlength=P))
    bucket.sort()
    return bucket
