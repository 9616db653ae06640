"""What loading a matrix data set gives (``LoadedMatrix``), shared by the registry that resolves
config entries and the SuiteSparse cache that reads real matrices from disk."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import scipy.sparse as sp

from .dataset import LoadedDataset
from .matrix_market import summed_duplicates_note


@dataclass(frozen=True)
class LoadedMatrix(LoadedDataset):
    """A loaded data set: row name, ``real`` or ``synthetic``, sha256 identity, full matrix (CSR);
    for a transformed one, ``symmetric``: whether the matrix before the transform was. A
    paper-size stand-in (``--scale paper``) is its lower triangle only, ``symmetric`` True.
    ``duplicates``: a file's entries summed into an earlier one's; ``warnings``: the one-line
    notes a sweep prints for it (the summed duplicates, naming the file)."""

    matrix: sp.csr_matrix = field(compare=False, repr=False)
    symmetric: bool | None = None
    duplicates: int = field(default=0, compare=False)
    warnings: tuple = field(default=(), compare=False)


def file_matrix(name: str, path: Path, read, checksum: str) -> LoadedMatrix:
    """A matrix read from ``path`` (``read_matrix_file``'s result), its summed duplicates noted."""
    note = summed_duplicates_note(path, read.duplicates)
    return LoadedMatrix(name, "real", checksum, read.matrix, duplicates=read.duplicates,
                        warnings=(note,) if note else ())
