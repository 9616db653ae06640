"""The modelled HOOI time split by cost group (compute, latency, bandwidth): C + A + B is the
model's hooi_time, and scaling each group's costs scales its share exactly (no max over ranks mixes
two groups), the split a paper profile (tucker-lite Figs. 14 and 16) is fitted on."""
import numpy as np
import pytest

from spbench.tucker.model.cost_model import (cost_group, model_groups, predict_from_loads, rank_loads,
    scale_costs)
from spbench.tucker.schemes import get_scheme
from tests.tucker.test_model import ROUND_MPI

#: ROUND_MPI with an oracle ladder (a cost per entry by Z's size): scaled entry by entry, sizes not
LADDER = {**ROUND_MPI, "oracle_bytes": [2.0 ** 12, 2.0 ** 20], "oracle_matvec_entry": [1e-10, 4e-10],
          "oracle_rmatvec_entry": [2e-10, 6e-10]}


def test_cost_groups_leave_sizes_alone():
    assert [cost_group(k) for k in ("alpha_allreduce", "beta_alltoallv", "ttm_csf_leaf", "ttm_local_khat",
                                    "ttm_cache_bytes", "oracle_bytes")] == \
        ["latency", "bandwidth", "compute", "compute", None, None]
    scaled = scale_costs({"costs": LADDER}, 2.0, 50.0, 0.5)
    assert scaled["ttm_cache_bytes"] == LADDER["ttm_cache_bytes"] and scaled["oracle_bytes"] == LADDER["oracle_bytes"]
    assert scaled["oracle_matvec_entry"] == pytest.approx([2e-10, 8e-10])
    assert scaled["alpha_alltoallv"] == pytest.approx(50 * 2e-5) and scaled["beta_allreduce"] == pytest.approx(5e-9)


@pytest.mark.parametrize("P", [1, 3, 8])
@pytest.mark.parametrize("ttm", ["csf", "paper"])
@pytest.mark.parametrize("dims", [(4, 30, 25), (40, 30, 25, 6)])   # a 4-slice mode takes the dense fallback
def test_groups_add_up_to_hooi_and_scale_exactly(P, ttm, dims, make_tensor):
    t = make_tensor(3, dims=dims, nnz=1500)
    for name in ("lite", "coarse", "medium"):
        loads = rank_loads(t, get_scheme(name)(t, P, seed=0), 4, ttm=ttm)
        base = predict_from_loads(loads, LADDER, invocations=2, ttm=ttm)
        g = model_groups(loads, LADDER, invocations=2, ttm=ttm)
        assert g == model_groups(loads, LADDER, invocations=2, ttm=ttm, predicted=base)
        assert g["compute"] + g["latency"] + g["bandwidth"] == pytest.approx(base["hooi_time"], rel=1e-12), name
        assert g["latency"] + g["bandwidth"] == pytest.approx(base["comm_time"], rel=1e-12)
        assert (g["latency"] > 0 and g["bandwidth"] > 0) == (P > 1)
        for s in ((2.0, 50.0, 0.5), (0.1, 1.0, 3.0), (1.0, 0.0, 0.0)):
            scaled = predict_from_loads(loads, scale_costs(LADDER, *s), invocations=2, ttm=ttm)["hooi_time"]
            expect = s[0] * g["compute"] + s[1] * g["latency"] + s[2] * g["bandwidth"]
            assert scaled == pytest.approx(expect, rel=1e-12), (name, s)


def test_one_rank_needs_no_mpi_costs(make_tensor):
    t = make_tensor(1, dims=(20, 15, 10), nnz=400)
    costs = {k: v for k, v in LADDER.items() if cost_group(k) not in ("latency", "bandwidth")}
    loads = rank_loads(t, get_scheme("lite")(t, 1, seed=0), 3)
    g = model_groups(loads, costs)
    assert g["latency"] == g["bandwidth"] == 0.0
    assert g["compute"] == pytest.approx(predict_from_loads(loads, costs)["hooi_time"], rel=1e-12)
    assert np.isfinite(g["compute"]) and g["compute"] > 0


def test_a_simulated_row_carries_its_groups(make_tensor, tmp_path):
    """The row of a simulated point holds model_groups (a declared row field), adding up to its hooi_time."""
    from types import SimpleNamespace

    from spbench.datasets.tensor_store import read_header, write_store
    from spbench.tucker.experiment import ROW_FIELDS, PreparedTensor, TuckerExperiment

    t = make_tensor(7, dims=(40, 30, 20), nnz=1500)
    store = tmp_path / "store"
    write_store(store, t.coords, t.values, t.dims, checksum="x", source={})
    prep = PreparedTensor(loaded=SimpleNamespace(tensor=t, store=store, header=read_header(store)), checksum="x",
                          source="synthetic", label="t")
    exp = TuckerExperiment()
    exp.costs = {"costs": LADDER}
    cfg = SimpleNamespace(params={}, seed=0, invocations=1, lanczos="paper", ttm="csf")
    row = exp.run(SimpleNamespace(axes={"algorithm": "lite", "ranks": 4, "K": 3}), prep, cfg)
    g = row["model_groups"]
    assert "model_groups" in ROW_FIELDS and set(g) == {"compute", "latency", "bandwidth"}
    assert sum(g.values()) == pytest.approx(row["hooi_time"], rel=1e-12)
    assert g["latency"] + g["bandwidth"] == pytest.approx(row["comm_time"], rel=1e-12)
    exp.costs = None
    assert "model_groups" not in exp.run(SimpleNamespace(axes={"algorithm": "lite", "ranks": 4, "K": 3}), prep, cfg)
