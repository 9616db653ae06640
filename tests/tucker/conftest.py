"""Fixtures for the Tucker tests: small random tensors, a private data cache, no internet."""
import numpy as np
import pytest

from spbench.datasets.sparse_tensor import SparseTensor


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Point the cache at tmp_path and the FROSTT URL at a closed local port (never the internet)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPBENCH_DATA", str(cache))
    monkeypatch.setenv("SPBENCH_FROSTT_URL", "http://127.0.0.1:9/frostt")
    return cache


def random_tensor(seed, dims=(9, 7, 5), nnz=120, skew=1.2):
    """A small tensor with power-law slice sizes in every mode (duplicates summed)."""
    rng = np.random.default_rng(seed)
    cols = []
    for L in dims:
        w = np.arange(1, L + 1, dtype=float) ** -skew
        cols.append(rng.permutation(L)[rng.choice(L, size=nnz, p=w / w.sum())])
    return SparseTensor(np.stack(cols, axis=1), rng.random(nnz) + 0.5, dims)


@pytest.fixture
def make_tensor():
    return random_tensor
