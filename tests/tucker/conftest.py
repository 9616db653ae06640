"""Fixtures for the Tucker tests: a private data cache, no internet (small random tensors: the
``make_tensor`` fixture of tests/conftest.py)."""
import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Point the cache at tmp_path and the FROSTT URL at a closed local port (never the internet)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPBENCH_DATA", str(cache))
    monkeypatch.setenv("SPBENCH_FROSTT_URL", "http://127.0.0.1:9/frostt")
    return cache
