"""Generator and stand-in parameters out of range (1e20, negative, a matrix beyond int32 rows) are
refused in one line when the data set is resolved, before anything is generated."""
from dataclasses import replace

import pytest

from spbench.datasets import registry, synthetic
from spbench.datasets import tensor_registry as tr
from spbench.datasets.errors import DatasetError

HUGE = 10**20


@pytest.mark.parametrize("name, params, words", [
    ("lap2d-5pt", {"grid": HUGE}, ["lap2d-5pt", "rows", "2,147,483,647"]),
    ("lap3d-27pt", {"grid": 2000}, ["lap3d-27pt", "8,000,000,000 rows"]),
    ("elasticity3d", {"grid": 10**7}, ["elasticity3d", "rows"]),
    ("rgg-spd", {"n": HUGE}, ["rgg-spd", "rows"]),
    ("fem-mesh", {"tile_x": HUGE}, ["fem-mesh", "'tile_x'"]),
    ("fem-mesh", {"cells_x": 10**6, "cells_y": 10**6}, ["fem-mesh", "rows"]),
    ("bundle-adjustment", {"points": HUGE}, ["bundle-adjustment", "rows"]),
    ("rgg-spd", {"n": 100, "avg_degree": 1e20}, ["rgg-spd", "'avg_degree'", "99"]),
    ("fem-mesh", {"porosity": 2.0}, ["fem-mesh", "'porosity'", "< 1"]),
])
def test_out_of_range_generator_parameters_are_refused(name, params, words):
    with pytest.raises(DatasetError) as err:
        synthetic.check_params(name, params)
    assert all(w in str(err.value) for w in words), str(err.value)
    with pytest.raises(DatasetError, match="data set"):   # a config's entry, too
        registry.resolve({name: params})


def test_in_range_parameters_still_resolve():
    assert registry.resolve({"lap3d-7pt": {"grid": 1000}}).name == "lap3d-7pt[grid=1000]"   # 1e9 rows: fits int32
    assert synthetic.check_params("elasticity3d", {"seed": HUGE})["seed"] == HUGE           # a seed is any integer


def test_a_memory_error_while_generating_is_one_line(monkeypatch):
    def no_memory(grid):
        raise MemoryError("Unable to allocate 745. GiB")
    monkeypatch.setitem(synthetic.GENERATORS, "lap2d-5pt", replace(synthetic.GENERATORS["lap2d-5pt"], build=no_memory))
    with pytest.raises(DatasetError, match=r"lap2d-5pt\[grid=50\]: out of memory generating 2,500 rows"):
        synthetic.generate("lap2d-5pt", {"grid": 50})


@pytest.mark.parametrize("params, words", [
    ({"nnz": 0}, ["'nnz'", ">= 1"]),
    ({"nnz": -5}, ["'nnz'", ">= 1"]),
    ({"dim_scale": 1e20}, ["'dim_scale'", "(0, 1]"]),
    ({"dim_scale": 0}, ["'dim_scale'", "(0, 1]"]),
    ({"dim_scale": -1}, ["'dim_scale'", "(0, 1]"]),
    ({"nnz": "1e20"}, ["'nnz'", "'1e20'"]),
    ({"seed": -1}, ["'seed'", ">= 0"]),
])
def test_out_of_range_standin_parameters_are_refused(params, words):
    with pytest.raises(DatasetError) as err:
        tr.resolve({"nell2": params})
    assert str(err.value).startswith("nell2: ") and all(w in str(err.value) for w in words), str(err.value)
