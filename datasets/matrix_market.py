"""Matrix Market reading and writing: ``.mtx``, ``.mtx.gz`` and SuiteSparse ``.tar.gz`` tarballs.

SuiteSparse ships ``<Name>/<Name>.mtx`` (plus extras such as ``<Name>_b.mtx``) inside
``<Name>.tar.gz``; :func:`read_matrix` extracts that member next to the tarball and reads it.
Symmetric and skew-symmetric storage is expanded to the full matrix. The size line is read
first: a file whose own numbers would not fit in the free memory is refused before the reader
allocates (``resources``), and entries repeating earlier coordinates are counted as they are summed.
"""
from __future__ import annotations

import gzip
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from spbench.store.atomic_files import WriteFailed

from .errors import DatasetError
from .resources import out_of_memory, require_memory

MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".tar.gz")
_CHUNK = 1 << 20


def matrix_stem(path) -> str:
    """The file name without ``.mtx``, ``.mtx.gz`` or ``.tar.gz`` (``/x/my.mtx.gz`` -> ``my``)."""
    name = Path(path).name
    for suffix in MATRIX_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


@dataclass(frozen=True)
class MatrixFile:
    """A Matrix Market file as read: the float64 CSR matrix and how many stored entries repeated
    the coordinates of an earlier one (their values summed, Matrix Market's rule)."""

    matrix: sp.csr_matrix
    duplicates: int = 0


def read_matrix(path, *, extract_dir=None) -> sp.csr_matrix:
    """Read a Matrix Market file (``.mtx``, ``.mtx.gz``) or SuiteSparse tarball into float64 CSR.

    A tarball's ``<Name>.mtx`` member is extracted to ``extract_dir`` (default: the tarball's
    folder) and read from there. Any problem raises :class:`DatasetError` naming the file.
    """
    return read_matrix_file(path, extract_dir=extract_dir).matrix


def read_matrix_file(path, *, extract_dir=None) -> MatrixFile:
    """:func:`read_matrix` with the count of duplicate entries summed. The memory the size line
    implies is checked against the free memory first (a DatasetError, nothing allocated)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    if path.name.endswith(".tar.gz"):
        path = extract_tarball(path, extract_dir or path.parent)
    elif not (path.name.endswith(".mtx") or path.name.endswith(".mtx.gz")):
        raise DatasetError(f"{path}: not a Matrix Market file (expected .mtx, .mtx.gz or .tar.gz)")
    rows, cols, entries, fmt, field, symmetry = _size_line(path)
    nbytes, basis = reading_memory(rows, cols, entries, fmt, field, symmetry)
    require_memory(nbytes, f"{path}: reading it", basis)
    try:
        A = _mmread(path)
        if np.iscomplexobj(A):
            raise DatasetError(f"{path}: complex matrices are not supported (expected real, integer or pattern)")
        A = sp.csr_matrix(A, dtype=np.float64)   # sums repeated coordinates
        A.sum_duplicates()
        A.sort_indices()
        duplicates = _repeats(A, entries, symmetry) if fmt == "coordinate" else 0
    except MemoryError:
        raise out_of_memory(path, "reading the matrix", nbytes, basis) from None
    return MatrixFile(A, duplicates)


def _mmread(path: Path):
    """SciPy's reader, its errors as one line naming the file (and the line, where SciPy says it)."""
    try:
        return scipy.io.mmread(str(path))
    except OverflowError as exc:
        raise DatasetError(f"{path}: {_overflow(exc)}") from None
    except (ValueError, OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable Matrix Market file: {_one_line(exc)}") from None


def _size_line(path: Path) -> tuple:
    """``(rows, cols, entries, format, field, symmetry)`` from the header and size line alone."""
    try:
        rows, cols, entries, fmt, field, symmetry = scipy.io.mminfo(str(path))
    except OverflowError as exc:
        raise DatasetError(f"{path}: {_overflow(exc, 'size line')}") from None
    except (ValueError, OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable Matrix Market file: {_one_line(exc)}") from None
    if fmt == "array":
        entries = rows * cols      # mminfo's product wraps around in 64 bits
    return int(rows), int(cols), int(entries), fmt, field, symmetry


def _overflow(exc: OverflowError, where: str = "") -> str:
    """SciPy's ``Line 3: Integer out of range.`` as ``line 3: an integer out of range (...)``."""
    found = re.match(r"\s*Line (\d+):", str(exc))
    where = f"line {found.group(1)}" if found else (where or "an entry")
    return f"{where}: an integer out of range (expected indices and integer values that fit 64-bit integers)"


def reading_memory(rows: int, cols: int, entries: int, fmt: str, field: str, symmetry: str) -> tuple[int, str]:
    """``(bytes, basis)``: the memory reading a file of this size line takes at least, as SciPy
    reads it (coordinates and values, a symmetric file's mirror image, then CSR)."""
    value = 16 if field == "complex" else 8
    basis = f"a {rows:,} x {cols:,} matrix with {entries:,} entries, from its size line"
    if fmt == "array":
        return entries * value + (rows + 1) * 8, basis
    index = 4 if max(rows, cols) < 2**31 else 8
    mirrored = symmetry != "general"
    coo = entries * (2 * index + value) * (3 if mirrored else 1)   # read, then it and its mirror image
    csr = entries * (2 if mirrored else 1) * (index + value) + (rows + 1) * index
    return coo + csr, basis


def _repeats(A: sp.csr_matrix, entries: int, symmetry: str) -> int:
    """Stored entries that repeated an earlier one's coordinates: the size line's count less the
    distinct positions (a symmetric file's: the pairs {i, j}, either triangle naming one)."""
    if symmetry == "general":
        return int(entries - A.nnz)
    rows = np.repeat(np.arange(A.shape[0], dtype=A.indices.dtype), np.diff(A.indptr))
    diagonal = int(np.count_nonzero(A.indices == rows))
    return int(entries - (A.nnz - diagonal) // 2 - diagonal)


def summed_duplicates_note(path, count: int) -> str | None:
    """The warning for a file whose ``count`` repeated entries were summed; None when none were."""
    if not count:
        return None
    what = "a line repeating the row and column of an earlier one" if count == 1 else \
        "lines repeating the row and column of earlier ones"
    return (f"{path}: {count:,} duplicate {'entry' if count == 1 else 'entries'} summed ({what}; Matrix Market "
            f"adds their values)")


def extract_tarball(tarball, dest_dir) -> Path:
    """Extract the ``<Name>.mtx`` member of a SuiteSparse tarball to ``dest_dir/<Name>.mtx``.

    The member is chosen by name (``<Name>.mtx`` with Name the tarball stem), else the only
    ``.mtx`` member; it is written to a ``.part`` file and renamed, so no partial file remains.
    """
    tarball = Path(tarball)
    stem = matrix_stem(tarball)
    dest = Path(dest_dir) / f"{stem}.mtx"
    part = dest.with_name(dest.name + ".part")
    try:
        with tarfile.open(tarball, "r:gz") as tf:
            members = [m for m in tf.getmembers() if m.isfile() and m.name.endswith(".mtx")]
            chosen = [m for m in members if Path(m.name).name == f"{stem}.mtx"]
            if not chosen and len(members) == 1:
                chosen = members
            if not chosen:
                names = ", ".join(m.name for m in members) or "none"
                raise DatasetError(f"{tarball}: no member {stem}/{stem}.mtx in the tarball (.mtx members: {names})")
            dest.parent.mkdir(parents=True, exist_ok=True)
            src = tf.extractfile(chosen[0])
            with open(part, "wb") as out:
                while block := src.read(_CHUNK):
                    out.write(block)
        os.replace(part, dest)
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DatasetError(f"{tarball}: unreadable tarball: {_one_line(exc)}") from None
    finally:
        part.unlink(missing_ok=True)
    return dest


def check_output(path) -> Path:
    """``path`` as a Path when its name ends in ``.mtx`` or ``.mtx.gz``; DatasetError otherwise."""
    path = Path(path)
    if not (path.name.endswith(".mtx") or path.name.endswith(".mtx.gz")):
        raise DatasetError(f"{path}: output must end in .mtx or .mtx.gz")
    return path


def write_matrix(path, A, *, comment: str | None = None) -> Path:
    """Write ``A`` as Matrix Market (gzip-compressed when the name ends ``.gz``), atomically.

    Symmetric matrices are stored as ``symmetric`` (lower triangle only); the file appears
    only when complete (written to ``<path>.part``, then renamed). A name without ``.mtx[.gz]``
    is a DatasetError, a failed write a WriteFailed naming ``path`` (nothing of it is kept).
    """
    path = check_output(path)
    A = sp.coo_matrix(A)
    part = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(part, "wb") as out:
            scipy.io.mmwrite(out, A, comment=comment)
        os.replace(part, path)
    except OSError as exc:
        raise WriteFailed.from_os_error(path, exc) from None
    finally:
        part.unlink(missing_ok=True)
    return path


def _one_line(exc: BaseException) -> str:
    """An exception as one line of text."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
