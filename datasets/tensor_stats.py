"""Per-mode slice statistics of a tensor store, for the representativeness report
(tucker-lite-distribution Fig. 9 and §7: what decides the figures is nonzeros per rank, L_n/P,
the largest slice against nnz/P and the TTM work against the SVD work).

One streaming pass over the store's coordinate columns (a bincount per mode, memory L_n counts
per mode plus one chunk), cached beside the store as ``stats.json`` (written atomically; the
store itself is immutable, so the cache never goes stale).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from spbench.atomic_files import write_json

from .tensor_store import iter_chunks, read_header

__all__ = ["slice_stats"]

_CHUNK = 4_000_000
_FILE = "stats.json"


def slice_stats(store) -> dict:
    """``{"dims", "nnz", "slices": non-empty slices per mode, "largest_slice": per mode}``."""
    store = Path(store)
    cached = store / _FILE
    if cached.is_file():
        return json.loads(cached.read_text())
    header = read_header(store)
    counts = [np.zeros(int(d), dtype=np.int64) for d in header.dims]
    for _, cols, _ in iter_chunks(store, _CHUNK):
        for n, col in enumerate(cols):
            counts[n] += np.bincount(col, minlength=counts[n].size)
    stats = {"dims": [int(d) for d in header.dims], "nnz": int(header.nnz),
             "slices": [int(np.count_nonzero(c)) for c in counts],
             "largest_slice": [int(c.max(initial=0)) for c in counts]}
    try:
        write_json(cached, stats)
    except OSError:          # a read-only store: the statistics are still returned
        pass
    return stats
