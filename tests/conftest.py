"""Shared fixtures: a writer for small config files, the path of the installed CLI, small random
tensors (``make_tensor``), a fresh interpreter (``fresh_python``)."""
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from spbench.datasets.sparse_tensor import SparseTensor


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
    """``random_tensor(seed, dims, nnz, skew)``: the tests' small power-law tensors."""
    return random_tensor


@pytest.fixture
def fresh_python():
    """Runs Python code in a fresh interpreter and returns what it printed (a failure is the test's):
    what a module imports can only be seen before anything else imported it."""
    def run(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()
    return run
