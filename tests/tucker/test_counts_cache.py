"""The counts cache (:mod:`counts_cache`): a distribution's streamed counts and CSF prefixes read back
equal, keyed by everything they depend on; a damaged or foreign file is ignored and written again;
a second experiment on the same tensor reads them (``counts_cached``) and completes the prefix
sets another K needs."""
import numpy as np
import pytest

from spbench.tucker.counts_cache import CachedCounts, counts_identity, counts_path, load_counts, save_counts
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.stream_metrics import stream_counts, tensor_chunks


def _sizes(t):
    return [np.bincount(t.coords[:, n], minlength=t.dims[n]).astype(np.int64) for n in range(t.nmodes)]


def _equal(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert set(x) == set(y)
        for key, v in x.items():
            if key == "csf_prefix_p":
                assert set(v) == set(y[key]) and all(np.array_equal(v[S], y[key][S]) for S in v)
            else:
                assert np.array_equal(v, y[key]) and type(v) is type(y[key]), key


@pytest.fixture
def streamed(make_tensor):
    t = make_tensor(4, dims=(20, 14, 9, 6), nnz=900, skew=1.3)
    counts, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 200), SCHEMES["lite"].stream(_sizes(t), 8),
                              prefixes=_sizes(t))
    return counts


def test_counts_read_back_equal(streamed):
    ident = counts_identity("abc", "lite", 8, 0, {"x": 1})
    path = counts_path(ident, "enron")
    save_counts(path, ident, CachedCounts(streamed, 1.5, True, {"limit": [3, 4], "note": "n"}))
    got = load_counts(path, ident)
    _equal(got.counts, streamed)
    assert (got.seconds, got.multi_policy, got.info) == (1.5, True, {"limit": [3, 4], "note": "n"})
    assert load_counts(path, counts_identity("abc", "lite", 8, 1, {"x": 1})) is None        # another seed
    others = [counts_identity("abd", "lite", 8, 0, {"x": 1}), counts_identity("abc", "coarse", 8, 0, {"x": 1}),
              counts_identity("abc", "lite", 16, 0, {"x": 1}), counts_identity("abc", "lite", 8, 0, {"x": 2})]
    assert len({counts_path(i) for i in others} | {counts_path(ident)}) == 5


def test_the_cache_off_reads_and_writes_nothing(streamed, monkeypatch):
    """SPBENCH_COUNTS_CACHE=0 (how `spbench bench preflight` measures a point cold)."""
    ident = counts_identity("off", "lite", 8, 0, {})
    path = counts_path(ident, "enron")
    save_counts(path, ident, CachedCounts(streamed, 1.0, True, {}))
    monkeypatch.setenv("SPBENCH_COUNTS_CACHE", "0")
    assert load_counts(path, ident) is None
    other = counts_identity("off2", "lite", 8, 0, {})
    save_counts(counts_path(other, "enron"), other, CachedCounts(streamed, 1.0, True, {}))
    assert not counts_path(other, "enron").exists()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "foreign"])
def test_a_damaged_file_is_ignored_and_written_again(streamed, damage):
    ident = counts_identity("abc", "lite", 8, 0, {})
    path = counts_path(ident)
    save_counts(path, ident, CachedCounts(streamed, 1.0, True, {}))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 100 + data[100:])
    elif damage == "empty":
        path.write_bytes(b"")
    else:                                   # another identity's file under this name
        save_counts(path, counts_identity("zzz", "lite", 8, 0, {}), CachedCounts(streamed, 1.0, True, {}))
    assert load_counts(path, ident) is None
    save_counts(path, ident, CachedCounts(streamed, 2.0, True, {}))
    assert load_counts(path, ident).seconds == 2.0
    assert [p.name for p in path.parent.iterdir()] == [path.name]          # no temporary file left


def test_a_second_experiment_reads_the_cache_and_completes_the_sets_of_another_k(monkeypatch):
    """The same tensor, scheme and P in a new experiment: counts from the cache (equal), and the
    larger prefix sets K = 20's level orders read, counted when first asked for, equal to all sets'."""
    from types import SimpleNamespace

    from spbench.datasets.tensor_registry import resolve
    from spbench.tucker.experiment import TuckerExperiment
    from spbench.tucker.hooi.csf import prefix_counts, rank_nodes

    loaded = resolve({"enron": {"nnz": 3000, "seed": 5}}).load(fetch=False, standin=True)
    t = loaded.tensor
    config = SimpleNamespace(seed=0, params={}, ttm="csf")

    def prepared(ks):
        from spbench.tucker.experiment import PreparedTensor
        return PreparedTensor(loaded=loaded, checksum=loaded.checksum, source="synthetic", label="enron", ks=ks)

    first = TuckerExperiment()
    first.costs = {}                                    # modelled: the prefixes are counted
    a = first._counts(prepared((2,)), "lite", 64, 0, {})
    second = TuckerExperiment()
    second.costs = {}
    prep = prepared((2,))
    b = second._counts(prep, "lite", 64, 0, {})
    assert (a.from_cache, b.from_cache) == (False, True)
    _equal(b.counts, a.counts)
    ref = [prefix_counts(t.coords, t.dims, n, SCHEMES["lite"](t, 64, seed=0).policy(n), 64) for n in range(t.nmodes)]
    for K in (2, 20, [3, 9, 2, 30]):
        point = SimpleNamespace(axes={"algorithm": "lite", "ranks": 64, "K": K})
        second._complete_prefixes(prep, b, point, config)
        Ks = [K] * t.nmodes if np.ndim(K) == 0 else K
        for n in range(t.nmodes):
            got = rank_nodes(n, t.nmodes, b.counts[n]["csf_prefix_p"], b.counts[n]["r_p"], b.counts[n]["e_p"], Ks)
            assert got == rank_nodes(n, t.nmodes, ref[n], b.counts[n]["r_p"], b.counts[n]["e_p"], Ks), (n, K)
    third = TuckerExperiment()
    third.costs = {}
    c = third._counts(prepared((2,)), "lite", 64, 0, {})
    assert c.from_cache and all(set(x["csf_prefix_p"]) == set(y["csf_prefix_p"]) for x, y in zip(c.counts, b.counts))
