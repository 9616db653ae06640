"""CoarseG, MediumG, HyperG and the registry: valid policies, grids, determinism, declared
parameters, and the parallel forms on a LocalComm (the MPI runs are in test_worker.py)."""
import importlib
import math

import numpy as np
import pytest

from spbench.tucker.mpi.distribute import distribute, split_block
from spbench.tucker.mpi.collectives import LocalComm
from spbench.tucker.schemes import SCHEMES, Parameter, contiguous_blocks, get_scheme
hyper_mod = importlib.import_module("spbench.tucker.schemes.hyper")
from spbench.tucker.schemes.medium import prime_factors, splatt_grid

LIGHT = ["lite", "coarse", "medium"]


def test_registry():
    """The paper's four schemes are registered as declared; a scheme added beside them needs no
    edit here (the contract every registered scheme keeps is test_scheme_contract.py)."""
    assert {"lite", "coarse", "medium", "hyper"} <= set(SCHEMES)
    assert SCHEMES["lite"].multi_policy and SCHEMES["coarse"].multi_policy
    assert not SCHEMES["medium"].multi_policy and not SCHEMES["hyper"].multi_policy
    with pytest.raises(KeyError, match="known"):
        get_scheme("nope")
    assert {n: SCHEMES[n].label for n in ("lite", "coarse", "medium", "hyper")} == {
        "lite": "Lite", "coarse": "CoarseG", "medium": "MediumG", "hyper": "HyperG"}
    for name, s in SCHEMES.items():
        assert s.name == name and callable(s.serial) and callable(s.parallel)
        assert all(isinstance(p, Parameter) and p.description for p in s.parameters.values())
        assert all(p.accepts(p.default) for p in s.parameters.values())
    assert set(SCHEMES["medium"].parameters) == {"grid"}
    assert set(SCHEMES["hyper"].parameters) == {"epsilon", "threads", "preset", "cache_dir"}


@pytest.mark.parametrize("name, params, match", [
    ("lite", {"grid": [2]}, r"scheme 'lite': unknown parameter 'grid'; known parameters: none"),
    ("medium", {"grd": [2, 1, 1]}, r"scheme 'medium': unknown parameter 'grd'; known parameters: grid"),
    ("medium", {"grid": [2, 0, 1]}, r"'grid' = \[2, 0, 1\], expected a list of positive integers"),
    ("hyper", {"epsilon": 2.0}, r"'epsilon' = 2.0, expected a number in \[0.0, 1.0\]; known parameters: "
                                r"cache_dir, epsilon, preset, threads"),
    ("hyper", {"threads": 0}, r"'threads' = 0, expected an integer >= 1 \(or null\)"),
    ("hyper", {"preset": "fast"}, r"'preset' = 'fast', expected one of default, deterministic"),
    ("hyper", {"epsilon": None}, r"'epsilon' = None, expected a number"),
])
def test_bad_parameters(make_tensor, name, params, match):
    """Serial calls and distribute() check params against the scheme's declaration."""
    t = make_tensor(0)
    with pytest.raises(ValueError, match=match):
        SCHEMES[name](t, 2, **params)
    comm = LocalComm()
    with pytest.raises(ValueError, match=match):
        distribute(comm, split_block(t, comm), name, params=params)
    with pytest.raises(ValueError, match="unknown distribution scheme 'nope'"):
        distribute(comm, split_block(t, comm), "nope")


@pytest.mark.parametrize("name", LIGHT + (["hyper"] if hyper_mod.available() else []))
def test_parallel_form_on_local_comm(make_tensor, name):
    """distribute() on one process: the parallel form's policy is the serial one at P = 1, every
    element lands in every mode's set, in global order."""
    t = make_tensor(5, dims=(12, 9, 7), nnz=200)
    comm = LocalComm()
    params = {"threads": 1} if name == "hyper" else {}
    dt = distribute(comm, split_block(t, comm), name, seed=4, params=params)
    ref = SCHEMES[name](t, 1, seed=4, **params)
    assert dt.multi_policy == ref.multi_policy and dt.nparts == 1
    assert all(np.array_equal(a, b) for a, b in zip(dt.block_owners, ref.policies))
    for s in dt.sets:
        assert np.array_equal(s.gids, np.arange(t.nnz))
        assert np.array_equal(s.coords, t.coords) and np.array_equal(s.values, t.values)


@pytest.mark.parametrize("name", LIGHT)
@pytest.mark.parametrize("P", [1, 2, 3, 8, 17, 200])
def test_every_element_owned_once(make_tensor, name, P):
    t = make_tensor(P, dims=(11, 6, 40), nnz=300)
    d = SCHEMES[name](t, P, seed=3)
    assert d.nparts == P and len(d.policies) == t.nmodes
    for pol in d.policies:
        assert pol.dtype == np.int32 and pol.shape == (t.nnz,)
        assert pol.min() >= 0 and pol.max() < P
    if not d.multi_policy:
        assert all(p is d.policies[0] for p in d.policies)
    d.validate(t.nnz)


@pytest.mark.parametrize("name", ["coarse", "medium"])
def test_seeded_determinism(make_tensor, name):
    t = make_tensor(0, dims=(30, 30, 30), nnz=500)
    a, b, c = (SCHEMES[name](t, 6, seed=s) for s in (1, 1, 2))
    assert all((x == y).all() for x, y in zip(a.policies, b.policies))
    assert any((x != y).any() for x, y in zip(a.policies, c.policies))


def test_coarse_whole_slices_and_balance(make_tensor):
    t = make_tensor(2, dims=(50, 40, 60), nnz=2000, skew=0.3)
    P = 5
    d = SCHEMES["coarse"](t, P)
    for n in range(3):
        pol, idx = d.policy(n), t.coords[:, n]
        for l in np.unique(idx):
            assert len(set(pol[idx == l].tolist())) == 1          # every slice good
        loads = np.bincount(pol, minlength=P)
        assert loads.max() <= t.nnz / P + np.bincount(idx).max()   # blocks balanced up to one slice


def test_contiguous_blocks():
    b = contiguous_blocks(np.array([1, 1, 1, 1, 1, 1]), 3)
    assert b.tolist() == [0, 0, 1, 1, 2, 2]
    b = contiguous_blocks(np.array([10, 0, 1, 1, 1, 7]), 2)
    assert (np.diff(b) >= 0).all() and b.max() <= 1
    assert contiguous_blocks(np.array([0, 0]), 4).tolist() == [0, 0]


def test_prime_factors():
    assert prime_factors(1) == [] and prime_factors(13) == [13]
    assert prime_factors(512) == [2] * 9 and prime_factors(60) == [2, 2, 3, 5]


@pytest.mark.parametrize("dims,P", [((400, 200, 200), 16), ((10, 10, 10), 13), ((5, 1000, 3), 1),
                                     ((3, 4, 2), 64), ((2, 2), 97), ((7, 9000, 40, 5), 512),
                                     ((100, 100, 100), 30)])
def test_splatt_grid_product(dims, P):
    q = splatt_grid(dims, P)
    assert len(q) == len(dims) and math.prod(q) == P


def test_splatt_grid_rule():
    assert splatt_grid((400, 200, 200), 16) == (4, 2, 2)        # paper Fig. 6's 4×2×2 grid
    assert splatt_grid((10, 1000, 10), 7) == (1, 7, 1)          # prime: to the longest mode
    assert splatt_grid((3, 4, 2), 2) == (2, 1, 1)               # nothing above target (4): lowest mode
    assert splatt_grid((3, 4, 2), 64) == (4, 8, 2)              # ties: lowest mode
    assert splatt_grid((5, 5, 5), 1) == (1, 1, 1)


@pytest.mark.parametrize("P", [1, 7, 12, 64])
def test_medium_grid_bounds_sharing(make_tensor, P):
    """Each mode-n slice is shared by at most P/q_n processors; P > a mode's length works."""
    t = make_tensor(4, dims=(5, 40, 30), nnz=600)
    d = SCHEMES["medium"](t, P)
    q = d.info["grid"]
    assert math.prod(q) == P
    pol = d.policy(0)
    for n in range(3):
        idx = t.coords[:, n]
        for l in np.unique(idx):
            assert len(set(pol[idx == l].tolist())) <= P // q[n]
    with pytest.raises(ValueError, match="grid"):
        SCHEMES["medium"](t, P + 1, grid=q)


needs_mtkahypar = pytest.mark.skipif(not hyper_mod.available(),
                                     reason="Mt-KaHyPar (pip install mtkahypar) is not installed")


@needs_mtkahypar
@pytest.mark.parametrize("P", [1, 2, 3])
def test_hyper_tiny(make_tensor, P):
    t = make_tensor(7, dims=(6, 5, 4), nnz=60)
    d = SCHEMES["hyper"](t, P, seed=1, threads=1)
    d.validate(t.nnz)
    assert not d.multi_policy and all(p is d.policies[0] for p in d.policies)
    loads = np.bincount(d.policy(0), minlength=P)
    assert loads.max() <= math.floor(1.03 * math.ceil(t.nnz / P)) + 1
    if P > 1:
        km1 = sum(len(set(d.policy(0)[t.coords[:, n] == l].tolist())) - 1
                  for n in range(3) for l in np.unique(t.coords[:, n]))
        assert d.info["km1"] == km1


def test_hyper_unavailable_message(monkeypatch, make_tensor):
    import builtins
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "mtkahypar":
            raise ImportError("No module named 'mtkahypar'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(hyper_mod, "_MTK", {})
    assert not hyper_mod.available()
    with pytest.raises(hyper_mod.HyperGUnavailable, match="pip install mtkahypar"):
        SCHEMES["hyper"](make_tensor(0), 2)


@needs_mtkahypar
def test_hyper_cache(make_tensor, tmp_path):
    t = make_tensor(3, dims=(6, 5, 4), nnz=50)
    a = SCHEMES["hyper"](t, 2, threads=1, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("hyper-*.npy"))) == 1
    b = SCHEMES["hyper"](t, 2, threads=1, cache_dir=tmp_path)
    assert b.info.get("cached") and (a.policy(0) == b.policy(0)).all()


def test_splatt_layers():
    from spbench.tucker.schemes.medium import splatt_layers
    assert splatt_layers([3, 1, 1, 1, 1, 1], 2).tolist() == [0, 0, 1, 1, 1, 1]
    # a heavy last index: the scan ends after two layers, the third stays empty
    assert splatt_layers([1, 1, 1, 1, 1, 1, 10], 3).tolist() == [0, 0, 0, 0, 0, 1, 1]
    assert splatt_layers([5, 5], 1).tolist() == [0, 0]
    assert splatt_layers([2, 0, 0], 8).tolist() == [0, 1, 2]
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 20, 1000)
    lay = splatt_layers(sizes, 16)
    assert (np.diff(lay) >= 0).all() and lay.max() == 15
    loads = np.bincount(lay, weights=sizes, minlength=16)
    assert loads.max() <= sizes.sum() / 16 + 2 * sizes.max()


@pytest.mark.parametrize("name", ["lite", "medium"])
def test_redistribute_peak_memory(make_tensor, name):
    """Beyond its output, redistribute holds at most one field of one policy's send buffer and the
    permutation: 8·(N + 1) bytes per block element (the per-element budget of the redistribution)."""
    import tracemalloc

    from spbench.tucker.mpi.distribute import redistribute

    t = make_tensor(6, dims=(300, 200, 5000), nnz=60000)
    comm = LocalComm()
    block = split_block(t, comm)
    owners, _ = SCHEMES[name].parallel(comm, block, seed=0)
    owners = owners if SCHEMES[name].multi_policy else owners[:1]
    tracemalloc.start()
    out = redistribute(comm, block, owners)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sum(s.size for s in out) == len(owners) * t.nnz
    assert peak - current <= 8 * (t.nmodes + 1) * t.nnz + (1 << 16)


def test_new_scheme_is_one_registry_entry(make_tensor, monkeypatch):
    """A scheme declared once (serial form, parallel form over one core, parameters) serves the
    simulation (get_scheme) and distribute() alike, with its parameters checked."""
    from spbench.tucker.schemes import Distribution, Scheme

    def cyclic_policy(gids, nparts, stride):
        return ((gids // stride) % nparts).astype(np.int32)

    def cyclic(tensor, nparts, *, seed=0, stride=1):
        pol = cyclic_policy(np.arange(tensor.nnz), nparts, stride)
        return Distribution("cyclic", nparts, (pol,) * tensor.nmodes, False)

    def cyclic_parallel(comm, block, *, seed=0, stride=1):
        return [cyclic_policy(block.gids, comm.size, stride)] * block.nmodes, {}

    scheme = Scheme("cyclic", cyclic, cyclic_parallel, False, "Cyclic", "element ids dealt round robin",
                    {"stride": Parameter("int", 1, "consecutive elements per deal", low=1, nullable=False)})
    monkeypatch.setitem(SCHEMES, "cyclic", scheme)
    t = make_tensor(2)
    comm = LocalComm()
    dt = distribute(comm, split_block(t, comm), "cyclic", params={"stride": 3})
    assert np.array_equal(dt.block_owners[0], get_scheme("cyclic")(t, 1, stride=3).policy(0))
    assert get_scheme("cyclic")(t, 4, stride=3).policy(0)[:7].tolist() == [0, 0, 0, 1, 1, 1, 2]
    with pytest.raises(ValueError, match="'stride' = 0, expected an integer >= 1; known parameters: stride"):
        distribute(comm, split_block(t, comm), "cyclic", params={"stride": 0})


def test_hooks_declare_what_runs_add(monkeypatch, tmp_path):
    """What runs add per scheme is declared on the scheme, not keyed by its name: HyperG's partition
    cache under the config's parameters and its offline partition time, Lite's Theorem 6.1 slack."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    hyper, lite, coarse = SCHEMES["hyper"], SCHEMES["lite"], SCHEMES["coarse"]
    cache = str(importlib.import_module("spbench.tucker.schemes.hyper").partition_cache_dir())
    assert cache.startswith(str(tmp_path))
    assert hyper.with_run_params({"epsilon": 0.1}) == {"cache_dir": cache, "epsilon": 0.1}
    assert hyper.with_run_params({"cache_dir": "mine"}) == {"cache_dir": "mine"}
    assert coarse.with_run_params({}) == {} and lite.with_run_params({"x": 1}) == {"x": 1}
    assert hyper.dist_time_kind("simulated") == "hypergraph partitioning (offline, Mt-KaHyPar)"
    assert hyper.dist_time_kind("measured", cached=True) == \
        "hypergraph partitioning offline on rank 0 (Mt-KaHyPar, cached partition)"
    assert lite.dist_time_kind("simulated") == "serial scheme computation on this machine"
    assert coarse.dist_time_kind("measured").startswith("parallel distribution")
    modes = [{"e_max": 5, "slices": 4, "r_sum": 5, "r_max": 3}] * 2
    assert coarse.metrics_beyond(modes, 10, 2) == {}
    assert lite.metrics_beyond(modes, 10, 2) == {"lite_bound_slack": {"e_max": 0, "r_sum": 1, "r_max": 1}}
