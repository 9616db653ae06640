"""No two data sets of one SpTrSV set are the same matrix (sptrsv-elasticity §5.2, Tables A.1-A.3):
a stand-in repeated under two names would count twice in the set's geometric means."""
import hashlib
from pathlib import Path

import numpy as np
import pytest
import yaml

from spbench.datasets.paper_matrices import METIS_ONLY, SUITESPARSE
from spbench.datasets.registry import resolve

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SETS = ("sptrsv_suitesparse.yaml", "sptrsv_ichol.yaml", "sptrsv_metis.yaml")


def _digest(A) -> str:
    """sha256 of the matrix's shape and CSR arrays (indices sorted): equal exactly for equal bytes."""
    A = A.tocsr(copy=True)
    A.sort_indices()
    h = hashlib.sha256(np.asarray(A.shape, dtype=np.int64).tobytes())
    for part in (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def test_standin_recipes_are_distinct():
    """At full size: no two registered matrices share a stand-in recipe (generator and parameters)."""
    seen = {}
    for m in [*SUITESPARSE.values(), *METIS_ONLY.values()]:
        label = m.standin_label()
        assert label not in seen, f"{m.name} and {seen[label]} have the same stand-in {label}"
        seen[label] = m.name


@pytest.mark.parametrize("config", SETS)
def test_no_two_data_sets_of_a_set_are_byte_identical(config):
    """Every data set of the config, as its run loads it (stand-in, transform), at 1/64 of its rows."""
    if config == "sptrsv_ichol.yaml":
        pytest.importorskip("sksparse", reason="the iChol transform needs scikit-sparse")
    entries = yaml.safe_load((CONFIGS / config).read_text())["datasets"]
    seen = {}
    for entry in entries:
        dataset = resolve(entry).scaled(1 / 64)
        digest = _digest(dataset.load(fetch=False, standin=True).matrix)
        assert digest not in seen, f"{config}: {dataset.name} and {seen[digest]} are the same matrix"
        seen[digest] = dataset.name
    assert len(seen) == len(entries)
