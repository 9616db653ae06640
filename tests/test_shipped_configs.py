"""Every config in configs/ loads, validates and expands (what `spbench run CONFIG --dry-run` does)."""
from pathlib import Path

import pytest

from spbench.pipeline.config import load_config
from spbench.pipeline.sweep import expand

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_loads_and_expands(path):
    config = load_config(path)
    assert config.name == path.stem
    assert len(expand(config)) > 0
