"""TTM kernels (paper §3, Appendix A; the CSF kernel of §8's future work) against dense numpy
and each other."""
import itertools

import numpy as np
import pytest

from spbench.tucker.hooi.hooi_reference import ttm_dense as _ttm_dense
from spbench.tucker.hooi.csf import CSFPlan, csf_flops
from spbench.tucker.hooi.loop import hooi
from spbench.tucker.hooi.ttm import TTMPlan, build_ttm_plan, khat, ttm, ttm_flops, ttm_scratch_len, unfold
from spbench.datasets.sparse_tensor import SparseTensor


def _factors(dims, K, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((L, k)) for L, k in zip(dims, K)]


@pytest.mark.parametrize("dims,K,nnz", [((9, 7, 5), (3, 2, 4), 150), ((9, 7, 5, 6), (3, 2, 4, 2), 150),
                                        ((6, 5, 4, 3, 4), (2, 3, 2, 2, 3), 150),
                                        ((3, 30, 25), (2, 5, 4), 1500),      # rows > CHUNK elements
                                        ((40, 30, 3, 4), (5, 4, 3, 2), 60)])  # rows < GEMM_MIN
@pytest.mark.parametrize("threads", [1, 2])
def test_ttm_matches_dense(dims, K, nnz, threads, make_tensor):
    T = make_tensor(1, dims=dims, nnz=nnz)
    F = _factors(dims, K)
    X = T.to_dense()
    for n in range(T.nmodes):
        plan = TTMPlan.build(T, n)
        Z = ttm(T, plan, F, threads=threads)
        Zd = unfold(_ttm_dense(X, F, skip=n), n)
        assert Z.shape == (plan.nrows, khat(K, n))
        np.testing.assert_array_equal(plan.rows, np.flatnonzero(T.slice_sizes(n)))
        np.testing.assert_allclose(Z, Zd[plan.rows], rtol=1e-12, atol=1e-12)
        assert not np.any(np.delete(Zd, plan.rows, axis=0))   # empty slices: zero rows


@pytest.mark.parametrize("threads", [1, 2])
def test_ttm_subset_of_elements_is_local_copy(threads, make_tensor):
    """A rank's elements only: its compact rows are the slices it shares (sum-distributed Z)."""
    T = make_tensor(2, dims=(8, 6, 7, 5), nnz=200)
    K = (2, 3, 2, 3)
    F = _factors(T.dims, K, seed=3)
    rng = np.random.default_rng(0)
    owner = rng.integers(0, 3, T.nnz)
    for n in range(T.nmodes):
        total = np.zeros((T.dims[n], khat(K, n)))
        for p in range(3):
            elements = np.flatnonzero(owner == p)
            plan = TTMPlan.build(T, n, elements)
            np.testing.assert_array_equal(np.repeat(plan.rows, np.diff(plan.row_ptr)),
                                          T.coords[plan.elems, n])
            out = np.full((plan.nrows, khat(K, n)), np.nan)        # the kernel overwrites
            scratch = np.empty((threads, ttm_scratch_len(K, n)))
            Z = ttm(T, plan, F, out=out, scratch=scratch, threads=threads)
            assert Z is out
            part = SparseTensor(T.coords[elements], T.values[elements], T.dims)
            Zd = unfold(_ttm_dense(part.to_dense(), F, skip=n), n)
            np.testing.assert_allclose(Z, Zd[plan.rows], rtol=1e-12, atol=1e-12)
            total[plan.rows] += Z
        np.testing.assert_allclose(total, unfold(_ttm_dense(T.to_dense(), F, skip=n), n), atol=1e-12)


def test_ttm_empty_plan_and_bad_shapes(make_tensor):
    T = make_tensor(3, dims=(5, 4, 3), nnz=30)
    F = _factors(T.dims, (2, 2, 2))
    plan = TTMPlan.build(T, 0, np.zeros(0, dtype=np.int64))
    assert ttm(T, plan, F).shape == (0, 4)
    with pytest.raises(ValueError):
        ttm(T, TTMPlan.build(T, 0), F, out=np.empty((1, 4)))
    with pytest.raises(ValueError):
        ttm(T, TTMPlan.build(T, 0), F[:2])
    assert ttm_flops(10, (10, 10, 10), 0) == 10 * (2 * 100 + 10)


# ---- CSF kernel -------------------------------------------------------------------------
def _sparse_with_empty_slices(seed, dims, nnz, make_tensor):
    """Power-law tensor spread over every other index of each mode (empty slices in between),
    plus one element alone in its slice (a single-element fiber at every level)."""
    T = make_tensor(seed, dims=tuple((d + 1) // 2 for d in dims), nnz=nnz)
    coords = np.vstack([T.coords * 2, np.array([[d - 1 for d in dims]])])
    return SparseTensor(coords, np.append(T.values, 0.75), dims)


def _prefix_counts(coords, order):
    """Distinct index prefixes over order[0..k] for every level k (brute force)."""
    return [len({tuple(row) for row in coords[:, list(order[:k + 1])]}) for k in range(len(order))]


@pytest.mark.parametrize("dims,K", [((11, 9, 7), (3, 2, 4)), ((9, 7, 7, 5), (3, 2, 4, 2)),
                                    ((7, 5, 5, 3, 5), (2, 3, 2, 2, 3))])
@pytest.mark.parametrize("threads", [1, 2])
def test_csf_equals_paper_every_level_order(dims, K, threads, make_tensor):
    """csf and paper give the same compact penultimate matrices (1e-12 relative) for every
    order of the tree levels, on a rank's subset of the elements too."""
    T = _sparse_with_empty_slices(4, dims, 300, make_tensor)
    F = _factors(dims, K, seed=1)
    subset = np.flatnonzero(np.random.default_rng(0).random(T.nnz) < 0.6)
    for elements in (None, subset):
        for n in range(T.nmodes):
            paper = TTMPlan.build(T, n, elements)
            Zp = ttm(T, paper, F, threads=threads)
            others = [j for j in range(T.nmodes) if j != n]
            for perm in itertools.permutations(others):
                plan = CSFPlan.build(T, n, elements, order=(n, *perm))
                np.testing.assert_array_equal(plan.rows, paper.rows)
                Z = ttm(None, plan, F, scratch=np.empty((threads, ttm_scratch_len(K, n))), threads=threads)
                assert np.max(np.abs(Z - Zp)) <= 1e-12 * np.max(np.abs(Zp))
                sub = T.coords if elements is None else T.coords[elements]
                counts = _prefix_counts(sub, plan.order)
                assert plan.nodes == counts
                assert plan.flops(K) == csf_flops(counts, len(sub), [K[j] for j in plan.order])


def test_csf_flops_and_order_choice():
    """Fibers along a short mode: the tree puts it in the middle (fewer level-1 nodes) and does
    fewer flops than the paper's kernel; the count matches the formula by hand."""
    rng = np.random.default_rng(2)
    nnz = 4000
    coords = np.stack([rng.integers(0, 50, nnz), rng.integers(0, 4, nnz), rng.integers(0, 400, nnz)], axis=1)
    T = SparseTensor(coords, rng.random(nnz), (50, 4, 400))
    K = (5, 5, 5)
    plan = CSFPlan.build(T, 0, K=K)
    assert plan.order == (0, 1, 2)
    fibers = len({(a, b) for a, b in T.coords[:, :2]})
    slices = len(set(T.coords[:, 0]))
    assert plan.flops(K) == 5 * (2 * T.nnz - fibers) + 25 * (2 * fibers - slices)
    assert plan.flops(K) < TTMPlan.build(T, 0).flops(K) == ttm_flops(T.nnz, K, 0)
    F = _factors(T.dims, K)
    np.testing.assert_allclose(ttm(T, plan, F), ttm(T, TTMPlan.build(T, 0), F), rtol=1e-12, atol=1e-12)


def test_prefix_counts_beyond_int64_cells_equal_sets():
    """Distinct (slice, index) prefixes per rank by keys when the cells fit in int64 and by a sort of
    (rank, re-ranked key) when they do not (delicious-sized modes): both equal a count by sets."""
    from spbench.tucker.hooi.csf import prefix_counts

    rng = np.random.default_rng(4)
    nnz, P = 3000, 5
    coords = np.stack([rng.integers(0, 40, nnz), rng.integers(0, 30, nnz), rng.integers(0, 20, nnz),
                       rng.integers(0, 10, nnz)], axis=1)
    owner = rng.integers(0, P, nnz)
    for dims in ((40, 30, 20, 10), (2 ** 40, 2 ** 30, 2 ** 20, 10)):
        got = prefix_counts(coords, dims, 1, owner, P)
        assert sorted(got) == [(0,), (0, 2), (0, 3), (2,), (2, 3), (3,)]
        for S, counts in got.items():
            want = [len({(int(coords[e, 1]),) + tuple(int(coords[e, j]) for j in S)
                         for e in np.flatnonzero(owner == p)}) for p in range(P)]
            assert list(counts) == want, (dims, S)


def _leaf_coords(plan):
    """Every leaf's index per level, walked up the tree (ptr, then rows and ids)."""
    d = len(plan.order) - 1
    cols = [None] * d + [np.asarray(plan.ids[d])]
    node = np.arange(plan.nnz)
    for k in range(d - 1, -1, -1):
        parent = np.repeat(np.arange(plan.ptr[k].size - 1), np.diff(plan.ptr[k]))
        node = parent[node]
        cols[k] = np.asarray(plan.rows if k == 0 else plan.ids[k])[node]
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("dims", [(11, 9, 7), (9, 7, 7, 5), (3, 40, 2, 6, 5)])
def test_csf_from_columns_is_the_sorted_tree(dims, make_tensor):
    """Trees from strided int32 columns (counting sorts) hold the elements in lexicographic order
    of the level order, equal the tree built from the tensor, and keep the values with them."""
    T = _sparse_with_empty_slices(6, dims, 400, make_tensor)
    C = np.ascontiguousarray(T.coords, dtype=np.int32)           # (nnz, N): strided columns
    for n in range(T.nmodes):
        others = [j for j in range(T.nmodes) if j != n]
        for order in [None, (n, *others), (n, *reversed(others))]:
            plan = CSFPlan.from_columns([C[:, j] for j in range(T.nmodes)], T.dims, n, T.values, K=(3,) * len(dims),
                                        order=order)
            ref = CSFPlan.build(T, n, K=(3,) * len(dims), order=order)
            assert plan.order == ref.order and plan.nodes == ref.nodes
            lex = np.lexsort([T.coords[:, j] for j in reversed(plan.order)])
            np.testing.assert_array_equal(_leaf_coords(plan), T.coords[lex][:, list(plan.order)])
            np.testing.assert_array_equal(plan.values, T.values[lex])


def test_counting_sort_and_pair_kernels():
    from spbench.kernels.tucker import _ttm_csf

    rng = np.random.default_rng(3)
    key = rng.integers(0, 7, 500).astype(np.int32)
    col = rng.integers(0, 30, 500).astype(np.int32)
    counts = np.empty(8, np.int64)
    out = np.empty(500, np.int32)
    _ttm_csf.stable_order(key, 7, np.zeros(0, np.int32), out, counts)
    np.testing.assert_array_equal(out, np.argsort(key, kind="stable"))
    np.testing.assert_array_equal(counts[:7], np.cumsum(np.bincount(key, minlength=7)))   # bucket ends
    again = np.empty(500, np.int32)
    big = np.empty(31, np.int64)
    _ttm_csf.stable_order(col[out], 30, out, again, big)             # by col, then key: lexicographic
    np.testing.assert_array_equal(again, np.lexsort((key, col)))
    roots, pairs = _ttm_csf.distinct_pairs(col[out], counts[:7], np.empty(30, np.int32))
    assert (roots, pairs) == (len(set(key)), len(set(zip(key, col))))


def test_csf_empty_plan_bad_input_and_kind(make_tensor):
    T = make_tensor(3, dims=(5, 4, 3), nnz=30)
    F = _factors(T.dims, (2, 2, 2))
    plan = build_ttm_plan(T, 0, np.zeros(0, dtype=np.int64))
    assert isinstance(plan, CSFPlan) and ttm(None, plan, F).shape == (0, 4) and plan.flops((2, 2, 2)) == 0
    with pytest.raises(ValueError):
        ttm(None, build_ttm_plan(T, 0), F, out=np.empty((1, 4)))
    with pytest.raises(ValueError):
        ttm(None, build_ttm_plan(T, 0), [F[0], F[1], F[2][:2]])
    with pytest.raises(ValueError):
        CSFPlan.build(T, 0, order=(1, 0, 2))
    with pytest.raises(ValueError, match="ttm must be one of"):
        build_ttm_plan(T, 0, kind="dense")
    assert isinstance(build_ttm_plan(T, 0, kind="paper"), TTMPlan)


@pytest.mark.parametrize("ttm_kind", ["csf", "paper"])
def test_hooi_same_fit_with_either_kernel(ttm_kind, make_tensor):
    T = _sparse_with_empty_slices(5, (12, 10, 9, 8), 500, make_tensor)
    K = (3, 2, 4, 2)
    ref = hooi(T, K, invocations=2, seed=1, tol=1e-12, lanczos="converged", ttm="paper")
    res = hooi(T, K, invocations=2, seed=1, tol=1e-12, lanczos="converged", ttm=ttm_kind)
    assert abs(res.fit - ref.fit) <= 1e-10 * abs(ref.fit)
    with pytest.raises(ValueError, match="ttm must be one of"):
        hooi(T, K, ttm="dense")


def test_config_ttm_key_and_axis(tmp_path):
    from spbench.pipeline.config import ConfigError, parse_config
    from spbench.pipeline.sweep import expand as expand_points, run_parameters

    base = {"name": "t", "experiment": "tucker", "fallback": "standin", "datasets": [{"nell2": {"nnz": 2000}}],
            "sweep": {"algorithm": ["lite"], "ranks": [1], "K": [2]}}
    assert parse_config(base).ttm == "csf"
    cfg = parse_config({**base, "ttm": "paper"})
    assert cfg.ttm == "paper"
    assert [run_parameters(cfg, p)["ttm"] for p in expand_points(cfg)] == ["paper"]
    swept = parse_config({**base, "sweep": {**base["sweep"], "ttm": ["paper", "csf"]}})
    assert [p.axes["ttm"] for p in expand_points(swept)] == ["paper", "csf"]
    for bad in ({**base, "ttm": "dense"}, {**base, "sweep": {**base["sweep"], "ttm": ["fast"]}}):
        with pytest.raises(ConfigError, match="ttm"):
            parse_config(bad)


@pytest.mark.mpi
def test_measured_sweep_over_the_ttm_axis(write_config, tmp_path, monkeypatch):
    """`ttm: [paper, csf]` as a sweep axis: each row says its kernel and the flops it performed;
    the fits agree and csf performs no more flops (equal when no fiber holds two elements)."""
    import json

    from click.testing import CliRunner

    from spbench.cli import main

    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path / "cache"))
    cfg = write_config("""
name: tttm
experiment: tucker
execution: measured
fallback: standin
lanczos: converged
datasets:
  - nell2: {nnz: 3000, standin: true}
sweep:
  algorithm: [lite]
  ranks: [2]
  K: [3]
  ttm: [paper, csf]
""")
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = {r["ttm"]: r for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))}
    assert set(rows) == {"paper", "csf"} and all(r["status"] == "ok" for r in rows.values())
    assert abs(rows["csf"]["fit"] - rows["paper"]["fit"]) <= 1e-10 * abs(rows["paper"]["fit"])
    assert 0 < rows["csf"]["ttm_kernel_flops"] <= rows["paper"]["ttm_kernel_flops"]
    assert rows["csf"]["ttm_kernel_flops_max"] <= rows["csf"]["ttm_kernel_flops"]


@pytest.mark.parametrize("threads", [2, 3])
def test_counting_sort_and_gather_on_threads_equal_one_thread(threads):
    """Each thread counts and places a contiguous share after the earlier threads': the same
    stable order, bucket ends and gathers as one thread (sizes past the kernels' parallel floor,
    keys with empty buckets, a strided key column)."""
    from spbench.kernels.tucker import _ttm_csf

    rng = np.random.default_rng(5)
    m = 200_003
    keys = np.stack([rng.integers(0, 1000, m), rng.integers(0, 50_000, m) * 2], axis=1).astype(np.int32)
    key = keys[:, 1]                                                  # strided; odd keys empty
    perm = rng.permutation(m).astype(np.int32)
    for p in (np.zeros(0, np.int32), perm):
        ref, ref_counts = np.empty(m, np.int32), np.empty(100_001, np.int64)
        _ttm_csf.stable_order(key if p.size == 0 else key[p], 100_000, p, ref, ref_counts)
        out, counts = np.empty(m, np.int32), np.full(100_001, -1, np.int64)
        _ttm_csf.stable_order(key if p.size == 0 else key[p], 100_000, p, out, counts, threads)
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(counts, ref_counts)
    vals = rng.random(m)
    got, want = np.empty(m), np.empty(m)
    _ttm_csf.gather(vals, perm, got, threads)
    _ttm_csf.gather(vals, perm, want)
    np.testing.assert_array_equal(got, want)


def test_csf_tree_on_threads_equals_one_thread():
    """A tree built with its sorts on two threads is the one-thread tree."""
    from spbench.datasets.tensor_registry import standin

    T = standin("nell2", nnz=300_000, seed=0)
    for n in range(3):
        a, b = CSFPlan.build(T, n, K=(10, 10, 10)), CSFPlan.build(T, n, K=(10, 10, 10), threads=2)
        assert a.order == b.order and a.nodes == b.nodes
        np.testing.assert_array_equal(a.rows, b.rows)
        np.testing.assert_array_equal(a.values, b.values)
        assert all(np.array_equal(x, y) for x, y in zip(a.ptr, b.ptr))
        assert all(np.array_equal(x, y) for x, y in zip(a.ids[1:], b.ids[1:]))
