"""Per-mode slice statistics of a tensor store (one streaming pass, cached beside the store)."""
import json

import numpy as np

from spbench.datasets.tensor_stats import slice_stats
from spbench.datasets.tensor_store import write_store


def test_slice_stats_counts_and_cache(tmp_path):
    coords = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [4, 2, 3]])
    store = tmp_path / "s"
    write_store(store, coords, np.ones(4), (6, 3, 5), checksum="x", source={"kind": "test"})
    st = slice_stats(store)
    assert st == {"dims": [6, 3, 5], "nnz": 4, "slices": [2, 2, 2], "largest_slice": [3, 2, 3]}
    assert json.loads((store / "stats.json").read_text()) == st
    assert slice_stats(store) == st
