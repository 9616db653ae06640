"""Shared fixtures: a writer for small config files and the path of the installed CLI."""
import shutil
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def write_config(tmp_path):
    """Write YAML text (dedented) to tmp_path/name and return its path."""
    def write(text, name="cfg.yaml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path
    return write


@pytest.fixture(scope="session")
def spbench_cmd():
    """The console script beside this interpreter, else `python -m spbench.cli`."""
    exe = Path(sys.executable).with_name("spbench")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("spbench")
    return [found] if found else [sys.executable, "-m", "spbench.cli"]


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own $SPBENCH_DATA, so a user's cache or calibration never leaks in
    (tests that need a particular cache set it again)."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path_factory.mktemp("spbench-data")))
