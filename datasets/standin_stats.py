"""The statistics Table A.1 lists, measured on a stand-in: rows, lower-triangle nnz, average wavefront.

``spbench datasets list`` shows them beside the paper's (sptrsv-elasticity Table A.1); building
all stand-ins takes about a minute, so each result is kept in ``$SPBENCH_DATA/standin_stats`` under
the stand-in's checksum (a changed recipe or generator version gets a new file).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spbench.store.atomic_files import write_json

from . import synthetic
from .transforms import lower_triangle


def matrix_statistics(A) -> dict:
    """rows, nnz of the lower triangle incl. the diagonal, wavefronts and average wavefront (rows/wavefronts)."""
    from spbench.kernels.sptrsv import _dag

    L = lower_triangle(A)
    strict = sp.tril(L, k=-1, format="csr")
    levels = _dag.levels(strict.indptr.astype(np.int32), strict.indices.astype(np.int32))
    n = int(L.shape[0])
    wavefronts = int(levels.max()) + 1 if n else 0
    return {"n": n, "nnz": int(L.nnz), "wavefronts": wavefronts,
            "avg_wavefront": n / wavefronts if wavefronts else 0.0}


def _cache_dir() -> Path:
    from spbench.store.cache_root import data_dir
    return data_dir() / "standin_stats"


def standin_statistics(family: str, params: dict) -> dict:
    """:func:`matrix_statistics` of generator ``family`` at ``params``, from the cache when there."""
    checksum = synthetic.checksum(family, params)
    path = _cache_dir() / f"{checksum}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    stats = matrix_statistics(synthetic.generate(family, params))
    try:
        write_json(path, stats)
    except OSError:
        pass
    return stats
