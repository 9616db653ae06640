"""FROSTT ``.tns`` tensors: reader, writer and the ``.npz`` parse cache.

Format: one nonzero per line, N 1-based indices then the value, whitespace separated; lines
starting with ``#`` (and anything after a ``#``) are comments, blank lines are skipped; no
header, so the mode lengths are the largest index per mode unless ``dims`` is given.
``.tns.gz`` is read and written transparently.

Reading is pandas' C parser in chunks (no Python loop per line). Only when that parser or the
checks on its output find a problem does a line-by-line scan run, to name the file, the line
number and the reason in the DatasetError. The parsed tensor is cached as ``<stem>.npz`` beside
the file (or in ``cache=DIR``) and reused while the source's size and mtime are unchanged.
This reader holds the whole tensor: small files and tests. Runs read tensors through a tensor
store (``tns_ingest.convert_tns``: one streaming pass in bounded memory), which reuses this
module's line scanner for its error messages. Writing streams chunks through pyarrow's CSV writer.
"""
from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import numpy as np

from spbench.store.atomic_files import WriteFailed

from .errors import DatasetError
from .sparse_tensor import SparseTensor

__all__ = ["read_tns", "write_tns", "tns_stem", "npz_cache_path", "TNS_SUFFIXES", "count_fields", "raise_bad_line",
           "data_line_numbers", "open_text", "write_tns_chunks"]

TNS_SUFFIXES = (".tns", ".tns.gz")
#: the largest index a line may hold (the columns are int64)
INDEX_MAX = 2**63 - 1
_INDEX = re.compile(r"-?[0-9]+")
_CHUNK = 4_000_000


def tns_stem(path) -> str:
    """File name without ``.tns`` / ``.tns.gz`` (a data set's name in result rows)."""
    name = Path(path).name
    for suf in (".tns.gz", ".tns", ".gz"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


def npz_cache_path(path, cache=True) -> Path | None:
    """Where the parsed copy of ``path`` lives: beside it, in ``cache`` (a folder), or None."""
    if cache is False or cache is None:
        return None
    path = Path(path)
    folder = path.parent if cache is True else Path(cache)
    return folder / f"{tns_stem(path)}.npz"


def open_text(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def _data_fields(line: str) -> list[str] | None:
    """Whitespace fields of a line without its comment; None for comment/blank lines."""
    line = line.split("#", 1)[0]
    fields = line.split()
    return fields or None


def count_fields(path: Path) -> int:
    """Fields on the first data line (N indices + 1 value); DatasetError when there is none."""
    try:
        with open_text(path) as fh:
            for line in fh:
                fields = _data_fields(line)
                if fields:
                    return len(fields)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    raise DatasetError(f"{path}: no nonzeros (every line is blank or a comment)")


def _check_line(fields: list[str], nmodes: int, dims) -> str | None:
    """Why one data line is bad, or None."""
    if len(fields) != nmodes + 1:
        return f"expected {nmodes} indices and a value ({nmodes + 1} fields), got {len(fields)}"
    for n, tok in enumerate(fields[:nmodes]):
        if not _INDEX.fullmatch(tok):    # what the block parser reads as int64: no sign, '_' or other digits
            return f"index {n + 1} {tok!r} is not an integer (expected digits only)"
        i = int(tok)
        if i < 1:
            return f"index {n + 1} is {i}; FROSTT indices are 1-based (>= 1)"
        if i > INDEX_MAX:
            return f"index {n + 1} is {i:,}, beyond the largest 64-bit integer ({INDEX_MAX:,})"
        if dims is not None and i > dims[n]:
            return f"index {n + 1} is {i}, beyond the mode's length {dims[n]}"
    try:
        if "_" in fields[nmodes] or not fields[nmodes].isascii():   # Python's float reads '1_0', the parser does not
            raise ValueError
        v = float(fields[nmodes])
    except ValueError:
        return f"value {fields[nmodes]!r} is not a number"
    if not np.isfinite(v):
        return f"value {fields[nmodes]!r} is not a finite number"
    return None


def data_line_numbers(path: Path, element_ids) -> dict[int, int]:
    """File line number of each 0-based element id (the n-th data line; comments and blanks
    skipped): a line-by-line scan for error messages only."""
    want = set(int(i) for i in element_ids)
    found: dict[int, int] = {}
    element = -1
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if _data_fields(line) is None:
                continue
            element += 1
            if element in want:
                found[element] = lineno
                if len(found) == len(want):
                    break
    return found


def raise_bad_line(path: Path, nmodes: int, dims, fallback: str) -> None:
    """Scan line by line (error path only) and raise DatasetError naming the first bad line."""
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, start=1):
                fields = _data_fields(line)
                if fields is None:
                    continue
                why = _check_line(fields, nmodes, dims)
                if why:
                    raise DatasetError(f"{path}: line {lineno}: {why}")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    raise DatasetError(f"{path}: unreadable FROSTT tensor: {fallback}")


def _load_npz(npz: Path, src: Path):
    try:
        st = src.stat()
        with np.load(npz) as z:
            if int(z["source_size"]) != st.st_size or int(z["source_mtime_ns"]) != st.st_mtime_ns:
                return None
            return SparseTensor(z["coords"].astype(np.int64), z["values"], tuple(int(d) for d in z["dims"]),
                                sum_duplicates=False, check=False)
    except (OSError, KeyError, ValueError, EOFError):
        return None


def _save_npz(npz: Path, src: Path, tensor) -> None:
    try:
        st = src.stat()
        npz.parent.mkdir(parents=True, exist_ok=True)
        coords = tensor.coords
        if tensor.nnz and max(tensor.dims) < 2**31 - 1:
            coords = coords.astype(np.int32)
        tmp = npz.with_name(f"{npz.name}.{os.getpid()}.part.npz")
        np.savez(tmp, coords=coords, values=tensor.values, dims=np.asarray(tensor.dims, dtype=np.int64),
                 source_size=st.st_size, source_mtime_ns=st.st_mtime_ns)
        os.replace(tmp, npz)
    except OSError:
        pass   # a read-only folder only costs a re-parse next time


def read_tns(path, *, dims=None, cache=True, chunksize: int = _CHUNK):
    """Read a FROSTT ``.tns``/``.tns.gz`` file into a SparseTensor (0-based, duplicates summed).

    ``dims``: the mode lengths when known (indices beyond them are errors); default: the
    largest index per mode. ``cache``: True (``<stem>.npz`` beside the file), a folder, or False.
    Bad input raises DatasetError naming the file and the first bad line.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    npz = npz_cache_path(path, cache)
    if npz is not None and npz.is_file():
        t = _load_npz(npz, path)
        if t is not None and (dims is None or tuple(dims) == t.dims):
            return t
    ncols = count_fields(path)
    nmodes = ncols - 1
    if nmodes < 1:
        raise DatasetError(f"{path}: line 1 of the data has {ncols} field; need at least one index and a value")
    dtypes = {c: np.int64 for c in range(nmodes)}
    dtypes[nmodes] = np.float64
    coords_parts, value_parts = [], []
    import pandas as pd     # here, not at import: every `spbench run` process imports this module
    try:
        reader = pd.read_csv(path, sep=r"\s+", header=None, comment="#", engine="c", dtype=dtypes,
                             chunksize=chunksize, compression="infer", skip_blank_lines=True)
        for df in reader:
            if df.shape[1] != ncols:
                raise ValueError(f"{df.shape[1]} columns")
            c = df.iloc[:, :nmodes].to_numpy(dtype=np.int64)
            v = df.iloc[:, nmodes].to_numpy(dtype=np.float64)
            if c.size and c.min() < 1:
                raise ValueError("index below 1")
            if dims is not None and c.size and (c.max(axis=0) > np.asarray(dims)).any():
                raise ValueError("index beyond dims")
            if not np.isfinite(v).all():
                raise ValueError("non-finite value")
            coords_parts.append(c)
            value_parts.append(v)
    except (ValueError, TypeError, pd.errors.ParserError, pd.errors.EmptyDataError, OverflowError) as exc:
        raise_bad_line(path, nmodes, dims, " ".join(str(exc).split()))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    coords = np.concatenate(coords_parts) if coords_parts else np.zeros((0, nmodes), dtype=np.int64)
    coords -= 1
    values = np.concatenate(value_parts) if value_parts else np.zeros(0)
    if dims is None:
        dims = tuple(int(d) for d in coords.max(axis=0) + 1) if coords.size else (0,) * nmodes
    tensor = SparseTensor(coords, values, dims, check=False)
    if npz is not None:
        _save_npz(npz, path, tensor)
    return tensor


def write_tns(path, tensor, *, comment: str | None = None, chunk: int = _CHUNK) -> Path:
    """Write ``tensor`` as FROSTT text (1-based; values in shortest round-trip form), gzip when
    the name ends in ``.gz``; atomic. Returns the path."""
    chunks = ((tuple(tensor.coords[lo:lo + chunk, n] for n in range(tensor.nmodes)), tensor.values[lo:lo + chunk])
              for lo in range(0, max(tensor.nnz, 1), chunk))
    return write_tns_chunks(path, chunks, comment=comment)


def write_tns_chunks(path, chunks, *, comment: str | None = None) -> Path:
    """Write ``(columns, values)`` chunks (0-based index columns) as FROSTT text, streaming
    (pyarrow's CSV writer), gzip when the name ends in ``.gz``; atomic (``.part`` then rename). A
    failed write is a WriteFailed naming ``path`` (the partial file is removed)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.part")
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with (gzip.open(tmp, "wb", compresslevel=6) if path.name.endswith(".gz") else open(tmp, "wb")) as fh:
            if comment:
                fh.write("".join(f"# {line}\n" for line in str(comment).splitlines()).encode())
            for cols, values in chunks:
                if len(values) == 0:
                    continue
                table = pa.table({**{f"i{n}": np.asarray(c, dtype=np.int64) + 1 for n, c in enumerate(cols)},
                                  "v": np.asarray(values, dtype=np.float64)})
                pcsv.write_csv(table, fh, write_options=options)
        os.replace(tmp, path)
    except OSError as exc:           # pyarrow's I/O errors are OSErrors too
        raise WriteFailed.from_os_error(path, exc) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
