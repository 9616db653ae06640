"""Hand-made SpTrSV result rows for the profile tests.

Three datasets; serial at 1 core; wavefront and growlocal at 1, 2 and 4 cores.
Times (seconds) are chosen so that ratios and speed-ups are easy to work out by hand.
"""
from __future__ import annotations

import pandas as pd
import pytest

SERIAL = {"A": 1.0, "B": 2.0, "C": 4.0}
TIMES = {
    ("wavefront", 1): {"A": 1.2, "B": 2.4, "C": 4.8},
    ("wavefront", 2): {"A": 0.5, "B": 1.0, "C": 4.0},
    ("wavefront", 4): {"A": 0.25, "B": 1.0, "C": 2.0},
    ("growlocal", 1): {"A": 1.1, "B": 2.2, "C": 4.4},
    ("growlocal", 2): {"A": 0.5, "B": 0.5, "C": 3.0},
    ("growlocal", 4): {"A": 0.5, "B": 0.8, "C": 1.0},
}
KERNELS = {"serial": "serial", "wavefront": "bsp", "growlocal": "bsp"}


def row(dataset, algorithm, cores, solve_time, *, status="ok", execution="measured", repeat=0,
        kernel=None):
    """One result row with the SpTrSV columns of DESIGN §5."""
    return {
        "experiment": "sptrsv", "config": "toy", "dataset": dataset, "algorithm": algorithm,
        "kernel": kernel or KERNELS.get(algorithm, "bsp"), "cores": cores, "status": status,
        "execution": execution, "solve_time": solve_time,
        "solve_times": [solve_time] * 3, "schedule_time": 0.001 * cores,
        "supersteps": 10 // cores, "wavefronts": 10, "n": 100, "nnz": 400, "repeat": repeat,
    }


def toy_rows(execution="measured"):
    rows = [row(d, "serial", 1, t, execution=execution) for d, t in SERIAL.items()]
    for (algorithm, cores), times in TIMES.items():
        rows += [row(d, algorithm, cores, t, execution=execution) for d, t in times.items()]
    return rows


@pytest.fixture
def rows() -> pd.DataFrame:
    """The toy sweep, every row measured and ok."""
    return pd.DataFrame(toy_rows())


@pytest.fixture
def make_row():
    """Factory of single rows: ``make_row(dataset, algorithm, cores, solve_time, status=...)``."""
    return row


@pytest.fixture
def make_rows():
    """Factory of the toy sweep with a given ``execution``, as a list of row dicts."""
    return toy_rows
