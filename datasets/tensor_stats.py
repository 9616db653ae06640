"""Per-mode slice statistics of a tensor store, for the representativeness report
(tucker-lite-distribution Fig. 9 and §7: what decides the figures is nonzeros per rank, L_n/P,
the largest slice against nnz/P and the TTM work against the SVD work).

One streaming pass over the store's coordinate columns (a bincount per mode, memory L_n counts
per mode plus one chunk) gives the slice sizes of every mode (:func:`slice_sizes`: what every
distribution scheme decides from), cached beside the store as ``slices<n>.npy``, and the summary
``stats.json`` (both written atomically; the store itself is immutable, so the caches never go
stale; a read-only store is counted again each time).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from spbench.store.atomic_files import write_json

from .tensor_store import iter_chunks, read_header

__all__ = ["slice_stats", "slice_sizes"]

_CHUNK = 4_000_000
_FILE = "stats.json"


def slice_stats(store) -> dict:
    """``{"dims", "nnz", "slices": non-empty slices per mode, "largest_slice": per mode}``."""
    store = Path(store)
    cached = store / _FILE
    if cached.is_file():
        return json.loads(cached.read_text())
    header = read_header(store)
    counts = slice_sizes(store)
    stats = {"dims": [int(d) for d in header.dims], "nnz": int(header.nnz),
             "slices": [int(np.count_nonzero(c)) for c in counts],
             "largest_slice": [int(c.max(initial=0)) for c in counts]}
    try:
        write_json(cached, stats)
    except OSError:          # a read-only store: the statistics are still returned
        pass
    return stats


def slice_sizes(store) -> list:
    """The number of elements of every slice (int64, one array per mode) of the store."""
    store = Path(store)
    header = read_header(store)
    files = [store / f"slices{n}.npy" for n in range(header.nmodes)]
    if all(f.is_file() for f in files):
        sizes = [np.load(f) for f in files]
        if all(s.shape == (int(d),) for s, d in zip(sizes, header.dims)):
            return sizes
    counts = [np.zeros(int(d), dtype=np.int64) for d in header.dims]
    for _, cols, _ in iter_chunks(store, _CHUNK, values=False):
        for n, col in enumerate(cols):
            counts[n] += np.bincount(col, minlength=counts[n].size)
    for f, c in zip(files, counts):
        try:
            tmp = f.with_name(f".{f.name}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, c)
            tmp.replace(f)
        except OSError:      # a read-only store: the sizes are still returned
            pass
    return counts
