"""Matrix Market reading and writing: ``.mtx``, ``.mtx.gz`` and SuiteSparse ``.tar.gz`` tarballs.

SuiteSparse ships ``<Name>/<Name>.mtx`` (plus extras such as ``<Name>_b.mtx``) inside
``<Name>.tar.gz``; :func:`read_matrix` extracts that member next to the tarball and reads it.
Symmetric and skew-symmetric storage is expanded to the full matrix.
"""
from __future__ import annotations

import gzip
import os
import tarfile
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from .errors import DatasetError

MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".tar.gz")
_CHUNK = 1 << 20


def matrix_stem(path) -> str:
    """The file name without ``.mtx``, ``.mtx.gz`` or ``.tar.gz`` (``/x/my.mtx.gz`` -> ``my``)."""
    name = Path(path).name
    for suffix in MATRIX_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


def read_matrix(path, *, extract_dir=None) -> sp.csr_matrix:
    """Read a Matrix Market file (``.mtx``, ``.mtx.gz``) or SuiteSparse tarball into float64 CSR.

    A tarball's ``<Name>.mtx`` member is extracted to ``extract_dir`` (default: the tarball's
    folder) and read from there. Any problem raises :class:`DatasetError` naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    if path.name.endswith(".tar.gz"):
        path = extract_tarball(path, extract_dir or path.parent)
    elif not (path.name.endswith(".mtx") or path.name.endswith(".mtx.gz")):
        raise DatasetError(f"{path}: not a Matrix Market file (expected .mtx, .mtx.gz or .tar.gz)")
    try:
        A = scipy.io.mmread(str(path))
    except (ValueError, OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable Matrix Market file: {_one_line(exc)}") from None
    if np.iscomplexobj(A):
        raise DatasetError(f"{path}: complex matrices are not supported (expected real, integer or pattern)")
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    return A


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


def write_matrix(path, A, *, comment: str | None = None) -> Path:
    """Write ``A`` as Matrix Market (gzip-compressed when the name ends ``.gz``), atomically.

    Symmetric matrices are stored as ``symmetric`` (lower triangle only); the file appears
    only when complete (written to ``<path>.part``, then renamed).
    """
    path = Path(path)
    if not (path.name.endswith(".mtx") or path.name.endswith(".mtx.gz")):
        raise DatasetError(f"{path}: output must end in .mtx or .mtx.gz")
    A = sp.coo_matrix(A)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(part, "wb") as out:
            scipy.io.mmwrite(out, A, comment=comment)
        os.replace(part, path)
    except OSError as exc:
        raise DatasetError(f"{path}: could not write: {_one_line(exc)}") from None
    finally:
        part.unlink(missing_ok=True)
    return path


def _one_line(exc: BaseException) -> str:
    """An exception as one line of text."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
