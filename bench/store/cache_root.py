"""The data cache root, ``$SPBENCH_DATA`` (default ``~/.cache/spbench``): downloads, stores,
stand-in statistics, HyperG partitions and calibrations live under it.

A leaf module, so the data layer, the MPI worker and the bench layer import it without a circle.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_dir"]


def data_dir() -> Path:
    """The data cache: ``$SPBENCH_DATA``, default ``~/.cache/spbench``, read at each call."""
    return Path(os.environ.get("SPBENCH_DATA") or "~/.cache/spbench").expanduser()
