"""The names a matrix config entry may use (registry matrices, generators, Tables A.2/A.3 rows)
and the one-line error for a name that is none of them, with the close names it may have meant."""
from __future__ import annotations

import difflib

from . import synthetic
from .errors import DatasetError
from .paper_matrices import ICHOL_TABLE, METIS_ONLY, METIS_TABLE, SUITESPARSE, SuiteSparseMatrix, suitesparse_matrix


def known_names() -> list[str]:
    """Every name a matrix entry may give: Table A.1, the METIS-only matrices, the generators and
    the transformed rows of Tables A.2 and A.3."""
    return [*SUITESPARSE, *METIS_ONLY, *synthetic.GENERATORS, *ICHOL_TABLE, *METIS_TABLE]


def close_names_hint(name: str, names) -> str:
    """``; close names: A, B`` for up to three of ``names`` like ``name`` (ignoring case), else ""."""
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    return f"; close names: {', '.join(lowered[c] for c in close)}" if close else ""


def unknown_name(entry, name: str) -> DatasetError:
    """The error for config entry ``entry`` naming ``name``, which no matrix or generator has."""
    hint = close_names_hint(name, known_names())
    return DatasetError(f"data set {entry!r}: unknown name {name!r}; expected a SuiteSparse matrix of "
                        f"Table A.1, a generator ({', '.join(synthetic.GENERATORS)}) or {{path: FILE.mtx}}"
                        f"{hint} ('spbench datasets list' shows all)")


def registry_entry(name: str) -> SuiteSparseMatrix:
    """The registry matrix ``name`` (Table A.1 or METIS-only), else :func:`unknown_name`'s error."""
    m = suitesparse_matrix(name)
    if m is None:
        raise unknown_name(name, name)
    return m
