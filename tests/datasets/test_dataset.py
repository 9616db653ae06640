"""Matrices and tensors follow one data set protocol (spbench.datasets.dataset), and the data layer
imports nothing of the experiments that use it."""
import inspect

import pytest

from spbench.datasets import registry, tensor_registry
from spbench.datasets.dataset import DATA_KINDS, Dataset, LoadedDataset


@pytest.mark.parametrize("module, entry, data_kind", [
    (registry, {"lap2d-5pt": {"grid": 40}}, "matrix"),
    (registry, "Flan_1565", "matrix"),
    (tensor_registry, {"nell2": {"nnz": 2000}}, "tensor"),
])
def test_both_registries_resolve_to_the_protocol(module, entry, data_kind):
    ds = module.resolve(entry)
    assert isinstance(ds, Dataset) and ds.data_kind == data_kind and data_kind in DATA_KINDS
    assert module.resolve(ds) is ds
    small = ds.scaled(1 / 8)
    assert type(small) is type(ds) and small.data_kind == data_kind and small != ds


def test_same_signatures():
    for method in ("load", "scaled"):
        sig = {inspect.signature(getattr(cls, method)) for cls in (registry.MatrixDataset,
                                                                   tensor_registry.TensorDataset)}
        names = {tuple(s.parameters) for s in sig}
        assert len(names) == 1, f"{method}: {names}"
    assert inspect.signature(registry.resolve).parameters.keys() == \
        inspect.signature(tensor_registry.resolve).parameters.keys()


def test_loaded_data_sets_share_name_source_checksum():
    loaded = registry.resolve({"lap2d-5pt": {"grid": 6}}).load(progress=None)
    assert isinstance(loaded, LoadedDataset) and loaded.source == "synthetic" and len(loaded.checksum) == 64
    assert issubclass(tensor_registry.LoadedTensor, LoadedDataset)


def test_data_layer_imports_no_experiment(fresh_python):
    code = ("import pkgutil, importlib, sys, spbench.datasets as d\n"
            "for m in pkgutil.iter_modules(d.__path__):\n"
            "    importlib.import_module('spbench.datasets.' + m.name)\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('spbench.tucker', 'spbench.sptrsv')))\n"
            "print(bad)\n")
    assert fresh_python(code) == "[]"


def test_matrix_load_reports_its_download(tiny_server, private_cache):
    seen = []
    loaded = registry.resolve("Tiny_8").load(progress=lambda done, total: seen.append((done, total)))
    size = len(tiny_server.files["/MM/TestGroup/Tiny_8.tar.gz"])
    assert loaded.source == "real" and seen and seen[-1] == (size, size)
