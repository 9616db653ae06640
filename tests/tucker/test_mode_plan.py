"""build_plans(release=True) drops each policy set's arrays once its trees are built (one copy of
the input per policy, §7.3); plans and HOOI's fit are unchanged."""
import numpy as np
import pytest

from spbench.tucker.mpi.distribute import distribute, split_block
from spbench.tucker.hooi.loop import hooi_distributed
from spbench.tucker.mpi.mode_plan import build_plans
from spbench.tucker.mpi.collectives import LocalComm


def _distributed(scheme, make_tensor):
    comm = LocalComm()
    return comm, distribute(comm, split_block(make_tensor(5, dims=(30, 25, 20), nnz=800), comm), scheme)


@pytest.mark.parametrize("scheme", ["coarse", "medium"])
def test_sets_released_after_renumbering_plans_unchanged(scheme, make_tensor):
    comm, kept = _distributed(scheme, make_tensor)
    lt_kept, plans_kept = build_plans(comm, kept, "csf", [4, 4, 4])
    assert all(s.coords is not None and s.gids is not None for s in kept.sets)
    comm, dropped = _distributed(scheme, make_tensor)
    lt, plans = build_plans(comm, dropped, "csf", [4, 4, 4], release=True)
    assert all(s.coords is None and s.gids is None and s.values is None for s in dropped.sets)
    assert [f.tolist() for f in lt.factor_ids] == [f.tolist() for f in lt_kept.factor_ids]
    for a, b in zip(plans, plans_kept):
        assert np.array_equal(a.rows, b.rows) and np.array_equal(a.send_idx, b.send_idx)


@pytest.mark.parametrize("scheme,init", [("coarse", "random"), ("lite", "random"), ("coarse", "hosvd")])
def test_hooi_fit_same_with_the_input_released(scheme, init, make_tensor):
    fits = []
    for release in (False, True):
        comm, dt = _distributed(scheme, make_tensor)
        res = hooi_distributed(comm, dt, 4, invocations=2, init=init, seed=1, release_input=release)
        fits.append(res.fits)
        assert all((s.coords is None) == release for s in dt.sets)
    np.testing.assert_allclose(fits[1], fits[0], rtol=1e-12)


@pytest.mark.parametrize("scheme", ["coarse", "medium", "lite"])
@pytest.mark.parametrize("release", [False, True])
def test_trees_built_on_threads_equal_one_thread(scheme, release, make_tensor):
    """threads > 1 sorts on that many threads: the same trees, the sets released alike."""
    built = []
    for threads in (1, 3):
        comm, dt = _distributed(scheme, make_tensor)
        built.append((dt, build_plans(comm, dt, "csf", [4, 3, 2], release=release, threads=threads)[1]))
    (dt1, one), (dt3, three) = built
    assert [s.coords is None for s in dt1.sets] == [s.coords is None for s in dt3.sets] == [release] * len(dt1.sets)
    for a, b in zip(one, three):
        ta, tb = a.ttm, b.ttm
        assert ta.order == tb.order and np.array_equal(ta.rows, tb.rows) and np.array_equal(ta.values, tb.values)
        assert all(np.array_equal(x, y) for x, y in zip(ta.ptr, tb.ptr))
        assert all((x is None and y is None) or np.array_equal(x, y) for x, y in zip(ta.ids, tb.ids))
