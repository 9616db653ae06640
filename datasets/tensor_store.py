"""Binary store of a sparse tensor: one folder that MPI ranks read block by block.

Layout: ``coord<n>.npy`` per mode (0-based indices, int32 where the mode's length fits, else
int64), ``values.npy`` (float64) and ``header.json`` (format and version, dims, nnz, per-mode
index dtype and non-empty slice counts, the source or the generator's parameters, the checksum
of the data set and how duplicate coordinates were handled). Columns are plain ``.npy`` files,
so a rank memory-maps them and reads only its ``[lo, hi)`` range (``read_block``); nothing ever
needs the whole tensor in one process except ``load_store`` (tests and small runs).

``StoreWriter`` appends chunks in bounded memory into a hidden temporary folder beside the
destination and renames it into place at ``commit``: a store either exists whole or not at all.
The temporary folder's name carries the writer's host and process id, so a writer that was killed
(-9, the OOM killer) leaves a folder the next writer into the same folder removes
(``remove_stale_parts``), while a live writer's is kept.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import DatasetError

__all__ = ["FORMAT", "VERSION", "StoreHeader", "StoreWriter", "read_header", "read_block", "load_store",
           "iter_chunks", "iter_columns", "write_store", "store_path_for", "stores_dir", "index_dtype",
           "remove_stale_parts"]

FORMAT = "spbench-tensor-store"
VERSION = 1
HEADER_FILE = "header.json"
_NPY_HEADER_BYTES = 128            # reserved so the final length can be written in place
_INT32_LENGTH = 2**31 - 1           # a mode of at most this many indices is stored as int32
_HOST = re.sub(r"[^A-Za-z0-9-]", "_", socket.gethostname()) or "host"
#: ``.<store>.<host>.<pid>.<random>.part``: a writer's temporary folder
_PART_NAME = re.compile(r"^\..+\.(?P<host>[A-Za-z0-9_-]+)\.(?P<pid>\d+)\.[a-z0-9_]+\.part$")


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_stale_parts(folder) -> list[Path]:
    """Remove the temporary folders that writers on this host left in ``folder`` when their process
    died; those of running writers, and any of another host sharing the folder, are kept."""
    removed = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = _PART_NAME.match(entry.name)
        if found is None or found["host"] != _HOST or _running(int(found["pid"])) or not entry.is_dir():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def index_dtype(length: int) -> np.dtype:
    """int32 when every index of a mode of ``length`` fits, else int64."""
    return np.dtype(np.int32) if int(length) <= _INT32_LENGTH else np.dtype(np.int64)


def stores_dir() -> Path:
    """``$SPBENCH_DATA/stores``: converted files and generated stand-ins, one folder each."""
    from spbench.store.cache_root import data_dir
    return data_dir() / "stores"


def store_path_for(checksum: str, name: str = "tensor") -> Path:
    """The cached store of the data set whose checksum is ``checksum`` (``name`` is for people)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "tensor"
    return stores_dir() / f"{safe}-{checksum[:20]}"


@dataclass(frozen=True)
class StoreHeader:
    """What ``header.json`` says: enough to plan a run without reading a nonzero."""

    path: Path
    dims: tuple
    nnz: int
    slices_nonempty: tuple
    index_dtypes: tuple
    checksum: str
    source: dict = field(default_factory=dict)
    duplicates: dict = field(default_factory=dict)

    @property
    def nmodes(self) -> int:
        return len(self.dims)


def _npy_header(dtype: np.dtype, n: int) -> bytes:
    """A version 1.0 ``.npy`` header of exactly ``_NPY_HEADER_BYTES`` bytes for a 1-D array."""
    text = repr({"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (int(n),)})
    body = text.encode("latin1")
    room = _NPY_HEADER_BYTES - 10 - 1
    return b"\x93NUMPY\x01\x00" + (room + 1).to_bytes(2, "little") + body.ljust(room) + b"\n"


class _Column:
    """One ``.npy`` column written by appending; the header's length is filled in at ``finish``."""

    def __init__(self, path: Path, dtype):
        self.path, self.dtype, self.n = path, np.dtype(dtype), 0
        self.fh = open(path, "wb")
        self.fh.write(_npy_header(self.dtype, 0))

    def append(self, values: np.ndarray) -> None:
        np.ascontiguousarray(values, dtype=self.dtype).tofile(self.fh)
        self.n += int(values.shape[0])

    def widen(self, dtype) -> None:
        """Rewrite what is written so far in the wider ``dtype`` (an int32 column meeting a long mode)."""
        self.fh.close()
        old, new = self.path, self.path.with_name(self.path.name + ".wide")
        with open(old, "rb") as src, open(new, "wb") as dst:
            dst.write(_npy_header(dtype, 0))
            src.seek(_NPY_HEADER_BYTES)
            while (part := np.fromfile(src, dtype=self.dtype, count=1 << 22)).size:
                part.astype(dtype).tofile(dst)
        os.replace(new, old)
        self.dtype = np.dtype(dtype)
        self.fh = open(old, "ab")

    def finish(self) -> None:
        self.fh.close()
        with open(self.path, "r+b") as fh:
            fh.write(_npy_header(self.dtype, self.n))


class StoreWriter:
    """Append nonzeros chunk by chunk (0-based coordinates), then ``commit`` the store atomically.

    ``dims``: the mode lengths when known (indices beyond them are errors, and the index dtypes
    are fixed up front); otherwise the largest index + 1 per mode, columns starting as int32 and
    widened if a mode grows past it. Memory: the chunk being written plus one byte per index of
    each mode (the non-empty slice marks). Use as a context manager: leaving the block without
    ``commit`` (an error) removes everything written.
    """

    def __init__(self, dst, nmodes: int, *, dims=None):
        self.dst = Path(dst)
        if nmodes < 1:
            raise ValueError("a tensor needs at least one mode")
        if dims is not None and len(dims) != nmodes:
            raise ValueError(f"dims has {len(dims)} entries for {nmodes} modes")
        self.nmodes, self.dims = nmodes, None if dims is None else tuple(int(d) for d in dims)
        self.dst.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_parts(self.dst.parent)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.dst.name}.{_HOST}.{os.getpid()}.", suffix=".part",
                                         dir=self.dst.parent))
        self.top = np.full(nmodes, -1, dtype=np.int64)
        self.seen = [np.zeros(0 if dims is None else int(d), dtype=bool) for d in (dims or [0] * nmodes)]
        try:
            self.columns = [_Column(self.tmp / f"coord{n}.npy", index_dtype(self.dims[n] if self.dims else 0))
                            for n in range(nmodes)]
            self.values = _Column(self.tmp / "values.npy", np.float64)
        except BaseException:
            self.abort()
            raise

    @property
    def nnz(self) -> int:
        return self.values.n

    def marks_after(self, ranges) -> int:
        """Bytes the non-empty slice marks (one per index of each mode) take once a chunk whose
        per-mode (min, max) are ``ranges`` is appended, grown as ``append`` grows them."""
        total = 0
        for seen, (_, hi) in zip(self.seen, ranges):
            total += max(hi + 1, 2 * seen.size) if hi >= seen.size else seen.size
        return total

    def append(self, coords, values, ranges=None) -> None:
        """Add nonzeros: ``coords`` an (m, N) array or N arrays of length m (0-based), ``values``
        (m,); ``ranges``: each column's (min, max) when the caller has them."""
        cols = [coords[:, n] for n in range(self.nmodes)] if isinstance(coords, np.ndarray) and coords.ndim == 2 \
            else list(coords)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if len(cols) != self.nmodes or any(c.shape[0] != values.shape[0] for c in cols):
            raise ValueError(f"expected {self.nmodes} index columns as long as the {values.shape[0]} values")
        if values.shape[0] == 0:
            return
        for n, col in enumerate(cols):
            lo, hi = ranges[n] if ranges is not None else (int(col.min()), int(col.max()))
            limit = self.dims[n] if self.dims else None
            if lo < 0 or (limit is not None and hi >= limit):
                raise ValueError(f"mode {n}: indices span [{lo}, {hi}], outside [0, {limit})")
            if hi > self.top[n]:
                self.top[n] = hi
                if self.seen[n].size <= hi:
                    grown = np.zeros(max(hi + 1, 2 * self.seen[n].size), dtype=bool)
                    grown[: self.seen[n].size] = self.seen[n]
                    self.seen[n] = grown
                if index_dtype(hi + 1).itemsize > self.columns[n].dtype.itemsize:
                    self.columns[n].widen(index_dtype(hi + 1))
            self.seen[n][col] = True
            self.columns[n].append(col)
        self.values.append(values)

    def finish_columns(self) -> Path:
        """Close the columns (readable ``.npy`` files in the temporary folder) and return that folder."""
        for col in (*self.columns, self.values):
            if not col.fh.closed:
                col.finish()
        return self.tmp

    def final_dims(self) -> tuple:
        return self.dims if self.dims else tuple(int(t) + 1 for t in self.top)

    def commit(self, *, checksum: str, source: dict, duplicates: dict, replace: bool = False) -> StoreHeader:
        """Write ``header.json`` and move the folder to ``dst``; an existing store there is kept
        (another process made the same one) unless ``replace``."""
        self.finish_columns()
        dims = self.final_dims()
        header = {"format": FORMAT, "version": VERSION, "dims": list(dims), "nnz": self.nnz, "nmodes": self.nmodes,
                  "index_dtypes": [c.dtype.name for c in self.columns], "value_dtype": "float64", "index_base": 0,
                  "slices_nonempty": [int(np.count_nonzero(s)) for s in self.seen],
                  "checksum": checksum, "source": source, "duplicates": duplicates}
        (self.tmp / HEADER_FILE).write_text(json.dumps(header, indent=1) + "\n")
        if replace and self.dst.exists():
            shutil.rmtree(self.dst)
        try:
            os.replace(self.tmp, self.dst)
        except OSError:
            if not (self.dst / HEADER_FILE).is_file():
                self.abort()
                raise
            self.abort()       # the same store was committed meanwhile
        return read_header(self.dst)

    def abort(self) -> None:
        for col in (*getattr(self, "columns", ()), *([self.values] if hasattr(self, "values") else [])):
            col.fh.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.tmp.exists():
            self.abort()
        return False


def write_store(path, coords, values, dims, *, checksum: str, source: dict, chunk: int = 1 << 22) -> StoreHeader:
    """Write an in-memory tensor (``coords`` (nnz, N) 0-based, ``values``, ``dims``) as a store at
    ``path``, chunk by chunk (no copy of the whole). Its coordinates are taken as distinct."""
    coords = np.asarray(coords)
    with StoreWriter(path, coords.shape[1], dims=dims) as writer:
        for lo in range(0, coords.shape[0], chunk):
            writer.append(coords[lo:lo + chunk], values[lo:lo + chunk])
        return writer.commit(checksum=checksum, source=source, duplicates={"rule": "taken as distinct", "removed": 0},
                             replace=True)


def read_header(path) -> StoreHeader:
    """The header of the store at ``path``; DatasetError (one line) when it is missing or not a store."""
    path = Path(path)
    try:
        raw = json.loads((path / HEADER_FILE).read_text())
    except FileNotFoundError:
        raise DatasetError(f"{path}: not a tensor store (no {HEADER_FILE}); make one with `spbench datasets convert`") from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path / HEADER_FILE}: unreadable ({' '.join(str(exc).split())})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise DatasetError(f"{path / HEADER_FILE}: not a {FORMAT} header")
    if raw.get("version") != VERSION:
        raise DatasetError(f"{path / HEADER_FILE}: store version {raw.get('version')}, this spbench reads "
                           f"version {VERSION}; convert the source again")
    try:
        return StoreHeader(path, tuple(int(d) for d in raw["dims"]), int(raw["nnz"]),
                           tuple(int(s) for s in raw["slices_nonempty"]), tuple(raw["index_dtypes"]),
                           str(raw["checksum"]), raw.get("source", {}), raw.get("duplicates", {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"{path / HEADER_FILE}: missing or bad field {exc}") from None


def _open_columns(header: StoreHeader, mmap: bool = True):
    mode = "r" if mmap else None
    try:
        cols = [np.load(header.path / f"coord{n}.npy", mmap_mode=mode) for n in range(header.nmodes)]
        values = np.load(header.path / "values.npy", mmap_mode=mode)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{header.path}: damaged store ({' '.join(str(exc).split())})") from None
    if any(c.shape != (header.nnz,) for c in (*cols, values)):
        raise DatasetError(f"{header.path}: damaged store (a column's length differs from nnz {header.nnz})")
    return cols, values


def read_block(path, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Nonzeros ``lo .. hi-1``: ``(coords (m, N) int64, values (m,) float64)``; only that range of
    the memory-mapped columns is read."""
    header = read_header(path)
    if not 0 <= lo <= hi <= header.nnz:
        raise DatasetError(f"{path}: block [{lo}, {hi}) outside [0, {header.nnz}]")
    cols, values = _open_columns(header)
    coords = np.empty((hi - lo, header.nmodes), dtype=np.int64)
    for n, col in enumerate(cols):
        coords[:, n] = col[lo:hi]
    return coords, np.array(values[lo:hi], dtype=np.float64)


def iter_chunks(path, chunk: int, *, values: bool = True):
    """``(lo, columns, values)`` for consecutive chunks of ``chunk`` nonzeros of the store at
    ``path``, read with plain file reads (no mapping, so memory stays at one chunk and the page
    cache is not counted in the reader's resident memory); ``values=False`` skips the values
    (``None`` in their place)."""
    header = read_header(path)
    yield from iter_columns(header.path, [np.dtype(d) for d in header.index_dtypes], header.nnz, chunk,
                            values=values)


def iter_columns(folder, dtypes, nnz: int, chunk: int, *, values: bool = True):
    """``iter_chunks`` over the column files of ``folder`` (also a writer's unfinished folder)."""
    folder = Path(folder)
    files = [folder / f"coord{n}.npy" for n in range(len(dtypes))] + ([folder / "values.npy"] if values else [])
    dtypes = list(dtypes) + ([np.dtype(np.float64)] if values else [])
    handles = [open(f, "rb") for f in files]
    try:
        for fh in handles:
            np.lib.format.read_array_header_1_0(fh) if np.lib.format.read_magic(fh) == (1, 0) \
                else np.lib.format.read_array_header_2_0(fh)
        for lo in range(0, nnz, chunk):
            m = min(chunk, nnz - lo)
            parts = [np.fromfile(fh, dtype=dt, count=m) for fh, dt in zip(handles, dtypes)]
            yield (lo, parts[:-1], parts[-1]) if values else (lo, parts, None)
    finally:
        for fh in handles:
            fh.close()


def load_store(path):
    """The whole tensor as a SparseTensor (int64 coordinates; tests and small runs)."""
    from .sparse_tensor import SparseTensor
    header = read_header(path)
    cols, values = _open_columns(header, mmap=False)
    coords = np.empty((header.nnz, header.nmodes), dtype=np.int64)
    for n, col in enumerate(cols):
        coords[:, n] = col
    return SparseTensor(coords, values, header.dims, sum_duplicates=False, check=False)
