"""The real SuiteSparse matrices on disk: downloaded once, verified, parsed once into ``.npz``
(checked against Table A.1's size) so a later load skips the Matrix Market parse."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import scipy.sparse as sp

from spbench.store.cache_root import data_dir

from .errors import DatasetError
from .fetch import download, recorded_checksum, verify_file
from .loaded_matrix import LoadedMatrix, file_matrix
from .matrix_market import MatrixFile, read_matrix_file
from .matrix_names import registry_entry
from .paper_matrices import SuiteSparseMatrix


def suitesparse_dir() -> Path:
    """Where SuiteSparse tarballs, parsed ``.npz`` files and ``checksums.json`` live."""
    return data_dir() / "suitesparse"


def save_npz(path: Path, A) -> bool:
    """Save ``A`` to ``path`` atomically; False when the cache cannot be written (a read-only or
    full disk only costs a parse next time)."""
    part = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(part, "wb") as fh:
            sp.save_npz(fh, A)
        os.replace(part, path)
        return True
    except OSError:
        part.unlink(missing_ok=True)
        return False


def _source_file(m: SuiteSparseMatrix) -> Path | None:
    """The cached original of ``m`` (downloaded tarball, or a .mtx/.mtx.gz put there by hand)."""
    folder = suitesparse_dir()
    for suffix in (".tar.gz", ".mtx.gz", ".mtx"):
        path = folder / f"{m.name}{suffix}"
        if path.is_file():
            return path
    return None


def _npz_paths(m: SuiteSparseMatrix) -> tuple[Path, Path]:
    folder = suitesparse_dir()
    return folder / f"{m.name}.npz", folder / f"{m.name}.npz.json"


def is_cached(name: str) -> bool:
    """Whether registry matrix ``name`` is in the cache (parsed or as its original file)."""
    m = registry_entry(name)
    return _npz_paths(m)[0].is_file() or _source_file(m) is not None


def _load_cached_npz(m: SuiteSparseMatrix) -> LoadedMatrix | None:
    """The parsed matrix when its ``.npz`` is there and still matches the recorded checksum."""
    npz, meta_path = _npz_paths(m)
    if not (npz.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        source = suitesparse_dir() / meta["source"]
        expected = m.sha256 or recorded_checksum(source)
        if expected is not None and meta["sha256"] != expected:
            return None
        if source.is_file() and source.stat().st_size != meta["size"]:
            return None
        A = sp.csr_matrix(sp.load_npz(npz))
        duplicates = int(meta.get("duplicates", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return file_matrix(m.name, source, MatrixFile(A, duplicates), meta["sha256"])


def _parse_and_cache(m: SuiteSparseMatrix, source: Path) -> LoadedMatrix:
    """Verify the cached original, parse it, check its size against Table A.1, save the ``.npz``."""
    sha = verify_file(source, m.sha256)
    try:
        read = read_matrix_file(source, extract_dir=source.parent)
    finally:
        if source.name.endswith(".tar.gz"):
            (source.parent / f"{m.name}.mtx").unlink(missing_ok=True)
    A = read.matrix
    if A.shape != (m.n, m.n):
        raise DatasetError(f"{source}: expected a {m.n}x{m.n} matrix for {m.name} (Table A.1), "
                           f"got {A.shape[0]}x{A.shape[1]}")
    npz, meta_path = _npz_paths(m)
    if save_npz(npz, A):
        meta = {"source": source.name, "sha256": sha, "size": source.stat().st_size, "duplicates": read.duplicates}
        try:
            meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        except OSError:
            npz.unlink(missing_ok=True)
    return file_matrix(m.name, source, read, sha)


def fetch_suitesparse(name: str, *, base: str | None = None, timeout: float = 60,
                      progress: Callable[[int, int | None], None] | None = None) -> Path:
    """Download registry matrix ``name`` into the cache unless its original is already there."""
    m = registry_entry(name)
    existing = _source_file(m)
    if existing is not None:
        return existing
    dest = suitesparse_dir() / f"{m.name}.tar.gz"
    download(m.url(base), dest, m.sha256, timeout=timeout, progress=progress)
    return dest


def load_real(m: SuiteSparseMatrix, *, fetch: bool, progress=None, why: list | None = None) -> LoadedMatrix | None:
    """The real matrix from the cache or a download, None when neither has it (``why`` gets the reason)."""
    cached = _load_cached_npz(m)
    if cached is not None:
        return cached
    if _source_file(m) is None and fetch:
        try:
            fetch_suitesparse(m.name, progress=progress)
        except DatasetError as exc:
            if why is not None:
                why.append(str(exc))
    source = _source_file(m)
    return _parse_and_cache(m, source) if source is not None else None
