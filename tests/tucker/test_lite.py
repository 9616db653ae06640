"""Lite (paper §6): Figure 7 exactly, Theorem 6.1's bounds on many random slice distributions."""
import math

import numpy as np
import pytest

from spbench.tucker.schemes import SCHEMES
from spbench.tucker.schemes.lite import lite_mode, lite_plan
from spbench.datasets.sparse_tensor import SparseTensor


def figure7_index():
    """A one-mode 'tensor' (element → slice id) with Figure 7's slice sizes, ids in sorted order."""
    sizes = [5, 5, 5, 5, 5, 5, 5, 18, 22, 25]
    return np.repeat(np.arange(10), sizes), sizes


def test_figure7_plan():
    _, sizes = figure7_index()
    plan = lite_plan(sizes, 5)
    assert plan.limit == 20
    assert plan.t_hat == 7                       # seven slices in stage 1
    assert plan.stage1_loads.tolist() == [10, 10, 5, 5, 5]
    # the eighth slice (18) would give processor 2 23 > 20 elements: stage 2 starts there
    assert plan.stage1_loads[2] + sizes[7] == 23
    s, p, c = plan.pieces()
    got = sorted(zip(s.tolist(), p.tolist(), c.tolist()))
    stage1 = [(t, t % 5, 5) for t in range(7)]
    stage2 = [(7, 0, 10), (7, 1, 8),                # slice 8: processors 0, 1
              (8, 1, 2), (8, 2, 15), (8, 3, 5),      # slice 9: head 1, tail 2 and 3 (§6.3)
              (9, 3, 10), (9, 4, 15)]                # slice 10: processors 3, 4
    assert got == sorted(stage1 + stage2)


def test_figure7_elements():
    index, sizes = figure7_index()
    owners, _ = lite_mode(index, 10, 5)
    assert np.bincount(owners, minlength=5).tolist() == [20] * 5
    for l, expect in {7: {0: 10, 1: 8}, 8: {1: 2, 2: 15, 3: 5}, 9: {3: 10, 4: 15}}.items():
        got = np.bincount(owners[index == l], minlength=5)
        assert {p: int(v) for p, v in enumerate(got) if v} == expect
    # stage-2 elements are taken in storage order: the first 10 of slice 8 go to processor 0
    assert owners[index == 7].tolist() == [0] * 10 + [1] * 8
    # shuffling the storage order keeps the per-processor counts
    perm = np.random.default_rng(0).permutation(index.size)
    owners2, _ = lite_mode(index[perm], 10, 5)
    for l in range(10):
        assert (np.bincount(owners2[index[perm] == l], minlength=5)
                == np.bincount(owners[index == l], minlength=5)).all()


def _metrics(index, owners, P):
    E = np.bincount(owners, minlength=P)
    pairs = np.unique(np.asarray(index, dtype=np.int64) * P + owners)
    R = np.bincount(pairs % P, minlength=P)
    return E.max(), pairs.size, R.max()


def _random_sizes(rng, kind, L):
    if kind == "uniform":
        return rng.integers(1, 50, L)
    if kind == "powerlaw":
        return np.clip(rng.pareto(rng.uniform(0.5, 2.0), L) * 5, 1, 3000).astype(int)
    if kind == "giant":
        s = rng.integers(1, 5, L)
        s[rng.integers(L)] = rng.integers(100, 5000)
        return s
    if kind == "equal":
        return np.full(L, int(rng.integers(1, 20)))
    if kind == "few_large":
        return rng.integers(200, 1000, L)
    raise AssertionError(kind)


@pytest.mark.parametrize("seed,kind", list(enumerate(["uniform", "powerlaw", "giant", "equal", "few_large"])))
def test_theorem_6_1_bounds(seed, kind):
    rng = np.random.default_rng(seed)
    for _ in range(120):
        P = int(rng.integers(1, 129))
        L = int(rng.integers(1, 300))
        sizes = _random_sizes(rng, kind, L)
        index = rng.permutation(np.repeat(np.arange(L), sizes))
        owners, plan = lite_mode(index, L, P)
        assert owners.dtype == np.int32 and owners.min() >= 0 and owners.max() < P
        m = index.size
        e_max, r_sum, r_max = _metrics(index, owners, P)
        assert e_max <= math.ceil(m / P)                       # (1)
        assert r_sum <= L + P                                   # (2)
        assert r_max <= math.ceil(L / P) + 2                    # (3)
        assert plan.order.size - plan.t_hat <= P                # at most P stage-2 slices
        # element-level owners agree with the plan's (slice, processor, count) pieces
        s, p, c = plan.pieces()
        assert c.sum() == m
        counts = np.zeros((L, P), dtype=np.int64)
        np.add.at(counts, (index, owners), 1)
        expect = np.zeros((L, P), dtype=np.int64)
        np.add.at(expect, (s, p), c)
        assert (counts == expect).all()


def test_lite_multi_policy_and_edge_cases(make_tensor):
    t = make_tensor(5, dims=(12, 30, 4), nnz=400)
    for P in (1, 2, 7, 64):
        d = SCHEMES["lite"](t, P)
        assert d.multi_policy and len(d.policies) == 3
        d.validate(t.nnz)
        for n in range(3):
            idx = t.coords[:, n]
            e_max, r_sum, r_max = _metrics(idx, d.policy(n), P)
            L = t.nonempty_slices(n)
            assert e_max <= math.ceil(t.nnz / P) and r_sum <= L + P and r_max <= math.ceil(L / P) + 2
    empty = SparseTensor(np.zeros((0, 2), dtype=np.int64), [], (3, 3))
    d = SCHEMES["lite"](empty, 4)
    assert all(p.size == 0 for p in d.policies)
    with pytest.raises(ValueError):
        lite_plan([1, 2], 0)


def test_lite_skips_empty_slices():
    index = np.array([0, 0, 5, 5, 5, 9])
    owners, plan = lite_mode(index, 12, 2)
    assert sorted(plan.order.tolist()) == [0, 5, 9]
    assert np.bincount(owners, minlength=2).max() <= 3


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=120),
       P=st.integers(min_value=1, max_value=128), seed=st.integers(min_value=0, max_value=2**16))
def test_theorem_6_1_property(sizes, P, seed):
    """Theorem 6.1 on any slice-size distribution (empty slices included) and P from 1 to 128."""
    sizes = np.asarray(sizes)
    if sizes.sum() == 0:
        sizes[0] = 1
    rng = np.random.default_rng(seed)
    index = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    owners, _ = lite_mode(index, sizes.size, P)
    e_max, r_sum, r_max = _metrics(index, owners, P)
    L = int((sizes > 0).sum())
    assert e_max <= math.ceil(index.size / P)
    assert r_sum <= L + P
    assert r_max <= math.ceil(L / P) + 2


@pytest.mark.parametrize("kind", ["uniform", "powerlaw", "giant", "few_large"])
@pytest.mark.parametrize("P", [1, 2, 7, 64, 513])
def test_serial_decisions_equal_collective_ones(kind, P):
    """The one-process decisions (compiled stage 1 and decision pass) equal the collective form's
    run on a one-process communicator, field by field."""
    import importlib

    from spbench.tucker.mpi.collectives import LocalComm
    L = importlib.import_module("spbench.tucker.schemes.lite")   # the package re-exports a function of that name

    sizes = _random_sizes(np.random.default_rng(P), kind, 3000).astype(np.int64)
    sizes[::7] = 0
    comm = LocalComm()
    serial = L._decide_serial(L._slice_stage_serial(sizes, P), sizes.size, P)
    stage = L._slice_stage_collective(comm, sizes, P, np.random.default_rng(0))
    collective = L._decide_collective(comm, stage, sizes.size, P)
    for field in ("ids", "sizes", "first", "limit", "t_hat", "slices", "bounds"):
        assert np.array_equal(getattr(serial.stage, field), getattr(collective.stage, field)), field
    for field in ("stage1_owner", "slice_k", "start2"):
        assert np.array_equal(getattr(serial, field), getattr(collective, field)), field


@pytest.mark.parametrize("block", [1, 3, 1 << 22])
def test_pair_blocks_are_the_pieces_pairs(block):
    """The streamed S_n's bounded-memory blocks hold exactly the (slice, processor) pairs of
    :meth:`LitePlan.pieces`, every block at most ``block`` stage-1 slices."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 40, size=200)
    plan = lite_plan(sizes, 7)
    s, p, _ = plan.pieces()
    blocks = list(plan.pair_blocks(block))
    assert all(ids.size <= block for ids, _ in blocks[:-1])
    got = sorted((int(i), int(q)) for ids, procs in blocks for i, q in zip(ids, procs))
    assert got == sorted(zip(s.tolist(), p.tolist()))
