"""TTM kernels (paper §3, Appendix A; the CSF kernel of §8's future work) against dense numpy
and each other, and Lanczos against numpy's SVD."""
import itertools

import numpy as np
import pytest
from conftest import random_tensor

from spbench.tucker.hooi_reference import ttm_dense as _ttm_dense
from spbench.tucker.csf import CSFPlan, csf_flops
from spbench.tucker.hooi import hooi
from spbench.tucker.ttm import TTMPlan, build_ttm_plan, khat, ttm, ttm_flops, ttm_scratch_len, unfold
from spbench.tucker.lanczos import default_ncv, lanczos_svd
from spbench.datasets.sparse_tensor import SparseTensor


def _factors(dims, K, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((L, k)) for L, k in zip(dims, K)]


@pytest.mark.parametrize("dims,K,nnz", [((9, 7, 5), (3, 2, 4), 150), ((9, 7, 5, 6), (3, 2, 4, 2), 150),
                                        ((6, 5, 4, 3, 4), (2, 3, 2, 2, 3), 150),
                                        ((3, 30, 25), (2, 5, 4), 1500),      # rows > CHUNK elements
                                        ((40, 30, 3, 4), (5, 4, 3, 2), 60)])  # rows < GEMM_MIN
@pytest.mark.parametrize("threads", [1, 2])
def test_ttm_matches_dense(dims, K, nnz, threads):
    T = random_tensor(1, dims=dims, nnz=nnz)
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
def test_ttm_subset_of_elements_is_local_copy(threads):
    """A rank's elements only: its compact rows are the slices it shares (sum-distributed Z)."""
    T = random_tensor(2, dims=(8, 6, 7, 5), nnz=200)
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


def test_ttm_empty_plan_and_bad_shapes():
    T = random_tensor(3, dims=(5, 4, 3), nnz=30)
    F = _factors(T.dims, (2, 2, 2))
    plan = TTMPlan.build(T, 0, np.zeros(0, dtype=np.int64))
    assert ttm(T, plan, F).shape == (0, 4)
    with pytest.raises(ValueError):
        ttm(T, TTMPlan.build(T, 0), F, out=np.empty((1, 4)))
    with pytest.raises(ValueError):
        ttm(T, TTMPlan.build(T, 0), F[:2])
    assert ttm_flops(10, (10, 10, 10), 0) == 10 * (2 * 100 + 10)


# ---- CSF kernel (issue 16) ------------------------------------------------------------------
def _sparse_with_empty_slices(seed, dims, nnz):
    """Power-law tensor spread over every other index of each mode (empty slices in between),
    plus one element alone in its slice (a single-element fiber at every level)."""
    T = random_tensor(seed, dims=tuple((d + 1) // 2 for d in dims), nnz=nnz)
    coords = np.vstack([T.coords * 2, np.array([[d - 1 for d in dims]])])
    return SparseTensor(coords, np.append(T.values, 0.75), dims)


def _prefix_counts(coords, order):
    """Distinct index prefixes over order[0..k] for every level k (brute force)."""
    return [len({tuple(row) for row in coords[:, list(order[:k + 1])]}) for k in range(len(order))]


@pytest.mark.parametrize("dims,K", [((11, 9, 7), (3, 2, 4)), ((9, 7, 7, 5), (3, 2, 4, 2)),
                                    ((7, 5, 5, 3, 5), (2, 3, 2, 2, 3))])
@pytest.mark.parametrize("threads", [1, 2])
def test_csf_equals_paper_every_level_order(dims, K, threads):
    """csf and paper give the same compact penultimate matrices (1e-12 relative) for every
    order of the tree levels, on a rank's subset of the elements too."""
    T = _sparse_with_empty_slices(4, dims, 300)
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
    from spbench.tucker.csf import prefix_counts

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


def test_csf_empty_plan_bad_input_and_kind():
    T = random_tensor(3, dims=(5, 4, 3), nnz=30)
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
def test_hooi_same_fit_with_either_kernel(ttm_kind):
    T = _sparse_with_empty_slices(5, (12, 10, 9, 8), 500)
    K = (3, 2, 4, 2)
    ref = hooi(T, K, invocations=2, seed=1, tol=1e-12, lanczos="converged", ttm="paper")
    res = hooi(T, K, invocations=2, seed=1, tol=1e-12, lanczos="converged", ttm=ttm_kind)
    assert abs(res.fit - ref.fit) <= 1e-10 * abs(ref.fit)
    with pytest.raises(ValueError, match="ttm must be one of"):
        hooi(T, K, ttm="dense")


def test_config_ttm_key_and_axis(tmp_path):
    from spbench.config import ConfigError, parse_config
    from spbench.sweep import expand as expand_points, run_parameters

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


# ---- Lanczos --------------------------------------------------------------------------------
def _matrix(m, n, decay, seed):
    rng = np.random.default_rng(seed)
    r = min(m, n)
    U = np.linalg.qr(rng.standard_normal((m, r)))[0]
    V = np.linalg.qr(rng.standard_normal((n, r)))[0]
    return (U * decay ** np.arange(r)) @ V.T


def _sin_angle(A, B):
    """sin of the largest principal angle between the column spaces (orthonormal A, B)."""
    return np.linalg.norm(B - A @ (A.T @ B), 2)


@pytest.mark.parametrize("m,n,k", [(300, 80, 10), (80, 300, 5), (400, 200, 3), (1000, 100, 10)])
def test_lanczos_matches_svd(m, n, k):
    A = _matrix(m, n, 0.8, seed=m + n)
    calls = [0]

    def mv(x):
        calls[0] += 1
        return A @ x

    res = lanczos_svd(mv, lambda y: A.T @ y, (m, n), k)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(res.s, s[:k], rtol=1e-8)
    assert _sin_angle(U[:, :k], res.U) < 1e-8
    assert _sin_angle(Vt[:k].T, res.V) < 1e-8
    np.testing.assert_allclose(res.U.T @ res.U, np.eye(k), atol=1e-12)
    assert not res.dense and res.converged == k
    assert res.queries >= 2 * default_ncv(k) and calls[0] * 2 == res.queries
    assert res.restarts > 0 or res.queries == 2 * default_ncv(k)


def test_lanczos_restarts_on_clustered_spectrum():
    A = _matrix(400, 150, 0.97, seed=5)
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 4, tol=1e-10)
    s = np.linalg.svd(A, compute_uv=False)
    assert res.restarts > 0
    np.testing.assert_allclose(res.s, s[:4], rtol=1e-8)


def test_lanczos_rank_deficient_breakdown():
    """rank 3 < ncv < min(m, n): invariant subspace, continued with random vectors."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((200, 3)) @ rng.standard_normal((3, 60))
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 3)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(res.s, s[:3], rtol=1e-8)
    assert _sin_angle(U[:, :3], res.U) < 1e-8


@pytest.mark.parametrize("mode,rank", [("paper", None), ("converged", None), ("paper", 3), ("converged", 3)])
def test_lanczos_compiled_steps_equal_python_steps(mode, rank):
    """One process holding Z whole: the compiled steps give the Python steps' triplets (rounding
    apart), queries and restarts without calling the oracle, breakdowns (rank 3) included; a Z that
    is not the whole C-contiguous matrix is refused."""
    rng = np.random.default_rng(7)
    A = _matrix(400, 150, 0.97, seed=5) if rank is None else \
        rng.standard_normal((200, rank)) @ rng.standard_normal((rank, 60))
    k = 4 if rank is None else rank
    ref = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, k, mode=mode, tol=1e-10, seed=2)

    def unused(_):
        raise AssertionError("the oracle was called")

    res = lanczos_svd(lambda x: A @ x if rank else unused(x), lambda y: A.T @ y if rank else unused(y), A.shape, k,
                      mode=mode, tol=1e-10, seed=2, local_matrix=A)
    assert (res.queries, res.restarts) == (ref.queries, ref.restarts)
    np.testing.assert_allclose(res.s, ref.s, rtol=1e-12)
    assert _sin_angle(ref.U, res.U) < 1e-10 and _sin_angle(ref.V, res.V) < 1e-10
    with pytest.raises(ValueError, match="local_matrix"):
        lanczos_svd(unused, unused, A.shape, k, local_matrix=np.asfortranarray(A))


@pytest.mark.parametrize("m,n,k", [(9, 40, 5), (40, 8, 5), (6, 30, 10), (30, 4, 7), (0, 5, 3)])
def test_lanczos_small_or_deficient_falls_back_to_dense(m, n, k):
    A = _matrix(m, n, 0.7, seed=1) if m else np.zeros((0, n))
    res = lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, (m, n), k)
    assert res.dense and res.U.shape == (m, k) and res.V.shape == (n, k) and res.s.shape == (k,)
    r = min(m, n, k)
    if m:
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        np.testing.assert_allclose(res.s[:r], s[:r], rtol=1e-10)
        assert _sin_angle(U[:, :r], res.U[:, :r]) < 1e-10
        assert res.queries == min(m, n)
    assert not np.any(res.U[:, r:]) and not np.any(res.s[r:]) and not np.any(res.V[:, r:])


def test_lanczos_reports_non_convergence():
    A = np.random.default_rng(0).standard_normal((300, 100))
    with pytest.raises(RuntimeError, match="converged"):
        lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 5, max_restarts=0, tol=1e-14)
    with pytest.raises(ValueError):
        lanczos_svd(lambda x: A @ x, lambda y: A.T @ y, A.shape, 5, ncv=5)


def test_splatt_rounds_interleave_and_read_its_timers(tmp_path):
    """The SPLATT side by side: its TTM and SVD timer lines read per round (a stand-in binary that
    prints them and logs its arguments), ours measured between, medians per thread count;
    a binary without the timer lines is one clear error."""
    from spbench.tucker.splatt_side import splatt_rounds, splatt_timers

    fake = tmp_path / "splatt"
    log = tmp_path / "calls"
    fake.write_text(f'#!/bin/sh\necho "$OMP_NUM_THREADS $*" >> {log}\n'
                    'printf "Timing information\\n  TTM                 0.036s\\n  SVD                 0.012s\\n"\n')
    fake.chmod(0o755)
    items = splatt_rounds(str(fake), ["3way"], [1, 2], 2, 0, 0, tmp_path)
    assert [(i["threads"], i["splatt_ttm"], i["splatt_svd"]) for i in items] == [(1, 0.036, 0.012), (2, 0.036, 0.012)]
    assert items[0]["csf_ttm"] > 0 and items[0]["spbench_svd"] > 0 and items[1]["spbench_svd"] is None
    calls = log.read_text().splitlines()
    assert len(calls) == 4 and calls[0].startswith("1 tucker -i 1 --tol 0 -r 10 -t 1 -v --nowrite -c 3 --seed 1 ")
    assert calls[2].startswith("2 tucker -i 1 --tol 0 -r 10 -t 2 ")
    tns = np.loadtxt(tmp_path / "3way.tns")
    assert tns.shape[1] == 4 and tns[:, :3].min() == 1 and f"{tns.shape[0]} nnz" in items[0]["dataset"]
    fake.write_text("#!/bin/sh\necho nothing\n")
    with pytest.raises(RuntimeError, match="no 'TTM' timer"):
        splatt_timers(str(fake), tmp_path / "3way.tns", 3, 10, 1)
